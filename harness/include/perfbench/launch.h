// How the processes of a multi-rank (distributed) run were started, for the
// workloads that use several ranks (the ddp suite). Parsed by the harness
// from the environment or the command line; no torch here.
//
//   self      perfbench starts the ranks itself, on this machine: each
//             variant's world_size ranks (rank 0 in this process), on a free port.
//   external  an existing launcher started one process per rank:
//             torchrun-style (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
//             MASTER_ADDR, MASTER_PORT) or SLURM (SLURM_PROCID, SLURM_NTASKS,
//             SLURM_LOCALID, SLURM_NTASKS_PER_NODE, SLURM_NODEID, the first host of
//             SLURM_STEP_NODELIST / SLURM_JOB_NODELIST unless MASTER_ADDR is set).
//   manual    perfbench started on each node with --nnodes --node-rank
//             --nproc-per-node --master-addr --master-port: this process is
//             the node's first rank and starts the node's other ranks.
// Global ranks: node_rank * nproc_per_node + local_rank. Rank 0 alone writes results.
#pragma once

#include <functional>
#include <string>

namespace perfbench {

struct DistributedLaunch {
  enum class Mode { kSelf, kExternal, kManual };
  Mode mode = Mode::kSelf;
  std::string source = "self";  // "self" | "torchrun" | "slurm" | "flags"
  int rank = 0;                 // global rank of this process
  int world_size = 1;           // fixed by the launch (external, manual); per variant when self
  int local_rank = 0;
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;           // 0: pick a free one (self)
  double comm_timeout_s = 30;    // a rank silent this long fails the run

  bool Fixed() const { return mode != Mode::kSelf; }
};

// Reads the launcher's environment through `getenv` (nullptr when unset).
// Returns mode self when no launcher variables are set. Throws
// std::invalid_argument naming the variable for inconsistent values
// ("RANK=3 is not below WORLD_SIZE=2").
DistributedLaunch ParseLaunchEnvironment(const std::function<const char*(const char*)>& getenv);

// The first host of a SLURM node list: "node[01-04,07],gpu2" -> "node01".
std::string FirstSlurmHost(const std::string& nodelist);

}  // namespace perfbench
