// The ddp suite through the real binary on CPU/Gloo: world sizes 1 and 2,
// metrics within their bounds, identical gradients, the all-reduce sweep,
// faults (a rank that dies, hangs or never connects), a taken port, and a
// torchrun-style launch of two processes.
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/process.h"

namespace {

namespace fs = std::filesystem;

using Result = perfbench::testing::ProcessResult;

class Ddp : public ::testing::Test {
 protected:
  void SetUp() override {
    tag_ = "ddptest" + std::to_string(getpid()) + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / tag_;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Result Run(const std::string& args, const std::string& env = "") {
    return perfbench::testing::RunIn(dir_, "env -u PERFBENCH_DB -u RANK -u WORLD_SIZE -u SLURM_PROCID PERFBENCH_TEST_TAG=" +
                                               tag_ + " " + env + " " + PERFBENCH_BIN + " " + args);
  }

  // Rank workers started by this test that are still alive.
  int Orphans() {
    int count = 0;
    DIR* d = opendir("/proc");
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      std::ifstream env(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
      std::stringstream ss;
      ss << env.rdbuf();
      const std::string s = ss.str();
      std::ifstream cmd(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
      std::stringstream cs;
      cs << cmd.rdbuf();
      if (s.find("PERFBENCH_TEST_TAG=" + tag_ + '\0') != std::string::npos &&
          cs.str().find("__ddp-worker") != std::string::npos)
        ++count;
    }
    closedir(d);
    return count;
  }

  static nlohmann::json Find(const nlohmann::json& doc, const std::string& workload, const std::string& metric,
                             const std::string& world) {
    for (const auto& r : doc["results"])
      if (r["workload"] == workload && r["metric"] == metric && r["params"]["world_size"] == world) return r;
    return nullptr;
  }

  std::string tag_;
  fs::path dir_;
};

constexpr const char* kTrain = "run --suite ddp --quick --filter 'train/.*overlap:on' --repetitions 4 --warmup 1 --processes 1";
constexpr const char* kTrain2 =
    "run --suite ddp --quick --filter 'train/world_size:2/.*overlap:on' --repetitions 4 --warmup 1 --processes 1";

TEST_F(Ddp, WorldSizesOneAndTwoTrainWithIdenticalGradients) {
  auto r = Run(std::string(kTrain) + " --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  for (const char* world : {"1", "2"}) {
    for (const char* m : {"throughput", "throughput_per_rank", "scaling_efficiency", "comm_share", "step_time_skew"}) {
      auto res = Find(doc, "train", m, world);
      if (std::string(m) == "comm_share" && std::string(world) == "1") {
        // One rank communicates nothing: no exposed-communication figure
        // (only the skipped NCCL variants list the metric, empty).
        for (const auto& r : doc["results"])
          if (r["metric"] == "comm_share" && r["params"]["world_size"] == "1")
            EXPECT_TRUE(r["samples"].empty()) << "comm_share reported at world size 1";
        EXPECT_EQ(Find(doc, "train", "throughput", world)["attributes"]["comm_share"],
                  "not reported: one rank communicates nothing");
        continue;
      }
      ASSERT_FALSE(res.is_null()) << m << " world " << world;
      EXPECT_EQ(res["status"], "ok") << res["reason"];
      // 4 planned; --quick's 0.5 s budget may cut a step slowed by a busy machine to 2 or 3, and says so.
      const size_t n = res["samples"].size();
      EXPECT_TRUE(n >= 2 && n <= 4) << n;
      if (n < 4) EXPECT_NE(res["reason"].get<std::string>().find("quick budget"), std::string::npos) << res["reason"];
    }
    auto share = Find(doc, "train", "comm_share", world);
    for (double s : share.is_null() ? nlohmann::json::array() : share["samples"]) {
      EXPECT_GE(s, 0.0);
      EXPECT_LE(s, 1.0);
    }
    EXPECT_EQ(Find(doc, "train", "throughput", world)["attributes"]["grads_identical"], "yes");
  }
  // Efficiency of world 1 is 1 by definition; world 2's is a ratio of two
  // measured throughputs: (0, 1] up to timing noise.
  for (double e : Find(doc, "train", "scaling_efficiency", "1")["samples"]) EXPECT_DOUBLE_EQ(e, 1.0);
  for (double e : Find(doc, "train", "scaling_efficiency", "2")["samples"]) {
    EXPECT_GT(e, 0.0);
    EXPECT_LE(e, 1.15);
  }
  // Global throughput = per-rank throughput x world size.
  auto t2 = Find(doc, "train", "throughput", "2")["samples"];
  auto p2 = Find(doc, "train", "throughput_per_rank", "2")["samples"];
  for (size_t i = 0; i < t2.size(); ++i) EXPECT_NEAR(t2[i].get<double>(), 2 * p2[i].get<double>(), 1e-6 * t2[i].get<double>());
  for (double s : Find(doc, "train", "step_time_skew", "1")["samples"]) EXPECT_EQ(s, 0.0);
  EXPECT_EQ(Orphans(), 0);
}

TEST_F(Ddp, AllReduceSweepReportsNcclTestsBandwidths) {
  auto r = Run("run --suite ddp --quick --filter 'allreduce/.*bytes:1048576' --repetitions 3 --warmup 1 --processes 1 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  for (const char* world : {"1", "2"}) {
    auto t = Find(doc, "allreduce", "step_time", world)["samples"];
    auto alg = Find(doc, "allreduce", "algbw", world)["samples"];
    auto bus = Find(doc, "allreduce", "busbw", world)["samples"];
    ASSERT_EQ(t.size(), 3u);
    for (size_t i = 0; i < t.size(); ++i) {
      EXPECT_NEAR(alg[i].get<double>(), 1048576.0 / t[i].get<double>() / 1e9, 1e-9 * alg[i].get<double>());
      // 2(n-1)/n: 0 for one rank, 1 for two.
      EXPECT_DOUBLE_EQ(bus[i].get<double>(), std::string(world) == "1" ? 0.0 : alg[i].get<double>());
    }
  }
}

TEST_F(Ddp, ARankThatDiesEndsTheRunNamingItWithNoOrphans) {
  auto r = Run(std::string(kTrain2) + " --comm-timeout 20",
               "PERFBENCH_DDP_FAULT=rank=1,step=2,mode=die");
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("rank 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exited with status 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 2"), std::string::npos) << r.out;
  EXPECT_EQ(Orphans(), 0);
  // The failure is stored as such; the database is intact.
  auto show = Run("show latest --format json");
  ASSERT_EQ(show.code, 0);
  EXPECT_EQ(nlohmann::json::parse(show.out)["results"][0]["status"], "failed");
}

TEST_F(Ddp, AKilledRankIsNamedWithItsSignal) {
  auto r = Run(std::string(kTrain2) + " --comm-timeout 20", "PERFBENCH_DDP_FAULT=rank=1,step=1,mode=kill");
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("rank 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("killed by signal 9"), std::string::npos) << r.out;
  EXPECT_EQ(Orphans(), 0);
}

TEST_F(Ddp, ARankThatHangsEndsTheRunWithinTheTimeout) {
  auto r = Run(std::string(kTrain2) + " --comm-timeout 3",
               "PERFBENCH_DDP_FAULT=rank=1,step=1,mode=hang");
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("rank 1 last reported"), std::string::npos) << r.out;
  EXPECT_EQ(Orphans(), 0);
}

TEST_F(Ddp, ARankThatCannotConnectEndsTheRun) {
  auto r = Run(std::string(kTrain2) + " --comm-timeout 3",
               "PERFBENCH_DDP_FAULT=rank=1,mode=noconnect");
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("rendezvous"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 1"), std::string::npos) << r.out;
  EXPECT_EQ(Orphans(), 0);
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

TEST_F(Ddp, ATakenMasterPortIsAClearInputError) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  listen(fd, 1);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  auto r = Run("run --suite ddp --quick --nnodes 1 --nproc-per-node 2 --master-addr 127.0.0.1 --master-port " +
               std::to_string(port));
  close(fd);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("master port " + std::to_string(port) + " is already in use"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "perfbench.db"));
  auto torchrun = Run("run --suite amp --quick", "RANK=0 WORLD_SIZE=2 MASTER_PORT=" + std::to_string(FreePort()));
  EXPECT_EQ(torchrun.code, 2);
  EXPECT_NE(torchrun.err.find("runs only multi-rank suites, not 'amp'"), std::string::npos) << torchrun.err;
}

TEST_F(Ddp, ATorchrunStyleLaunchOfTwoProcessesWritesOnlyFromRankZero) {
  // The OS names a free port, but another process may take it before rank 0
  // binds it; rank 0 then says so (exit 2) and the launch is retried.
  Result r;
  int status1 = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::string port = std::to_string(FreePort());
    // Rank 1 in the background, into its own database path that must stay absent.
    const std::string rank1 = "cd '" + dir_.string() + "' && PERFBENCH_TEST_TAG=" + tag_ +
                              " RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port + " " +
                              PERFBENCH_BIN + " " + std::string(kTrain) + " --format none --db rank1.db > rank1.log 2>&1";
    FILE* bg = popen(rank1.c_str(), "r");
    r = Run(std::string(kTrain) + " --format none --db ranks.db",
            "RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port);
    status1 = pclose(bg);
    if (!(r.code == 2 && r.err.find("already in use") != std::string::npos)) break;
  }
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(WEXITSTATUS(status1), 0);
  EXPECT_FALSE(fs::exists(dir_ / "rank1.db"));
  auto show = Run("show latest --db ranks.db --format json");
  ASSERT_EQ(show.code, 0);
  auto doc = nlohmann::json::parse(show.out);
  bool world2 = false;
  for (const auto& res : doc["results"]) {
    if (res["params"]["world_size"] == "2" && res["status"] == "ok") world2 = true;
    if (res["params"]["world_size"] == "1") EXPECT_EQ(res["status"], "skipped");
  }
  EXPECT_TRUE(world2);
  EXPECT_EQ(doc["run"]["settings"]["launch"]["source"], "torchrun");
}

}  // namespace
