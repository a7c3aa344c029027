#include "ranks.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "group_release.h"
#include "perfbench/posix_fs.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef PERFBENCH_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace perfbench::ddp {
namespace {

// One TCPStore per process and master address, shared by every variant: a
// self launch serves it on a free port; a fixed launch reaches node 0's.
c10::intrusive_ptr<c10d::TCPStore> SharedStore(const DistributedLaunch& l, bool server,
                                               std::chrono::milliseconds timeout) {
  static std::mutex mu;
  static std::map<std::string, c10::intrusive_ptr<c10d::TCPStore>> stores;
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = l.master_addr + ":" + std::to_string(l.master_port) + (server ? "/s" : "/c");
  if (auto it = stores.find(key); it != stores.end()) return it->second;
  c10d::TCPStoreOptions o;
  o.port = static_cast<uint16_t>(l.master_port);
  o.isServer = server;
  o.waitWorkers = false;
  o.timeout = timeout;
  c10::intrusive_ptr<c10d::TCPStore> store;
  try {
    store = c10::make_intrusive<c10d::TCPStore>(l.master_addr, o);
  } catch (const std::exception& e) {
    if (server)
      throw std::runtime_error("cannot serve the rendezvous on " + l.master_addr + ":" +
                               std::to_string(l.master_port) + " (port in use? choose another --master-port): " +
                               std::string(e.what()).substr(0, 200));
    throw std::runtime_error("cannot reach the rendezvous at " + l.master_addr + ":" + std::to_string(l.master_port) +
                             " within " + std::to_string(timeout.count() / 1000) + " s: " +
                             std::string(e.what()).substr(0, 200));
  }
  stores[key] = store;
  return store;
}

#ifdef PERFBENCH_WITH_CUDA
// Rank `rank`'s own GPU (placement.h's rule); throws naming the rank when
// this node has none for it (never a shared GPU by accident).
torch::Device OwnGpu(int local_rank, int rank) {
  const int devices = static_cast<int>(c10::cuda::device_count());
  const int index = GpuForRank(local_rank, devices, BoundPerRank());
  if (index < 0)
    throw std::runtime_error("rank " + std::to_string(rank) + " has local rank " + std::to_string(local_rank) +
                             " but this node has " + std::to_string(devices) + " GPU(s): one per rank");
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index));
}
#endif

std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
                                  strsignal(WTERMSIG(status)) + ")";
  return "stopped";
}

}  // namespace

Fault Fault::FromEnvironment() {
  Fault f;
  const char* env = std::getenv("PERFBENCH_DDP_FAULT");
  if (!env) return f;
  std::stringstream ss(env);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    const std::string k = item.substr(0, eq), v = item.substr(eq + 1);
    if (k == "rank") f.rank = std::stoi(v);
    if (k == "step") f.step = std::stoll(v);
    if (k == "mode") f.mode = v;
  }
  return f;
}

nlohmann::json Spec::ToJson() const {
  nlohmann::json p = nlohmann::json::array();
  for (const auto& [k, v] : params.items()) p.push_back({k, v});
  return {{"workload", workload}, {"params", p}, {"settings", settings.ToJson()}};
}

Spec Spec::FromJson(const nlohmann::json& j) {
  Spec s;
  try {
    s.workload = j.at("workload").get<std::string>();
    for (const auto& kv : j.at("params")) s.params.Set(kv.at(0).get<std::string>(), kv.at(1).get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("ddp worker spec: ") + e.what());
  }
  s.settings = RunSettings::FromJson(j.value("settings", nlohmann::json::object()));
  return s;
}

std::unique_ptr<Ranks> Ranks::Start(const DistributedLaunch& launch, const Spec& spec, int world) {
  std::unique_ptr<Ranks> r(new Ranks());
  r->timeout_ = std::chrono::milliseconds(static_cast<int64_t>(launch.comm_timeout_s * 1000));
  DistributedLaunch l = launch;
  // Same counter on every process of a fixed launch: they set variants up in the same order.
  static int variant_counter = 0;
  const std::string prefix = "v" + std::to_string(variant_counter++);
  if (!l.Fixed()) {
    l.world_size = world;
    l.rank = 0;
    l.master_addr = "127.0.0.1";
    l.master_port = 0;  // a free port; the store says which
  } else if (world != l.world_size) {
    throw std::invalid_argument("world_size " + std::to_string(world) + " differs from the launch's " +
                                std::to_string(l.world_size));
  }
  r->rank_ = l.rank;
  r->world_ = world;
  auto store = SharedStore(l, /*server=*/l.rank == 0, r->timeout_);
  if (!l.Fixed()) l.master_port = store->getPort();
  // Start the ranks this process is responsible for.
  if (!l.Fixed() && world > 1) r->Spawn(l, prefix, spec, 1, world - 1);
  if (l.mode == DistributedLaunch::Mode::kManual && l.nproc_per_node > 1)
    r->Spawn(l, prefix, spec, l.rank + 1, l.nproc_per_node - 1);
  r->store_ = c10::make_intrusive<c10d::PrefixStore>(prefix, store);
  try {
    r->Connect(l, prefix, spec);
  } catch (const std::exception& e) {
    throw std::runtime_error(r->Diagnose("rendezvous", e.what()));
  }
  return r;
}

