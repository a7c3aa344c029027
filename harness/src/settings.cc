#include "perfbench/settings.h"

#include <stdexcept>

namespace perfbench {

RunSettings RunSettings::Defaults(bool quick) {
  RunSettings s;
  s.quick = quick;
  s.warmup_steps = quick ? kQuickWarmupSteps : kWarmupSteps;
  s.repetitions = quick ? kQuickRepetitions : kRepetitions;
  s.budget_s = quick ? kQuickBudgetS : 0;
  return s;
}

void RunSettings::Validate() const {
  if (repetitions < 1) throw std::invalid_argument("--repetitions must be at least 1");
  if (processes < 1 || processes > 1000) throw std::invalid_argument("--processes must be in [1, 1000]");
  if (warmup_steps < 0) throw std::invalid_argument("--warmup must not be negative");
  if (threads < 0) throw std::invalid_argument("--threads must not be negative");
  if (!(timeout_s > 0)) throw std::invalid_argument("--timeout must be positive");
  if (!(run_budget_s >= 0) || run_budget_s > 1e7)
    throw std::invalid_argument("--run-budget must be in [0, 1e7] seconds (0: none)");
  if (device != "auto" && device != "cpu" && device != "cuda")
    throw std::invalid_argument("--device: '" + device + "' is not one of auto, cpu, cuda");
  if (!(launch.comm_timeout_s > 0)) throw std::invalid_argument("--comm-timeout must be positive");
}

nlohmann::json RunSettings::ToJson() const {
  nlohmann::json j = {{"warmup_steps", warmup_steps}, {"repetitions", repetitions}, {"timeout_s", timeout_s},
                      {"seed", seed},                 {"quick", quick},             {"device", device},
                      {"threads", threads},           {"suites", suites},           {"filter", filter}};
  if (processes != 1) j["processes"] = processes;
  if (run_budget_s != kRunBudgetS) j["run_budget_s"] = run_budget_s;
  if (!control) j["control"] = false;
  if (!data_dir.empty()) j["data_dir"] = data_dir;
  if (!overrides.empty()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& ov : overrides) o[ov.param] = ov.values;
    j["param_overrides"] = o;
  }
  if (!model_files.empty()) j["model_files"] = model_files;
  if (launch.Fixed() || launch.comm_timeout_s != DistributedLaunch{}.comm_timeout_s) {
    j["launch"] = {{"source", launch.source},
                   {"world_size", launch.world_size},
                   {"nnodes", launch.nnodes},
                   {"nproc_per_node", launch.nproc_per_node},
                   {"comm_timeout_s", launch.comm_timeout_s}};
  }
  return j;
}

namespace {

template <typename T>
void Read(const nlohmann::json& j, const char* key, T* out) {
  if (!j.contains(key) || j.at(key).is_null()) return;
  try {
    *out = j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(std::string("settings.") + key + ": unexpected " + j.at(key).type_name() + " " +
                                j.at(key).dump());
  }
}

std::vector<ParamOverride> ReadOverrides(const nlohmann::json& j) {
  std::vector<ParamOverride> out;
  if (!j.contains("param_overrides")) return out;
  const auto& o = j.at("param_overrides");
  if (!o.is_object()) throw std::invalid_argument("settings.param_overrides: expected an object");
  for (const auto& [k, v] : o.items()) {
    ParamOverride ov{k, {}};
    Read(o, k.c_str(), &ov.values);
    out.push_back(std::move(ov));
  }
  return out;
}

}  // namespace

RunSettings RunSettings::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("settings: expected an object");
  bool quick = false;
  Read(j, "quick", &quick);
  RunSettings s = Defaults(quick);
  Read(j, "warmup_steps", &s.warmup_steps);
  Read(j, "repetitions", &s.repetitions);
  Read(j, "processes", &s.processes);
  Read(j, "control", &s.control);
  Read(j, "timeout_s", &s.timeout_s);
  Read(j, "run_budget_s", &s.run_budget_s);
  Read(j, "seed", &s.seed);
  Read(j, "device", &s.device);
  Read(j, "threads", &s.threads);
  Read(j, "suites", &s.suites);
  Read(j, "filter", &s.filter);
  Read(j, "data_dir", &s.data_dir);
  s.overrides = ReadOverrides(j);
  Read(j, "model_files", &s.model_files);
  // How the ranks were started comes from this process's environment or
  // flags; only the communication timeout is a setting of the run.
  if (j.contains("launch") && j.at("launch").is_object()) Read(j.at("launch"), "comm_timeout_s", &s.launch.comm_timeout_s);
  return s;
}

}  // namespace perfbench
