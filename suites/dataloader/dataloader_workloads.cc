// The dataloader suite: an on-disk JPEG dataset read through LibTorch's
// torch::data DataLoader (worker threads, max_jobs = workers x prefetch),
// alone and feeding the amp suite's cnn training step.
//
// dataloader/loader  params workers, prefetch, pin_memory, batch_size, size
//   Variants are not interleaved (see Info()).
//   One step = `batches` batches (8 quick, 16 full) taken from the loader
//   (epochs wrap; augmentation re-drawn per epoch). Per batch: the time the
//   call blocked until the batch (and, on a GPU, its copy to the device) was
//   ready. throughput = samples / step time; batch_latency_p50 / _p99 =
//   median / nearest-rank p99 of the step's batch latencies.
// dataloader/train   the same params; one step = `iters` training iterations
//   (4 quick; full: 8 on a GPU, 4 on the CPU, where one iteration is ~0.5 s
//   of compute: a per-device param, WorkloadInfo::device_params) of amp's
//   cnn (fp32). data_wait = time blocked getting
//   the next batch onto the device; step = data_wait + compute.
//   step_throughput = samples / sum(step); data_wait_share = sum(data_wait) /
//   sum(step) (METRICS.md's input_share). Attribute input_bound = yes when
//   the median share exceeds 0.05 (METRICS.md's threshold, marked there as a
//   guess; attribute input_bound_threshold).
#include <algorithm>
#include <chrono>
#include <cmath>

#include "common/models.h"
#include "dataset.h"
#include "perfbench/workload.h"
#include "common/training.h"

#ifdef PERFBENCH_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace perfbench::dataloader {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInputBoundShare = 0.05;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

DatasetSpec SpecFor(const std::string& size, int64_t samples, int64_t crop, uint64_t seed) {
  DatasetSpec s;
  s.samples = samples;
  s.shard_size = size == "quick" ? 64 : 256;
  s.image = crop + 8;
  s.seed = seed;
  return s;
}

class DataWorkload : public Workload {
 public:
  explicit DataWorkload(bool train) : train_(train) {}

  Status SetUp(const RunContext& ctx) override {
    const std::string size = ctx.params.Get("size", ctx.settings.quick ? "quick" : "full");
    const common::ModelDef* cnn = common::FindModelDef("cnn");
    if (!cnn) return Status::Error("the amp suite's cnn model is not registered");
    const int64_t crop = cnn->sample_shape(size).back();
    batch_ = ctx.params.GetInt("batch_size", 32);
    device_ = ctx.settings.device == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    const int workers = static_cast<int>(ctx.params.GetInt("workers", 0));
    const int prefetch = static_cast<int>(ctx.params.GetInt("prefetch", 2));
    const bool pin = ctx.params.Get("pin_memory", "off") == "on";
    steps_ = train_ ? (size == "quick" ? 4 : 8) : (size == "quick" ? 8 : 16);
    steps_ = static_cast<int>(ctx.params.GetInt("iters", steps_));  // full train: per device; tests
    const std::string source = ctx.params.Get("source", "disk");

    if (source == "memory") {
      // Pre-loaded batches: the loader costs nothing (tests).
      for (int i = 0; i < 4; ++i)
        memory_.push_back({torch::randn({batch_, 3, crop, crop}).to(device_),
                           torch::randint(0, 10, {batch_}, torch::kInt64).to(device_)});
    } else {
      if (ctx.settings.data_dir.empty()) return Status::Error("no data directory (--data-dir)");
      const int64_t samples = ctx.params.GetInt("samples", size == "quick" ? 512 : 8192);
      if (samples < batch_) return Status::Error("samples (" + std::to_string(samples) + ") below one batch");
      const DatasetSpec spec = SpecFor(size, samples, crop, ctx.settings.seed);
      const DatasetFiles files = EnsureDataset(ctx.settings.data_dir, spec);
      attributes_["dataset"] = files.dir;
      attributes_["dataset_generated"] = files.generated ? "yes" : "no (reused)";
      auto reader = std::make_shared<const ShardReader>(files);
      ImageDataset ds(reader, spec.image, crop, ctx.settings.seed);
      if (source == "slow") ds.set_delay(std::chrono::milliseconds(500));  // tests: input-bound on purpose
      torch::manual_seed(ctx.settings.seed);
      pipeline_ = std::make_unique<Pipeline>(ds, batch_, workers, prefetch, pin, device_);
    }
    attributes_["pin_memory"] = device_.is_cuda() ? (pin ? "on" : "off") : "n/a on the CPU";
    attributes_["loader"] = "torch::data::DataLoader, worker threads";
    if (train_) {
      torch::manual_seed(ctx.settings.seed);
      trainer_ = std::make_unique<common::Trainer>(cnn->make(size), common::Precision::kFp32, device_);
    }
    return Status::Ok();
  }

