#include "placement.h"

#include <algorithm>
#include <cstdlib>

namespace perfbench::ddp {

std::vector<std::pair<std::string, std::string>> NcclEnvironment() {
  // 2 = CleanUpOnly: on a timeout or a dead peer the watchdog aborts the
  // communicators and the next collective throws, so the fault diagnosis
  // reports and later groups run. The default (3, SkipCleanUp) aborts the
  // whole process.
  return {{"TORCH_NCCL_ASYNC_ERROR_HANDLING", "2"}};
}

void ApplyNcclEnvironment() {
  for (const auto& [name, value] : NcclEnvironment()) setenv(name.c_str(), value.c_str(), /*overwrite=*/0);
}

int RanksPerNode(const DistributedLaunch& l, int world) {
  return l.Fixed() ? std::min(world, std::max(1, l.nproc_per_node)) : world;
}

bool BoundPerRank() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const bool launched = std::getenv("LOCAL_RANK") != nullptr || std::getenv("SLURM_LOCALID") != nullptr;
  return launched && visible != nullptr && *visible != '\0';
}

int GpuForRank(int local_rank, int devices, bool bound_per_rank) {
  if (local_rank < 0 || devices <= 0) return -1;
  if (local_rank < devices) return local_rank;
  return bound_per_rank ? local_rank % devices : -1;
}

std::string NcclPlacement(int ranks_here, int gpus, bool bound_per_rank) {
  if (ranks_here <= gpus || (bound_per_rank && gpus > 0)) return "";
  return "nccl needs one GPU per rank: " + std::to_string(ranks_here) + " rank(s) on this node, " +
         std::to_string(gpus) + " GPU(s)";
}

}  // namespace perfbench::ddp
