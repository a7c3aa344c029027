// The ddp suite: data-parallel training of the amp suite's models over c10d
// (Gloo on the CPU, NCCL on GPUs), and an all-reduce bus-bandwidth sweep.
//
// ddp/train    params world_size, backend, overlap, model, size, bucket_mb
//   Each timed repetition, on every rank: a training step with gradient sync
//   (gradients all-reduced in buckets; with overlap:on each bucket's
//   all-reduce starts asynchronously as soon as its gradients are ready during
//   backward, with overlap:off all start after backward) and the same step
//   with sync skipped, in alternating order, each after a barrier; the
//   no-sync step is undone (parameters and momentum restored). Per rank:
//   t_sync, t_nosync. Metrics (rank 0):
//     step_time            max over ranks of t_sync (the global step time)
//     throughput           world_size * batch / step_time (global samples/s)
//     throughput_per_rank  throughput / world_size
//     scaling_efficiency   T(N) / (N * T(1)), T(1) from world_size 1 in the
//                          same run, per repetition (derived by the runner)
//     comm_share           (max t_sync - max t_nosync) / max t_sync: exposed
//                          (non-overlapped) communication, clamped at 0; not
//                          reported at world size 1, where nothing is
//                          communicated (the attribute says so)
//     step_time_skew       max - min over ranks of t_sync, per step; the
//                          attribute step_time_skew_of_medians is max - min of
//                          the per-rank medians
//   Each rank trains on its own seeded data shard. After every sync step the
//   ranks compare a checksum of their averaged gradients: identical or the
//   variant fails.
// ddp/allreduce  params world_size, backend, bytes
//   Barrier, then `iters` all-reduces (SUM, fp32) of `bytes`, timed; t = the
//   slowest rank's time / iters. algbw = bytes / t / 1e9 (GB/s); busbw =
//   algbw * 2(n-1)/n (nccl-tests' all-reduce factor; 0 for one rank).
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "collectives.h"
#include "common/models.h"
#include "common/projection.h"
#include "common/training.h"
#include "perfbench/statistics.h"
#include "perfbench/workload.h"
#include "ranks.h"

#ifdef PERFBENCH_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace perfbench::ddp {
namespace {

using Clock = std::chrono::steady_clock;

int CudaDevices() {
#ifdef PERFBENCH_WITH_CUDA
  return static_cast<int>(c10::cuda::device_count());
#else
  return 0;
#endif
}

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }


// Gradients all-reduced in buckets, optionally overlapped with backward.
class GradSync {
 public:
  GradSync(std::vector<torch::Tensor> params, Ranks& ranks, int64_t bucket_bytes, bool overlap)
      : params_(std::move(params)), ranks_(ranks), overlap_(overlap) {
    // Gradients arrive roughly in reverse order of the parameters.
    Bucket current;
    int64_t bytes = 0;
    for (size_t k = params_.size(); k-- > 0;) {
      const auto& p = params_[k];
      current.members.push_back(k);
      current.offsets.push_back(current.numel);
      current.numel += p.numel();
      bytes += p.numel() * static_cast<int64_t>(p.element_size());
      if (bytes >= bucket_bytes) {
        buckets_.push_back(std::move(current));
        current = Bucket();
        bytes = 0;
      }
    }
    if (!current.members.empty()) buckets_.push_back(std::move(current));
    where_.resize(params_.size());
    for (size_t b = 0; b < buckets_.size(); ++b) {
      auto& bk = buckets_[b];
      bk.flat = torch::zeros({bk.numel}, params_.front().options());
      for (size_t j = 0; j < bk.members.size(); ++j) where_[bk.members[j]] = {b, j};
    }
    for (size_t k = 0; k < params_.size(); ++k)
      hooks_.push_back(params_[k].register_hook([this, k](torch::Tensor g) { OnGrad(k, g); }));
  }
  ~GradSync() {
    for (size_t k = 0; k < params_.size(); ++k) params_[k].remove_hook(hooks_[k]);
  }
  size_t buckets() const { return buckets_.size(); }

  // Before backward: whether this step syncs.
  void Arm(bool sync) {
    armed_ = sync;
    for (auto& b : buckets_) {
      b.pending = static_cast<int>(b.members.size());
      b.work.reset();
    }
  }
  // After backward: launch what is left, wait, average, write the gradients.
  void Finish() {
    if (!armed_) return;
    for (auto& b : buckets_)
      if (!b.work) Launch(b);
    for (auto& b : buckets_) {
      ranks_.Wait(b.work);
      b.flat.div_(ranks_.world());
      for (size_t j = 0; j < b.members.size(); ++j) {
        auto& p = params_[b.members[j]];
        p.mutable_grad().copy_(b.flat.narrow(0, b.offsets[j], p.numel()).view_as(p));
      }
    }
    armed_ = false;
  }

