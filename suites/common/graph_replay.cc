#include "graph_replay.h"

#ifdef PERFBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace perfbench::common {

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
namespace {

// After a forward threw mid-capture: ends the stream's capture (discarding
// the partial graph) and returns the pool's memory, so that the process's
// allocator and stream are as they were (CUDAGraph::reset does neither).
void AbandonCapture(cudaStream_t stream, c10::DeviceIndex device, c10::MempoolId_t pool) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
    cudaGraph_t partial = nullptr;
    cudaStreamEndCapture(stream, &partial);
    if (partial) cudaGraphDestroy(partial);
  }
  cudaGetLastError();  // clear the capture's error
  c10::cuda::CUDACachingAllocator::endAllocateToPool(device, pool);
  c10::cuda::CUDACachingAllocator::get()->releasePool(device, pool);
}

}  // namespace

std::string GraphReplay::Capture(const std::function<torch::Tensor(const torch::Tensor&)>& forward,
                                 const torch::Tensor& example) {
  if (!example.is_cuda()) return "CUDA graphs need a CUDA device";
  const c10::DeviceIndex device = example.device().index();
  torch::InferenceMode guard;
  state_->input = example.clone();
  const auto current = c10::cuda::getCurrentCUDAStream(device);
  const auto stream = c10::cuda::getStreamFromPool(false, device);
  at::cuda::CUDAEvent ready, done;
  ready.record(current);
  ready.block(stream);
  std::string why;
  {
    c10::cuda::CUDAStreamGuard on(stream);
    try {
      // Warm-up on the capture stream: lazy initialisation stays out of the graph.
      for (int i = 0; i < 3; ++i) forward(state_->input);
    } catch (const std::exception& e) {
      return std::string("warm-up failed: ") + e.what();
    }
    const auto pool = at::cuda::graph_pool_handle();
    state_->graph = std::make_unique<at::cuda::CUDAGraph>();
    bool begun = false;
    try {
      // Thread-local mode: another thread's CUDA calls cannot invalidate it.
      state_->graph->capture_begin(pool, cudaStreamCaptureModeThreadLocal);
      begun = true;
      state_->output = forward(state_->input);
      state_->graph->capture_end();
    } catch (const std::exception& e) {
      if (begun) AbandonCapture(stream.stream(), device, pool);
      state_->graph.reset();  // an unended capture: its destructor frees nothing of the pool
      state_->output = torch::Tensor();
      const std::string what = e.what();
      why = "capture failed: " + what.substr(0, what.find('\n'));
    }
  }
  done.record(stream);
  done.block(current);
  return why;
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

}  // namespace perfbench::common
