// transformer: one pre-built TransformerEncoderLayer over continuous
// token embeddings, mean-pooled into a linear head.
//   quick: batch 8, seq 64, d 128, 4 heads, ff 512     full: batch 16, seq 256, d 512, 8 heads, ff 2048
#include "common/models.h"

namespace perfbench::common {
namespace {

struct TfSize {
  int64_t batch, seq, d_model, heads, ff;
};
TfSize Size(const std::string& size) {
  return size == "quick" ? TfSize{8, 64, 128, 4, 512} : TfSize{16, 256, 512, 8, 2048};
}

struct EncoderClassifierImpl : torch::nn::Module {
  explicit EncoderClassifierImpl(const TfSize& s)
      : layer(torch::nn::TransformerEncoderLayerOptions(s.d_model, s.heads).dim_feedforward(s.ff).dropout(0.0)),
        head(s.d_model, 10) {
    register_module("layer", layer);
    register_module("head", head);
  }
  // x: [batch, seq, d_model]; the layer wants [seq, batch, d_model].
  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor h = layer(x.transpose(0, 1));
    return head(h.mean(0));
  }
  torch::nn::TransformerEncoderLayer layer;
  torch::nn::Linear head;
};
TORCH_MODULE(EncoderClassifier);



}  // namespace

ModelDef TransformerModel() {
  return ModelDef{
      .name = "transformer",
      .description = "transformer encoder block (attention + FFN) training step",
      .make = [](const std::string& size) { return Model::Of(EncoderClassifier(Size(size))); },
      .sample_shape = [](const std::string& size) {
        const TfSize s = Size(size);
        return std::vector<int64_t>{s.seq, s.d_model};
      },
      .batch = [](const std::string& size) { return Size(size).batch; },
      .classes = 10,
      .vocab = {},
      .causal_lm = false,
      .items = "samples",
      // 6 x parameters x tokens (attention's seq^2 terms not counted).
      .flops_per_step = [](const std::string& size) {
        const TfSize s = Size(size);
        const double params = static_cast<double>(4 * s.d_model * s.d_model + 2 * s.d_model * s.ff + s.d_model * 10);
        return 6.0 * params * static_cast<double>(s.batch * s.seq);
      },
  };
}

}  // namespace perfbench::common
