// Does the harness change what it measures? In one invocation, interleaved
// round by round (the starting configuration rotates), the amp/mlp fp32
// training step is measured as
//   bare        the same Trainer step and loss read in a plain loop, timed
//               with steady_clock around each step
//   runner      perfbench's Runner with every accounting feature on (the
//               counting CPU allocator, peak-RSS reset and read, device
//               synchronisation, CUDA events on a GPU)
//   -alloc      the Runner without memory accounting (the CPU allocator
//               swapped back to LibTorch's own for the round)
//   -rss        the Runner without the peak-RSS reset and read
//   -sync       the Runner without device synchronisation (on a GPU its
//               times are then wrong: this shows what sync costs)
//   python      the same step as a Python eager loop (bench/fidelity_mlp.py)
//               where the source tree's .venv (or $PERFBENCH_PYTHON) has torch
// Each round gives one median step time per configuration; printed: the
// median over rounds of each configuration's ratio to bare in the same
// round, and the 95% t interval of the geometric mean ratio (rounds are
// the replicates; all in one process, so process-to-process variance
// cancels). Then the harness's own cost per step on an empty step.
//
//   build/bench/harness_fidelity [--size quick|full] [--rounds R] [--steps N] [--threads N]
#include <c10/core/CPUAllocator.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/models.h"
#include "perfbench/backend.h"
#include "perfbench/statistics.h"
#include "registry.h"
#include "runner.h"
#include "two_level.h"

using namespace perfbench;

namespace {

double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Options {
  std::string size = "quick";
  int rounds = 10, steps = 30, warmup = 3, threads = 0;
};

// The bare loop: the amp workload's step without the harness.
double Bare(const Options& o) {
  const auto* def = common::FindModelDef("mlp");
  torch::manual_seed(42);
  common::Trainer trainer(def->make(o.size), common::Precision::kFp32, torch::Device(torch::kCPU));
  const auto batches = common::MakeBatches(*def, o.size, 4, 42, torch::Device(torch::kCPU));
  std::vector<double> times;
  for (int i = 0; i < o.warmup + o.steps; ++i) {
    const double t0 = Now();
    trainer.Step(batches[i % batches.size()]).item<double>();
    const double t1 = Now();
    if (i >= o.warmup) times.push_back(t1 - t0);
  }
  return stats::Median(times);
}

// The installed backend with features taken away.
class Without final : public DeviceBackend {
 public:
  Without(DeviceBackend& inner, bool memory, bool sync) : inner_(inner), memory_(memory), sync_(sync) {}
  std::string Name() const override { return inner_.Name(); }
  bool CudaAvailable() const override { return inner_.CudaAvailable(); }
  void Synchronize(const std::string& d) override {
    if (sync_) inner_.Synchronize(d);
  }
  void BeginStep(const std::string& d) override { inner_.BeginStep(d); }
  double EndStep(const std::string& d) override { return inner_.EndStep(d); }
  bool Memory(const std::string& d, int64_t* c, int64_t* p) override { return memory_ && inner_.Memory(d, c, p); }
  void ResetPeakMemory(const std::string& d) override {
    if (memory_) inner_.ResetPeakMemory(d);
  }

