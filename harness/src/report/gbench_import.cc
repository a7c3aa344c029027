#include "report/gbench_import.h"

#include <cmath>
#include <map>
#include <stdexcept>

#include "fingerprint.h"

namespace perfbench {
namespace {

using Json = nlohmann::ordered_json;

double ToSeconds(const std::string& unit, const std::string& where) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  throw std::invalid_argument(where + ".time_unit: expected ns, us, ms or s, got \"" + unit + "\"");
}

double Number(const Json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_number())
    throw std::invalid_argument(where + "." + key + ": expected a number");
  const double v = j.at(key).get<double>();
  if (!std::isfinite(v)) throw std::invalid_argument(where + "." + key + ": expected a finite number");
  return v;
}

// Turns "2026-12-02T19:36:07+00:00" or "2026-12-02 19:36:07" into "2026-12-02T19:36:07Z"
// as far as it can; keeps the text otherwise.
std::string Iso(const std::string& date) {
  if (date.size() >= 19 && date[4] == '-' && date[7] == '-') {
    std::string s = date.substr(0, 19);
    s[10] = 'T';
    return s + "Z";
  }
  return date.empty() ? UtcNowIso8601() : date;
}

struct Pending {
  ResultRecord real, cpu, items, bytes;
  bool has_items = false, has_bytes = false;
  bool failed = false;
  std::string error;
};

}  // namespace

bool IsGoogleBenchmarkJson(const nlohmann::ordered_json& doc) {
  return doc.is_object() && doc.contains("context") && doc.contains("benchmarks") && !doc.contains("schema_version");
}

namespace {

RunRecord RunFromContext(const Json& ctx) {
  RunRecord r;
  r.started_at = Iso(ctx.value("date", ""));
  r.finished_at = r.started_at;
  r.status = RunStatus::kImported;
  r.hostname = ctx.value("host_name", "");
  r.command = ctx.value("executable", "");
  nlohmann::json fp = nlohmann::json::object();
  fp["source"] = "google-benchmark";
  if (ctx.contains("num_cpus") && ctx["num_cpus"].is_number_integer()) fp["cpu_threads"] = ctx["num_cpus"].get<int>();
  if (ctx.contains("mhz_per_cpu") && ctx["mhz_per_cpu"].is_number()) fp["cpu_mhz"] = ctx["mhz_per_cpu"].get<double>();
  if (ctx.contains("caches")) fp["caches"] = nlohmann::json::parse(ctx["caches"].dump());
  if (ctx.contains("library_build_type") && ctx["library_build_type"].is_string())
    fp["build_type"] = ctx["library_build_type"].get<std::string>();
  if (ctx.contains("library_version") && ctx["library_version"].is_string())
    fp["benchmark_version"] = ctx["library_version"].get<std::string>();
  if (ctx.contains("cpu_scaling_enabled") && ctx["cpu_scaling_enabled"].is_boolean())
    fp["cpu_scaling_enabled"] = ctx["cpu_scaling_enabled"].get<bool>();
  r.fingerprint = fp;
  r.profile_key = ProfileKey(fp);
  r.settings = {{"source", "google-benchmark"}};
  return r;
}

std::string BenchmarkName(const Json& b, const std::string& where) {
  if (b.contains("run_name") && b["run_name"].is_string()) return b["run_name"].get<std::string>();
  if (b.contains("name") && b["name"].is_string()) return b["name"].get<std::string>();
  throw std::invalid_argument(where + ".name: expected a string");
}

void InitPending(Pending& p, const std::string& suite, const std::string& name, const Params& params) {
  auto init = [&](ResultRecord& rr, const char* metric, const char* unit, bool higher) {
    rr.suite = suite;
    rr.workload = name;
    rr.params = params;
    rr.metric = metric;
    rr.unit = unit;
    rr.higher_is_better = higher;
  };
  init(p.real, "real_time", "s", false);
  init(p.cpu, "cpu_time", "s", false);
  init(p.items, "items_per_second", "items/s", true);
  init(p.bytes, "bytes_per_second", "B/s", true);
}

void AddRepetition(Pending& p, const Json& b, const std::string& where) {
  if (b.value("error_occurred", false)) {
    p.failed = true;
    p.error = b.value("error_message", "error_occurred");
    return;
  }
  const double scale = ToSeconds(b.value("time_unit", "ns"), where);
  p.real.samples.push_back(Number(b, "real_time", where) * scale);
  p.cpu.samples.push_back(Number(b, "cpu_time", where) * scale);
  if (b.contains("items_per_second")) {
    p.items.samples.push_back(Number(b, "items_per_second", where));
    p.has_items = true;
  }
  if (b.contains("bytes_per_second")) {
    p.bytes.samples.push_back(Number(b, "bytes_per_second", where));
    p.has_bytes = true;
  }
}

// Benchmarks by name (and threads), in order of first appearance.
class Collector {
 public:
  explicit Collector(std::string suite) : suite_(std::move(suite)) {}
  void Add(const Json& b, const std::string& where) {
    if (!b.is_object()) throw std::invalid_argument(where + ": expected an object");
    const std::string run_type = b.value("run_type", "iteration");
    if (run_type == "aggregate") return;
    if (run_type != "iteration") throw std::invalid_argument(where + ".run_type: expected iteration or aggregate");
    const std::string name = BenchmarkName(b, where);
    Params params;
    if (b.contains("threads") && b["threads"].is_number_integer() && b["threads"].get<int>() > 1)
      params.Set("threads", std::to_string(b["threads"].get<int>()));
    const std::string key = name + "\x1f" + params.Encode();
    auto [it, fresh] = by_name_.try_emplace(key);
    if (fresh) {
      order_.push_back(key);
      InitPending(it->second, suite_, name, params);
    }
    AddRepetition(it->second, b, where);
  }
  bool empty() const { return order_.empty(); }
  std::vector<ResultRecord> Results() {
    std::vector<ResultRecord> out;
    for (const auto& key : order_) {
      Pending& p = by_name_.at(key);
      std::vector<ResultRecord*> rs = {&p.real, &p.cpu};
      if (p.has_items) rs.push_back(&p.items);
      if (p.has_bytes) rs.push_back(&p.bytes);
      for (ResultRecord* rr : rs) {
        if (p.failed) {
          rr->status = ResultStatus::kFailed;
          rr->reason = p.error;
        }
        out.push_back(*rr);
      }
    }
    return out;
  }

 private:
  std::string suite_;
  std::vector<std::string> order_;
  std::map<std::string, Pending> by_name_;
};

}  // namespace

void RunFromGoogleBenchmarkJson(const nlohmann::ordered_json& doc, const std::string& suite, RunRecord* run,
                                std::vector<ResultRecord>* results) {
  if (!IsGoogleBenchmarkJson(doc)) throw std::invalid_argument("top level: expected Google Benchmark JSON ({\"context\", \"benchmarks\"})");
  const Json& ctx = doc.at("context");
  if (!ctx.is_object()) throw std::invalid_argument("context: expected an object");
  const Json& bms = doc.at("benchmarks");
  if (!bms.is_array()) throw std::invalid_argument("benchmarks: expected an array");
  Collector collector(suite);
  for (size_t i = 0; i < bms.size(); ++i) collector.Add(bms[i], "benchmarks[" + std::to_string(i) + "]");
  if (collector.empty())
    throw std::invalid_argument(
        "benchmarks: no per-repetition entries (run_type iteration); rerun without "
        "--benchmark_report_aggregates_only so the samples are kept");
  *run = RunFromContext(ctx);
  *results = collector.Results();
}

}  // namespace perfbench
