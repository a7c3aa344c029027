// Single-stream queries replayed as a CUDA graph (at::cuda::CUDAGraph): the
// forward of one query is captured once, then each query copies its input
// into the captured input and replays, so batch-1 latency measures the
// model rather than its kernel launches. Only on CUDA builds and devices;
// a forward that cannot be captured (a host sync, a CPU op) leaves the
// query eager, with the reason.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <torch/torch.h>

namespace perfbench::common {

class GraphReplay {
 public:
  GraphReplay();
  ~GraphReplay();
  // Captures `forward` on `example` (one query, on a CUDA device). "" on
  // success, else why the queries stay eager.
  std::string Capture(const std::function<torch::Tensor(const torch::Tensor&)>& forward, const torch::Tensor& example);
  bool captured() const;
  // The captured forward on `x` (the example's shape): its output tensor,
  // overwritten by the next call.
  torch::Tensor operator()(const torch::Tensor& x);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace perfbench::common
