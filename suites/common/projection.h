// What a variant will cost before it is built: the rate of a short GEMM
// probe on the device at a dtype, and the memory the host has available.
// amp projects its set-up, warm-up and fewest timed steps from them, quant
// its models' training, so that a variant that cannot fit its time budget
// is skipped before its set-up runs instead of overrunning it.
#pragma once

#include <string>

#include <torch/torch.h>

namespace perfbench::common {

// FLOP/s of a square matmul (4096 on a GPU, 512 on a CPU) at `dtype` on
// `device`, best of three after one warm-up; measured once per process and
// (device, dtype). Optimistic for whole models (their convolutions,
// attention and element-wise work run below GEMM speed): a projection from
// it says what cannot fit, never what will.
double GemmProbeFlops(const torch::Device& device, torch::ScalarType dtype);

// FLOP/s of a 3x3 convolution's forward and backward (64 channels, 16x16,
// channels_last, the batch growing from 1 until a pass takes ~20 ms or
// reaches 16; each size's first pass untimed) at
// `dtype` on `device`; measured once per process and (device, dtype). The
// GEMM probe cannot see that a CPU runs some convolutions through oneDNN's
// reference kernels (fp16 backward here: minutes for one full-size step of
// the cnn, where its fp16 GEMMs are fast), this one can.
double ConvProbeFlops(const torch::Device& device, torch::ScalarType dtype);

// /proc/meminfo's MemAvailable in bytes; 0 where unreadable.
double MemAvailableBytes();

// "" when `flop` at the probe's rate fits `budget_s`; else why not, naming
// what was projected ("training the model's 128 steps"), the rate and the budget.
std::string TimeProjection(const std::string& what, double flop, const torch::Device& device, torch::ScalarType dtype,
                           double budget_s);
// The same at a rate measured by another probe, named in the reason ("a Half 3x3 convolution probe").
std::string TimeProjectionAt(const std::string& what, double flop, double rate, const std::string& probe,
                             double budget_s);

}  // namespace perfbench::common
