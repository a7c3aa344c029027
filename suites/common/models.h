// The models several suites train or run (amp trains them in three
// precisions, ddp in data parallel, dataloader behind its input pipeline).
//   mlp          Linear+GELU stack, GEMM-bound
//   cnn          small ResNet-style network, convolution-bound
//   transformer  one pre-norm encoder block, attention and GEMMs
//   resnet50     ResNet-50 v1.5 (MLPerf), images
//   bert         BERT-base encoder with a classification head, tokens
//   decoder      Llama-style decoder-only language model (~125M), tokens
#pragma once

#include <string>
#include <vector>

#include "common/training.h"

namespace perfbench::common {

ModelDef MlpModel();
ModelDef CnnModel();
ModelDef TransformerModel();
ModelDef ResNet50Model();
ModelDef BertModel();
ModelDef DecoderModel();

// ResNet-50 v1.5 at `size` with `classes` outputs: a Sequential of the stem
// (Conv2d, BatchNorm2d, ReLU, MaxPool2d), the bottlenecks (children conv1,
// bn1, conv2, bn2, conv3, bn3 and, where the shape changes, downsample: a
// Sequential of Conv2d and BatchNorm2d), AdaptiveAvgPool2d, Flatten, Linear.
Model MakeResNet50(const std::string& size, int64_t classes);
// ResNet-50's forward FLOP per image at `size` (conv and head GEMMs).
double ResNet50ForwardFlop(const std::string& size);

// Activation bytes a transformer layer keeps for backward, per sequence of
// `seq` tokens, `hidden` wide with `heads` heads, in fp32: Korthikanti et
// al. (2022)'s 34 s h + 5 a s^2 bytes at 16 bits, doubled.
double TransformerLayerActivationBytes(int64_t seq, int64_t hidden, int64_t heads);

struct BertConfig {
  int64_t layers, hidden, heads, vocab, batch, seq;
};
// "base" (12/768/12) or "large" (24/1024/16), vocabulary 30522.
BertConfig BertConfigFor(const std::string& name);
Model MakeBert(const BertConfig& config);

struct DecoderConfig {
  int64_t layers, dim, heads, ffn, vocab, batch, seq;
};
DecoderConfig DecoderConfigFor(const std::string& size);
Model MakeDecoder(const DecoderConfig& config);

// Every model above, built once (function-local static: safe to call from
// static initialisers).
const std::vector<ModelDef>& AllModels();
// The model of that name, or nullptr.
const ModelDef* FindModelDef(const std::string& name);

}  // namespace perfbench::common
