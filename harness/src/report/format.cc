#include "report/format.h"

#include <sstream>

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
  if (unit == "samples/s" || unit == "items/s" || unit == "tokens/s" || unit == "images/s" || unit == "queries/s") {
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

size_t Total(const std::vector<size_t>& width) {
  size_t t = 0;
  for (size_t w : width) t += w + 2;
  return t > 2 ? t - 2 : 0;
}

// Shrinks columns until a row fits `limit` (2 spaces between columns),
// cutting as few cells as it can: first the columns that only a few long
// cells widen (down towards their 90th-percentile cell, never below the
// header), then the widest,
// never a column below 8.
void FitWidths(std::vector<size_t>& width, const std::vector<size_t>& header,
               const std::vector<std::vector<size_t>>& cells, size_t limit) {
  constexpr size_t kMin = 8;
  if (limit == 0 || Total(width) <= limit) return;
  std::vector<size_t> p90(width.size(), kMin);
  for (size_t i = 0; i < width.size(); ++i) {
    std::vector<size_t> c = cells[i];
    p90[i] = std::max(kMin, header[i]);
    if (c.empty()) continue;
    std::sort(c.begin(), c.end());
    p90[i] = std::max({kMin, header[i], c[(c.size() - 1) * 9 / 10]});
  }
  while (Total(width) > limit) {
    size_t best = width.size();
    for (size_t i = 0; i < width.size(); ++i)
      if (width[i] > p90[i] && (best == width.size() || width[i] - p90[i] > width[best] - p90[best])) best = i;
    if (best == width.size()) break;
    width[best] -= std::min(width[best] - p90[best], Total(width) - limit);
  }
  while (Total(width) > limit) {
    auto widest = std::max_element(width.begin(), width.end());
    if (*widest <= kMin) return;
    --*widest;
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
  std::vector<std::vector<size_t>> cells(width.size());
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size() && i < width.size(); ++i) cells[i].push_back(DisplayColumns(r[i]));
  std::vector<size_t> header(width.size());
  for (size_t i = 0; i < width.size(); ++i) header[i] = DisplayColumns(header_[i]);
  FitWidths(width, header, cells, g_max_table_width);
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
  const size_t limit = g_max_table_width == 0 ? 0 : std::min(g_max_table_width, std::max<size_t>(total, 60));
  for (size_t i = 0; i < rows_.size(); ++i) {
    line(rows_[i]);
    if (!details_[i].empty()) out << WrapColumns(details_[i], limit, "    ");
  }
}

std::string WrapColumns(const std::string& text, size_t columns, const std::string& indent) {
  const size_t room = columns > indent.size() + 20 ? columns - indent.size() : 0;
  std::string out, line;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (!line.empty() && room > 0 && DisplayColumns(line) + 1 + DisplayColumns(w) > room) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + w;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
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
