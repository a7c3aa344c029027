// The model suite: a user's exported model (scripts/export-model.py) under
// the harness, with no Python at measurement time.
//
// model/inference  one variant per --model-file and scenario; identity:
//   model (perfbench.name, else the file's stem; a repeated name gets -2,
//   -3 ...), inputs (the input signature), scenario. The file's SHA-1 is
//   the result attribute model_sha1, which compare and gate list as a
//   difference: a new build of the model is what they judge.
//   single_stream: a repetition issues `queries` (auto: 700 at --quick,
//     2048 otherwise; fewer, at least 64, where they would take over 10 s:
//     the count must not follow one timing's luck) batch-1 queries back to
//     back, each answered (synchronised) before the next; step_time is
//     their p50, latency_p50/p90/p99 (nearest rank, LoadGen's minima),
//     throughput = queries / wall time. graphs (on by default on a GPU):
//     each query replays a captured CUDA graph where the model has one input
//     and one output and allows capture.
//   offline: a repetition makes `calls` calls (auto: about 0.2 s of them) at
//     batch `batch` (auto: the examples' batch); step_time is the seconds
//     per call, throughput samples per second.
//   server (`--param scenario=server`): MLPerf LoadGen's server scenario
//     (perfbench/server_scenario.h) at the bound latency_bound_ms (100).
//   train (`--param train=on`, TorchScript; script_training.h): the offline
//     scenario's step is one optimizer step at `batch` on the module's own
//     loss, in `precision` (fp32, bf16 or fp16 through autocast), through the
//     amp suite's Trainer; metric loss. Other scenarios are skipped.
// Before it loads a file, a variant checks the metadata (device, torch
// version) and loads and calls the model once in a child process
// (model_runner.h), so a file that crashes its loader fails the variant,
// not the run.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>

#include "common/graph_replay.h"
#include "common/server_step.h"
#include "common/training.h"
#include "model_file.h"
#include "model_runner.h"
#include "perfbench/statistics.h"
#include "perfbench/workload.h"
#include "script_training.h"

namespace perfbench::model {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A --model-file as the suite names it.
struct Entry {
  std::string path, name, signature, error;
};

// The run's model files, named: metadata where it reads, else the stem and
// an "unreadable" signature (set-up then fails naming the file).
std::vector<Entry> Entries(const RunSettings& s) {
  std::vector<Entry> out;
  std::map<std::string, int> seen;
  for (const auto& path : s.model_files) {
    Entry e{path, Stem(path), "unreadable", ""};
    try {
      const ModelFile m = ReadModelFile(path);
      e.name = m.name;
      e.signature = m.signature;
    } catch (const std::exception& ex) {
      e.error = ex.what();
    }
    if (const int n = ++seen[e.name]; n > 1) e.name += "-" + std::to_string(n);
    out.push_back(std::move(e));
  }
  return out;
}

// The checks before the model is loaded in this process, once per file,
// content and device per process (both scenarios share the answer).
std::string Preflight(const ModelFile& m, const std::string& sha1, const std::string& device, int64_t batch,
                      double timeout_s) {
  static std::mutex mu;
  static std::map<std::string, std::string> done;
  const std::string key = m.path + "/" + sha1 + "/" + device + "/" + std::to_string(batch);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = done.find(key); it != done.end()) return it->second;
  std::string why = Incompatibility(m, device);
  if (why.empty()) why = ProbeInChild(m, device, {1, batch}, timeout_s);
  return done[key] = why;
}

