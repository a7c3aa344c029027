#include "common/models.h"

namespace perfbench::common {

double TransformerLayerActivationBytes(int64_t seq, int64_t hidden, int64_t heads) {
  const double s = static_cast<double>(seq), h = static_cast<double>(hidden), a = static_cast<double>(heads);
  return 2.0 * (34.0 * s * h + 5.0 * a * s * s);
}

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
