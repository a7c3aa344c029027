// The amp suite: one training step of each shared model (suites/common) in
// fp32 (strict IEEE), tf32 (TensorFloat-32 matmuls and convolutions, GPU
// only), bf16 or fp16 (autocast; fp16 with dynamic loss scaling), as
// "amp/<model>" with params precision and size; at full size also batch
// (a per-device default: ModelDef::full_batch) and, for the convolutional
// models, memory_format (channels_last by default, as practitioners train;
// contiguous is the advise knob's alternative). Optional param: accumulation
// (k micro-batches of batch/k per optimizer step, default 1).
//
// Loss parity of a reduced precision against fp32 (same seed, weights and
// batches): the first step's loss before any update, relative difference
// within ParityBounds::first; and the mean loss over the timed steps within
// ParityBounds::mean. Not assessable (reported, not failed) when fp32's own
// loss spread over its timed steps (standard deviation / mean) exceeds
// kMaxFp32Spread: a diverging fp32 run is no reference.
#pragma once

#include <string>
#include <vector>

#include "common/training.h"

namespace perfbench::amp {

using common::ModelDef;
using common::Precision;

struct ParityBounds {
  double first = 0;  // |first loss - fp32's| / fp32's
  double mean = 0;   // |mean timed loss - fp32's| / fp32's
};
ParityBounds LossTolerance(Precision p);
inline constexpr double kMaxFp32Spread = 0.5;

// The parity verdict: ok within bounds; the mean's part not assessable when
// fp32's spread exceeds kMaxFp32Spread (the first step's always is).
struct ParityResult {
  bool ok = true;
  bool assessable = true;
  std::string text;  // "first-step loss 2.3041 vs fp32 2.3036 (+0.02%, bound 3%); mean ..."
};
ParityResult JudgeParity(Precision p, double first, double first_fp32, const std::vector<double>& losses,
                         const std::vector<double>& losses_fp32);

}  // namespace perfbench::amp
