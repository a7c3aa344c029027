// cnn: a small ResNet-style network (conv-BN-ReLU stem, residual blocks,
// strided stages, global average pool, linear head).
//   quick: batch 16, 3x32x32, widths 16/32      full: batch 64, 3x64x64, widths 32/64/128
#include "common/models.h"

namespace perfbench::common {
namespace {

struct CnnSize {
  int64_t batch, image;
  std::vector<int64_t> widths;
};
CnnSize Size(const std::string& size) {
  return size == "quick" ? CnnSize{16, 32, {16, 32}} : CnnSize{64, 64, {32, 64, 128}};
}

// conv3x3-BN-ReLU-conv3x3-BN plus identity (or 1x1 strided projection), ReLU.
struct ResidualBlockImpl : torch::nn::Module {
  ResidualBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv1(torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false)),
        bn1(out),
        conv2(torch::nn::Conv2dOptions(out, out, 3).padding(1).bias(false)),
        bn2(out) {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
    register_module("bn2", bn2);
    if (stride != 1 || in != out) {
      proj = register_module("proj", torch::nn::Sequential(
                                          torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1).stride(stride).bias(false)),
                                          torch::nn::BatchNorm2d(out)));
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor y = torch::relu(bn1(conv1(x)));
    y = bn2(conv2(y));
    return torch::relu(y + (proj ? proj->forward(x) : x));
  }
  torch::nn::Conv2d conv1;
  torch::nn::BatchNorm2d bn1;
  torch::nn::Conv2d conv2;
  torch::nn::BatchNorm2d bn2;
  torch::nn::Sequential proj{nullptr};
};
TORCH_MODULE(ResidualBlock);

// Forward FLOP per image: each convolution's 2 C_in C_out k^2 H_out W_out
// (the stem, each block's two 3x3 and, where the shape changes, its 1x1
// projection) and the head's 2 in out.
double CnnForwardFlop(const CnnSize& s) {
  const auto conv = [](int64_t in, int64_t out, int64_t k, int64_t hw) {
    return 2.0 * static_cast<double>(in * out * k * k * hw * hw);
  };
  int64_t hw = s.image, in = s.widths[0];
  double flop = conv(3, in, 3, hw);
  for (size_t i = 0; i < s.widths.size(); ++i) {
    const int64_t out = s.widths[i];
    if (i > 0) hw = (hw + 1) / 2;
    flop += conv(in, out, 3, hw) + conv(out, out, 3, hw) + (i > 0 || in != out ? conv(in, out, 1, hw) : 0.0);
    flop += 2 * conv(out, out, 3, hw);  // the stage's second block
    in = out;
  }
  return flop + 2.0 * static_cast<double>(in * 10);
}

Model MakeCnn(const std::string& size) {
  const CnnSize s = Size(size);
  torch::nn::Sequential seq;
  seq->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(3, s.widths[0], 3).padding(1).bias(false)));
  seq->push_back(torch::nn::BatchNorm2d(s.widths[0]));
  seq->push_back(torch::nn::ReLU());
  int64_t in = s.widths[0];
  for (size_t i = 0; i < s.widths.size(); ++i) {
    seq->push_back(ResidualBlock(in, s.widths[i], i == 0 ? 1 : 2));
    seq->push_back(ResidualBlock(s.widths[i], s.widths[i], 1));
    in = s.widths[i];
  }
  seq->push_back(torch::nn::AdaptiveAvgPool2d(1));
  seq->push_back(torch::nn::Flatten());
  seq->push_back(torch::nn::Linear(in, 10));
  return Model::Of(seq);
}

}  // namespace

ModelDef CnnModel() {
  return ModelDef{
      .name = "cnn",
      .description = "small ResNet-style conv net, conv/BN-bound training step",
      .make = MakeCnn,
      .sample_shape = [](const std::string& size) {
        const int64_t hw = Size(size).image;
        return std::vector<int64_t>{3, hw, hw};
      },
      .batch = [](const std::string& size) { return Size(size).batch; },
      .classes = 10,
      .vocab = {},
      .causal_lm = false,
      .items = "samples",
      // 3 x forward (forward, and backward's two products) x batch.
      .flops_per_step = [](const std::string& size) {
        return 3.0 * CnnForwardFlop(Size(size)) * static_cast<double>(Size(size).batch);
      },
  };
}

}  // namespace perfbench::common
