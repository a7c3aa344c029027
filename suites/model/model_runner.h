// Runs an exported model (model_file.h) from C++: an AOTInductor package
// through torch::inductor::AOTIModelPackageLoader, a TorchScript archive
// through torch::jit::load. No Python at measurement time.
//
// Loading runs code from the file (an AOTInductor package is a shared
// library, compiled for one CPU ISA or GPU), which can crash the process
// rather than throw. ProbeInChild therefore loads and calls the model once in
// a child process (`perfbench __model-probe`) before the run loads it: a
// crash there is a one-line failure of the variant, and the run goes on.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "model_file.h"

namespace perfbench::model {

class ModelRunner {
 public:
  virtual ~ModelRunner() = default;
  // Loads `model` for `device`; throws std::runtime_error naming the file.
  static std::unique_ptr<ModelRunner> Open(const ModelFile& model, const torch::Device& device);
  // One call; the outputs' tensors, flattened (a tuple, list or dict of
  // tensors in order). Throws on a mismatched input.
  virtual std::vector<torch::Tensor> Run(const std::vector<torch::Tensor>& inputs) = 0;
};

// Why `model` cannot run here before anything of it is loaded: compiled for
// another device, or (AOTInductor) by another torch than this perfbench
// links; "" when nothing stands in the way.
std::string Incompatibility(const ModelFile& model, const std::string& device);

// Loads `model` in a fresh perfbench process and calls it on its example
// inputs at each of `batches`, within `timeout_s`. "" when that worked, else
// the one-line reason (the child's error, or the signal that killed it).
std::string ProbeInChild(const ModelFile& model, const std::string& device, const std::vector<int64_t>& batches,
                         double timeout_s);

// The child's side: `__model-probe PATH DEVICE BATCH...`; prints "ok" or the
// reason on one line; exit 0 or 1.
int ProbeCommand(const std::vector<std::string>& args);

}  // namespace perfbench::model
