#include "script_training.h"

#include <stdexcept>

namespace perfbench::model {
namespace {

torch::Tensor CallForward(torch::jit::Module& module, const std::vector<torch::Tensor>& inputs) {
  const c10::IValue out = module.forward(std::vector<c10::IValue>(inputs.begin(), inputs.end()));
  if (!out.isTensor()) throw std::runtime_error("its forward returns a " + out.tagKind() + ", not the loss");
  return out.toTensor();
}

}  // namespace

ScriptTraining::ScriptTraining(const ModelFile& model, const torch::Device& device, common::Precision precision,
                               std::vector<torch::Tensor> inputs)
    : inputs_(std::move(inputs)) {
  if (model.format != Format::kTorchScript)
    throw std::runtime_error("model file " + model.path + ": train=on trains TorchScript modules; an AOTInductor "
                             "package is compiled for inference only");
  try {
    module_ = torch::jit::load(model.path, device);
    module_.train();
    const torch::Tensor loss = CallForward(module_, inputs_);
    if (loss.dim() != 0 || !loss.is_floating_point())
      throw std::runtime_error("its forward returns a tensor of shape " + c10::str(loss.sizes()) +
                               ", not a scalar loss");
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw std::runtime_error("model file " + model.path + ": cannot train it: " + what.substr(0, what.find('\n')));
  }
  common::Model m;
  for (const auto& p : module_.parameters()) {
    if (p.is_floating_point()) p.requires_grad_(true);
    m.parameters.push_back(p);
  }
  m.loss = [this](const common::Batch&) { return CallForward(module_, inputs_); };
  trainer_ = std::make_unique<common::Trainer>(std::move(m), precision, device);
}

double ScriptTraining::Step() {
  const common::Batch none;  // the module reads the saved inputs
  return trainer_->Step(none).item<double>();
}

}  // namespace perfbench::model