  Status RunStep(StepRecorder& rec) override {
    double samples = 0;
    if (!train_) {
      std::vector<double> lat;
      const auto start = Clock::now();
      for (int i = 0; i < steps_; ++i) {
        const auto t0 = Clock::now();
        auto b = Next();
        lat.push_back(Seconds(t0, Clock::now()));
        samples += static_cast<double>(b.data.size(0));
      }
      rec.SetStepSeconds(Seconds(start, Clock::now()));
      rec.SetItemsProcessed(samples);
      std::sort(lat.begin(), lat.end());
      const size_t n = lat.size();
      rec.Add("batch_latency_p50", n % 2 ? lat[n / 2] : (lat[n / 2 - 1] + lat[n / 2]) / 2);
      rec.Add("batch_latency_p99", lat[static_cast<size_t>(std::ceil(0.99 * n)) - 1]);  // nearest rank
      return Status::Ok();
    }
    double wait = 0, total = 0;
    for (int i = 0; i < steps_; ++i) {
      const auto t0 = Clock::now();
      auto b = Next();
      const auto t1 = Clock::now();
      trainer_->Step({b.data, b.target});
      common::SynchronizeDevice(device_);
      const auto t2 = Clock::now();
      wait += Seconds(t0, t1);
      total += Seconds(t0, t2);
      samples += static_cast<double>(b.data.size(0));
    }
    rec.SetStepSeconds(total);
    rec.Add("step_throughput", samples / total);
    rec.Add("data_wait_share", wait / total);
    shares_.push_back(wait / total);
    return Status::Ok();
  }

  std::map<std::string, std::string> Attributes() const override {
    auto a = attributes_;
    if (train_ && !shares_.empty()) {
      auto s = shares_;
      std::sort(s.begin(), s.end());
      const double median = s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
      a["input_bound"] = median > kInputBoundShare ? "yes" : "no";
      a["input_bound_threshold"] = "0.05";
    }
    return a;
  }

 private:
  torch::data::Example<> Next() {
    if (!memory_.empty()) return memory_[next_++ % memory_.size()];
    return pipeline_->Next();
  }

  bool train_;
  int64_t batch_ = 32;
  int steps_ = 8;
  torch::Device device_{torch::kCPU};
  std::unique_ptr<Pipeline> pipeline_;
  std::vector<torch::data::Example<>> memory_;
  size_t next_ = 0;
  std::unique_ptr<common::Trainer> trainer_;
  std::vector<double> shares_;
  std::map<std::string, std::string> attributes_;
};

std::string SkipReason(const Params& p, const std::string& device) {
  if (p.Get("pin_memory") == "on" && device != "cuda")
    return "pinned memory speeds host-to-GPU copies: not applicable on the CPU";
  return "";
}

// `samples`: dataset size (`--param samples=100000` for a bigger one).
std::vector<Params> Variants(const std::string& size) {
  return Params::Product({{"workers", {"0", "1", "2", "4"}},
                          {"prefetch", {"2"}},
                          {"pin_memory", {"off", "on"}},
                          {"batch_size", {"32"}},
                          {"size", {size}},
                          {"samples", {size == "quick" ? "512" : "8192"}}});
}

WorkloadInfo Info(bool train) {
  WorkloadInfo info;
  info.suite = "dataloader";
  info.name = train ? "train" : "loader";
  info.description = train ? "amp's cnn trained from the on-disk JPEG pipeline: step throughput, data-wait share"
                           : "on-disk JPEG pipeline alone (read, decode, crop, flip, normalise, collate)";
  info.needs = {"data"};
  if (train)
    info.metrics = {{"step_time", "s", Better::kLower},
                    {"step_throughput", "samples/s", Better::kHigher},
                    {"data_wait_share", "fraction", Better::kLower},
                    {"peak_rss", "bytes", Better::kLower}};
  else
    info.metrics = {{"step_time", "s", Better::kLower},
                    {"throughput", "samples/s", Better::kHigher},
                    {"batch_latency_p50", "s", Better::kLower},
                    {"batch_latency_p99", "s", Better::kLower},
                    {"peak_rss", "bytes", Better::kLower}};
  info.variants = Variants("full");
  info.quick_variants = Variants("quick");
  // Not interleaved: a loader's workers keep prefetching while other
  // variants step, so its next step would time batches made in idle time.
  // Each variant runs its warm-up and repetitions back to back (steady state).
  info.skip_reason = SkipReason;
  if (train)
    info.device_params = [](const Params& p, const std::string& device) {
      return p.Get("size") == "full" ? Params{{"iters", device == "cuda" ? "8" : "4"}} : Params{};
    };
  // advise: workers (0: batches made in the training thread); deeper
  // prefetch, which needs workers, so its setting has 2 (compare its row
  // with workers:2's for the prefetch's own part); pinned memory (GPU only).
  info.knobs = {{"workers", {{"workers", "0"}}, {{{"workers", "1"}}, {{"workers", "2"}}, {{"workers", "4"}}}},
                {"prefetch", {{"prefetch", "2"}}, {{{"workers", "2"}, {"prefetch", "8"}}}},
                {"pin_memory", {{"pin_memory", "off"}}, {{{"pin_memory", "on"}}}}};
  return info;
}

class Loader : public DataWorkload {
 public:
  Loader() : DataWorkload(false) {}
};
class Train : public DataWorkload {
 public:
  Train() : DataWorkload(true) {}
};
PERFBENCH_REGISTER_WORKLOAD(Loader, Info(false));
PERFBENCH_REGISTER_WORKLOAD(Train, Info(true));

}  // namespace
}  // namespace perfbench::dataloader
