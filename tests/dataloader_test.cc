// The dataloader suite: deterministic, reused dataset generation; every
// sample decoded once per epoch with any number of workers; corrupt and
// truncated shards named; the data-wait share near 1 for a slow loader and
// near 0 for a pre-loaded one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "common/synthetic_images.h"
#include "dataset.h"
#include "perfbench/posix_fs.h"
#include "registry.h"

namespace perfbench::dataloader {
namespace {

std::string Slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class DataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = "/tmp/perfbench_data_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    posix::RemoveTree(root_);
  }
  void TearDown() override { posix::RemoveTree(root_); }
  static DatasetSpec Small() {
    DatasetSpec s;
    s.samples = 40;
    s.shard_size = 16;
    s.image = 24;
    s.seed = 7;
    return s;
  }
  std::string root_;
};

TEST_F(DataTest, GenerationIsDeterministicAndReused) {
  const auto a = EnsureDataset(root_ + "/a", Small());
  EXPECT_TRUE(a.generated);
  ASSERT_EQ(a.shards.size(), 3u);  // 16 + 16 + 8
  const auto again = EnsureDataset(root_ + "/a", Small());
  EXPECT_FALSE(again.generated);
  const auto b = EnsureDataset(root_ + "/b", Small());
  for (size_t i = 0; i < a.shards.size(); ++i) EXPECT_EQ(Slurp(a.shards[i]), Slurp(b.shards[i])) << i;
  // Another seed, other bytes.
  auto other = Small();
  other.seed = 8;
  EXPECT_NE(Slurp(EnsureDataset(root_ + "/a", other).shards[0]), Slurp(a.shards[0]));
  // An interrupted generation (no manifest) is regenerated.
  std::remove((a.dir + "/manifest.json").c_str());
  const auto regenerated = EnsureDataset(root_ + "/a", Small());
  EXPECT_TRUE(regenerated.generated);
  EXPECT_EQ(Slurp(regenerated.shards[0]), Slurp(b.shards[0]));
}

TEST_F(DataTest, EverySampleIsDecodedOncePerEpochWithAnyWorkerCount) {
  const auto files = EnsureDataset(root_, Small());
  auto reader = std::make_shared<const ShardReader>(files);
  ASSERT_EQ(reader->size(), 40);
  for (int workers : {0, 1, 2, 4}) {
    std::mutex mu;
    std::map<size_t, int> seen;
    ImageDataset ds(reader, 24, 16, 7);
    ds.set_observer([&](size_t i) {
      std::lock_guard<std::mutex> lock(mu);
      ++seen[i];
    });
    Pipeline p(ds, 8, workers, 2, false, torch::kCPU);
    int64_t samples = 0;
    for (int b = 0; b < 5; ++b) {  // one epoch: 40 / 8 batches
      auto batch = p.Next();
      EXPECT_EQ(batch.data.sizes(), (std::vector<int64_t>{8, 3, 16, 16}));
      EXPECT_EQ(batch.target.size(0), 8);
      samples += batch.data.size(0);
    }
    EXPECT_EQ(samples, 40);
    {
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_EQ(seen.size(), 40u) << workers << " workers";
      for (const auto& [i, n] : seen) EXPECT_EQ(n, 1) << "sample " << i << ", " << workers << " workers";
    }
    p.Next();  // the second epoch starts
    EXPECT_EQ(p.epoch(), 1);
  }
}

TEST_F(DataTest, LabelsAndPixelsSurviveTheRoundTrip) {
  const auto files = EnsureDataset(root_, Small());
  ShardReader reader(files);
  std::vector<uint8_t> bytes, rgb, decoded(24 * 24 * 3);
  int64_t label = 0, want = 0;
  reader.Read(17, &bytes, &label);
  common::SynthesizeImage(7, 17, 24, 10, &rgb, &want);
  EXPECT_EQ(label, want);
  DecodeJpeg(bytes.data(), bytes.size(), 24, 24, decoded.data());
  double err = 0;
  for (size_t i = 0; i < rgb.size(); ++i) err += std::abs(int(rgb[i]) - int(decoded[i]));
  EXPECT_LT(err / rgb.size(), 12.0);  // JPEG q90 on a noisy image: a few levels on average
}

TEST_F(DataTest, CorruptAndTruncatedShardsAreNamed) {
  const auto files = EnsureDataset(root_, Small());
  const std::string shard = files.shards[1];
  std::string data = Slurp(shard);
  // Damage the entropy-coded data of every record in shard 1.
  const size_t index_end = 16 + 16 * 16;
  for (size_t i = index_end + 400; i < data.size(); i += 97) data[i] = static_cast<char>(data[i] ^ 0x5a);
  std::ofstream(shard, std::ios::binary) << data;
  auto reader = std::make_shared<const ShardReader>(files);
  ImageDataset ds(reader, 24, 16, 7);
  int failures = 0;
  for (size_t i = 16; i < 32; ++i) {
    try {
      ds.get(i);
    } catch (const std::runtime_error& e) {
      ++failures;
      EXPECT_NE(std::string(e.what()).find(shard), std::string::npos) << e.what();
    }
  }
  EXPECT_GT(failures, 0);
  EXPECT_NO_THROW(ds.get(0));  // other shards still read
  // Truncated: the index promises more bytes than the file has.
  const std::string head = Slurp(files.shards[2]).substr(0, 300);
  std::ofstream(files.shards[2], std::ios::binary) << head;
  ShardReader truncated(files);
  std::vector<uint8_t> bytes;
  int64_t label;
  try {
    truncated.Read(39, &bytes, &label);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(files.shards[2]), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos);
  }
  std::ofstream(files.shards[0], std::ios::binary) << "PBSH";
  try {
    ShardReader bad(files);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(files.shards[0]), std::string::npos);
  }
}

struct Recorder : StepRecorder {
  std::map<std::string, double> values;
  double seconds = 0;
  void SetStepSeconds(double s) override { seconds = s; }
  void SetItemsProcessed(double) override {}
  void Add(std::string_view m, double v) override { values[std::string(m)] = v; }
};

double WaitShare(const std::string& source, const std::string& root) {
  const RegisteredWorkload* train = nullptr;
  for (const auto* w : AllWorkloads())
    if (w->info.FullName() == "dataloader/train") train = w;
  EXPECT_NE(train, nullptr);
  Params p{{"workers", "0"}, {"prefetch", "2"}, {"pin_memory", "off"}, {"batch_size", "2"}, {"size", "quick"}, {"iters", "1"},
           {"source", source}};
  RunSettings settings = RunSettings::Defaults(/*quick=*/true);
  settings.device = "cpu";
  settings.threads = 1;
  settings.data_dir = root;
  RunContext ctx{p, settings};
  // One intra-op thread: on a loaded machine OpenMP's spinning threads can
  // make the small training step many times slower than it is.
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  auto w = train->factory();
  EXPECT_TRUE(w->SetUp(ctx).ok());
  Recorder rec;
  EXPECT_TRUE(w->RunStep(rec).ok());  // warm-up
  EXPECT_TRUE(w->RunStep(rec).ok());
  w->TearDown();
  at::set_num_threads(threads);
  return rec.values.at("data_wait_share");
}

TEST_F(DataTest, DataWaitShareIsNearOneForASlowLoaderAndNearZeroForAPreloadedOne) {
  const double slow = WaitShare("slow", root_);  // 500 ms per sample, 2 per batch, no workers
  const double preloaded = WaitShare("memory", root_);
  EXPECT_GT(slow, 0.75);
  EXPECT_LT(preloaded, 0.05);
}

}  // namespace
}  // namespace perfbench::dataloader