 private:
  struct Bucket {
    std::vector<size_t> members;
    std::vector<int64_t> offsets;
    int64_t numel = 0;
    torch::Tensor flat;
    int pending = 0;
    c10::intrusive_ptr<c10d::Work> work;
  };
  void OnGrad(size_t k, const torch::Tensor& g) {
    if (!armed_) return;
    auto [b, j] = where_[k];
    auto& bk = buckets_[b];
    torch::NoGradGuard no_grad;
    bk.flat.narrow(0, bk.offsets[j], g.numel()).copy_(g.reshape(-1));
    if (--bk.pending == 0 && overlap_) Launch(bk);
  }
  void Launch(Bucket& b) {
    // A parameter that got no gradient this step contributes its current one (or zeros).
    if (b.pending > 0) {
      for (size_t j = 0; j < b.members.size(); ++j) {
        const auto& p = params_[b.members[j]];
        if (p.grad().defined()) b.flat.narrow(0, b.offsets[j], p.numel()).copy_(p.grad().reshape(-1));
      }
    }
    std::vector<at::Tensor> v{b.flat};
    c10d::AllreduceOptions o;
    o.timeout = ranks_.timeout();
    b.work = ranks_.pg().allreduce(v, o);
  }

  std::vector<torch::Tensor> params_;
  Ranks& ranks_;
  bool overlap_;
  bool armed_ = false;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<size_t, size_t>> where_;
  std::vector<unsigned> hooks_;
};

// Injected faults (tests): hang for ever, be SIGKILLed, or exit with status 3.
[[noreturn]] void Misbehave(const Fault& fault, int rank) {
  if (fault.mode == "hang")
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  if (fault.mode == "kill") raise(SIGKILL);  // as the OOM killer or a scheduler would
  std::fprintf(stderr, "injected fault: rank %d dies at step %lld\n", rank, static_cast<long long>(fault.step));
  std::fflush(stderr);
  _exit(3);
}

// What one step measured, gathered on every rank.
struct Gathered {
  std::vector<std::vector<double>> per_rank;  // [rank][values]
};

// The per-rank part of a workload, shared by rank 0 (in the runner), by
// runner-driven ranks of a launched run, and by spawned workers.
class Core {
 public:
  virtual ~Core() = default;
  virtual Gathered Step(int64_t k) = 0;
};

class TrainCore : public Core {
 public:
  TrainCore(const Spec& spec, Ranks& ranks) : ranks_(ranks) {
    const std::string model = spec.params.Get("model", "mlp");
    const common::ModelDef* def = common::FindModelDef(model);
    if (!def) throw std::invalid_argument("unknown model '" + model + "'");
    const std::string size = spec.params.Get("size", spec.settings.quick ? "quick" : "full");
    torch::manual_seed(spec.settings.seed);  // same initial weights on every rank
    trainer_ = std::make_unique<common::Trainer>(def->make(size), common::Precision::kFp32, ranks.device());
    // Each rank its own shard of the data.
    batches_ = common::MakeBatches(*def, size, 4, spec.settings.seed + 1000003ULL * (ranks.rank() + 1), ranks.device());
    batch_ = def->batch(size);
    const double mb = std::stod(spec.params.Get("bucket_mb", "25"));
    sync_ = std::make_unique<GradSync>(trainer_->Parameters(), ranks, static_cast<int64_t>(mb * (1 << 20)),
                                       spec.params.Get("overlap", "on") == "on");
    fault_ = Fault::FromEnvironment();
  }
  int64_t batch() const { return batch_; }
  size_t buckets() const { return sync_->buckets(); }