class ModelWorkload : public Workload {
 public:
  Status SetUp(const RunContext& ctx) override {
    scenario_ = ctx.params.Get("scenario");
    if (scenario_ != "single_stream" && scenario_ != "offline" && scenario_ != "server")
      return Status::Error("scenario '" + scenario_ + "': expected single_stream, offline or server");
    Entry entry;
    for (const auto& e : Entries(ctx.settings))
      if (e.name == ctx.params.Get("model")) entry = e;
    if (entry.path.empty()) return Status::Error("no --model-file is named '" + ctx.params.Get("model") + "'");
    if (!entry.error.empty()) return Status::Error(entry.error);
    device_ = ctx.settings.device == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    if (Status st = ChooseTraining(ctx.params); !st.ok()) return st;
    model_ = ReadModelFile(entry.path);
    sha1_ = FileSha1(model_.path);
    const auto examples = LoadExampleInputs(model_);
    if (Status st = ChooseBatch(ctx.params, examples); !st.ok()) return st;
    if (std::string why = Preflight(model_, sha1_, ctx.settings.device, batch_, ctx.settings.timeout_s); !why.empty())
      return Status::Error(why);
    batched_ = Resize(examples, model_.batch_dim, batch_, device_);
    if (train_) return SetUpTraining(ctx.params);
    runner_ = ModelRunner::Open(model_, device_);
    single_ = Resize(examples, model_.batch_dim, 1, device_);
    return PrepareScenario(ctx);
  }

  Status RunStep(StepRecorder& rec) override {
    if (training_) {
      rec.Add("loss", training_->Step());
      rec.SetItemsProcessed(static_cast<double>(batch_));
      return Status::Ok();
    }
    torch::InferenceMode guard;
    if (scenario_ == "server") return ServerStep(rec);
    if (scenario_ == "single_stream") return SingleStreamStep(rec);
    const auto t0 = Clock::now();
    for (int64_t c = 0; c < calls_; ++c) runner_->Run(batched_);
    common::SynchronizeDevice(device_);
    rec.SetStepSeconds(Since(t0) / static_cast<double>(calls_));
    rec.SetItemsProcessed(static_cast<double>(batch_));
    return Status::Ok();
  }

  std::map<std::string, std::string> Attributes() const override {
    std::map<std::string, std::string> a = {
        {"model_file", model_.path},         {"model_sha1", sha1_},
        {"format", model_.FormatName()},     {"exported_by_torch", model_.torch_version.empty() ? "unrecorded" : model_.torch_version},
        {"batch_dim", std::to_string(model_.batch_dim)}, {"pctl_method", "nearest_rank"}};
    if (!model_.cpu_isa.empty()) a["compiled_for_cpu_isa"] = model_.cpu_isa;
    if (training_) a["train"] = fmt::format("{}: one optimizer step (SGD) per repetition at batch {}", precision_, batch_);
    else if (scenario_ == "offline") a["offline"] = fmt::format("batch {}, {} calls per repetition", batch_, calls_);
    if (scenario_ != "offline") a["graphs"] = graphs_note_;
    if (scenario_ == "single_stream") a["queries"] = std::to_string(queries_);
    for (const auto& [k, v] : notes_) a[k] = v;
    if (!server_note_.empty()) a["server"] = server_note_;
    return a;
  }

 private:
  // train (off | on) and its precision (fp32 | bf16 | fp16).
  Status ChooseTraining(const Params& p) {
    const std::string train = p.Get("train", "off");
    if (train != "on" && train != "off") return Status::Error("train '" + train + "': expected on or off");
    train_ = train == "on";
    precision_ = p.Get("precision", "fp32");
    if (!train_ && p.Has("precision"))
      return Status::Error("precision applies to train=on; an exported model's inference precision is set at export");
    if (precision_ != "fp32" && precision_ != "bf16" && precision_ != "fp16")
      return Status::Error("precision '" + precision_ + "': expected fp32, bf16 or fp16");
    if (train_ && scenario_ != "offline")
      return Status::Skipped("train=on measures optimizer steps as the offline scenario (a step of `batch` samples)");
    if (const std::string why = precision_ == "fp16" ? common::LossScalingUnavailable(device_.str()) : "";
        train_ && !why.empty())
      return Status::Skipped(why);
    return Status::Ok();
  }

  Status SetUpTraining(const Params&) {
    training_ = std::make_unique<ScriptTraining>(model_, device_, common::ParsePrecision(precision_), batched_);
    return Status::Ok();
  }

