#include "model_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/script.h>

#include "common/training.h"
#include "perfbench/posix_fs.h"

namespace perfbench::model {
namespace {

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

void Flatten(const c10::IValue& v, std::vector<torch::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) Flatten(e, out);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) Flatten(e, out);
  } else if (v.isGenericDict()) {
    for (const auto& e : v.toGenericDict()) Flatten(e.value(), out);
  }
}

class AotRunner : public ModelRunner {
 public:
  AotRunner(const ModelFile& m, const torch::Device& d)
      : loader_(m.path, "model", /*run_single_threaded=*/false, /*num_runners=*/1,
                d.is_cuda() ? d.index() : static_cast<c10::DeviceIndex>(-1)) {}
  std::vector<torch::Tensor> Run(const std::vector<torch::Tensor>& inputs) override { return loader_.run(inputs); }

 private:
  torch::inductor::AOTIModelPackageLoader loader_;
};

class TorchScriptRunner : public ModelRunner {
 public:
  TorchScriptRunner(const ModelFile& m, const torch::Device& d) : module_(torch::jit::load(m.path, d)) {
    module_.eval();
  }
  std::vector<torch::Tensor> Run(const std::vector<torch::Tensor>& inputs) override {
    std::vector<c10::IValue> args(inputs.begin(), inputs.end());
    std::vector<torch::Tensor> out;
    Flatten(module_.forward(args), out);
    return out;
  }

 private:
  torch::jit::Module module_;
};

// Reads the child's stdout until it closes or `timeout_s` passes; false on timeout.
bool ReadAll(int fd, double timeout_s, std::string& out) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return true;
    out.append(buf, static_cast<size_t>(n));
  }
}

pid_t StartChild(std::vector<std::string> args, int out_fd) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("cannot start the model probe: fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    dup2(out_fd, STDOUT_FILENO);
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDERR_FILENO);
    execv(args[0].c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// The last line the child printed (a library may print before it).
std::string LastLine(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.substr(text.find_last_of('\n') == std::string::npos ? 0 : text.find_last_of('\n') + 1);
}

std::string Outcome(int status, const std::string& out, const ModelFile& m) {
  const std::string line = LastLine(out);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && line == "ok") return "";
  if (WIFEXITED(status)) return line.empty() ? fmt::format("the probe exited {}", WEXITSTATUS(status)) : line;
  const int sig = WTERMSIG(status);
  std::string why = fmt::format("loading or calling {} crashed the process (signal {}: {})", m.path, sig, strsignal(sig));
  if (sig == SIGILL && !m.cpu_isa.empty())
    why += "; the package was compiled for " + m.cpu_isa + ": export it again on this machine";
  return why;
}

}  // namespace

std::unique_ptr<ModelRunner> ModelRunner::Open(const ModelFile& model, const torch::Device& device) {
  try {
    if (model.format == Format::kAotInductor) return std::make_unique<AotRunner>(model, device);
    return std::make_unique<TorchScriptRunner>(model, device);
  } catch (const std::exception& e) {
    throw std::runtime_error("model file " + model.path + ": cannot be loaded (" + FirstLine(e.what()) + ")");
  }
}

std::string Incompatibility(const ModelFile& m, const std::string& device) {
  if (m.format == Format::kAotInductor && m.device != device)
    return fmt::format("model file {}: an AOTInductor package compiled for {}, and this run is on {}: export it again "
                       "with --device {}{}",
                       m.path, m.device, device, device,
                       device == "cuda" ? " (a CUDA package can only be made on a GPU machine)" : "");
  if (m.format == Format::kAotInductor && !m.torch_version.empty() && ReleaseOf(m.torch_version) != TORCH_VERSION)
    return fmt::format("model file {}: compiled by torch {}, and this perfbench links torch {}: an AOTInductor "
                       "package runs only with the torch that compiled it; export it again with torch {}",
                       m.path, m.torch_version, TORCH_VERSION, TORCH_VERSION);
  return "";
}

std::string ProbeInChild(const ModelFile& m, const std::string& device, const std::vector<int64_t>& batches,
                         double timeout_s) {
  std::vector<std::string> args = {posix::SelfExe(), "__model-probe", m.path, device};
  for (int64_t b : batches) args.push_back(std::to_string(b));
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot start the model probe: pipe failed");
  const pid_t pid = StartChild(args, fds[1]);
  close(fds[1]);
  std::string out;
  const bool finished = ReadAll(fds[0], timeout_s, out);
  close(fds[0]);
  if (!finished) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!finished) return fmt::format("loading and calling {} once took more than {:g} s", m.path, timeout_s);
  return Outcome(status, out, m);
}

int ProbeCommand(const std::vector<std::string>& args) {
  try {
    if (args.size() < 3) throw std::runtime_error("usage: __model-probe PATH DEVICE BATCH...");
    const ModelFile m = ReadModelFile(args[0]);
    const torch::Device device = args[1] == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    const auto examples = LoadExampleInputs(m);
    auto runner = ModelRunner::Open(m, device);
    torch::InferenceMode guard;
    for (size_t i = 2; i < args.size(); ++i) {
      const int64_t batch = std::stoll(args[i]);
      try {
        const auto outputs = runner->Run(Resize(examples, m.batch_dim, batch, device));
        if (outputs.empty()) throw std::runtime_error("the model returned no tensor");
        common::SynchronizeDevice(device);
      } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("model file {}: a call with its example inputs at batch {} failed ({})",
                                             m.path, batch, FirstLine(e.what())));
      }
    }
    std::printf("ok\n");
    return 0;
  } catch (const std::exception& e) {
    std::printf("%s\n", FirstLine(e.what()).c_str());
    return 1;
  }
}

}  // namespace perfbench::model
