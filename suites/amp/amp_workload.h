// The amp suite's workload: one training step of a ModelDef in fp32, bf16
// or fp16 (with dynamic loss scaling). Each model file registers it with
// RegisterAmpWorkload.
#pragma once

#include "training.h"

namespace perfbench::amp {

// Registers "amp/<def.name>" with params precision (fp32, bf16, fp16) and
// size (full; quick with --quick). Returns true.
bool RegisterAmpWorkload(ModelDef def);

// The model definitions the amp suite registered ("mlp", "cnn",
// "transformer"), for other suites that train the same models (ddp,
// dataloader). nullptr if unknown. Valid after static initialisation.
const ModelDef* FindModelDef(const std::string& name);

// Largest |loss(amp) - loss(fp32)| accepted after the same steps from the same
// seed, for a cross-entropy loss of order 1.
double LossTolerance(Precision p);

}  // namespace perfbench::amp
