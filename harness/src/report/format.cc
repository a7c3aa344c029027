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
size_t g_max_table_width = kDefaultTableWidth;

// The byte after an ANSI escape sequence starting at s[i] ("\x1b[...m").
size_t SkipEscape(const std::string& s, size_t i) {
  size_t j = i + 1;
  if (j < s.size() && s[j] == '[') ++j;
  while (j < s.size() && !(s[j] >= '@' && s[j] <= '~')) ++j;
  return std::min(j + 1, s.size());
}

// Shrinks the widest columns until the row fits `limit` (2 spaces between
// columns), never a column below 6.
void FitWidths(std::vector<size_t>& width, size_t limit) {
  constexpr size_t kMin = 6;
  auto total = [&] {
    size_t t = 0;
    for (size_t w : width) t += w + 2;
    return t > 2 ? t - 2 : 0;
  };
  while (limit > 0 && total() > limit) {
    auto widest = std::max_element(width.begin(), width.end());
    if (*widest <= kMin) return;
    size_t second = kMin;
    for (auto it = width.begin(); it != width.end(); ++it)
      if (it != widest) second = std::max(second, std::min(*it, *widest));
    const size_t cut = std::max<size_t>(1, std::min(total() - limit, *widest - second));
    *widest -= std::min(cut, *widest - kMin);
  }
}
}  // namespace

void SetMaxTableWidth(size_t columns) { g_max_table_width = columns; }
size_t MaxTableWidth() { return g_max_table_width; }

size_t DisplayColumns(const std::string& s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\x1b') {
      i = SkipEscape(s, i);
      continue;
    }
    if ((s[i] & 0xC0) != 0x80) ++n;
    ++i;
  }
  return n;
}

std::string FitColumns(const std::string& s, size_t columns) {
  if (DisplayColumns(s) <= columns) return s;
  std::string out;
  size_t n = 0;
  bool escaped = false;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\x1b') {
      const size_t end = SkipEscape(s, i);
      out += s.substr(i, end - i);
      escaped = true;
      i = end;
      continue;
    }
    const bool starts = (s[i] & 0xC0) != 0x80;
    if (starts && n + 1 >= columns) break;  // room for "…"
    if (starts) ++n;
    out += s[i++];
  }
  return out + "…" + (escaped ? "\x1b[0m" : "");
}

void TextTable::Print(std::ostream& out) const {
  std::vector<size_t> width(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], DisplayColumns(row[i]));
  };
  widen(header_);
  for (const auto& r : rows_) widen(r);
  FitWidths(width, g_max_table_width);
  auto line = [&](const std::vector<std::string>& row) {
    std::string s;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      const std::string cell = FitColumns(row[i], width[i]);
      s += cell;
      if (i + 1 < row.size()) s += std::string(width[i] - DisplayColumns(cell) + 2, ' ');
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
