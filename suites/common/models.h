// The models several suites train or run (amp trains them in three
// precisions, ddp in data parallel, dataloader behind its input pipeline).
//   mlp          Linear+GELU stack, GEMM-bound
//   cnn          small ResNet-style network, convolution-bound
//   transformer  one pre-norm encoder block, attention and GEMMs
#pragma once

#include <string>
#include <vector>

#include "common/training.h"

namespace perfbench::common {

ModelDef MlpModel();
ModelDef CnnModel();
ModelDef TransformerModel();

// Every model above, built once (function-local static: safe to call from
// static initialisers).
const std::vector<ModelDef>& AllModels();
// The model of that name, or nullptr.
const ModelDef* FindModelDef(const std::string& name);

}  // namespace perfbench::common
