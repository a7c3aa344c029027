// Human-readable formatting: unit-aware numbers and aligned text tables.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace perfbench {

// 0.00123 "s" -> "1.23 ms"; 3.2e9 "bytes" -> "2.98 GiB"; 1234.5 "samples/s" -> "1.23k samples/s";
// 1.52 "ratio" -> "1.52x"; 0.114 "fraction" (a share of a whole) -> "11.4%".
std::string FormatValue(double value, const std::string& unit);

// A multi-line value (torch's parallel info) for one table cell: lines joined
// with " | ", runs of blanks folded to one space.
std::string OneLine(const std::string& text);

// The widest a printed table may be, in display columns (default 120; 0:
// unlimited, as `--wide` asks). Wider tables shrink their widest columns,
// cutting cells with "…" (JSON and --wide keep every character).
inline constexpr size_t kDefaultTableWidth = 120;
void SetMaxTableWidth(size_t columns);
size_t MaxTableWidth();

// Display columns of `s`: UTF-8 characters, ANSI colour sequences not counted.
size_t DisplayColumns(const std::string& s);
// `s` cut to at most `columns` display columns, ending "…" when cut.
std::string FitColumns(const std::string& s, size_t columns);
// `text` as lines of at most `columns` display columns (0: one line), each
// after `indent`, broken at spaces where it can be.
std::string WrapColumns(const std::string& text, size_t columns, const std::string& indent);

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  // `detail`, when given, is printed under the row, indented and wrapped
  // within the table's width: the long text a narrow table cannot hold.
  void AddRow(std::vector<std::string> row, std::string detail = "") {
    rows_.push_back(std::move(row));
    details_.push_back(std::move(detail));
  }
  // Columns left-aligned, two spaces apart; a rule under the header; within
  // MaxTableWidth().
  void Print(std::ostream& out) const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::string> details_;
};

}  // namespace perfbench
