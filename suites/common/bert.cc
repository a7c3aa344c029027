// bert: a BERT encoder (Devlin et al. 2019): word, position (512) and
// token-type embeddings with layer norm; post-norm layers of self-attention
// (scaled_dot_product_attention) and a GELU feed-forward of 4x the hidden
// size; the pooler (tanh over the first token) and a classification head.
//   base: 12 layers, hidden 768, 12 heads, vocabulary 30522: 109.5M parameters
//   large: 24 layers, hidden 1024, 16 heads: 335.1M (the paper rounds to 340M)
//   quick: 2 layers, hidden 128, 2 heads, vocabulary 4096, batch 8, seq 64
//   full:  base at batch 32, sequence 384 (MLPerf's SQuAD shape)
// Weights from N(0, 0.02) (BERT's initialisation), biases 0.
// The task: the topic task (training.h's TopicTokens): the class is spread
// over the sequence, learnable by attention, not by memorising batches.
// Training (ModelDef::optimizer): AdamW, weight decay 0.01, gradient norm
// clipped at 1, the learning rate warmed up linearly (BERT's fine-tuning
// recipe); 1e-4 at full size, 1e-3 for the 2-layer quick one.
// Batch at full size (ModelDef::full_batch): 32 x 384 on a GPU (SQuAD
// fine-tuning), 4 x 384 on a CPU (a step of ~5 s on a 2-core machine, so
// that a default run of every suite ends within 30 minutes there).
// FLOP per step: 6 x parameters x tokens (forward 2, backward 4 per
// parameter and token), the embedding tables left out (lookups, not GEMMs),
// attention's sequence-squared terms not counted.
#include "common/models.h"

namespace perfbench::common {
namespace {

BertConfig Size(const std::string& size) {
  if (size == "quick") return BertConfig{2, 128, 2, 4096, 8, 64};
  return BertConfigFor("base");
}

struct BertLayerImpl : torch::nn::Module {
  BertLayerImpl(int64_t hidden, int64_t heads)
      : heads_(heads),
        qkv(register_module("qkv", torch::nn::Linear(hidden, 3 * hidden))),
        out(register_module("out", torch::nn::Linear(hidden, hidden))),
        ln1(register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden}).eps(1e-12)))),
        ff1(register_module("ff1", torch::nn::Linear(hidden, 4 * hidden))),
        ff2(register_module("ff2", torch::nn::Linear(4 * hidden, hidden))),
        ln2(register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden}).eps(1e-12)))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t b = x.size(0), s = x.size(1), h = x.size(2);
    auto parts = qkv(x).view({b, s, 3, heads_, h / heads_}).permute({2, 0, 3, 1, 4});
    torch::Tensor a = at::scaled_dot_product_attention(parts[0], parts[1], parts[2]);
    torch::Tensor y = ln1(x + out(a.transpose(1, 2).reshape({b, s, h})));
    return ln2(y + ff2(torch::gelu(ff1(y))));
  }
  int64_t heads_;
  torch::nn::Linear qkv, out;
  torch::nn::LayerNorm ln1;
  torch::nn::Linear ff1, ff2;
  torch::nn::LayerNorm ln2;
};
TORCH_MODULE(BertLayer);

struct BertImpl : torch::nn::Module {
  explicit BertImpl(const BertConfig& c)
      : word(register_module("word", torch::nn::Embedding(c.vocab, c.hidden))),
        position(register_module("position", torch::nn::Embedding(512, c.hidden))),
        token_type(register_module("token_type", torch::nn::Embedding(2, c.hidden))),
        ln(register_module("ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.hidden}).eps(1e-12)))),
        pooler(register_module("pooler", torch::nn::Linear(c.hidden, c.hidden))),
        head(register_module("head", torch::nn::Linear(c.hidden, 10))) {
    for (int64_t i = 0; i < c.layers; ++i) layers.push_back(register_module("layer" + std::to_string(i), BertLayer(c.hidden, c.heads)));
  }
  torch::Tensor forward(const torch::Tensor& ids) {
    const auto positions = torch::arange(ids.size(1), ids.options());
    torch::Tensor x = ln(word(ids) + position(positions).unsqueeze(0) + token_type(torch::zeros_like(ids)));
    for (auto& layer : layers) x = layer(x);
    return head(torch::tanh(pooler(x.select(1, 0))));
  }
  torch::nn::Embedding word, position, token_type;
  torch::nn::LayerNorm ln;
  torch::nn::Linear pooler, head;
  std::vector<BertLayer> layers;
};
TORCH_MODULE(Bert);

// Parameters outside the embedding tables (their lookups are not GEMMs).
int64_t GemmParameters(const Model& m) {
  int64_t n = 0;
  for (const auto& p : m.module->named_parameters())
    if (p.key().rfind("word.", 0) != 0 && p.key().rfind("position.", 0) != 0 && p.key().rfind("token_type.", 0) != 0)
      n += p.value().numel();
  return n;
}

}  // namespace

BertConfig BertConfigFor(const std::string& name) {
  if (name == "large") return BertConfig{24, 1024, 16, 30522, 32, 384};
  return BertConfig{12, 768, 12, 30522, 32, 384};
}

Model MakeBert(const BertConfig& c) {
  Model m = Model::Of(Bert(c));
  InitTransformerWeights(*m.module);
  return m;
}

ModelDef BertModel() {
  return ModelDef{
      .name = "bert",
      .description = "BERT-base encoder (MLPerf's SQuAD shape at full size) with a classification head, tokens/s",
      .make = [](const std::string& size) { return MakeBert(Size(size)); },
      .sample_shape = [](const std::string& size) { return std::vector<int64_t>{Size(size).seq}; },
      .batch = [](const std::string& size) { return Size(size).batch; },
      .classes = 10,
      .vocab = [](const std::string& size) { return Size(size).vocab; },
      .causal_lm = false,
      .items = "tokens",
      .flops_per_step = [](const std::string& size) {
        const BertConfig c = Size(size);
        torch::NoGradGuard no_grad;
        return 6.0 * static_cast<double>(GemmParameters(MakeBert(c))) * static_cast<double>(c.batch * c.seq);
      },
      .optimizer = [](const std::string& size, int64_t) {
        return OptimizerSpec{.kind = OptimizerSpec::Kind::kAdamW,
                             .lr = size == "quick" ? 1e-3 : 1e-4,
                             .weight_decay = 0.01,
                             .warmup_steps = 4,
                             .clip_norm = 1.0};
      },
      .full_batch = [](const std::string& device) -> int64_t { return device == "cuda" ? 32 : 4; },
      .activation_bytes = [](const std::string& size, int64_t batch) {
        const BertConfig c = Size(size);
        return static_cast<double>(c.layers * batch) * TransformerLayerActivationBytes(c.seq, c.hidden, c.heads);
      },
  };
}

}  // namespace perfbench::common
