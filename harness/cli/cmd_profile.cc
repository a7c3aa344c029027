// perfbench profile: Kineto traces of the selected variants' steps, one
// Chrome-trace JSON per variant (opens in Perfetto, reads in Holistic Trace
// Analysis), their paths stored with a run labelled "profile".
#include <cstdlib>
#include <iostream>

#include "cli.h"
#include "common.h"
#include "perfbench/posix_fs.h"
#include "profiling.h"
#include "run_support.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench profile --output DIR [--steps N] [--suite S[,S]] [--filter REGEX] [--quick]\n"
    "                         [--device D] [--threads N] [--warmup N] [--param K=V[,V]] [--db PATH]\n\n"
    "Records --steps steps (default 5) of each selected variant, after its warm-up, with\n"
    "LibTorch's Kineto profiler (CPU activity; CUDA activity on a GPU; FLOP counts and input\n"
    "shapes), each step inside a `ProfilerStep#<i>` scope as Holistic Trace Analysis expects,\n"
    "and writes one Chrome-trace JSON per variant to DIR (open it in Perfetto). The profiler is\n"
    "never on while perfbench times a step: profile runs store trace paths, not timings (a run\n"
    "labelled `profile`, one `profiled_steps` result per variant with the `trace` attribute).\n"
    "Exit 0 when every variant was profiled, 4 when one failed, 2 on bad input.";

po::options_description ProfileOptions() {
  po::options_description desc("options");
  desc.add_options()("output", po::value<std::string>()->value_name("DIR"), "directory for the traces (created)")
      ("out", po::value<std::string>()->value_name("DIR"), "")  // the earlier spelling, not shown
      ("steps", po::value<int>()->default_value(5)->value_name("N"), "profiled steps per variant")
      ("suite", po::value<std::vector<std::string>>()->composing()->value_name("S[,S]"), "suites to profile")
      ("filter", po::value<std::string>()->value_name("REGEX"), "only variants whose full name matches")
      ("quick", po::bool_switch(), "small sizes");
  AddMeasureOptions(desc, false);
  AddDistributedOptions(desc);
  AddDataDirOption(desc);
  AddDbOption(desc);
  return desc;
}

ResultRecord Stored(const ProfileOutcome& o) {
  ResultRecord r;
  r.suite = o.variant.workload->info.suite;
  r.workload = o.variant.workload->info.name;
  r.params = o.variant.params;
  r.metric = "profiled_steps";
  r.unit = "steps";
  r.status = o.status;
  r.reason = o.reason;
  if (o.status == ResultStatus::kOk) {
    r.samples = {static_cast<double>(o.steps)};
    r.attributes["trace"] = o.trace;
  }
  return r;
}

}  // namespace

int ProfileCmd(const std::vector<std::string>& args) {
  const po::options_description desc = ProfileOptions();
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm, kUsage)) return kExitOk;
  if (!vm.count("output") && !vm.count("out")) throw UsageError("missing --output DIR (where the traces go)");
  const int steps = vm["steps"].as<int>();
  if (steps < 1 || steps > 1000) throw UsageError("--steps must be in [1, 1000]");
  DeviceBackend& backend = GetDeviceBackend();
  RunSettings s = SelectionSettings(vm, backend);
  s.control = false;
  const std::vector<VariantRef> variants = SelectOrThrow(vm, &s);
  std::string dir = vm[vm.count("output") ? "output" : "out"].as<std::string>();
  if (const std::string err = posix::MakeDirs(dir); !err.empty()) throw UsageError("--output " + dir + ": " + err);
  if (char* abs = realpath(dir.c_str(), nullptr)) {  // stored paths must not depend on the working directory
    dir = abs;
    free(abs);
  }
  backend.SetThreads(s.threads);
  auto store = OpenStore(vm, Store::Mode::kCreate);
  const int64_t run_id = store->BeginRun(NewRunRecord("profile", s, CommandLine("profile", args), backend));
  size_t failed = 0;
  for (const auto& o : ProfileVariants(variants, s, backend, steps, dir)) {
    store->AppendResults(run_id, {Stored(o)});
    if (o.status == ResultStatus::kFailed) ++failed;
    std::cout << o.variant.FullName() << ": "
              << (o.status == ResultStatus::kOk ? o.trace : std::string(ToString(o.status)) + ": " + o.reason) << "\n";
  }
  store->FinishRun(run_id, RunStatus::kComplete);
  std::cout << "run " << run_id << " (profile) stored in " << store->path() << "\n";
  return failed ? kExitRuntime : kExitOk;
}

}  // namespace perfbench::cli
