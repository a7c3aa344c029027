#include "store/location.h"

#include <algorithm>
#include <cctype>
#include <vector>
#include <sstream>

namespace perfbench {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// "a=1&password=x&b=2" -> "a=1&password=***&b=2" (also sslpassword).
std::string RedactQuery(const std::string& query) {
  std::string out;
  std::stringstream ss(query);
  for (std::string item; std::getline(ss, item, '&');) {
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    if (eq != std::string::npos && (key == "password" || key == "sslpassword")) item = key + "=***";
    out += (out.empty() ? "" : "&") + item;
  }
  return out;
}

}  // namespace

bool IsServerUrl(const std::string& location) {
  return StartsWith(location, "postgresql://") || StartsWith(location, "postgres://");
}

// A password may hold '/', '?', ':' or '@' (libpq takes the userinfo up to
// the last '@'), so everything between the user name and the last '@' goes:
// better too much hidden than a password shown.
std::string RedactLocation(const std::string& location) {
  if (!IsServerUrl(location)) return location;
  const size_t start = location.find("://") + 3;
  std::string rest = location.substr(start), out = location.substr(0, start);
  if (const size_t at = rest.rfind('@'); at != std::string::npos) {
    const std::string userinfo = rest.substr(0, at);
    const size_t colon = userinfo.find(':');
    out += (colon == std::string::npos ? userinfo : userinfo.substr(0, colon) + ":***") + "@";
    rest = rest.substr(at + 1);
  }
  const size_t query = rest.find('?');
  if (query == std::string::npos) return out + rest;
  return out + rest.substr(0, query) + "?" + RedactQuery(rest.substr(query + 1));
}

namespace {

std::string PercentDecoded(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The passwords a URL holds, as written and percent-decoded.
std::vector<std::string> Secrets(const std::string& url) {
  std::vector<std::string> out;
  const size_t start = url.find("://") + 3;
  const std::string rest = url.substr(start);
  if (const size_t at = rest.rfind('@'); at != std::string::npos) {
    const std::string userinfo = rest.substr(0, at);
    if (const size_t colon = userinfo.find(':'); colon != std::string::npos) out.push_back(userinfo.substr(colon + 1));
  }
  if (const size_t q = rest.find('?'); q != std::string::npos) {
    std::stringstream ss(rest.substr(q + 1));
    for (std::string item; std::getline(ss, item, '&');) {
      const size_t eq = item.find('=');
      const std::string key = item.substr(0, eq);
      if (eq != std::string::npos && (key == "password" || key == "sslpassword")) out.push_back(item.substr(eq + 1));
    }
  }
  const size_t n = out.size();
  for (size_t i = 0; i < n; ++i) out.push_back(PercentDecoded(out[i]));
  return out;
}

}  // namespace

std::string RedactSecrets(const std::string& message, const std::string& url) {
  if (!IsServerUrl(url)) return message;
  std::string out = message;
  for (const std::string& secret : Secrets(url)) {
    if (secret.empty()) continue;
    for (size_t pos = out.find(secret); pos != std::string::npos; pos = out.find(secret, pos + 3))
      out.replace(pos, secret.size(), "***");
  }
  return out;
}

std::string RedactCommandLine(const std::string& command) {
  std::string out;
  size_t pos = 0;
  while (pos < command.size()) {
    size_t start = std::string::npos;
    for (const char* scheme : {"postgresql://", "postgres://"}) start = std::min(start, command.find(scheme, pos));
    if (start == std::string::npos) break;
    size_t end = command.find_first_of(" \t'\"", start);
    if (end == std::string::npos) end = command.size();
    out += command.substr(pos, start - pos) + RedactLocation(command.substr(start, end - start));
    pos = end;
  }
  return out + command.substr(std::min(pos, command.size()));
}

}  // namespace perfbench
