#include "perfbench/params.h"

#include <algorithm>
#include <stdexcept>

namespace perfbench {

std::vector<Params> Params::Product(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& axes) {
  std::vector<Params> out{Params()};
  for (const auto& [key, values] : axes) {
    std::vector<Params> next;
    next.reserve(out.size() * values.size());
    for (const auto& partial : out) {
      for (const auto& v : values) {
        Params p = partial;
        p.Set(key, v);
        next.push_back(std::move(p));
      }
    }
    out = std::move(next);
  }
  return out;
}

void Params::Set(const std::string& key, const std::string& value) {
  for (auto& kv : kv_) {
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  }
  kv_.emplace_back(key, value);
}

std::string Params::Get(const std::string& key) const {
  for (const auto& kv : kv_)
    if (kv.first == key) return kv.second;
  return "";
}

bool Params::Has(const std::string& key) const {
  return std::any_of(kv_.begin(), kv_.end(), [&](const auto& kv) { return kv.first == key; });
}

long long Params::GetInt(const std::string& key, long long fallback) const {
  if (!Has(key)) return fallback;
  const std::string v = Get(key);
  size_t used = 0;
  long long n = std::stoll(v, &used);
  if (used != v.size()) throw std::invalid_argument("param " + key + "=" + v + " is not an integer");
  return n;
}

Params Params::Without(const std::string& key) const {
  Params p;
  for (const auto& kv : kv_)
    if (kv.first != key) p.kv_.push_back(kv);
  return p;
}

std::string Params::Encode() const {
  std::string s;
  for (const auto& [k, v] : kv_) {
    if (!s.empty()) s += "/";
    s += k + ":" + v;
  }
  return s;
}

std::map<std::string, std::string> Params::AsMap() const { return {kv_.begin(), kv_.end()}; }

Params Params::Decode(const std::string& text) {
  Params p;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('/', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0) throw std::invalid_argument("bad params item '" + item + "'");
    p.Set(item.substr(0, colon), item.substr(colon + 1));
    start = end + 1;
  }
  return p;
}

}  // namespace perfbench
