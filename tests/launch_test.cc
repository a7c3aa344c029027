// Launcher environments: torchrun and SLURM variables, node lists, bad values.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "perfbench/launch.h"

namespace perfbench {
namespace {

DistributedLaunch Parse(const std::map<std::string, std::string>& env) {
  return ParseLaunchEnvironment([&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Launch, NoLauncherMeansPerfbenchStartsTheRanks) {
  auto l = Parse({});
  EXPECT_EQ(l.mode, DistributedLaunch::Mode::kSelf);
  EXPECT_FALSE(l.Fixed());
  EXPECT_EQ(l.rank, 0);
}

TEST(Launch, TorchrunVariables) {
  auto l = Parse({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
                  {"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29600"}});
  EXPECT_EQ(l.mode, DistributedLaunch::Mode::kExternal);
  EXPECT_EQ(l.source, "torchrun");
  EXPECT_EQ(l.rank, 3);
  EXPECT_EQ(l.world_size, 8);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.nproc_per_node, 2);
  EXPECT_EQ(l.nnodes, 4);
  EXPECT_EQ(l.master_addr, "10.0.0.1");
  EXPECT_EQ(l.master_port, 29600);
  auto d = Parse({{"RANK", "0"}, {"WORLD_SIZE", "2"}});
  EXPECT_EQ(d.master_addr, "127.0.0.1");
  EXPECT_EQ(d.master_port, 29500);
}

TEST(Launch, SlurmVariables) {
  auto l = Parse({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
                  {"SLURM_NTASKS_PER_NODE", "4(x2)"}, {"SLURM_NODEID", "1"},
                  {"SLURM_STEP_NODELIST", "gpu[07-08]"}});
  EXPECT_EQ(l.source, "slurm");
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(l.world_size, 8);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.nproc_per_node, 4);
  EXPECT_EQ(l.node_rank, 1);
  EXPECT_EQ(l.nnodes, 2);
  EXPECT_EQ(l.master_addr, "gpu07");
  // MASTER_ADDR wins over the node list; torchrun variables win over SLURM's.
  EXPECT_EQ(Parse({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"MASTER_ADDR", "head"}}).master_addr, "head");
  EXPECT_EQ(Parse({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"RANK", "0"}, {"WORLD_SIZE", "1"}}).source,
            "torchrun");
}

TEST(Launch, SlurmNodeLists) {
  EXPECT_EQ(FirstSlurmHost("node[01-04,07],gpu2"), "node01");
  EXPECT_EQ(FirstSlurmHost("alpha,beta"), "alpha");
  EXPECT_EQ(FirstSlurmHost("solo"), "solo");
  EXPECT_EQ(FirstSlurmHost("n[3,5]"), "n3");
}

TEST(Launch, InconsistentValuesNameTheVariable) {
  auto expect_error = [](const std::map<std::string, std::string>& env, const std::string& needle) {
    try {
      Parse(env);
      ADD_FAILURE() << "expected an error mentioning " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error({{"RANK", "2"}, {"WORLD_SIZE", "2"}}, "RANK=2 is not below WORLD_SIZE=2");
  expect_error({{"RANK", "x"}, {"WORLD_SIZE", "2"}}, "RANK='x'");
  expect_error({{"RANK", "0"}}, "WORLD_SIZE");
  expect_error({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}}, "SLURM_PROCID=4");
  expect_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "http"}}, "MASTER_PORT");
}

}  // namespace
}  // namespace perfbench