  Gathered Step(int64_t k) override {
    if (fault_.Hits(ranks_.rank(), k)) Misbehave(fault_, ranks_.rank());
    const auto& b = batches_[static_cast<size_t>(k) % batches_.size()];
    double t_sync = 0, t_nosync = 0, checksum = 0;
    auto synced = [&] {
      ranks_.Phase("step " + std::to_string(k) + " with gradient sync");
      ranks_.Barrier();
      const auto t0 = Clock::now();
      sync_->Arm(true);
      trainer_->ForwardBackward(b);
      sync_->Finish();
      trainer_->OptimizerStep();
      common::SynchronizeDevice(ranks_.device());
      t_sync = Seconds(t0, Clock::now());
      checksum = Checksum();  // untimed; the optimizer leaves the gradients alone
    };
    auto unsynced = [&] {
      ranks_.Phase("step " + std::to_string(k) + " without gradient sync");
      const auto saved = trainer_->Save();
      ranks_.Barrier();
      const auto t0 = Clock::now();
      sync_->Arm(false);
      trainer_->ForwardBackward(b);
      trainer_->OptimizerStep();
      common::SynchronizeDevice(ranks_.device());
      t_nosync = Seconds(t0, Clock::now());
      trainer_->Restore(saved);
    };
    // Alternate the order, so that neither always runs on warmer caches.
    if (k % 2 == 0) {
      synced();
      unsynced();
    } else {
      unsynced();
      synced();
    }
    ranks_.Phase("step " + std::to_string(k) + " gather");
    return {ranks_.AllGather({t_sync, t_nosync, checksum})};
  }

 private:
  // Order-sensitive sum of the averaged gradients, in double.
  double Checksum() {
    torch::NoGradGuard no_grad;
    double s = 0;
    int i = 1;
    for (const auto& p : trainer_->Parameters())
      if (p.grad().defined()) s += (i++) * p.grad().to(torch::kFloat64).sum().item<double>();
    return s;
  }
  Ranks& ranks_;
  std::unique_ptr<common::Trainer> trainer_;
  std::vector<common::Batch> batches_;
  int64_t batch_ = 0;
  std::unique_ptr<GradSync> sync_;
  Fault fault_;
};

class AllreduceCore : public Core {
 public:
  AllreduceCore(const Spec& spec, Ranks& ranks) : ranks_(ranks) {
    bytes_ = std::stoll(spec.params.Get("bytes"));
    if (bytes_ < 4 || bytes_ % 4) throw std::invalid_argument("bytes must be a positive multiple of 4");
    const auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(ranks.device());
    // Correctness first: sum of (rank + 1) over ranks.
    auto probe = torch::full({bytes_ / 4}, static_cast<float>(ranks.rank() + 1), opts);
    std::vector<at::Tensor> v{probe};
    ranks.Wait(ranks.pg().allreduce(v));
    const double want = ranks.world() * (ranks.world() + 1) / 2.0;
    if (probe.min().item<double>() != want || probe.max().item<double>() != want)
      throw std::runtime_error("all-reduce returned a wrong sum");
    data_ = torch::zeros({bytes_ / 4}, opts);
    // Enough operations per timed step that small messages are not all clock overhead.
    iters_ = static_cast<int>(std::clamp<int64_t>((int64_t{8} << 20) / bytes_, 1, 100));
    fault_ = Fault::FromEnvironment();
  }
  int64_t bytes() const { return bytes_; }
  int iters() const { return iters_; }

  Gathered Step(int64_t k) override {
    if (fault_.Hits(ranks_.rank(), k)) Misbehave(fault_, ranks_.rank());
    ranks_.Phase("all-reduce step " + std::to_string(k));
    ranks_.Barrier();
    common::SynchronizeDevice(ranks_.device());
    const auto t0 = Clock::now();
    for (int i = 0; i < iters_; ++i) {
      std::vector<at::Tensor> v{data_};
      c10d::AllreduceOptions o;
      o.timeout = ranks_.timeout();
      ranks_.Wait(ranks_.pg().allreduce(v, o));
    }
    common::SynchronizeDevice(ranks_.device());
    const double t = Seconds(t0, Clock::now()) / iters_;
    return {ranks_.AllGather({t})};
  }

 private:
  Ranks& ranks_;
  int64_t bytes_ = 0;
  int iters_ = 1;
  torch::Tensor data_;
  Fault fault_;
};

std::unique_ptr<Core> MakeCore(const Spec& spec, Ranks& ranks) {
  if (spec.workload == "train") return std::make_unique<TrainCore>(spec, ranks);
  if (spec.workload == "allreduce") return std::make_unique<AllreduceCore>(spec, ranks);
  throw std::invalid_argument("unknown ddp workload '" + spec.workload + "'");
}