  Status ChooseBatch(const Params& params, const std::vector<torch::Tensor>& examples) {
    const std::string b = params.Get("batch", "auto");
    batch_ = b == "auto" ? ExampleBatch(examples, model_.batch_dim) : std::atoll(b.c_str());
    if (batch_ < 1 || (b != "auto" && std::to_string(batch_) != b))
      return Status::Error("batch '" + b + "': expected a positive integer or auto");
    if (model_.batch_dim < 0 && batch_ != ExampleBatch(examples, model_.batch_dim))
      return Status::Error("batch " + b + ": " + model_.path + " has no dynamic batch dimension");
    return Status::Ok();
  }

  // One call's seconds (after a warm call), answered.
  // The typical cost of a call: the median of up to 7 within about 1 s (a
  // single call can land on a moment the process is descheduled, and the
  // query and call counts must not follow it).
  double TimeCall(const std::vector<torch::Tensor>& inputs) {
    torch::InferenceMode guard;
    Answer(inputs);
    std::vector<double> times;
    const auto start = Clock::now();
    while (times.empty() || (times.size() < 7 && Since(start) < 1.0)) {
      const auto t0 = Clock::now();
      Answer(inputs);
      times.push_back(Since(t0));
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    return times[times.size() / 2];
  }

  // A call whose outputs a client has in hand (synchronised).
  void Answer(const std::vector<torch::Tensor>& inputs) {
    if (graph_.captured()) graph_(inputs.front());
    else runner_->Run(inputs);
    common::SynchronizeDevice(device_);
  }

  Status PrepareScenario(const RunContext& ctx) {
    const Params& p = ctx.params;
    std::string graphs = p.Get("graphs", "auto");
    if (graphs == "auto") graphs = device_.is_cuda() ? "on" : "off";
    if (graphs != "on" && graphs != "off") return Status::Error("graphs '" + graphs + "': expected on or off");
    graphs_note_ = "off";
    if (graphs == "on" && scenario_ != "offline") graphs_note_ = CaptureGraph();
    if (scenario_ == "offline") {
      const double call = TimeCall(batched_);
      calls_ = p.Has("calls") ? p.GetInt("calls", 1) : std::clamp<int64_t>(static_cast<int64_t>(0.2 / call), 1, 1000);
      if (calls_ < 1) return Status::Error("calls must be at least 1");
    } else if (scenario_ == "single_stream") {
      const double query = TimeCall(single_);
      // Enough queries for every percentile it reports (662 for p99),
      // however slow a query is on a loaded machine; more where they fit 10 s.
      const auto least = static_cast<int64_t>(stats::MinimumQueriesFor(0.99));
      const int64_t most = ctx.settings.quick ? 700 : 2048;
      queries_ = p.Has("queries") ? p.GetInt("queries", 64)
                                  : std::clamp<int64_t>(static_cast<int64_t>(10.0 / query), least, most);
      if (queries_ < 1) return Status::Error("queries must be at least 1");
    } else {
      server_.latency_bound_s = std::stod(p.Get("latency_bound_ms", "100")) / 1000;
      server_.queries_per_rate = static_cast<size_t>(p.GetInt("server_queries", 1000));
      server_.seed = ctx.settings.seed;
      server_.max_seconds = ctx.settings.timeout_s / (ctx.settings.warmup_steps + RunSettings::kMinRepetitions + 1);
      if (!(server_.latency_bound_s > 0) || server_.queries_per_rate < 100)
        return Status::Error("server scenario: latency_bound_ms must be positive and server_queries at least 100");
    }
    return Status::Ok();
  }

  std::string CaptureGraph() {
    if (single_.size() != 1) return fmt::format("off: the model takes {} inputs; graphs replay one", single_.size());
    const auto outputs = runner_->Run(single_);
    if (outputs.size() != 1) return fmt::format("off: the model returns {} outputs; graphs replay one", outputs.size());
    const std::string why =
        graph_.Capture([this](const torch::Tensor& x) { return runner_->Run({x}).front(); }, single_.front());
    return why.empty() ? "on: each single query replays a captured CUDA graph" : "off: " + why;
  }

  Status SingleStreamStep(StepRecorder& rec) {
    std::vector<double> lat;
    lat.reserve(static_cast<size_t>(queries_));
    const auto start = Clock::now();
    for (int64_t q = 0; q < queries_; ++q) {
      const auto t0 = Clock::now();
      Answer(single_);
      lat.push_back(Since(t0));
    }
    const double wall = Since(start);
    const auto p50 = stats::LatencyPercentile(lat, 0.50);
    rec.SetStepSeconds(*p50);
    rec.Add("latency_p50", *p50);
    if (auto p90 = stats::LatencyPercentile(lat, 0.90)) rec.Add("latency_p90", *p90);
    else notes_["latency_p90"] = fmt::format("unavailable: {} queries, need >= 64", lat.size());
    if (auto p99 = stats::LatencyPercentile(lat, 0.99)) rec.Add("latency_p99", *p99);
    else notes_["latency_p99"] = fmt::format("unavailable: {} queries, need >= 662", lat.size());
    rec.Add("throughput", static_cast<double>(queries_) / wall);
    return Status::Ok();
  }

  Status ServerStep(StepRecorder& rec) {
    return common::ServerRepetition([this] { Answer(single_); }, server_, rec, server_note_);
  }

  std::string scenario_, precision_;
  bool train_ = false;
  std::unique_ptr<ScriptTraining> training_;
  torch::Device device_ = torch::kCPU;
  ModelFile model_;
  std::string sha1_;
  std::unique_ptr<ModelRunner> runner_;
  std::vector<torch::Tensor> single_, batched_;
  int64_t batch_ = 1, calls_ = 1, queries_ = 64;
  common::GraphReplay graph_;
  std::string graphs_note_, server_note_;
  std::map<std::string, std::string> notes_;
  server::SearchLimits server_;
};

WorkloadInfo Info() {
  WorkloadInfo info;
  info.suite = "model";
  info.name = "inference";
  info.description = "a user's exported model (--model-file: AOTInductor .pt2 or TorchScript), single-stream and "
                     "offline inference";
  info.metrics = {{"step_time", "s", Better::kLower},         {"latency_p50", "s", Better::kLower},
                  {"latency_p90", "s", Better::kLower},       {"latency_p99", "s", Better::kLower},
                  {"throughput", "samples/s", Better::kHigher}, {"server_rate", "queries/s", Better::kHigher},
                  {"peak_memory", "bytes", Better::kLower},   {"peak_rss", "bytes", Better::kLower},
                  {"energy", "J", Better::kLower},            {"energy_per_sample", "J/sample", Better::kLower},
                  {"loss", "1", Better::kLower}};
  info.settings_variants = [](const RunSettings& s) {
    std::vector<Params> out;
    for (const auto& e : Entries(s))
      for (const char* scenario : {"single_stream", "offline"})
        out.push_back(Params{{"model", e.name}, {"inputs", e.signature}, {"scenario", scenario}});
    return out;
  };
  info.optional_params = {{"batch", "auto"},  {"calls", "auto"},           {"queries", "auto"},
                          {"graphs", "auto"}, {"latency_bound_ms", "100"}, {"server_queries", "1000"},
                          {"train", "off"},   {"precision", "fp32"}};
  info.knobs = {{"batch", {{"batch", "auto"}}, {Params{{"batch", "64"}}, Params{{"batch", "256"}}}},
                {"CUDA graphs", {{"graphs", "auto"}}, {Params{{"graphs", "on"}}}}};
  return info;
}

class Inference : public ModelWorkload {};
PERFBENCH_REGISTER_WORKLOAD(Inference, Info());

[[maybe_unused]] const bool probe_registered = RegisterInternalCommand("__model-probe", ProbeCommand);

}  // namespace
}  // namespace perfbench::model
