// decoder: a decoder-only transformer in the Llama style (Touvron et al.
// 2023): token embedding, pre-norm layers of RMSNorm, causal self-attention
// (scaled_dot_product_attention, is_causal) with rotary position embeddings
// on queries and keys, RMSNorm, SwiGLU feed-forward (silu(x W1) * x W3) W2; a
// final RMSNorm and an untied language-model head; no biases.
//   full:  12 layers, dim 768, 12 heads, SwiGLU 1792, vocabulary 32000:
//          127.0M parameters ("125M" class); batch 8, sequence 512
//   quick: 2 layers, dim 128, 4 heads, SwiGLU 352, vocabulary 4096, batch 4, sequence 64
// The task: next-token prediction on random tokens (the last position
// predicts the first); the cycled batches are learnt by memorising them.
// Weights from N(0, 0.02) (GPT-2's initialisation). Training: AdamW at
// 6e-4 (GPT-3's for 125M), weight decay 0.1, gradient norm clipped at 1,
// linear warm-up. Batch at full size: 8 x 512 on a GPU, 2 x 512 on a CPU. FLOP per step: 6 x parameters x tokens, the
// embedding table left out (a lookup), the head counted.
#include "common/models.h"

#include <cmath>

namespace perfbench::common {
namespace {

DecoderConfig Size(const std::string& size) {
  return size == "quick" ? DecoderConfig{2, 128, 4, 352, 4096, 4, 64} : DecoderConfig{12, 768, 12, 1792, 32000, 8, 512};
}

struct RmsNormImpl : torch::nn::Module {
  explicit RmsNormImpl(int64_t dim) : weight(register_parameter("weight", torch::ones({dim}))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor f = x.to(torch::kFloat);
    return (f * torch::rsqrt(f.pow(2).mean(-1, true) + 1e-6)).to(x.scalar_type()) * weight;
  }
  torch::Tensor weight;
};
TORCH_MODULE(RmsNorm);

// Rotary embedding (the half-split form): x * cos + rotate_half(x) * sin.
torch::Tensor Rotary(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const int64_t half = x.size(-1) / 2;
  torch::Tensor rotated = torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

struct DecoderLayerImpl : torch::nn::Module {
  DecoderLayerImpl(const DecoderConfig& c)
      : heads_(c.heads),
        norm1(register_module("norm1", RmsNorm(c.dim))),
        qkv(register_module("qkv", torch::nn::Linear(torch::nn::LinearOptions(c.dim, 3 * c.dim).bias(false)))),
        out(register_module("out", torch::nn::Linear(torch::nn::LinearOptions(c.dim, c.dim).bias(false)))),
        norm2(register_module("norm2", RmsNorm(c.dim))),
        w1(register_module("w1", torch::nn::Linear(torch::nn::LinearOptions(c.dim, c.ffn).bias(false)))),
        w3(register_module("w3", torch::nn::Linear(torch::nn::LinearOptions(c.dim, c.ffn).bias(false)))),
        w2(register_module("w2", torch::nn::Linear(torch::nn::LinearOptions(c.ffn, c.dim).bias(false)))) {}
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
    const int64_t b = x.size(0), s = x.size(1), d = x.size(2);
    auto parts = qkv(norm1(x)).view({b, s, 3, heads_, d / heads_}).permute({2, 0, 3, 1, 4});
    torch::Tensor a = at::scaled_dot_product_attention(Rotary(parts[0], cos, sin), Rotary(parts[1], cos, sin), parts[2],
                                                       {}, 0.0, /*is_causal=*/true);
    torch::Tensor h = x + out(a.transpose(1, 2).reshape({b, s, d}));
    torch::Tensor n = norm2(h);
    return h + w2(torch::silu(w1(n)) * w3(n));
  }
  int64_t heads_;
  RmsNorm norm1;
  torch::nn::Linear qkv, out;
  RmsNorm norm2;
  torch::nn::Linear w1, w3, w2;
};
TORCH_MODULE(DecoderLayer);

struct DecoderImpl : torch::nn::Module {
  explicit DecoderImpl(const DecoderConfig& c)
      : c_(c),
        embed(register_module("embed", torch::nn::Embedding(c.vocab, c.dim))),
        norm(register_module("norm", RmsNorm(c.dim))),
        head(register_module("head", torch::nn::Linear(torch::nn::LinearOptions(c.dim, c.vocab).bias(false)))) {
    for (int64_t i = 0; i < c.layers; ++i)
      layers.push_back(register_module("layer" + std::to_string(i), DecoderLayer(c)));
  }
  // ids [batch, seq] -> logits [batch x seq, vocab].
  torch::Tensor forward(const torch::Tensor& ids) {
    const int64_t s = ids.size(1);
    if (!cos_.defined() || cos_.size(0) != s || cos_.device() != ids.device()) Tables(s, ids.device());
    torch::Tensor x = embed(ids);
    for (auto& layer : layers) x = layer(x, cos_, sin_);
    return head(norm(x)).reshape({ids.size(0) * s, c_.vocab});
  }
  // The rotary cos/sin tables for `s` positions, made once (not in every step).
  void Tables(int64_t s, const torch::Device& device) {
    torch::NoGradGuard no_grad;
    const int64_t half = c_.dim / c_.heads / 2;
    auto opts = torch::TensorOptions().device(device).dtype(torch::kFloat);
    torch::Tensor inv = torch::pow(10000.0, -torch::arange(half, opts) / static_cast<double>(half));
    torch::Tensor angles = torch::outer(torch::arange(s, opts), inv);
    cos_ = torch::cat({angles, angles}, -1).cos();
    sin_ = torch::cat({angles, angles}, -1).sin();
  }
  torch::Tensor cos_, sin_;
  DecoderConfig c_;
  torch::nn::Embedding embed;
  RmsNorm norm;
  torch::nn::Linear head;
  std::vector<DecoderLayer> layers;
};
TORCH_MODULE(Decoder);

}  // namespace

Model MakeDecoder(const DecoderConfig& c) {
  Model m = Model::Of(Decoder(c));
  InitTransformerWeights(*m.module);
  return m;
}

ModelDef DecoderModel() {
  return ModelDef{
      .name = "decoder",
      .description = "Llama-style decoder (RMSNorm, rotary, SwiGLU, causal SDPA), ~125M at full size, tokens/s",
      .make = [](const std::string& size) { return MakeDecoder(Size(size)); },
      .sample_shape = [](const std::string& size) { return std::vector<int64_t>{Size(size).seq}; },
      .batch = [](const std::string& size) { return Size(size).batch; },
      .classes = 0,
      .vocab = [](const std::string& size) { return Size(size).vocab; },
      .causal_lm = true,
      .items = "tokens",
      .flops_per_step = [](const std::string& size) {
        const DecoderConfig c = Size(size);
        torch::NoGradGuard no_grad;
        int64_t n = 0;
        for (const auto& p : MakeDecoder(c).module->named_parameters())
          if (p.key().rfind("embed.", 0) != 0) n += p.value().numel();
        return 6.0 * static_cast<double>(n) * static_cast<double>(c.batch * c.seq);
      },
      .optimizer = [](const std::string& size, int64_t) {
        return OptimizerSpec{.kind = OptimizerSpec::Kind::kAdamW,
                             .lr = size == "quick" ? 1e-3 : 6e-4,
                             .weight_decay = 0.1,
                             .warmup_steps = 4,
                             .clip_norm = 1.0};
      },
      // 8 x 512 on a GPU; on a 2-core CPU a step of 8 x 512 takes ~30 s, so 1
      // (~2.2 s: a default run of every suite ends within 30 minutes there).
      .full_batch = [](const std::string& device) -> int64_t { return device == "cuda" ? 8 : 1; },
      .activation_bytes = [](const std::string& size, int64_t batch) {
        const DecoderConfig c = Size(size);
        // The layers, and the logits over the vocabulary (with their softmax's gradient).
        return static_cast<double>(c.layers * batch) * TransformerLayerActivationBytes(c.seq, c.dim, c.heads) +
               3.0 * 4.0 * static_cast<double>(batch * c.seq * c.vocab);
      },
  };
}

DecoderConfig DecoderConfigFor(const std::string& size) { return Size(size); }

}  // namespace perfbench::common
