// resnet50: ResNet-50 v1.5 (He et al. 2016, with the stride of each
// downsampling bottleneck on its 3x3 convolution, as torchvision and MLPerf
// training specify): 7x7/2 stem, 3x3/2 max pool, bottlenecks [3, 4, 6, 3] of
// widths 64/128/256/512 (expansion 4), batch norm, global average pool,
// 1000 classes. 25.56M parameters.
//   quick: batch 8, 3x32x32, widths 16/32/64/128, one bottleneck per stage
//   full:  3x224x224, batch 256 on a GPU and 16 on a CPU (ModelDef::full_batch)
// FLOP per step: every convolution's 2 C_in C_out k^2 H_out W_out and the
// head's 2 in out per image, counted while the network is built, times 3
// (forward, and backward's two products) times the batch.
#include "common/models.h"

namespace perfbench::common {
namespace {

struct ResNetSize {
  int64_t batch, image;
  std::vector<int64_t> widths, blocks;
};
ResNetSize Size(const std::string& size) {
  return size == "quick" ? ResNetSize{8, 32, {16, 32, 64, 128}, {1, 1, 1, 1}}
                         : ResNetSize{32, 224, {64, 128, 256, 512}, {3, 4, 6, 3}};
}
constexpr int64_t kExpansion = 4, kClasses = 1000;

// Counts forward FLOP per image as layers are added; `hw` the current spatial size.
struct FlopCount {
  double flop = 0;
  int64_t hw = 0;
  torch::nn::Conv2d Conv(int64_t in, int64_t out, int64_t k, int64_t stride) {
    hw = (hw + 2 * (k / 2) - k) / stride + 1;
    flop += 2.0 * static_cast<double>(in * out * k * k * hw * hw);
    return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(k / 2).bias(false));
  }
};

struct BottleneckImpl : torch::nn::Module {
  BottleneckImpl(int64_t in, int64_t width, int64_t stride, FlopCount& f) {
    const int64_t hw_in = f.hw;
    conv1 = register_module("conv1", f.Conv(in, width, 1, 1));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(width));
    conv2 = register_module("conv2", f.Conv(width, width, 3, stride));  // v1.5: the stride here
    bn2 = register_module("bn2", torch::nn::BatchNorm2d(width));
    conv3 = register_module("conv3", f.Conv(width, width * kExpansion, 1, 1));
    bn3 = register_module("bn3", torch::nn::BatchNorm2d(width * kExpansion));
    if (stride != 1 || in != width * kExpansion) {
      const int64_t hw_out = f.hw;
      f.hw = hw_in;
      down = register_module("downsample", torch::nn::Sequential(f.Conv(in, width * kExpansion, 1, stride),
                                                                 torch::nn::BatchNorm2d(width * kExpansion)));
      f.hw = hw_out;
    }
  }
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor y = torch::relu(bn1(conv1(x)));
    y = torch::relu(bn2(conv2(y)));
    y = bn3(conv3(y));
    return torch::relu(y + (down ? down->forward(x) : x));
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::Sequential down{nullptr};
};
TORCH_MODULE(Bottleneck);

// The network, and its forward FLOP per image in `flop`.
Model Build(const ResNetSize& s, double* flop, int64_t classes = kClasses) {
  FlopCount f;
  f.hw = s.image;
  torch::nn::Sequential seq;
  seq->push_back(f.Conv(3, s.widths[0], 7, 2));
  seq->push_back(torch::nn::BatchNorm2d(s.widths[0]));
  seq->push_back(torch::nn::ReLU());
  seq->push_back(torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(3).stride(2).padding(1)));
  f.hw = (f.hw + 2 - 3) / 2 + 1;
  int64_t in = s.widths[0];
  for (size_t stage = 0; stage < s.widths.size(); ++stage)
    for (int64_t b = 0; b < s.blocks[stage]; ++b) {
      seq->push_back(Bottleneck(in, s.widths[stage], stage > 0 && b == 0 ? 2 : 1, f));
      in = s.widths[stage] * kExpansion;
    }
  seq->push_back(torch::nn::AdaptiveAvgPool2d(1));
  seq->push_back(torch::nn::Flatten());
  seq->push_back(torch::nn::Linear(in, classes));
  f.flop += 2.0 * static_cast<double>(in * classes);
  if (flop) *flop = f.flop;
  return Model::Of(seq);
}

}  // namespace

double ResNet50ForwardFlop(const std::string& size) {
  double flop = 0;
  torch::NoGradGuard no_grad;
  Build(Size(size), &flop);
  return flop;
}

Model MakeResNet50(const std::string& size, int64_t classes) { return Build(Size(size), nullptr, classes); }

ModelDef ResNet50Model() {
  return ModelDef{
      .name = "resnet50",
      .description = "ResNet-50 v1.5 (MLPerf), bottlenecks and batch norm, images/s",
      .make = [](const std::string& size) { return Build(Size(size), nullptr); },
      .sample_shape = [](const std::string& size) {
        const int64_t hw = Size(size).image;
        return std::vector<int64_t>{3, hw, hw};
      },
      .batch = [](const std::string& size) { return Size(size).batch; },
      .classes = kClasses,
      .vocab = {},
      .causal_lm = false,
      .items = "images",
      .flops_per_step = [](const std::string& size) {
        return 3.0 * ResNet50ForwardFlop(size) * static_cast<double>(Size(size).batch);
      },
      // Full size: SGD with momentum at Goyal et al.'s linear scaling, 0.1 x
      // batch / 256, weight decay 5e-5, a short linear warm-up (MLPerf's
      // reference, without LARS). Quick: batch norm over 8 images and 1000
      // classes runs away at 0.05 (or 0.002) within the warm-up, and a
      // reduced precision's with it: 0.0002.
      .optimizer = [](const std::string& size, int64_t batch) {
        if (size == "quick") return OptimizerSpec{.lr = 0.0002};
        return OptimizerSpec{.kind = OptimizerSpec::Kind::kSgd,
                             .lr = 0.1 * static_cast<double>(batch) / 256.0,
                             .momentum = 0.9,
                             .weight_decay = 5e-5,
                             .warmup_steps = 4};
      },
      // 256 per GPU (NVIDIA DeepLearningExamples' default); on a CPU 32 (a
      // step at 256 needs ~22 GB of activations).
      .full_batch = [](const std::string& device) -> int64_t { return device == "cuda" ? 256 : 16; },
      // ~22 GB for a step of 256 images at 224x224: 86 MB per image, by area.
      .activation_bytes = [](const std::string& size, int64_t batch) {
        const double hw = static_cast<double>(Size(size).image) / 224.0;
        return 86e6 * hw * hw * static_cast<double>(batch);
      },
  };
}

}  // namespace perfbench::common
