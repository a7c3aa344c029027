// perfbench peak: achievable GEMM FLOP/s and memory bandwidth on this
// machine (see suites/micro/peak_workloads.cc for the sweep), stored per
// hardware profile as a run labelled "peak".
#include <fmt/format.h>

#include <cmath>
#include <iostream>

#include "cli.h"
#include "common.h"
#include "peaks.h"
#include "fingerprint.h"
#include "perfbench/backend.h"
#include "perfbench/statistics.h"
#include "report/format.h"

namespace perfbench::cli {

int RunCmd(const std::vector<std::string>& args);

namespace {

constexpr const char* kUsage =
    "usage: perfbench peak [--quick] [--budget SECONDS] [--device auto|cpu|cuda] [--threads N] [--db PATH]\n"
    "                      [--show]\n\n"
    "Measures what this machine really reaches, after Stas Bekman's MAMF finder: GEMM FLOP/s\n"
    "per dtype (fp32, bf16, fp16) over a sweep of shapes, and memory bandwidth (fp32 copy and\n"
    "add) over arrays far beyond the caches. Per dtype and op it reports the best shape's median\n"
    "(the achievable peak, what utilisation is read against) and the largest sample of any shape\n"
    "(MAMF's maximum achievable). The result is stored as a run labelled `peak` with this\n"
    "machine's hardware profile; `show` prints it beside any run of the same machine. Datasheet\n"
    "peaks are not reachable (an H100/H200 reaches about 790 of 989 dense bf16 TFLOP/s):\n"
    "utilisation against the achievable peak says how much headroom is really left.\n\n"
    "--budget bounds the whole sweep (default 60 s, GPU and CPU alike): each GEMM dtype may\n"
    "spend a quarter of it, each bandwidth op an eighth. Shapes are tried from the smallest;\n"
    "one whose projected time no longer fits is left out with those after it, and the output\n"
    "names them and why (result attribute `left_out`). `run --timeout` stays per variant.\n"
    "--show prints the stored peaks of this machine without measuring.";

// The newest complete peak run of this hardware profile, device and
// intra-op threads (a peak taken with --threads 1 says nothing of 2 threads).
bool LatestPeak(Store& store, const std::string& profile, const std::string& device, int threads, RunRecord* out) {
  for (int64_t id : store.RunsWithLabel(kPeakLabel)) {
    RunRecord r = store.GetRun(id);
    if (r.status != RunStatus::kComplete || r.profile_key != profile) continue;
    if (r.settings.value("device", std::string()) != device || r.settings.value("threads", 0) != threads) continue;
    *out = std::move(r);
    return true;
  }
  return false;
}

// An attribute of `r`, or "" without it.
std::string Attribute(const ResultRecord& r, const std::string& key) {
  auto it = r.attributes.find(key);
  return it == r.attributes.end() ? std::string() : it->second;
}

// "  gemm dtype:bf16: 7.1e+14 FLOP/s at 8192x8192x8192; max 7.4e+14 FLOP/s
// at 12288x12288x12288", then "    left out: ..." when the sweep left shapes
// out (peak runs before the budget have neither).
void PrintPeakResult(const ResultRecord& r, std::ostream& out) {
  out << "  " << r.workload << " " << r.params.Encode() << ": ";
  if (r.status != ResultStatus::kOk || r.samples.empty()) {
    out << ToString(r.status) << (r.reason.empty() ? "" : " (" + r.reason + ")") << "\n";
    return;
  }
  const std::string shape = Attribute(r, "shape"), max = Attribute(r, "max"), left_out = Attribute(r, "left_out");
  out << FormatValue(stats::Median(r.samples), r.unit) << (shape.empty() ? "" : " at " + shape);
  if (!max.empty()) {
    double value = 0;
    try {
      value = std::stod(max);
    } catch (const std::exception&) {
      value = -1;
    }
    out << "; max " << (value >= 0 ? FormatValue(value, r.unit) : max) << " at " << Attribute(r, "max_shape");
  }
  out << "\n";
  if (!left_out.empty()) out << "    left out: " << left_out << "\n";
}

}  // namespace

bool PrintAchievable(Store& store, const RunRecord& run, std::ostream& out) {
  RunRecord peak;
  if (!LatestPeak(store, run.profile_key, run.settings.value("device", std::string("cpu")),
                  run.settings.value("threads", 0), &peak))
    return false;
  out << "achievable here (peak run " << peak.id << ", " << peak.started_at << "):\n";
  for (const auto& r : store.GetResults(peak.id))
    if (r.suite == "peak" && r.metric != "time") PrintPeakResult(r, out);
  return true;
}

std::map<std::string, double> AchievableFlops(Store& store, const RunRecord& run) {
  std::map<std::string, double> out;
  RunRecord peak;
  if (!LatestPeak(store, run.profile_key, run.settings.value("device", std::string("cpu")),
                  run.settings.value("threads", 0), &peak))
    return out;
  for (const auto& r : store.GetResults(peak.id))
    if (r.suite == "peak" && r.workload == "gemm" && r.metric == "flops" && !r.samples.empty())
      out[r.params.Get("dtype", "")] = stats::Median(r.samples);
  return out;
}

int PeakCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("quick", po::bool_switch(), "a shorter sweep (fewer repetitions, smaller largest shape)")
      ("budget", po::value<double>()->value_name("SECONDS"),
       "time for the whole sweep (default 60): a GEMM dtype may spend a quarter, a bandwidth op an eighth")
      ("device", po::value<std::string>()->value_name("D"), "auto | cpu | cuda (default auto)")
      ("threads", po::value<int>()->value_name("N"), "intra-op threads, 0: the library default")
      ("show", po::bool_switch(), "print this machine's stored peaks, measure nothing");
  AddWideOption(desc);
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm, kUsage)) return kExitOk;
  // One process: a sweep for the best rate, whose attributes (the best shape,
  // the largest sample) are one process's and whose budget is the whole sweep's.
  std::vector<std::string> run = {"--suite", "peak", "--label", kPeakLabel, "--no-control", "--format", "none",
                                  "--processes", "1"};
  if (vm["quick"].as<bool>()) run.push_back("--quick");
  // The sweep reads it from the run's param overrides (no variant has a
  // `budget` param, so none is renamed; the run stores it).
  if (vm.count("budget")) {
    const double budget = vm["budget"].as<double>();
    if (!std::isfinite(budget) || budget <= 0) throw UsageError("--budget must be a positive number of seconds");
    run.insert(run.end(), {"--param", fmt::format("budget={:g}", budget)});
  }
  for (const char* flag : {"device", "db"})
    if (vm.count(flag)) run.insert(run.end(), {std::string("--") + flag, vm[flag].as<std::string>()});
  if (vm.count("threads")) run.insert(run.end(), {"--threads", std::to_string(vm["threads"].as<int>())});
  int code = kExitOk;
  if (!vm["show"].as<bool>()) code = RunCmd(run);
  // This machine, as a run of it would be fingerprinted.
  RunRecord here;
  here.profile_key = ProfileKey(CaptureFingerprint(GetDeviceBackend()));
  std::string device = vm.count("device") ? vm["device"].as<std::string>() : "auto";
  if (device == "auto") device = GetDeviceBackend().CudaAvailable() ? "cuda" : "cpu";
  here.settings = {{"device", device}, {"threads", vm.count("threads") ? vm["threads"].as<int>() : 0}};
  auto store = OpenStore(vm, Store::Mode::kReadOnly);
  if (!PrintAchievable(*store, here, std::cout))
    throw UsageError("no peak stored for this machine (" + device + ") in " + store->path() + ": run `perfbench peak`");
  return code;
}

}  // namespace perfbench::cli
