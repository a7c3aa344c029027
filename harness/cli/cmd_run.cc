// perfbench run: select variants, run them, store and print the results.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "cli.h"
#include "processes.h"
#include "common.h"
#include "report/run_report.h"
#include "run_cost.h"
#include "run_support.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench run [--suite S[,S]] [--filter REGEX] [--quick] [--label L] [--db PATH]\n"
    "                     [--processes K] [--no-control] [--run-budget SECONDS]\n"
    "                     [--repetitions N] [--warmup N] [--device auto|cpu|cuda] [--threads N]\n"
    "                     [--seed N] [--timeout SECONDS] [--format table|json|none]\n"
    "                     [--param KEY=V[,V]] [--world-sizes N[,N]] [--comm-timeout SECONDS]\n"
    "                     [--data-dir DIR] [--model-file PATH]...\n"
    "                     [--nnodes N --node-rank I --nproc-per-node N --master-addr H --master-port P]\n\n"
    "Runs the selected workloads (warm-up discarded, timed repetitions interleaved across\n"
    "the variants compared with each other), stores every sample with this machine's\n"
    "fingerprint, and prints one row per result. Each variant has its own time budget\n"
    "(--timeout): one too slow for it runs fewer repetitions or is skipped, naming its step\n"
    "time, and its siblings are still measured and stored. Exit 0 when all ran, 4 when a\n"
    "workload failed (the others are still recorded), 2 on bad input.\n\n"
    "The run as a whole has a budget (--run-budget, default 900 s; 0: none), shared by its\n"
    "processes (the time left over the processes left) and in each by its variants (the time\n"
    "left over the variants left, at each workload's start): a variant whose steps do not fit\n"
    "its share warms up less and runs fewer repetitions (at least 2 a process), and its reason\n"
    "says so; what a fast variant leaves goes to the ones after it. One whose set-up, first\n"
    "warm-up step and 2 repetitions exceed a quarter of its process's share is skipped (never\n"
    "the reference of its group, e.g. amp's fp32). Set-up is not cut, so a run can end\n"
    "somewhat past its budget. `gate` runs without one (it plans its own processes).\n\n"
    "Every run that selects a suite other than the hidden self-tests also measures the control\n"
    "(control/gemm, control/bandwidth: pinned sizes, about 1 s) at its start and end; compare and\n"
    "gate report when the control moved (\"the machine changed\") and never count it as a regression.\n\n"
    "A run takes its samples in 3 fresh processes (--processes K; 1 under a launcher), one\n"
    "after another, each with its own set-up, warm-up and ceil(repetitions / K) repetitions\n"
    "(at least 2), and stores every sample with its process index: processes, not\n"
    "repetitions, are the independent samples (each process has its own memory layout,\n"
    "frequency and neighbours; one process cannot tell the code from the moment it ran in,\n"
    "so compare calls a side of one process inconclusive). `show` and the table give\n"
    "the within- and between-process spread; run prints the Kalibera-Jones allocation of\n"
    "processes and repetitions that would give the most precision for the same time.\n\n"
    "Your own model: --model-file PATH (an AOTInductor package or TorchScript archive from\n"
    "scripts/export-model.py) runs it in the model suite, single-stream and offline; alone it\n"
    "selects that suite. A file that is missing, corrupt, built for another device or torch, or\n"
    "that crashes its loader fails its variant with one line; the run goes on.\n\n"
    "ddp: perfbench starts each variant's ranks itself on this machine, unless started by a\n"
    "launcher (torchrun: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; SLURM: SLURM_PROCID,\n"
    "SLURM_NTASKS, ...) or with --nnodes/--node-rank/--nproc-per-node/--master-addr/\n"
    "--master-port on each node; then rank 0 alone writes the results.";

po::options_description RunOptions() {
  po::options_description desc("options");
  desc.add_options()
      ("suite", po::value<std::vector<std::string>>()->composing()->value_name("S[,S]"),
       "suites to run (default: all but hidden self-test suites)")
      ("filter", po::value<std::string>()->value_name("REGEX"),
       "run only variants whose full name (suite/workload/k:v/...) matches")
      ("quick", po::bool_switch(), "small sizes and fewer repetitions (CI, smoke tests)")
      ("label", po::value<std::string>()->value_name("L"), "label stored with the run (e.g. a version)")
      ("processes", po::value<int>()->value_name("K"),
       "fresh processes to take the samples in (default 3; 1 under a launcher)")
      ("no-control", po::bool_switch(),
       "skip the control: a pinned GEMM and copy (about 1 s) measured at the start and end of every run, "
       "which compare and gate use to tell a machine that moved from code that moved")
      ("run-budget", po::value<double>()->value_name("SECONDS"),
       ("the run's wall-time budget, shared by its processes and variants: one whose steps do not fit its share "
        "runs fewer (at least 2 a process) (default " + fmt::format("{:g}", RunSettings::kRunBudgetS) +
        "; 0: none)").c_str());
  AddMeasureOptions(desc, false);
  AddDistributedOptions(desc);
  AddDataDirOption(desc);
  desc.add_options()("format", po::value<std::string>()->default_value("table")->value_name("F"),
                     "what to print on stdout: table | json | none");
  AddWideOption(desc);
  AddDbOption(desc);
  return desc;
}

