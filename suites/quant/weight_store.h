// Trained weights kept on disk, so that a quant model is trained once per
// machine and build rather than once per process: a run's later processes
// (and later runs) load what the first one trained. Loading is exact: the
// tensors bit for bit, and the CPU generator left where training left it,
// so that whatever draws after it draws the same as in a process that
// trained.
//
// An entry's key is what the weights depend on: the model, its size and
// seed (the caller's part), the torch version, the CPU capability ATen
// dispatches to and a hash of the running executable (a rebuilt binary may
// train differently: it trains again). CPU only: on a GPU training takes
// seconds and its generator is another. Files are written to a temporary
// name and renamed, so two processes never read half a file; one that
// cannot be read is trained again and replaced.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace perfbench::quant {

// The folder entries go in ("" turns the store off: every process trains).
// The quant workloads set it from the run's data directory.
void SetWeightStoreDir(const std::string& dir);

// The caller's part of a key: the model, its size and its seed.
std::string TrainedWeightsKey(const std::string& model, const std::string& size, uint64_t seed);
// The file for a key on `device`: "" when the store is off or the device is
// not the CPU.
std::string WeightStorePath(const std::string& key, const torch::Device& device);

// Copies a stored entry into `tensors` (same count and shapes) and restores
// the CPU generator; false (nothing changed) when there is none or it does
// not fit.
bool LoadTrainedWeights(const std::string& path, const std::vector<torch::Tensor>& tensors);
// Stores `tensors` and the CPU generator's state; a failure to write is not
// an error (the next process trains again).
void SaveTrainedWeights(const std::string& path, const std::vector<torch::Tensor>& tensors);

}  // namespace perfbench::quant
