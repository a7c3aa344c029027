// mlp: a GEMM-bound Linear+GELU stack.
//   quick: batch 128, 256 -> 4 x 512 -> 10      full: batch 256, 1024 -> 6 x 2048 -> 10
#include "common/models.h"

namespace perfbench::common {
namespace {

struct MlpSize {
  int64_t batch, in, width, depth;
};
MlpSize Size(const std::string& size) { return size == "quick" ? MlpSize{128, 256, 512, 4} : MlpSize{256, 1024, 2048, 6}; }

Model MakeMlp(const std::string& size) {
  const MlpSize s = Size(size);
  torch::nn::Sequential seq;
  int64_t in = s.in;
  for (int64_t i = 0; i < s.depth; ++i) {
    seq->push_back(torch::nn::Linear(in, s.width));
    seq->push_back(torch::nn::GELU());
    in = s.width;
  }
  seq->push_back(torch::nn::Linear(in, 10));
  return Model::Of(seq);
}



}  // namespace

ModelDef MlpModel() {
  return ModelDef{
      .name = "mlp",
      .description = "Linear+GELU stack, GEMM-bound training step",
      .make = MakeMlp,
      .sample_shape = [](const std::string& size) { return std::vector<int64_t>{Size(size).in}; },
      .batch = [](const std::string& size) { return Size(size).batch; },
      .classes = 10,
      .vocab = {},
      .causal_lm = false,
      .items = "samples",
      // All GEMM: 6 x parameters x samples (forward 2, backward 4).
      .flops_per_step = [](const std::string& size) {
        const MlpSize s = Size(size);
        const double params = static_cast<double>(s.in * s.width + (s.depth - 1) * s.width * s.width + s.width * 10);
        return 6.0 * params * static_cast<double>(s.batch);
      },
  };
}

}  // namespace perfbench::common
