#include "compare/policy.h"

#include "report/format.h"

#include <fnmatch.h>

#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace perfbench {

void Policy::JudgePerControl() {
  defaults.insert(defaults.begin(), {{"throughput_per_control", {false, 0.05}}, {"throughput", {false, 0.05, true}}});
}

Policy Policy::Default() {
  Policy p;
  p.defaults = {{"throughput_per_control", {false, 0.05, true}}, {"throughput*", {false, 0.05}}, {"step_time*", {false, 0.05}}, {"latency*", {false, 0.05}},
                {"peak_memory", {false, 0.02}}, {"peak_rss", {false, 0.05, true}},   {"model_bytes", {false, 0.02}},
                {"loss_delta", {true, 0.02}},   {"loss", {true, 0.05, true}},        {"accuracy*", {true, 0.01}},
                {"speedup*", {false, 0.05, true}}, {"first_loss", {true, 0.05, true}},
                {"energy*", {false, 0.05, true}},
                {"*", {false, 0.05}}};
  return p;
}

namespace {

Threshold ParseThreshold(const nlohmann::ordered_json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(where + ": expected {\"relative\": x} or {\"absolute\": x}");
  bool informational = false;
  if (j.contains("informational")) {
    if (!j["informational"].is_boolean()) throw std::invalid_argument(where + ".informational: expected true or false");
    informational = j["informational"].get<bool>();
  }
  const bool rel = j.contains("relative"), abs = j.contains("absolute");
  if (rel == abs) throw std::invalid_argument(where + ": give exactly one of \"relative\" or \"absolute\"");
  const auto& v = j.at(rel ? "relative" : "absolute");
  if (!v.is_number() || v.get<double>() < 0) throw std::invalid_argument(where + ": threshold must be a number >= 0");
  double mde = 0;  // twice the threshold
  if (j.contains("mde")) {
    if (!j["mde"].is_number() || !(j["mde"].get<double>() > 0))
      throw std::invalid_argument(where + ".mde: expected a number > 0 (the largest detectable effect a pass may have)");
    mde = j["mde"].get<double>();
  }
  return {abs, v.get<double>(), informational, mde};
}

}  // namespace

namespace {

Policy LoadUnchecked(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot read policy file '" + path + "'");
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument("policy file '" + path + "' is not valid JSON: " + e.what());
  }
  if (!j.is_object() || j.value("schema_version", 0) != 1)
    throw std::invalid_argument("policy file '" + path + "': expected an object with \"schema_version\": 1");
  Policy p = Policy::Default();
  p.alpha = j.value("alpha", p.alpha);
  p.confidence = j.value("confidence", p.confidence);
  p.min_samples = j.value("min_samples", p.min_samples);
  if (!(p.alpha > 0 && p.alpha < 1) || !(p.confidence > 0 && p.confidence < 1) || p.min_samples < 2)
    throw std::invalid_argument("policy file '" + path + "': alpha and confidence must be in (0, 1), min_samples >= 2");
  if (j.contains("defaults")) {
    std::vector<std::pair<std::string, Threshold>> d;
    for (auto it = j["defaults"].begin(); it != j["defaults"].end(); ++it)
      d.emplace_back(it.key(), ParseThreshold(it.value(), "defaults." + it.key()));
    // User defaults first; built-in ones still answer for names they leave out.
    d.insert(d.end(), p.defaults.begin(), p.defaults.end());
    p.defaults = std::move(d);
  }
  if (j.contains("overrides")) {
    if (!j["overrides"].is_array()) throw std::invalid_argument("policy: \"overrides\" must be an array");
    for (size_t i = 0; i < j["overrides"].size(); ++i) {
      const auto& o = j["overrides"][i];
      const std::string where = "overrides[" + std::to_string(i) + "]";
      if (!o.is_object() || !o.contains("match") || !o["match"].is_string())
        throw std::invalid_argument(where + ": needs \"match\": \"suite/workload/params/metric glob\"");
      nlohmann::ordered_json t = o;
      t.erase("match");
      p.overrides.emplace_back(o["match"].get<std::string>(), ParseThreshold(t, where));
    }
  }
  return p;
}

}  // namespace

Policy Policy::Load(const std::string& path) {
  try {
    return LoadUnchecked(path);
  } catch (const nlohmann::json::exception& e) {  // a value of the wrong type
    throw std::invalid_argument(OneLine("policy file '" + path + "': " + e.what()));
  } catch (const std::invalid_argument& e) {  // one line, whatever keys the file holds
    throw std::invalid_argument(OneLine(e.what()));
  }
}

Threshold Policy::For(const ResultRecord& r) const {
  Threshold t{false, 0.05};
  for (const auto& [glob, th] : defaults) {
    if (fnmatch(glob.c_str(), r.metric.c_str(), 0) == 0) {
      t = th;
      break;
    }
  }
  const std::string key = r.suite + "/" + r.workload + "/" + r.params.Encode() + "/" + r.metric;
  for (const auto& [glob, th] : overrides)
    if (fnmatch(glob.c_str(), key.c_str(), 0) == 0) t = th;
  // The harness's own time (run_cost.h) is shown with its change, never
  // judged, whatever a policy file matches.
  if (r.suite == kHarnessSuite) t.informational = true;
  return t;
}

}  // namespace perfbench
