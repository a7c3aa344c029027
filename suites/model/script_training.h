// Training a user's TorchScript module (model suite, `--param train=on`):
// a module whose forward takes the saved example inputs (data and labels)
// and returns its loss, trained by the harness's Trainer (suites/common/
// training.h: the same SGD step, autocast and fp16 loss scaling as the amp
// suite) on those inputs at the variant's batch.
#pragma once

#include <memory>
#include <vector>

#include <torch/script.h>
#include <torch/torch.h>

#include "common/training.h"
#include "model_file.h"

namespace perfbench::model {

class ScriptTraining {
 public:
  // Loads `model` (TorchScript only) for training on `device`; checks that
  // its forward returns a scalar loss. Throws std::runtime_error naming the
  // file and what did not fit.
  ScriptTraining(const ModelFile& model, const torch::Device& device, common::Precision precision,
                 std::vector<torch::Tensor> inputs);
  // One optimizer step (forward, backward, update); the step's fp32 loss.
  double Step();

 private:
  torch::jit::Module module_;
  std::vector<torch::Tensor> inputs_;
  std::unique_ptr<common::Trainer> trainer_;
};

}  // namespace perfbench::model
