// UTF-8 validation and repair against CPython's decoder
// (tests/fixtures/utf8_fixtures.json, made by make_utf8_fixtures.py).
#include "utf8.h"

#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

namespace perfbench {
namespace {

std::string FromHex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

TEST(Utf8, AgreesWithCPythonsDecoder) {
  std::ifstream in(std::string(PERFBENCH_FIXTURES) + "/utf8_fixtures.json");
  const auto doc = nlohmann::json::parse(in);
  ASSERT_GE(doc["cases"].size(), 20u);
  for (const auto& c : doc["cases"]) {
    const std::string raw = FromHex(c["in"].get<std::string>());
    const std::string want = FromHex(c["valid"].get<std::string>());
    const auto at = InvalidUtf8At(raw);
    if (c["first_invalid"].is_null()) {
      EXPECT_FALSE(at.has_value()) << c["in"];
    } else {
      ASSERT_TRUE(at.has_value()) << c["in"];
      EXPECT_EQ(*at, c["first_invalid"].get<size_t>()) << c["in"];
    }
    EXPECT_EQ(ValidUtf8(raw), want) << c["in"];
    EXPECT_FALSE(InvalidUtf8At(ValidUtf8(raw)).has_value()) << c["in"];
  }
}

TEST(Utf8, RepairedTextIsJsonText) {
  const nlohmann::json j = {{"label", ValidUtf8("bad\xffl")}};
  EXPECT_EQ(j.dump(), "{\"label\":\"bad\xEF\xBF\xBDl\"}");
}

}  // namespace
}  // namespace perfbench
