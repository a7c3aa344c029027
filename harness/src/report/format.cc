#include "report/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace perfbench {
namespace {
std::string Num(double v) {
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-3)) return fmt::format("{:.3g}", v);
  return a >= 100 ? fmt::format("{:.1f}", v) : fmt::format("{:.3g}", v);
}
}  // namespace

std::string FormatValue(double value, const std::string& unit) {
  const double a = std::fabs(value);
  if (unit == "s") {
    if (a == 0) return "0 s";
    if (a < 1e-6) return Num(value * 1e9) + " ns";
    if (a < 1e-3) return Num(value * 1e6) + " us";
    if (a < 1) return Num(value * 1e3) + " ms";
    return Num(value) + " s";
  }
  if (unit == "bytes") {
    const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = value;
    int i = 0;
    while (std::fabs(v) >= 1024 && i < 4) {
      v /= 1024;
      ++i;
    }
    return Num(v) + " " + names[i];
  }
  if (unit == "samples/s" || unit == "items/s") {
    if (a >= 1e6) return Num(value / 1e6) + "M " + unit;
    if (a >= 1e3) return Num(value / 1e3) + "k " + unit;
  }
  if (unit == "1" || unit.empty()) return Num(value);
  if (unit == "ratio") return Num(value) + "x";
  if (unit == "fraction") return fmt::format("{:.1f}%", value * 100);
  return Num(value) + " " + unit;
}

namespace {
// Display columns of UTF-8 text: every byte that does not continue a character.
size_t Columns(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}
}  // namespace

void TextTable::Print(std::ostream& out) const {
  std::vector<size_t> width(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], Columns(row[i]));
  };
  widen(header_);
  for (const auto& r : rows_) widen(r);
  auto line = [&](const std::vector<std::string>& row) {
    std::string s;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      s += row[i];
      if (i + 1 < row.size()) s += std::string(width[i] - Columns(row[i]) + 2, ' ');
    }
    out << s << "\n";
  };
  line(header_);
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  out << std::string(total > 2 ? total - 2 : 0, '-') << "\n";
  for (const auto& r : rows_) line(r);
}

std::string OneLine(const std::string& text) {
  std::string out, word;
  bool line_break = false;
  auto flush = [&] {
    if (word.empty()) return;
    if (!out.empty()) out += line_break ? " | " : " ";
    out += word;
    word.clear();
    line_break = false;
  };
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == ' ' || c == '\t') {
      flush();
      line_break |= (c == '\n' || c == '\r') && !out.empty();
    } else {
      word += c;
    }
  }
  flush();
  return out;
}


}  // namespace perfbench
