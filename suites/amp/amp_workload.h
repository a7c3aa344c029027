// The amp suite: one training step of each shared model (suites/common) in
// fp32, bf16 or fp16 (with dynamic loss scaling), as "amp/<model>" with
// params precision and size, and two optional params (see Knob) that
// `perfbench advise` and `--param` set: accumulation (k micro-batches of
// batch/k per optimizer step, default 1) and, for cnn, memory_format
// (contiguous or channels_last).
#pragma once

#include "common/training.h"

namespace perfbench::amp {

using common::ModelDef;
using common::Precision;

// Largest |loss(amp) - loss(fp32)| accepted after the same steps from the same
// seed, for a cross-entropy loss of order 1.
double LossTolerance(Precision p);

}  // namespace perfbench::amp
