// Human-readable output: unit-aware numbers, shares as percentages, one-line
// table cells, and Markdown cells that cannot break their table.
#include <gtest/gtest.h>

#include "compare/compare.h"
#include "report/format.h"

namespace perfbench {
namespace {

TEST(Format, ValuesByUnit) {
  EXPECT_EQ(FormatValue(0.00123, "s"), "1.23 ms");
  EXPECT_EQ(FormatValue(3.2e9, "bytes"), "2.98 GiB");
  EXPECT_EQ(FormatValue(1234.5, "samples/s"), "1.23k samples/s");
  EXPECT_EQ(FormatValue(1.52, "ratio"), "1.52x");
  EXPECT_EQ(FormatValue(250.0, "1"), "250.0");
}

TEST(Format, SharesArePercentages) {
  EXPECT_EQ(FormatValue(0.114, "fraction"), "11.4%");
  EXPECT_EQ(FormatValue(1.0, "fraction"), "100.0%");
}

TEST(Format, MultiLineValuesFitOneCell) {
  EXPECT_EQ(OneLine("ATen/Parallel:\n\tat::get_num_threads() : 2\n\tat::get_num_interop_threads() : 1\n"),
            "ATen/Parallel: | at::get_num_threads() : 2 | at::get_num_interop_threads() : 1");
  EXPECT_EQ(OneLine("plain"), "plain");
  EXPECT_EQ(OneLine("a\r\n\nb"), "a | b");
}

TEST(Format, MarkdownCellsEscapePipesAndBreaks) {
  EXPECT_EQ(MdCell("a|b"), "a\\|b");
  EXPECT_EQ(MdCell("line\nbreak"), "line break");
  EXPECT_EQ(MdCell("back\\slash"), "back\\\\slash");
}

TEST(Format, AReasonWithAPipeKeepsTheMarkdownTable) {
  MetricVerdict m;
  m.suite = "s";
  m.workload = "w";
  m.metric = "throughput";
  m.verdict = Verdict::kMissing;
  m.reason = "skipped in the candidate: a | b";
  Comparison c;
  c.verdict = Overall::kInconclusive;
  c.metrics = {m};
  const std::string md = ComparisonMarkdown(c, RunData{}, RunData{}, false);
  const std::string row = md.substr(md.rfind("| missing"));
  // 8 columns (mde among them): 9 unescaped pipes.
  int pipes = 0;
  for (size_t i = 0; i < row.size(); ++i) pipes += row[i] == '|' && (i == 0 || row[i - 1] != '\\');
  EXPECT_EQ(pipes, 9) << row;
}

}  // namespace
}  // namespace perfbench
