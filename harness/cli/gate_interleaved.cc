// perfbench gate --reference-bin PATH | --reference-model FILE: the gate for
// a change whose reference can run now (a pull request against main's build,
// a new model file against the old one). The reference and the candidate run
// in alternating processes on the interleaved engine (paired_runs.h), as ab
// does, and the verdict is judged on the pairs (ComparePaired): the
// machine's slow periods, which no stored baseline can tell from the code,
// cancel in each pair.
#include <fmt/format.h>

#include <iostream>

#include "cli.h"
#include "common.h"
#include "compare/compare.h"
#include "paired_runs.h"
#include "perfbench/posix_fs.h"
#include "sources.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench gate --reference-bin PATH [--candidate-bin PATH] [--pairs N] [run options]\n"
    "       perfbench gate --reference-model FILE --model-file FILE [--pairs N] [run options]\n"
    "                      [--order-seed N] [--label L] [--policy FILE] [--allow-inconclusive] [--require-mde]\n"
    "                      [--format table|markdown|json|junit|none] [--output FILE]\n"
    "                      [--junit FILE] [--markdown FILE] [--json FILE] [--db PATH]\n\n"
    "The interleaved gate: for a change whose reference can run now (a pull request's build\n"
    "against main's, a new model file against the old one). The reference and the candidate run\n"
    "in N pairs of processes back to back (`ab`'s engine: each pair in the order RC or CR,\n"
    "balanced and shuffled with --order-seed), every process a `BIN run` of the same selection\n"
    "(any `perfbench run` option given here goes to both sides). --reference-bin names the\n"
    "reference's perfbench binary, --candidate-bin the candidate's (default: this one).\n"
    "--reference-model FILE runs the model suite's reference file against --model-file FILE (the\n"
    "candidate; export both under one name, export-model.py --name X), with either binary; without\n"
    "it --model-file goes to both sides. Runs are stored labelled L-reference and L-candidate (L\n"
    "default gate). Each metric is judged on its N pair log ratios (Wilcoxon signed-rank,\n"
    "Hodges-Lehmann interval, Benjamini-Hochberg, the policy's limits), so the machine's slow\n"
    "periods cancel; the verdict's kind is `interleaved`. A gate against a stored baseline\n"
    "(--baseline, for nightlies, trends and dedicated machines) is the other form: see\n"
    "`perfbench gate --help`.\n"
    "Exit 0 pass, 1 regression (the candidate worse than the reference), 2 bad input, 3\n"
    "inconclusive (or, with --require-mde, a pass that cannot resolve the policy's mde), 4 a\n"
    "process or workload failed.";

constexpr const char* kStoredOnly[] = {"last", "anchor", "plan", "processes", "max-processes", "max-seconds", "confirm"};

po::options_description Options() {
  po::options_description desc("options");
  desc.add_options()
      ("reference-bin", po::value<std::string>()->value_name("PATH"), "the reference's perfbench binary (default: this one)")
      ("candidate-bin", po::value<std::string>()->value_name("PATH"), "the candidate's perfbench binary (default: this one)")
      ("reference-model", po::value<std::string>()->value_name("FILE"), "the reference's model file (the model suite)")
      ("model-file", po::value<std::vector<std::string>>()->composing()->value_name("FILE"),
       "a model file for both sides (repeatable); with --reference-model, the candidate's one file")
      ("pairs", po::value<int>()->default_value(kDefaultPairs)->value_name("N"), "pairs of processes (at least 6)")
      ("order-seed", po::value<uint64_t>()->default_value(1)->value_name("N"), "seed of the pairs' order")
      ("label", po::value<std::string>()->default_value("gate")->value_name("L"),
       "runs are labelled L-reference and L-candidate")
      ("policy", po::value<std::string>()->value_name("FILE"), "thresholds (as compare and ab)")
      ("require-mde", po::bool_switch(), "exit 3 when a pass cannot resolve the policy's mde")
      ("baseline", po::value<std::string>()->value_name("REF"), "");  // the other form: refused with a reason
  // The stored form's own options, refused here with a reason rather than
  // passed to `run`, which would refuse them in the first pair.
  for (const char* name : kStoredOnly) desc.add_options()(name, po::value<std::vector<std::string>>()->multitoken()->zero_tokens(), "");
  AddVerdictReportOptions(desc);
  AddWideOption(desc);
  AddDbOption(desc);
  return desc;
}