// Settings and the selected variants from the flags; UsageError on bad input.
RunSettings SettingsFromFlags(const po::variables_map& vm, DeviceBackend& backend, std::vector<VariantRef>* variants) {
  RunSettings s = SelectionSettings(vm, backend);
  if (vm["no-control"].as<bool>()) s.control = false;
  if (vm.count("run-budget")) {
    s.run_budget_s = vm["run-budget"].as<double>();
    try {
      s.Validate();
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (vm.count("processes")) {
    s.processes = vm["processes"].as<int>();
    if (s.processes < 1 || s.processes > 1000) throw UsageError("--processes must be in [1, 1000]");
    if (s.processes > 1 && s.launch.Fixed())
      throw UsageError("--processes applies when perfbench starts the processes itself, not under a launcher");
  } else if (!s.launch.Fixed()) {
    s.processes = RunSettings::kDefaultProcesses;
  }
  if (s.processes > 1) s.repetitions = std::max(2, (s.repetitions + s.processes - 1) / s.processes);
  *variants = SelectOrThrow(vm, &s);
  return s;
}

void PrintRun(const std::string& format, Store& store, int64_t run_id, const RunRecord& run, const Execution& done) {
  if (format == "table") {
    PrintResultsTable(done.results, std::cout);
    std::cout << "\nrun " << run_id << (run.label.empty() ? "" : " (" + run.label + ")") << " stored in "
              << store.path();
    if (done.failed) std::cout << "; " << done.failed << " variant(s) failed";
    std::cout << "\n";
  } else if (format == "json") {
    std::cout << RunToJson(store.GetRun(run_id), store.GetResults(run_id)).dump(2) << "\n";
  }
}

// --processes K: K children store into the run; the parent reads it back.
void RunInProcesses(Store& store, int64_t run_id, const RunSettings& settings, double budget_s, Execution* done) {
  ProcessJob job{store.path(), run_id, settings, {}};
  job.budget_s = budget_s;
  const auto outcomes = RunProcesses(job, 0, settings.processes, settings.processes);
  for (const auto& p : outcomes) {
    done->failed += p.failed_variants + (p.failure.empty() ? 0 : 1);
    done->timed_s += p.timed_s;
  }
  done->results = store.GetResults(run_id);
  if (auto a = KaliberaJones(done->results, outcomes, settings.repetitions))
    std::cerr << "next time: " << a->processes << " processes x " << a->repetitions
              << " repetitions give the most precision for the same time (Kalibera-Jones, median over metrics)\n";
}

}  // namespace

int RunCmd(const std::vector<std::string>& args) {
  const double start_s = SteadyNow();
  const po::options_description desc = RunOptions();
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm, kUsage)) return kExitOk;
  const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "json", "none"});
  DeviceBackend& backend = GetDeviceBackend();
  std::vector<VariantRef> variants;
  const RunSettings settings = SettingsFromFlags(vm, backend, &variants);
  // A launched rank takes its LOCAL_RANK's GPU before anything touches cuda:0.
  backend.SelectDevice(settings.device, settings.launch.local_rank);
  const auto groups = GroupVariants(variants);
  backend.SetThreads(settings.threads);
  Execution done;
  // Ranks other than 0 of a launched run write nothing.
  if (settings.launch.rank != 0) {
    ExecuteGroups(nullptr, 0, settings, backend, groups, &done);
    return done.failed ? kExitRuntime : kExitOk;
  }
  // Open the store before running anything, so a bad --db costs nothing.
  auto store = OpenStore(vm, Store::Mode::kCreate);
  const RunRecord run = NewRunRecord(vm.count("label") ? vm["label"].as<std::string>() : "", settings,
                                     CommandLine("run", args), backend);
  const int64_t run_id = store->BeginRun(run);
  if (format == "table") std::cout << ContextLine(run.fingerprint, settings) << "\n" << std::flush;
  // What is left of the run's budget after start-up.
  const double budget_s =
      settings.run_budget_s > 0 ? std::max(1e-3, settings.run_budget_s - (SteadyNow() - start_s)) : 0;
  if (settings.processes > 1) {
    RunInProcesses(*store, run_id, settings, budget_s, &done);
  } else {
    ExecuteGroups(store.get(), run_id, settings, backend, groups, &done,
                  {0, ProcessSeed(settings.seed, run_id, 0), budget_s});
  }
  store->FinishRun(run_id, RunStatus::kComplete);
  PrintRun(format, *store, run_id, run, done);
  std::cerr << PhaseSummary(PhaseTotals(done.results), SteadyNow() - start_s, settings.processes);
  return done.failed ? kExitRuntime : kExitOk;
}

}  // namespace perfbench::cli