std::unique_ptr<Ranks> Ranks::Join(const DistributedLaunch& l, const std::string& prefix, const Spec& spec) {
  std::unique_ptr<Ranks> r(new Ranks());
  r->timeout_ = std::chrono::milliseconds(static_cast<int64_t>(l.comm_timeout_s * 1000));
  r->rank_ = l.rank;
  r->world_ = l.world_size;
  r->store_ = c10::make_intrusive<c10d::PrefixStore>(prefix, SharedStore(l, /*server=*/false, r->timeout_));
  r->Connect(l, prefix, spec);
  return r;
}

void Ranks::Connect(const DistributedLaunch& l, const std::string& prefix, const Spec& spec) {
  (void)prefix;
  const std::string backend = spec.params.Get("backend");
  Phase("rendezvous");
  if (backend == "nccl") {
#ifdef PERFBENCH_WITH_CUDA
    device_ = OwnGpu(l.local_rank, rank_);
    c10::cuda::set_device(device_.index());
    ApplyNcclEnvironment();
    nccl_ = true;
    auto opts = c10d::ProcessGroupNCCL::Options::create();
    opts->timeout = timeout_;
    auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store_, rank_, world_, opts);
    pg->setBoundDeviceId(device_);
    pg_ = pg;
#else
    throw std::runtime_error("this perfbench was built without CUDA: no NCCL");
#endif
  } else {
    if (spec.settings.device == "cuda") {
#ifdef PERFBENCH_WITH_CUDA
      device_ = OwnGpu(l.local_rank, rank_);
#endif
    }
    auto opts = c10d::ProcessGroupGloo::Options::create();
    opts->timeout = timeout_;
    opts->threads = 2;
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    else if (l.master_addr == "127.0.0.1" || l.master_addr == "localhost")
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else
      opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    pg_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store_, rank_, world_, opts);
  }
  Phase("connected");
}

void Ranks::Spawn(const DistributedLaunch& l, const std::string& prefix, const Spec& spec, int first_rank,
                  int count) {
  const std::string exe = posix::SelfExe();
  for (int i = 0; i < count; ++i) {
    const int rank = first_rank + i;
    char path[] = "/tmp/perfbench-rank-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) throw std::runtime_error("cannot create a log file for rank " + std::to_string(rank));
    const nlohmann::json doc = {
        {"spec", spec.ToJson()},
        {"rank", rank},
        {"local_rank", l.mode == DistributedLaunch::Mode::kManual ? rank - l.node_rank * l.nproc_per_node : rank},
        {"world", world_},
        {"addr", l.master_addr},
        {"port", l.master_port},
        {"prefix", prefix},
        {"comm_timeout_s", l.comm_timeout_s}};
    std::vector<std::string> args = {exe, "__ddp-worker", doc.dump()};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
      close(fd);
      throw std::runtime_error("cannot start rank " + std::to_string(rank) + ": fork failed");
    }
    if (pid == 0) {
      // The child dies with its parent: no orphans even if perfbench is killed.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      dup2(fd, STDERR_FILENO);
      const int devnull = open("/dev/null", O_WRONLY);
      if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
      execv(exe.c_str(), argv.data());
      _exit(127);
    }
    close(fd);
    workers_.push_back({rank, pid, path});
  }
}

// Through the store, not a collective: a rank waiting for its next command
// then sleeps in a socket read instead of keeping a receiving NCCL broadcast
// kernel spinning on its GPU (which, with world sizes 1, 2, 4 run one after
// another, competed with the active group's kernels).
std::pair<Command, int64_t> Ranks::Exchange(Command cmd, int64_t arg, std::chrono::milliseconds limit) {
  const std::string key = "cmd/" + std::to_string(exchanges_++);
  if (rank_ == 0) {
    const std::string v = std::to_string(static_cast<int64_t>(cmd)) + " " + std::to_string(arg);
    store_->set(key, std::vector<uint8_t>(v.begin(), v.end()));
    return {cmd, arg};
  }
  store_->wait({key}, limit);  // rank 0 gone: its store closes, wait throws
  const auto v = store_->get(key);
  std::istringstream in(std::string(v.begin(), v.end()));
  int64_t c = -1, a = 0;
  if (!(in >> c >> a) || (c != static_cast<int64_t>(Command::kStop) && c != static_cast<int64_t>(Command::kStep)))
    throw std::runtime_error("malformed command from rank 0: '" + std::string(v.begin(), v.end()) + "'");
  stopped_ = c == static_cast<int64_t>(Command::kStop);
  return {static_cast<Command>(c), a};
}

void Ranks::AwaitStop() {
  if (rank_ == 0 || stopped_ || broken_) return;
  Exchange(Command::kStop, 0, timeout_);
}