std::string Describe(const Side& s, const std::string& model) {
  return s.bin + (model.empty() ? "" : " with " + model);
}

}  // namespace

bool IsInterleavedGate(const std::vector<std::string>& args) {
  for (const auto& a : args)
    for (const char* flag : {"--reference-bin", "--reference-model"})
      if (a == flag || a.rfind(std::string(flag) + "=", 0) == 0) return true;
  return false;
}

int InterleavedGateCmd(const std::vector<std::string>& args) {
  const po::options_description desc = Options();
  po::variables_map vm;
  std::vector<std::string> common;
  if (!ParsePassThrough(args, desc, vm, &common, kUsage)) return kExitOk;
  if (vm.count("baseline"))
    throw UsageError("--baseline and --reference-bin/--reference-model are two forms of gate: give one");
  for (const char* name : kStoredOnly)
    if (vm.count(name))
      throw UsageError(std::string("--") + name + " belongs to the gate against a stored baseline (--baseline); the "
                       "interleaved gate takes --pairs and run's options");
  const std::string format =
      CheckChoice("--format", vm["format"].as<std::string>(), {"table", "markdown", "json", "junit", "none"});
  const int pairs = vm["pairs"].as<int>();
  if (pairs < static_cast<int>(kMinPairs) || pairs > 1000)
    throw UsageError("--pairs must be in [" + std::to_string(kMinPairs) + ", 1000]");
  CheckPassThrough(common, "");
  const std::string ref_model = vm.count("reference-model") ? vm["reference-model"].as<std::string>() : "";
  const auto models = vm.count("model-file") ? vm["model-file"].as<std::vector<std::string>>() : std::vector<std::string>{};
  std::vector<std::string> ref_extra, cand_extra;
  std::string cand_model;
  if (!ref_model.empty()) {
    if (models.size() != 1) throw UsageError("--reference-model needs the candidate's one --model-file FILE");
    cand_model = models.front();
    ref_extra = {"--model-file", ref_model};
    cand_extra = {"--model-file", cand_model};
  } else {
    for (const auto& m : models) common.insert(common.end(), {"--model-file", m});  // the same models on both sides
  }
  const std::string self = posix::SelfExe(), label = vm["label"].as<std::string>();
  const Side ref = MakeSide("reference", vm.count("reference-bin") ? vm["reference-bin"].as<std::string>() : self, "--reference-bin",
                            label + "-reference", DbPath(vm), common, ref_extra, {});
  const Side cand = MakeSide("candidate", vm.count("candidate-bin") ? vm["candidate-bin"].as<std::string>() : self, "--candidate-bin",
                             label + "-candidate", DbPath(vm), common, cand_extra, {});
  const Policy policy = LoadPolicy(vm.count("policy") ? vm["policy"].as<std::string>() : "");
  auto store = OpenStore(vm, Store::Mode::kCreate);
  if (format == "table" && !vm.count("output"))
    std::cout << fmt::format("gate: interleaved, {} pairs of processes\n  reference {}\n  candidate {}\n", pairs,
                             Describe(ref, ref_model), Describe(cand, cand_model))
              << std::flush;
  size_t failed = 0;
  const PairedData d = RunPairs(*store, ref, cand, pairs, vm["order-seed"].as<uint64_t>(), &failed);
  Comparison c;
  try {
    c = ComparePaired(d, policy, SideAHistory(*store, d));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  WriteComparisonReports(vm, format, c, d.a, d.b);
  std::cerr << "gate: " << DetectableHeadline(c, "this gate") << "\n";
  if (const std::string u = UnresolvedNote(c); !u.empty()) std::cerr << "gate: " << u << "\n";
  std::cerr << "gate: " << ToString(c.verdict) << " (" << ToString(c.kind) << "; " << pairs << " pairs, runs labelled "
            << ref.label << " and " << cand.label << ")\n";
  return ComparisonExit(c, failed, vm["allow-inconclusive"].as<bool>(), vm["require-mde"].as<bool>());
}

}  // namespace perfbench::cli
