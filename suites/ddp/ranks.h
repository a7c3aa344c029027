// The ranks of one ddp variant: a c10d process group (Gloo on the CPU, NCCL
// on GPUs) over a TCPStore rendezvous, the worker processes perfbench starts
// itself, a command channel from rank 0, and fault diagnosis that names the
// rank and the phase.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <nlohmann/json.hpp>

#include "perfbench/launch.h"
#include "perfbench/params.h"
#include "perfbench/settings.h"
#include "placement.h"

namespace perfbench::ddp {

// What every rank needs to build the same workload; rank 0 hands it to the
// workers it starts as JSON.
struct Spec {
  std::string workload;   // "train" | "allreduce"
  Params params;
  RunSettings settings;   // the run's, whole (device resolved)
  // Intra-op threads per rank: --threads, or 1 (ranks share the machine).
  int threads() const { return settings.threads > 0 ? settings.threads : 1; }
  nlohmann::json ToJson() const;
  // Throws std::invalid_argument naming a malformed field.
  static Spec FromJson(const nlohmann::json& j);
};

enum class Command : int64_t { kStop = 0, kStep = 1 };

class Ranks {
 public:
  // Rank `launch.rank`'s side of a group of `world` ranks. In a self launch
  // this process is rank 0 and starts ranks 1..world-1 as `perfbench
  // __ddp-worker` processes; in a manual launch it starts the node's other
  // ranks; under an external launcher it starts nobody.
  static std::unique_ptr<Ranks> Start(const DistributedLaunch& launch, const Spec& spec, int world);
  // A worker started by Start.
  static std::unique_ptr<Ranks> Join(const DistributedLaunch& launch, const std::string& prefix, const Spec& spec);
  ~Ranks();

  int rank() const { return rank_; }
  int world() const { return world_; }
  c10d::Backend& pg() { return *pg_; }
  torch::Device device() const { return device_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Rank 0 sends, the others receive (returns what rank 0 sent), through the
  // store: idle ranks hold no collective open. Receivers wait up to `limit`
  // (default without one): a rank 0 that dies closes the store (and, for
  // workers, kills them); one that fails still sends the stop at its end.
  std::pair<Command, int64_t> Exchange(Command cmd, int64_t arg,
                                       std::chrono::milliseconds limit = std::chrono::hours(24));
  // A launched follower at tear-down: waits, within the comm timeout, for
  // rank 0's stop, unless it came already or the group is broken.
  void AwaitStop();
  // Waits for a collective: within the comm timeout (Gloo), or stream-
  // ordered (NCCL; its watchdog enforces the timeout).
  void Wait(const c10::intrusive_ptr<c10d::Work>& work);
  void Barrier();
  // Gathers `values` (same length on every rank) to every rank: [world][n].
  std::vector<std::vector<double>> AllGather(const std::vector<double>& values);
  // Tells the others (through the store) where this rank is, for diagnosis.
  void Phase(const std::string& what);
  // Turns a failure into one message naming the guilty rank(s) and the phase:
  // which worker died (exit status, signal, last stderr line) or which rank
  // stopped answering. Marks the group broken (no stop command is sent).
  std::string Diagnose(const std::string& phase, const std::string& error);

 private:
  Ranks() = default;
  void Connect(const DistributedLaunch& launch, const std::string& prefix, const Spec& spec);
  void Spawn(const DistributedLaunch& launch, const std::string& prefix, const Spec& spec, int first_rank,
             int count);
  void StopWorkers(bool gracefully);

  struct Worker {
    int rank;
    pid_t pid;
    std::string stderr_path;
    int status = -1;  // waitpid status once reaped
    bool reaped = false;
  };
  int rank_ = 0, world_ = 1;
  int64_t exchanges_ = 0;  // commands exchanged so far: the store key of the next
  bool broken_ = false, nccl_ = false, stopped_ = false;
  torch::Device device_{torch::kCPU};
  std::chrono::milliseconds timeout_{30000};
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> pg_;
  std::vector<Worker> workers_;
};

// Fault injection for tests, from $PERFBENCH_DDP_FAULT="rank=1,step=3,mode=die|kill|hang|noconnect".
struct Fault {
  int rank = -1;
  int64_t step = -1;
  std::string mode;
  static Fault FromEnvironment();
  bool Hits(int r, int64_t s) const { return r == rank && s == step; }
};

}  // namespace perfbench::ddp
