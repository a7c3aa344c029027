// perfbench run: select variants, run them, store and print the results.
#include <iostream>

#include "cli.h"
#include "common.h"
#include "report/run_report.h"
#include "run_support.h"

namespace perfbench::cli {

int RunCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()
      ("suite", po::value<std::vector<std::string>>()->composing()->value_name("S[,S]"),
       "suites to run (default: all but hidden self-test suites)")
      ("filter", po::value<std::string>()->value_name("REGEX"),
       "run only variants whose full name (suite/workload/k:v/...) matches")
      ("quick", po::bool_switch(), "small sizes and fewer repetitions (CI, smoke tests)")
      ("label", po::value<std::string>()->value_name("L"), "label stored with the run (e.g. a version)");
  AddMeasureOptions(desc, false);
  AddDistributedOptions(desc);
  AddDataDirOption(desc);
  desc.add_options()("format", po::value<std::string>()->default_value("table")->value_name("F"),
                     "what to print on stdout: table | json | none");
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {}, vm,
             "usage: perfbench run [--suite S[,S]] [--filter REGEX] [--quick] [--label L] [--db PATH]\n"
             "                     [--repetitions N] [--warmup N] [--device auto|cpu|cuda] [--threads N]\n"
             "                     [--seed N] [--timeout SECONDS] [--format table|json|none]\n"
             "                     [--param KEY=V[,V]] [--world-sizes N[,N]] [--comm-timeout SECONDS]\n"
             "                     [--data-dir DIR]\n"
             "                     [--nnodes N --node-rank I --nproc-per-node N --master-addr H --master-port P]\n\n"
             "Runs the selected workloads (warm-up discarded, timed repetitions interleaved across\n"
             "the variants compared with each other), stores every sample with this machine's\n"
             "fingerprint, and prints one row per result. Exit 0 when all ran, 4 when a workload\n"
             "failed (the others are still recorded), 2 on bad input.\n\n"
             "ddp: perfbench starts each variant's ranks itself on this machine, unless started by a\n"
             "launcher (torchrun: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; SLURM: SLURM_PROCID,\n"
             "SLURM_NTASKS, ...) or with --nnodes/--node-rank/--nproc-per-node/--master-addr/\n"
             "--master-port on each node; then rank 0 alone writes the results."))
    return kExitOk;

  DeviceBackend& backend = GetDeviceBackend();
  RunSettings base;
  base.quick = vm["quick"].as<bool>();
  base.warmup_steps = base.quick ? kQuickWarmup : kWarmup;
  base.repetitions = base.quick ? kQuickRepetitions : kRepetitions;
  base.seed = 42;
  base.timeout_s = 300;
  base.threads = 0;
  base.device = "auto";
  RunSettings settings = ResolveSettings(vm, base, backend);
  const std::string format = CheckChoice("--format", vm["format"].as<std::string>(), {"table", "json", "none"});

  Selection sel;
  if (vm.count("suite")) sel.suites = SplitCommas(vm["suite"].as<std::vector<std::string>>());
  if (vm.count("filter")) sel.filter = vm["filter"].as<std::string>();
  sel.quick = settings.quick;
  ResolveDistributed(vm, &settings, &sel);
  const bool writer = settings.launch.rank == 0;
  std::vector<VariantRef> variants;
  try {
    variants = SelectVariants(sel);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (variants.empty()) throw UsageError("no workload matches the selection (see `perfbench list`)");
  settings.data_dir = ResolveDataDir(vm, variants);

  // Open the store before running anything, so a bad --db costs nothing.
  // Ranks other than 0 of a launched run write nothing.
  std::unique_ptr<Store> store;
  if (writer) store = OpenStore(vm, Store::Mode::kCreate);
  backend.SetThreads(settings.threads);

  std::string cmdline = "perfbench run";
  for (const auto& a : args) cmdline += " " + a;
  const RunRecord run =
      NewRunRecord(vm.count("label") ? vm["label"].as<std::string>() : "", settings, sel, cmdline, backend);
  if (!writer) {
    size_t failed = 0;
    ExecuteGroups(nullptr, 0, settings, backend, GroupVariants(variants), &failed);
    return failed ? kExitRuntime : kExitOk;
  }
  const int64_t run_id = store->BeginRun(run);
  if (format == "table") std::cout << ContextLine(run.fingerprint, settings) << "\n" << std::flush;

  size_t failed = 0;
  const auto all = ExecuteGroups(store.get(), run_id, settings, backend, GroupVariants(variants), &failed);
  store->FinishRun(run_id, "complete");

  if (format == "table") {
    PrintResultsTable(all, std::cout);
    std::cout << "\nrun " << run_id << (run.label.empty() ? "" : " (" + run.label + ")") << " stored in "
              << store->path();
    if (failed) std::cout << "; " << failed << " variant(s) failed";
    std::cout << "\n";
  } else if (format == "json") {
    std::cout << RunToJson(store->GetRun(run_id), store->GetResults(run_id)).dump(2) << "\n";
  }
  return failed ? kExitRuntime : kExitOk;
}

}  // namespace perfbench::cli
