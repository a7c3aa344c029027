// Where a ddp variant's ranks go and how NCCL is set up for them: torch-free,
// so that the rules are unit-tested without a GPU.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "perfbench/launch.h"

namespace perfbench::ddp {

// Environment that ProcessGroupNCCL reads at construction, as perfbench
// wants it; ApplyNcclEnvironment sets each variable the user has not set.
std::vector<std::pair<std::string, std::string>> NcclEnvironment();
void ApplyNcclEnvironment();
// Ranks of a `world`-rank variant on this node: all of them when perfbench
// starts them here, the launch's ranks per node under a launcher.
int RanksPerNode(const DistributedLaunch& launch, int world);
// Whether the launcher bound GPUs to ranks itself ($CUDA_VISIBLE_DEVICES set
// under a launch, as SLURM's --gpus-per-task does): then a rank may see
// fewer GPUs than there are ranks on its node, each its own.
bool BoundPerRank();
// Why NCCL cannot give each of `ranks_here` ranks its own of `gpus` GPUs; ""
// when it can, or when GPUs are `bound_per_rank` (NCCL's own "Duplicate GPU"
// check then catches real sharing).
std::string NcclPlacement(int ranks_here, int gpus, bool bound_per_rank);
// The GPU index of local rank `local_rank` among `devices` visible ones: its
// own; modulo the visible ones when `bound_per_rank`; else -1 (no GPU of its own).
int GpuForRank(int local_rank, int devices, bool bound_per_rank);

}  // namespace perfbench::ddp
