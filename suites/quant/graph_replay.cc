#include "graph_replay.h"

#ifdef PERFBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace perfbench::quant {

struct GraphReplay::State {
  torch::Tensor input, output;
#ifdef PERFBENCH_WITH_CUDA
  std::unique_ptr<at::cuda::CUDAGraph> graph;
#endif
};

GraphReplay::GraphReplay() : state_(std::make_unique<State>()) {}
GraphReplay::~GraphReplay() = default;

bool GraphReplay::captured() const { return state_->output.defined(); }

#ifdef PERFBENCH_WITH_CUDA
std::string GraphReplay::Capture(const std::function<torch::Tensor(const torch::Tensor&)>& forward,
                                 const torch::Tensor& example) {
  if (!example.is_cuda()) return "CUDA graphs need a CUDA device";
  try {
    torch::InferenceMode guard;
    state_->input = example.clone();
    // Warm-up on a side stream (lazy initialisation stays out of the graph), then capture there.
    const auto current = c10::cuda::getCurrentCUDAStream(example.device().index());
    const auto stream = c10::cuda::getStreamFromPool(false, example.device().index());
    at::cuda::CUDAEvent ready, done;
    ready.record(current);
    ready.block(stream);
    {
      c10::cuda::CUDAStreamGuard on(stream);
      for (int i = 0; i < 3; ++i) forward(state_->input);
      state_->graph = std::make_unique<at::cuda::CUDAGraph>();
      state_->graph->capture_begin();
      state_->output = forward(state_->input);
      state_->graph->capture_end();
    }
    done.record(stream);
    done.block(current);
    return "";
  } catch (const c10::Error& e) {
    state_->graph.reset();
    state_->output = torch::Tensor();
    std::string what = e.what_without_backtrace();
    return "capture failed: " + what.substr(0, what.find('\n'));
  }
}

torch::Tensor GraphReplay::operator()(const torch::Tensor& x) {
  state_->input.copy_(x);
  state_->graph->replay();
  return state_->output;
}
#else
std::string GraphReplay::Capture(const std::function<torch::Tensor(const torch::Tensor&)>&, const torch::Tensor&) {
  return "this build has no CUDA paths";
}

torch::Tensor GraphReplay::operator()(const torch::Tensor&) {
  throw std::logic_error("GraphReplay: nothing captured in a build without CUDA paths");
}
#endif

}  // namespace perfbench::quant
