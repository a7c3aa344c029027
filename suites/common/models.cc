#include "common/models.h"

namespace perfbench::common {

const std::vector<ModelDef>& AllModels() {
  static const std::vector<ModelDef> models = {MlpModel(),      CnnModel(),  TransformerModel(),
                                               ResNet50Model(), BertModel(), DecoderModel()};
  return models;
}

const ModelDef* FindModelDef(const std::string& name) {
  for (const auto& m : AllModels())
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace perfbench::common
