// Params: an ordered list of name/value pairs identifying one variant.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace perfbench {

class Params {
 public:
  Params() = default;
  Params(std::initializer_list<std::pair<std::string, std::string>> kv) : kv_(kv) {}

  // Cartesian product in declaration order; the last axis varies fastest.
  static std::vector<Params> Product(
      const std::vector<std::pair<std::string, std::vector<std::string>>>& axes);

  void Set(const std::string& key, const std::string& value);
  // Empty string when absent.
  std::string Get(const std::string& key) const;
  // The value, or `fallback` when the key is absent.
  std::string Get(const std::string& key, const std::string& fallback) const {
    return Has(key) ? Get(key) : fallback;
  }
  bool Has(const std::string& key) const;
  // Value parsed as an integer; `fallback` when absent. Throws on a non-integer value.
  long long GetInt(const std::string& key, long long fallback) const;
  Params Without(const std::string& key) const;

  // Stable key "k1:v1/k2:v2" in declaration order; used in names and filters.
  std::string Encode() const;
  // Inverse of Encode ("k1:v1/k2:v2"); throws std::invalid_argument.
  static Params Decode(const std::string& text);
  // Canonical form (keys sorted) used to match results across runs.
  std::map<std::string, std::string> AsMap() const;

  const std::vector<std::pair<std::string, std::string>>& items() const { return kv_; }
  bool empty() const { return kv_.empty(); }
  bool operator==(const Params& other) const { return AsMap() == other.AsMap(); }

 private:
  std::vector<std::pair<std::string, std::string>> kv_;
};

}  // namespace perfbench
