#include "store/location.h"

#include <algorithm>
#include <sstream>

namespace perfbench {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// "user:secret@host" -> "user:***@host" (the authority of a URL).
std::string RedactAuthority(const std::string& authority) {
  const size_t at = authority.rfind('@');
  if (at == std::string::npos) return authority;
  const std::string user = authority.substr(0, at);
  const size_t colon = user.find(':');
  if (colon == std::string::npos) return authority;
  return user.substr(0, colon) + ":***" + authority.substr(at);
}

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

std::string RedactLocation(const std::string& location) {
  if (!IsServerUrl(location)) return location;
  const size_t scheme_end = location.find("://") + 3;
  const size_t query = location.find('?', scheme_end);
  const std::string before_query = location.substr(0, query);
  const size_t slash = before_query.find('/', scheme_end);
  const std::string authority = before_query.substr(scheme_end, slash == std::string::npos ? std::string::npos : slash - scheme_end);
  std::string out = location.substr(0, scheme_end) + RedactAuthority(authority);
  if (slash != std::string::npos) out += before_query.substr(slash);
  if (query != std::string::npos) out += "?" + RedactQuery(location.substr(query + 1));
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
