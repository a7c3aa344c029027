// Where ddp ranks go (one GPU each, counted per node) and the NCCL
// environment perfbench sets before a process group is built.
#include "placement.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace perfbench::ddp {
namespace {

DistributedLaunch Launched(int world, int per_node) {
  DistributedLaunch l;
  l.mode = DistributedLaunch::Mode::kExternal;
  l.world_size = world;
  l.nproc_per_node = per_node;
  return l;
}

TEST(Placement, RanksAreCountedPerNodeNotPerWorld) {
  // 2 nodes x 4 GPUs under torchrun: 4 ranks here, all NCCL variants run.
  EXPECT_EQ(RanksPerNode(Launched(8, 4), 8), 4);
  EXPECT_EQ(NcclPlacement(RanksPerNode(Launched(8, 4), 8), 4, false), "");
  // perfbench starting every rank itself: all on this node.
  EXPECT_EQ(RanksPerNode(DistributedLaunch{}, 2), 2);
  EXPECT_EQ(NcclPlacement(RanksPerNode(DistributedLaunch{}, 2), 1, false),
            "nccl needs one GPU per rank: 2 rank(s) on this node, 1 GPU(s)");
  // More ranks per node than GPUs are refused, never shared.
  EXPECT_NE(NcclPlacement(RanksPerNode(Launched(8, 8), 8), 4, false), "");
  EXPECT_EQ(NcclPlacement(1, 1, false), "");
  EXPECT_NE(NcclPlacement(1, 0, false), "");
  // A launcher that binds one GPU per rank (CUDA_VISIBLE_DEVICES): each sees one.
  EXPECT_EQ(NcclPlacement(4, 1, true), "");
  EXPECT_NE(NcclPlacement(4, 0, true), "");
}

TEST(Placement, EachLocalRankGetsItsOwnGpuNeverAShareByAccident) {
  EXPECT_EQ(GpuForRank(2, 4, false), 2);
  EXPECT_EQ(GpuForRank(5, 4, false), -1) << "no local_rank % devices";
  EXPECT_EQ(GpuForRank(3, 1, true), 0) << "bound per rank: its only visible GPU";
  EXPECT_EQ(GpuForRank(0, 0, true), -1);
}

TEST(Placement, NcclErrorHandlingIsCleanUpOnlyUnlessTheUserChoseOne) {
  unsetenv("TORCH_NCCL_ASYNC_ERROR_HANDLING");
  ApplyNcclEnvironment();
  ASSERT_NE(std::getenv("TORCH_NCCL_ASYNC_ERROR_HANDLING"), nullptr);
  EXPECT_STREQ(std::getenv("TORCH_NCCL_ASYNC_ERROR_HANDLING"), "2");
  setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", 1);
  ApplyNcclEnvironment();
  EXPECT_STREQ(std::getenv("TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
  unsetenv("TORCH_NCCL_ASYNC_ERROR_HANDLING");
}

}  // namespace
}  // namespace perfbench::ddp