 private:
  DeviceBackend& inner_;
  bool memory_, sync_;
};

const RegisteredWorkload& AmpMlp() {
  for (const auto* w : AllWorkloads())
    if (w->info.FullName() == "amp/mlp") return *w;
  std::fprintf(stderr, "harness_fidelity: amp/mlp is not registered\n");
  std::exit(2);
}

// amp/mlp without its peak_rss metric (the runner then neither resets nor reads RSS).
RegisteredWorkload WithoutRss(const RegisteredWorkload& w) {
  RegisteredWorkload copy = w;
  auto& m = copy.info.metrics;
  m.erase(std::remove_if(m.begin(), m.end(), [](const MetricSpec& s) { return s.name == "peak_rss"; }), m.end());
  return copy;
}

double ThroughRunner(const Options& o, const RegisteredWorkload& w, DeviceBackend& backend) {
  RunSettings s = RunSettings::Defaults(o.size == "quick");
  s.device = "cpu";
  s.warmup_steps = o.warmup;
  s.repetitions = o.steps;
  s.timeout_s = 1e9;
  Params p;
  p.Set("precision", "fp32");
  p.Set("size", o.size);
  Runner runner(s, backend);
  const auto out = runner.RunGroup(VariantGroup{&w, {p}});
  if (out.empty() || out[0].status != ResultStatus::kOk) {
    std::fprintf(stderr, "harness_fidelity: the runner failed: %s\n", out.empty() ? "?" : out[0].reason.c_str());
    std::exit(1);
  }
  return stats::Median(out[0].samples.at("step_time"));
}

std::string PythonCommand(const Options& o) {
  std::string py = std::getenv("PERFBENCH_PYTHON") ? std::getenv("PERFBENCH_PYTHON")
                                                   : std::string(PERFBENCH_SOURCE_DIR) + "/.venv/bin/python";
  const std::string probe = py + " -c 'import torch' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0) return "";
  return fmt::format("{} {}/bench/fidelity_mlp.py --size {} --steps {} --warmup {} --threads {}", py,
                     PERFBENCH_SOURCE_DIR, o.size, o.steps, o.warmup, o.threads);
}

double Python(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  double s = NAN;
  if (p == nullptr || std::fscanf(p, "%lf", &s) != 1) s = NAN;
  if (p) pclose(p);
  return s;
}

struct Config {
  std::string name;
  std::function<double()> measure;
};

std::vector<Config> Configs(const Options& o, DeviceBackend& backend, const RegisteredWorkload& mlp,
                            const RegisteredWorkload& no_rss) {
  static Without no_alloc(backend, /*memory=*/false, /*sync=*/true), no_sync(backend, true, false);
  // The counting allocator, installed by the backend's first memory read.
  int64_t c = 0, p = 0;
  backend.Memory("cpu", &c, &p);
  c10::Allocator* counting = c10::GetCPUAllocator();
  std::vector<Config> out = {
      {"bare", [&o] { return Bare(o); }},
      {"runner", [&] { return ThroughRunner(o, mlp, backend); }},
      {"-alloc",
       [&o, &mlp, counting] {
         c10::SetCPUAllocator(c10::GetDefaultCPUAllocator(), 100);
         const double s = ThroughRunner(o, mlp, no_alloc);
         c10::SetCPUAllocator(counting, 100);
         return s;
       }},
      {"-rss", [&] { return ThroughRunner(o, no_rss, backend); }},
      {"-sync", [&] { return ThroughRunner(o, mlp, no_sync); }},
  };
  if (std::string py = PythonCommand(o); !py.empty()) {
    out.push_back({"python", [py] { return Python(py); }});
  } else {
    std::printf("python: skipped (no python with torch at .venv or $PERFBENCH_PYTHON)\n");
  }
  return out;
}

// Median ratio to bare over rounds, and the 95% t interval of the geometric mean.
void PrintRatios(const std::vector<Config>& configs, const std::vector<std::vector<double>>& t) {
  std::printf("%-8s %12s %10s %22s\n", "config", "median step", "ratio", "95% interval (geo mean)");
  for (size_t c = 0; c < configs.size(); ++c) {
    std::vector<double> ratios, logs;
    for (size_t r = 0; r < t.size(); ++r) {
      ratios.push_back(t[r][c] / t[r][0]);
      logs.push_back(std::log(ratios.back()));
    }
    const double mean = stats::Mean(logs), sd = logs.size() > 1 ? stats::StdDev(logs) : 0;
    const double half = stats::StudentTCritical(static_cast<double>(logs.size() - 1), 0.95) * sd /
                        std::sqrt(static_cast<double>(logs.size()));
    std::vector<double> col;
    for (const auto& row : t) col.push_back(row[c]);
    std::printf("%-8s %9.3f ms %10.4f %10.4f .. %-10.4f\n", configs[c].name.c_str(), stats::Median(col) * 1e3,
                stats::Median(ratios), std::exp(mean - half), std::exp(mean + half));
  }
}

// An empty step: the runner's own cost per step.
class Empty final : public Workload {
 public:
  Status SetUp(const RunContext&) override { return Status::Ok(); }
  Status RunStep(StepRecorder& rec) override {
    rec.SetItemsProcessed(1);
    return Status::Ok();
  }
};

// Wall seconds per step of Runner::RunGroup on the empty workload, and the
// median step time it recorded (what the harness adds inside the timed region).
struct EmptyCost {
  double wall = 0, recorded = 0;
};

EmptyCost EmptyStepCost(DeviceBackend& backend, bool rss, int steps) {
  WorkloadInfo info;
  info.suite = "bench";
  info.name = "empty";
  info.metrics = {{"throughput", "1/s", Better::kHigher}, {"step_time", "s", Better::kLower},
                  {"peak_memory", "bytes", Better::kLower}};
  if (rss) info.metrics.push_back({"peak_rss", "bytes", Better::kLower});
  const RegisteredWorkload w{info, [] { return std::make_unique<Empty>(); }};
  RunSettings s = RunSettings::Defaults(false);
  s.device = "cpu";
  s.warmup_steps = 10;
  s.repetitions = steps;
  s.timeout_s = 1e9;
  Runner runner(s, backend);
  const double t0 = Now();
  const auto out = runner.RunGroup(VariantGroup{&w, {Params()}});
  const double wall = (Now() - t0) / (steps + s.warmup_steps);
  return {wall, stats::Median(out.at(0).samples.at("step_time"))};
}

void PrintEmptyStep(DeviceBackend& backend) {
  Without no_alloc(backend, false, true);
  const int steps = 20000;
  std::printf("\nharness cost per empty step, %d steps, median of 5: inside the timed region (the recorded\n"
              "step time) and in all (wall time of Runner::RunGroup / steps):\n", steps);
  for (const auto& [name, b, rss] : std::vector<std::tuple<std::string, DeviceBackend*, bool>>{
           {"every feature", &backend, true}, {"-rss", &backend, false}, {"-alloc -rss", &no_alloc, false}}) {
    std::vector<double> wall, recorded;
    for (int i = 0; i < 5; ++i) {
      const EmptyCost c = EmptyStepCost(*b, rss, steps);
      wall.push_back(c.wall);
      recorded.push_back(c.recorded);
    }
    std::printf("  %-14s timed %6.3f us   in all %6.2f us\n", name.c_str(), stats::Median(recorded) * 1e6,
                stats::Median(wall) * 1e6);
  }
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "usage: harness_fidelity [--size quick|full] [--rounds R] [--steps N] [--threads N]\n");
      std::exit(2);
    }
    const std::string v = argv[++i];
    if (a == "--size" && (v == "quick" || v == "full")) o.size = v;
    else if (a == "--rounds") o.rounds = std::max(2, std::atoi(v.c_str()));
    else if (a == "--steps") o.steps = std::max(5, std::atoi(v.c_str()));
    else if (a == "--threads") o.threads = std::max(0, std::atoi(v.c_str()));
    else {
      std::fprintf(stderr, "harness_fidelity: unknown option %s %s\n", a.c_str(), v.c_str());
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  DeviceBackend& backend = GetDeviceBackend();
  backend.SetThreads(o.threads);
  const RegisteredWorkload& mlp = AmpMlp();
  const RegisteredWorkload no_rss = WithoutRss(mlp);
  const auto configs = Configs(o, backend, mlp, no_rss);
  std::printf("amp/mlp fp32 %s, %d rounds x %d steps (warm-up %d), intra-op threads %d\n", o.size.c_str(), o.rounds,
              o.steps, o.warmup, backend.Threads());
  std::vector<std::vector<double>> t(o.rounds, std::vector<double>(configs.size()));
  for (int r = 0; r < o.rounds; ++r) {
    for (size_t j = 0; j < configs.size(); ++j) {
      const size_t c = (j + r) % configs.size();  // rotate the starting configuration
      t[r][c] = configs[c].measure();
    }
    std::fprintf(stderr, "\rround %d/%d", r + 1, o.rounds);
  }
  std::fprintf(stderr, "\r\033[K");
  PrintRatios(configs, t);
  PrintEmptyStep(backend);
  return 0;
}
