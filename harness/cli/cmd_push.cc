// perfbench push --to URL [RUN...]: this machine's runs into the fleet's store.
#include <algorithm>
#include <iostream>

#include "cli.h"
#include "common.h"
#include "push.h"
#include "store/location.h"

namespace perfbench::cli {
namespace {

constexpr const char* kUsage =
    "usage: perfbench push --to URL [RUN...] [--db PATH] [--quiet]\n\n"
    "Copies runs from this machine's store (--db, default ./perfbench.db) to the fleet's:\n"
    "a PostgreSQL server (postgresql://[user@]host[:port]/dbname; give the password in\n"
    "~/.pgpass, $PGPASSFILE or a service file, postgresql:///?service=NAME, not in the URL)\n"
    "or another database file. RUN is a run id, a label (all its runs) or latest; none: every\n"
    "run. Idempotent: a run lands once, by its identity (uuid), so pushing everything every\n"
    "night sends only the new runs. Each run is one transaction: a push cut short leaves whole\n"
    "runs or none, and the next push completes it. A run still being measured is left for a\n"
    "later push. The nightly recipe: measure into the local file (no network in the timed\n"
    "loop), then push. Exit 0, 2 on bad input, 4 when the target store fails.";

// The runs named, oldest first; every run when none is named.
std::vector<int64_t> SelectRuns(Store& store, const std::vector<std::string>& refs) {
  std::vector<int64_t> ids;
  if (refs.empty())
    for (const auto& r : store.ListRuns()) ids.push_back(r.id);
  for (const auto& ref : refs) {
    auto labelled = store.RunsWithLabel(ref);
    if (labelled.empty()) labelled.push_back(ResolveRunOrThrow(store, ref));
    ids.insert(ids.end(), labelled.begin(), labelled.end());
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

int PushCmd(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("to", po::value<std::string>()->value_name("URL|PATH"),
                     "the target store: postgresql://... or a database file (made if missing)")
      ("runs", po::value<std::vector<std::string>>()->value_name("RUN"), "runs to push (default: all)")
      ("quiet", po::bool_switch(), "only the summary line");
  AddDbOption(desc);
  po::variables_map vm;
  if (!Parse(args, desc, {"...runs"}, vm, kUsage)) return kExitOk;
  if (!vm.count("to")) throw UsageError("missing --to URL (the store to push to)");
  const std::string to_location = vm["to"].as<std::string>();
  if (to_location == DbPath(vm)) throw UsageError("--to names the store the runs come from");
  const auto refs = vm.count("runs") ? vm["runs"].as<std::vector<std::string>>() : std::vector<std::string>{};
  auto from = OpenStore(vm, Store::Mode::kReadOnly);
  const std::vector<int64_t> ids = SelectRuns(*from, refs);
  auto to = OpenStoreAt(to_location, Store::Mode::kCreate);
  const bool quiet = vm["quiet"].as<bool>();
  const PushSummary sum = PushRuns(*from, *to, ids, [&](const RunRecord& run, const std::string& outcome, int64_t id) {
    if (quiet) return;
    if (outcome == "pushed")
      std::cerr << "push: run " << run.id << " (" << run.uuid << ") -> run " << id << "\n";
    else if (outcome == "running")
      std::cerr << "push: run " << run.id << " is still running: left for a later push\n";
  });
  std::cout << "pushed " << sum.pushed << " run(s) to " << to->path() << "; " << sum.present << " already there"
            << (sum.running ? "; " + std::to_string(sum.running) + " still running" : "") << "\n";
  return kExitOk;
}

}  // namespace perfbench::cli