// Why a train variant cannot fit its budget, projected before any rank
// starts: each rank's synced and unsynced steps over the warm-up and the
// fewest timed repetitions, at a GEMM probe's rate scaled to the rank's
// threads (the probe ran with all of this process's). "" when it fits.
std::string TrainProjection(const Spec& spec) {
  const common::ModelDef* def = common::FindModelDef(spec.params.Get("model", "mlp"));
  if (!def) return "";
  const std::string size = spec.params.Get("size", spec.settings.quick ? "quick" : "full");
  const torch::Device device(spec.settings.device == "cuda" ? torch::kCUDA : torch::kCPU);
  double flop = 2.0 * def->FlopsPerStep(size) * (spec.settings.warmup_steps + RunSettings::kMinRepetitions);
  if (device.is_cpu()) flop *= std::max(1.0, static_cast<double>(at::get_num_threads()) / spec.threads());
  return common::TimeProjection(fmt::format("each rank's synced and unsynced steps ({} threads per rank)",
                                            spec.threads()),
                                flop, device, torch::kFloat, spec.settings.timeout_s);
}

// The runner's side of every rank-0 (and runner-driven) process.
class DdpWorkload : public Workload {
 public:
  explicit DdpWorkload(std::string kind) : kind_(std::move(kind)) {}

  Status SetUp(const RunContext& ctx) override {
    spec_ = Spec{kind_, ctx.params, ctx.settings};
    const DistributedLaunch& launch = ctx.settings.launch;
    world_ = static_cast<int>(ctx.params.GetInt("world_size", 1));
    spec_launch_source_ = launch.source;
    if (launch.Fixed() && world_ != launch.world_size)
      return Status::Skipped("launched with world size " + std::to_string(launch.world_size));
    if (ctx.params.Get("backend") == "nccl")
      if (const std::string why = NcclPlacement(RanksPerNode(launch, world_), CudaDevices(), BoundPerRank()); !why.empty())
        return Status::Skipped(why);
    if (kind_ == "train" && !launch.Fixed())
      if (const std::string why = TrainProjection(spec_); !why.empty()) return Status::Skipped(why);
    saved_threads_ = at::get_num_threads();
    at::set_num_threads(spec_.threads());
    try {
      ranks_ = Ranks::Start(launch, spec_, world_);
      try {
        core_ = MakeCore(spec_, *ranks_);
      } catch (const std::exception& e) {
        throw std::runtime_error(ranks_->Diagnose("set-up", e.what()));
      }
    } catch (...) {
      at::set_num_threads(saved_threads_);
      throw;
    }
    at::set_num_threads(saved_threads_);
    return Status::Ok();
  }

  Status RunStep(StepRecorder& rec) override {
    at::set_num_threads(spec_.threads());
    Gathered g;
    const int64_t k = step_++;
    try {
      if (ranks_->rank() == 0) {
        ranks_->Exchange(Command::kStep, k);
      } else {
        auto [cmd, arg] = ranks_->Exchange(Command::kStep, k);
        if (cmd != Command::kStep || arg != k) throw std::runtime_error("rank 0 is not at step " + std::to_string(k));
      }
      g = core_->Step(k);
    } catch (const std::exception& e) {
      at::set_num_threads(saved_threads_);
      const std::string why = ranks_->Diagnose("step " + std::to_string(k), e.what());
      // Let go of the group now (workers stopped, communicators freed), not at the group's end.
      core_.reset();
      ranks_.reset();
      throw std::runtime_error(why);
    }
    at::set_num_threads(saved_threads_);
    Record(g, rec);
    return Status::Ok();
  }

  Status Verify(const VerifyContext&) override {
    if (!grads_identical_) return Status::Error("averaged gradients differ across ranks: " + grads_note_);
    return Status::Ok();
  }

  std::map<std::string, std::string> Attributes() const override {
    std::map<std::string, std::string> a = {{"launch", spec_launch_source_},
                                            {"threads_per_rank", std::to_string(spec_.threads())}};
    if (kind_ == "train") {
      a["grads_identical"] = grads_identical_ ? "yes" : "no";
      if (world_ == 1) a["comm_share"] = "not reported: one rank communicates nothing";
      if (auto* t = dynamic_cast<TrainCore*>(core_.get())) a["buckets"] = std::to_string(t->buckets());
      if (!per_rank_sync_.empty()) {
        std::vector<double> medians;
        for (const auto& v : per_rank_sync_) medians.push_back(stats::Median(v));
        const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
        a["step_time_skew_of_medians_s"] = fmt::format("{:.6g}", *hi - *lo);
      }
    } else if (auto* c = dynamic_cast<AllreduceCore*>(core_.get())) {
      a["iters_per_step"] = std::to_string(c->iters());
      a["busbw_factor"] = std::to_string(BusBwFactor(Collective::kAllReduce, world_));
    }
    return a;
  }

