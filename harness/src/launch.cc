#include "perfbench/launch.h"

#include <stdexcept>

namespace perfbench {
namespace {

int ToInt(const char* name, const char* value, int min) {
  std::string s(value);
  size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size())
    throw std::invalid_argument(std::string(name) + "='" + s + "' is not an integer");
  if (v < min) throw std::invalid_argument(std::string(name) + "=" + s + " must be at least " + std::to_string(min));
  return v;
}

// A launcher's rank and world size: both integers, rank below world.
void RankAndWorld(const char* rank_var, const char* rank, const char* world_var, const char* world,
                  DistributedLaunch* l) {
  l->rank = ToInt(rank_var, rank, 0);
  l->world_size = ToInt(world_var, world, 1);
  if (l->rank >= l->world_size)
    throw std::invalid_argument(std::string(rank_var) + "=" + std::to_string(l->rank) + " is not below " + world_var +
                                "=" + std::to_string(l->world_size));
}

}  // namespace

std::string FirstSlurmHost(const std::string& nodelist) {
  // Up to the first ',' outside brackets.
  std::string first;
  int depth = 0;
  for (char c : nodelist) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) break;
    first += c;
  }
  const auto open = first.find('[');
  if (open == std::string::npos) return first;
  const std::string prefix = first.substr(0, open);
  std::string range = first.substr(open + 1);
  if (!range.empty() && range.back() == ']') range.pop_back();
  const std::string head = range.substr(0, range.find_first_of(",-"));
  return prefix + head;
}

DistributedLaunch ParseLaunchEnvironment(const std::function<const char*(const char*)>& getenv) {
  DistributedLaunch l;
  auto get = [&](const char* n) -> const char* {
    const char* v = getenv(n);
    return v && *v ? v : nullptr;
  };
  if (get("RANK") || get("WORLD_SIZE")) {
    if (!get("RANK") || !get("WORLD_SIZE"))
      throw std::invalid_argument("torchrun-style launch needs both RANK and WORLD_SIZE");
    l.mode = DistributedLaunch::Mode::kExternal;
    l.source = "torchrun";
    RankAndWorld("RANK", get("RANK"), "WORLD_SIZE", get("WORLD_SIZE"), &l);
    l.local_rank = get("LOCAL_RANK") ? ToInt("LOCAL_RANK", get("LOCAL_RANK"), 0) : 0;
    l.nproc_per_node = get("LOCAL_WORLD_SIZE") ? ToInt("LOCAL_WORLD_SIZE", get("LOCAL_WORLD_SIZE"), 1) : 1;
    l.master_addr = get("MASTER_ADDR") ? get("MASTER_ADDR") : "127.0.0.1";
    l.master_port = get("MASTER_PORT") ? ToInt("MASTER_PORT", get("MASTER_PORT"), 1) : 29500;
  } else if (get("SLURM_PROCID") && get("SLURM_NTASKS")) {
    l.mode = DistributedLaunch::Mode::kExternal;
    l.source = "slurm";
    RankAndWorld("SLURM_PROCID", get("SLURM_PROCID"), "SLURM_NTASKS", get("SLURM_NTASKS"), &l);
    l.local_rank = get("SLURM_LOCALID") ? ToInt("SLURM_LOCALID", get("SLURM_LOCALID"), 0) : 0;
    if (const char* per = get("SLURM_NTASKS_PER_NODE")) {
      // "4" or "4(x2)": the count before any '('.
      std::string s(per);
      l.nproc_per_node = ToInt("SLURM_NTASKS_PER_NODE", s.substr(0, s.find('(')).c_str(), 1);
    }
    l.node_rank = get("SLURM_NODEID") ? ToInt("SLURM_NODEID", get("SLURM_NODEID"), 0) : 0;
    if (get("MASTER_ADDR")) {
      l.master_addr = get("MASTER_ADDR");
    } else if (const char* nodes = get("SLURM_STEP_NODELIST") ? get("SLURM_STEP_NODELIST") : get("SLURM_JOB_NODELIST")) {
      l.master_addr = FirstSlurmHost(nodes);
    }
    l.master_port = get("MASTER_PORT") ? ToInt("MASTER_PORT", get("MASTER_PORT"), 1) : 29500;
  }
  if (l.mode == DistributedLaunch::Mode::kExternal && l.world_size > 1 && l.nproc_per_node > 0)
    l.nnodes = (l.world_size + l.nproc_per_node - 1) / l.nproc_per_node;
  if (const char* t = get("PERFBENCH_COMM_TIMEOUT")) l.comm_timeout_s = std::stod(t);
  return l;
}

}  // namespace perfbench
