// Human-readable formatting: unit-aware numbers and aligned text tables.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace perfbench {

// 0.00123 "s" -> "1.23 ms"; 3.2e9 "bytes" -> "2.98 GiB"; 1234.5 "samples/s" -> "1.23k samples/s".
std::string FormatValue(double value, const std::string& unit);

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Columns left-aligned, two spaces apart; a rule under the header.
  void Print(std::ostream& out) const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace perfbench