  void TearDown() override {
    if (ranks_) {
      try {
        ranks_->AwaitStop();  // a launched follower: rank 0 says stop
      } catch (const std::exception&) {
      }
    }
    core_.reset();
    ranks_.reset();
    at::set_num_threads(saved_threads_);
  }

 private:
  void Record(const Gathered& g, StepRecorder& rec) {
    if (kind_ == "train") {
      double max_sync = 0, min_sync = 1e300, max_nosync = 0;
      const double checksum0 = g.per_rank[0][2];
      per_rank_sync_.resize(g.per_rank.size());
      for (size_t r = 0; r < g.per_rank.size(); ++r) {
        const auto& v = g.per_rank[r];
        max_sync = std::max(max_sync, v[0]);
        min_sync = std::min(min_sync, v[0]);
        max_nosync = std::max(max_nosync, v[1]);
        per_rank_sync_[r].push_back(v[0]);
        if (v[2] != checksum0) {
          grads_identical_ = false;
          grads_note_ = "rank " + std::to_string(r) + " checksum " + std::to_string(v[2]) + " vs rank 0 " +
                        std::to_string(checksum0);
        }
      }
      auto* core = static_cast<TrainCore*>(core_.get());
      const double items = static_cast<double>(world_) * core->batch();
      rec.SetStepSeconds(max_sync);
      rec.SetItemsProcessed(items);
      rec.Add("throughput_per_rank", items / max_sync / world_);
      // One rank communicates nothing: the sync and no-sync steps differ only
      // by noise (17-21% on an H200 through NCCL's launches), not exposed
      // communication.
      if (world_ > 1) rec.Add("comm_share", std::max(0.0, (max_sync - max_nosync) / max_sync));
      rec.Add("step_time_skew", max_sync - min_sync);
    } else {
      double t = 0;
      for (const auto& v : g.per_rank) t = std::max(t, v[0]);
      auto* core = static_cast<AllreduceCore*>(core_.get());
      const double algbw = AlgBw(static_cast<double>(core->bytes()), t);
      rec.SetStepSeconds(t);
      rec.Add("algbw", algbw);
      rec.Add("busbw", algbw * BusBwFactor(Collective::kAllReduce, world_));
    }
  }

  std::string kind_;
  Spec spec_;
  std::string spec_launch_source_ = "self";
  int world_ = 1;
  int saved_threads_ = 1;
  int64_t step_ = 0;
  std::unique_ptr<Ranks> ranks_;
  std::unique_ptr<Core> core_;
  bool grads_identical_ = true;
  std::string grads_note_;
  std::vector<std::vector<double>> per_rank_sync_;
};

std::string SkipReason(const Params& p, const std::string& device) {
  const std::string backend = p.Get("backend");
  // GPUs per rank are checked at set-up, where the launch (ranks per node) is known.
  if (backend == "nccl" && device != "cuda") return "nccl needs CUDA devices";
  if (backend == "gloo" && device == "cuda") return "on GPUs the ddp suite measures nccl";
  // Full-size ResNet-50 and BERT over Gloo: each rank one CPU thread, a
  // synced and an unsynced step per repetition of many seconds each (a
  // ResNet-50 step of 32 images took 10-20 s per rank on 2 cores): minutes
  // per variant that tell nothing the quick sizes do not about the path.
  const std::string model = p.Get("model");
  if (device == "cpu" && p.Get("size") == "full" && (model == "resnet50" || model == "bert"))
    return "full-size " + model + " data parallel is a GPU configuration; on the CPU --quick runs its path";
  return "";
}

