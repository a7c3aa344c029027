// A learnable synthetic image task: class-dependent stripes and colours with
// random phase, gradient and noise (the dataloader suite's JPEG dataset and
// the quant suite's calibration and accuracy data).
#pragma once

#include <cstdint>
#include <vector>

namespace perfbench::common {

// The sample that `index` names, deterministic in (seed, index): an
// image x image RGB picture (HWC, uint8) and its label in [0, classes).
void SynthesizeImage(uint64_t seed, int64_t index, int64_t image, int64_t classes, std::vector<uint8_t>* rgb,
                     int64_t* label);

}  // namespace perfbench::common