// NCCL: a stream-ordered wait (the current stream waits for the
// collective's; the CPU goes on, and the step's one device synchronise
// covers it). ProcessGroupNCCL's wait(timeout) blocks the CPU in 1 ms
// sleeps, which capped busbw at bytes / 1 ms and added up to 1 ms per
// bucket to comm_share; the watchdog enforces the comm timeout instead.
void Ranks::Wait(const c10::intrusive_ptr<c10d::Work>& work) {
  if (nccl_) {
    work->wait();
    return;
  }
  if (!work->wait(timeout_)) throw std::runtime_error("collective timed out");
}

void Ranks::Barrier() {
  c10d::BarrierOptions o;
  o.timeout = timeout_;
  if (device_.is_cuda()) o.device_ids = {device_.index()};
  Wait(pg_->barrier(o));
}

std::vector<std::vector<double>> Ranks::AllGather(const std::vector<double>& values) {
  const auto n = static_cast<int64_t>(values.size());
  auto in = torch::tensor(values, torch::kFloat64).to(device_);
  std::vector<at::Tensor> inputs{in};
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < world_; ++r) outputs[0].push_back(torch::empty({n}, in.options()));
  Wait(pg_->allgather(outputs, inputs));
  std::vector<std::vector<double>> out(world_);
  for (int r = 0; r < world_; ++r) {
    auto c = outputs[0][r].cpu();
    out[r].assign(c.data_ptr<double>(), c.data_ptr<double>() + n);
  }
  return out;
}

void Ranks::Phase(const std::string& what) {
  try {
    const std::string v = what;
    store_->set("phase/" + std::to_string(rank_), std::vector<uint8_t>(v.begin(), v.end()));
  } catch (const std::exception&) {
    // Diagnosis only: never fail a step for it.
  }
}

std::string Ranks::Diagnose(const std::string& phase, const std::string& full_error) {
  broken_ = true;
  // c10d errors carry several lines; the runner keeps one, so make it ours.
  std::string error = full_error.substr(0, full_error.find('\n'));
  while (!error.empty() && std::isspace(static_cast<unsigned char>(error.back()))) error.pop_back();
  std::string head = "ddp world " + std::to_string(world_) + ", rank " + std::to_string(rank_) + " in " + phase + ": ";
  // A worker that is gone says the most.
  for (int tries = 0; tries < 20; ++tries) {
    for (auto& w : workers_) {
      if (w.reaped) continue;
      int status = 0;
      if (waitpid(w.pid, &status, WNOHANG) == w.pid) {
        w.reaped = true;
        w.status = status;
      }
    }
    bool any = false;
    for (const auto& w : workers_) any |= w.reaped;
    if (any) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a dying peer may take a moment
  }
  for (const auto& w : workers_) {
    if (!w.reaped) continue;
    std::string msg = head + "rank " + std::to_string(w.rank) + " (pid " + std::to_string(w.pid) + ") " +
                      DescribeStatus(w.status);
    const std::string last = LastLine(w.stderr_path);
    if (!last.empty()) msg += ": " + last.substr(0, 200);
    return msg;
  }
  // Nobody died: who stopped answering? Compare the phases the ranks reported.
  std::string lagging;
  try {
    std::vector<std::string> keys;
    for (int r = 0; r < world_; ++r) keys.push_back("phase/" + std::to_string(r));
    for (int r = 0; r < world_; ++r) {
      if (r == rank_) continue;
      std::string where = "never reported";
      if (store_->check({keys[r]})) {
        auto v = store_->get(keys[r]);
        where = "last reported '" + std::string(v.begin(), v.end()) + "'";
      }
      lagging += (lagging.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + " " + where;
    }
  } catch (const std::exception&) {
    lagging = "the rendezvous store is unreachable";
  }
  std::string msg = head + error.substr(0, 240);
  if (!lagging.empty()) msg += " [" + lagging + "]";
  return msg;
}

void Ranks::StopWorkers(bool gracefully) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(gracefully ? 10 : 0);
  for (auto& w : workers_) {
    while (!w.reaped) {
      int status = 0;
      const pid_t got = waitpid(w.pid, &status, WNOHANG);
      if (got == w.pid || got < 0) {
        w.reaped = true;
        w.status = status;
        break;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        kill(w.pid, SIGKILL);
        waitpid(w.pid, &status, 0);
        w.reaped = true;
        w.status = status;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    unlink(w.stderr_path.c_str());
  }
  workers_.clear();
}

Ranks::~Ranks() {
  // The stop goes through the store, so it reaches waiting ranks even when
  // the process group is broken.
  if (rank_ == 0) {
    try {
      Exchange(Command::kStop, 0);
    } catch (const std::exception&) {
      broken_ = true;
    }
  }
  // Workers first (a hung one is killed), so that nothing the process group
  // waits for in its destructor can hang.
  StopWorkers(!broken_);
  ReleaseGroup(pg_, broken_);
}

}  // namespace perfbench::ddp