WorkloadInfo TrainInfo() {
  WorkloadInfo info;
  info.suite = "ddp";
  info.name = "train";
  info.description = "data-parallel training step (amp's mlp, ResNet-50, BERT), bucketed gradient all-reduce, scaling and comm share";
  info.metrics = {{"step_time", "s", Better::kLower},
                  {"throughput", "samples/s", Better::kHigher},
                  {"throughput_per_rank", "samples/s", Better::kHigher},
                  {"scaling_efficiency", "ratio", Better::kHigher},
                  {"comm_share", "fraction", Better::kLower},
                  {"step_time_skew", "s", Better::kLower},
                  {"peak_memory", "bytes", Better::kLower},
                  {"peak_rss", "bytes", Better::kLower}};
  info.variants = Params::Product({{"world_size", {"1", "2"}},
                                   {"backend", {"gloo", "nccl"}},
                                   {"overlap", {"on", "off"}},
                                   {"model", {"mlp", "resnet50", "bert"}},
                                   {"size", {"full"}},
                                   {"bucket_mb", {"25"}}});
  // Quick: the small mlp (3.7 MB of gradients) in 1 MiB buckets, so that
  // there are several buckets to overlap.
  info.quick_variants = Params::Product({{"world_size", {"1", "2"}},
                                         {"backend", {"gloo", "nccl"}},
                                         {"overlap", {"on", "off"}},
                                         {"model", {"mlp", "resnet50", "bert"}},
                                         {"size", {"quick"}},
                                         {"bucket_mb", {"1"}}});
  info.compare_param = "world_size";
  info.reference_value = "1";
  info.derived = {{"scaling_efficiency", "throughput", DerivedMetric::Kind::kVariantOverScaledReference}};
  info.rank_param = "world_size";
  info.skip_reason = SkipReason;
  return info;
}

WorkloadInfo AllreduceInfo() {
  WorkloadInfo info;
  info.suite = "ddp";
  info.name = "allreduce";
  info.description = "all-reduce sweep over message sizes: algbw and busbw (nccl-tests' factors)";
  info.metrics = {{"step_time", "s", Better::kLower}, {"algbw", "GB/s", Better::kHigher},
                  {"busbw", "GB/s", Better::kHigher}};
  info.variants = Params::Product({{"world_size", {"1", "2"}},
                                   {"backend", {"gloo", "nccl"}},
                                   {"bytes", {"4096", "65536", "1048576", "16777216", "67108864"}}});
  info.quick_variants = Params::Product({{"world_size", {"1", "2"}},
                                         {"backend", {"gloo", "nccl"}},
                                         {"bytes", {"4096", "1048576", "16777216"}}});
  info.compare_param = "world_size";
  info.reference_value = "1";
  info.rank_param = "world_size";
  info.skip_reason = SkipReason;
  return info;
}

class Train : public DdpWorkload {
 public:
  Train() : DdpWorkload("train") {}
};
class Allreduce : public DdpWorkload {
 public:
  Allreduce() : DdpWorkload("allreduce") {}
};
PERFBENCH_REGISTER_WORKLOAD(Train, TrainInfo());
PERFBENCH_REGISTER_WORKLOAD(Allreduce, AllreduceInfo());

// `perfbench __ddp-worker JSON`: one rank started by rank 0's process (see Ranks::Spawn).
int Worker(const std::vector<std::string>& args) {
  if (args.size() != 1) throw std::invalid_argument("expected one JSON argument");
  const nlohmann::json doc = nlohmann::json::parse(args[0]);
  const Spec spec = Spec::FromJson(doc.at("spec"));
  DistributedLaunch l;
  l.mode = DistributedLaunch::Mode::kExternal;
  l.rank = doc.at("rank").get<int>();
  l.local_rank = doc.at("local_rank").get<int>();
  l.world_size = doc.at("world").get<int>();
  l.master_addr = doc.at("addr").get<std::string>();
  l.master_port = doc.at("port").get<int>();
  l.comm_timeout_s = doc.at("comm_timeout_s").get<double>();
  at::set_num_threads(spec.threads());
  const Fault fault = Fault::FromEnvironment();
  if (fault.rank == l.rank && fault.mode == "noconnect") {
    std::fprintf(stderr, "injected fault: rank %d cannot connect\n", l.rank);
    return 3;
  }
  // The math mode rank 0's runner sets for ddp's variants (ddp declares no
  // math_mode of its own: strict IEEE, no cuDNN autotuning).
  GetDeviceBackend().SetMathMode(MathMode{});
  auto ranks = Ranks::Join(l, doc.at("prefix").get<std::string>(), spec);
  auto core = MakeCore(spec, *ranks);
  for (;;) {
    auto [cmd, k] = ranks->Exchange(Command::kStep, 0);
    if (cmd == Command::kStop) break;
    core->Step(k);
  }
  return 0;
}

[[maybe_unused]] const bool worker_registered = RegisterInternalCommand("__ddp-worker", Worker);

}  // namespace
}  // namespace perfbench::ddp
