// quant/bert: the shared BERT encoder (common/bert.cc) trained on a topic
// task, run in bf16 / fp16, or with its Linear layers in int8 dynamic
// (PyTorch's canonical quantize_dynamic case) or through _int_mm or fp8's
// _scaled_mm; embeddings, layer norms, softmax and GELU then stay in the
// activations' dtype (fp32, or bf16 for fp8 on a GPU).
//   task: a sequence opens with token 0 ([CLS]); ten topics, each a band of
//     19 ids among the first 200; every other token is drawn from the
//     label's band with probability 0.3, else uniformly (bert_net.cc says
//     why these sizes). Held-out sequences are new.
//   quick: 2 layers, hidden 128, 2 heads, vocabulary 200, sequence 32;
//     4096 training sequences, 300 Adam steps of 32
//   full:  BERT-base (12/768/12, vocabulary 30522) at sequence 384;
//     1024 training sequences, 128 steps of 8 (a short schedule: expensive
//     on a CPU)
// The inference forward reads the trained module's parameters by name and
// is tested equal to the module's own forward in fp32.
#pragma once

#include "quant_net.h"

namespace perfbench::quant {

class BertNet : public QuantNet {
 public:
  BertNet(const std::string& size, uint64_t seed, const torch::Device& device = torch::kCPU);
  // FLOP of the training the constructor runs at `size` (6 x GEMM
  // parameters x tokens per step x steps).
  static double TrainingFlop(const std::string& size);
  std::unique_ptr<QuantNet> Clone() const override { return std::make_unique<BertNet>(*this); }
  std::string Unsupported(Mode mode) const override;
  void PrepareHalf(torch::ScalarType dtype) override;
  void PrepareLowp(const LowpSpec& spec) override;
  void PrepareDynamic() override;
  void Calibrate(Observer observer, double miscalibrate = 1.0) override;
  torch::Tensor Forward(const torch::Tensor& ids, Mode mode) const override;
  int64_t ModelBytes(Mode mode) const override;
  void To(const torch::Device& device) override;
  // The trained module's own forward (tests compare it with Forward).
  torch::Tensor ModuleForward(const torch::Tensor& ids) const;

 private:
  struct Linear {
    torch::Tensor weight, bias;
    c10::IValue packed;
    LowpLinear lowp;
  };
  torch::Tensor Apply(const std::string& name, const torch::Tensor& x, Mode mode) const;
  torch::Tensor LayerNorm(const std::string& name, const torch::Tensor& x) const;
  torch::Tensor Layer(int64_t i, const torch::Tensor& x, Mode mode) const;

  std::shared_ptr<torch::nn::Module> module_;
  std::function<torch::Tensor(const torch::Tensor&)> module_forward_;
  std::map<std::string, torch::Tensor> tensors_;  // embeddings and layer norms
  std::map<std::string, Linear> linears_;
  int64_t layers_ = 0, heads_ = 0;
  bool reduce_range_ = false;
};

}  // namespace perfbench::quant
