// The ddp suite's bandwidth definitions (header-only, no torch).
#include <gtest/gtest.h>

#include "collectives.h"

namespace perfbench {
namespace {

TEST(Collectives, BusBandwidthFactorsAreNcclTests) {
  // nccl-tests PERFORMANCE.md: all-reduce 2(n-1)/n, e.g. 1.75 for 8 ranks.
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(BusBwFactor(Collective::kBroadcast, 8), 1.0);
  // 1 GiB all-reduced in 10 ms on 8 ranks: algbw 107.37 GB/s, busbw 187.90 GB/s.
  const double algbw = AlgBw(1073741824.0, 0.010);
  EXPECT_NEAR(algbw, 107.3741824, 1e-9);
  EXPECT_NEAR(algbw * BusBwFactor(Collective::kAllReduce, 8), 187.9048192, 1e-9);
}

}  // namespace
}  // namespace perfbench
