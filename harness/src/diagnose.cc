#include "diagnose.h"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <sstream>

#include "perfbench/statistics.h"

namespace perfbench {

MachineFacts MachineFacts::FromRun(const RunRecord& run) {
  MachineFacts m;
  m.device = run.settings.value("device", std::string("cpu"));
  const auto& fp = run.fingerprint;
  if (m.device == "cuda" && fp.contains("gpu_memory_bytes") && fp["gpu_memory_bytes"].is_array() &&
      !fp["gpu_memory_bytes"].empty())
    m.memory_bytes = fp["gpu_memory_bytes"][0].get<double>();
  else if (m.device != "cuda")
    m.memory_bytes = fp.value("memory_bytes", 0.0);
  if (fp.contains("cpu_isa") && fp["cpu_isa"].is_array())
    for (const auto& f : fp["cpu_isa"]) m.cpu_isa.insert(f.get<std::string>());
  return m;
}

std::vector<Evidence> CollectEvidence(const std::vector<ResultRecord>& results) {
  std::vector<Evidence> out;
  std::map<std::string, size_t> index;
  for (const auto& r : results) {
    const std::string key = r.suite + "/" + r.workload + "/" + r.params.Encode();
    auto [it, fresh] = index.emplace(key, out.size());
    if (fresh) out.push_back({r.suite, r.workload, r.params, r.status, r.reason, {}, {}, {}, std::nullopt, 0});
    Evidence& e = out[it->second];
    e.attributes.insert(r.attributes.begin(), r.attributes.end());
    if (r.status != ResultStatus::kOk) {
      e.status = r.status;
      e.reason = r.reason;
    }
    if (!r.samples.empty()) {
      e.medians[r.metric] = stats::Median(r.samples);
      e.counts[r.metric] = r.samples.size();
    }
  }
  return out;
}

namespace {

std::string Share(double x) { return fmt::format("{:.0f}%", x * 100); }

bool OutOfMemory(const Evidence& e) {
  return e.status == ResultStatus::kFailed && e.reason.find("out of memory") != std::string::npos;
}

void MemoryFindings(const Evidence& e, const MachineFacts& m, Diagnosis& d) {
  const std::vector<std::string> remedies = {
      "mixed precision (bf16/fp16 autocast): about half the activation memory",
      "a smaller batch with gradient accumulation to the same effective batch",
      "activation checkpointing (recompute in backward)"};
  if (OutOfMemory(e)) {
    d.findings.push_back({"memory", "failed: " + e.reason, "any out-of-memory failure", remedies});
    return;
  }
  const auto it = e.medians.find(m.device == "cuda" ? "peak_memory" : "peak_rss");
  if (it == e.medians.end() || m.memory_bytes <= 0) return;
  const double share = it->second / m.memory_bytes;
  d.breakdown["memory_share"] = share;
  if (share > kMemoryLimit)
    d.findings.push_back({"memory", fmt::format("{} {:.3g} GB is {} of the device's {:.3g} GB", it->first,
                                                it->second / 1e9, Share(share), m.memory_bytes / 1e9),
                          fmt::format("above {} of capacity", Share(kMemoryLimit)), remedies});
}

void CommunicationFindings(const Evidence& e, Diagnosis& d) {
  const auto it = e.medians.find("comm_share");
  if (it == e.medians.end() || it->second <= kCommShareLimit) return;
  d.findings.push_back(
      {"communication",
       fmt::format("exposed communication is {} of the step (comm_share, median of {})", Share(it->second),
                   e.counts.at("comm_share")),
       fmt::format("above {} of a step (source documents)", Share(kCommShareLimit)),
       {}});
  auto& remedies = d.findings.back().remedies;
  if (e.params.Get("overlap", "") != "on")
    remedies.push_back("overlap gradient all-reduce with backward (DDP buckets; --param overlap=on)");
  remedies.insert(remedies.end(), {"tune the bucket size (bucket_mb: larger buckets, fewer launches)",
                                   "gradient accumulation: all-reduce once every k micro-batches",
                                   "a faster backend or link (NCCL over NVLink/InfiniBand rather than Gloo over TCP)"});
}

void InputFindings(const Evidence& e, Diagnosis& d) {
  const auto it = e.medians.find("data_wait_share");
  if (it == e.medians.end() || it->second <= kDataWaitLimit) return;
  d.findings.push_back(
      {"input",
       fmt::format("the step waits for its batch {} of the time (data_wait_share, median of {})", Share(it->second),
                   e.counts.at("data_wait_share")),
       fmt::format("above {} of a step", Share(kDataWaitLimit)),
       {"more DataLoader workers (--param workers=N, up to the free cores)",
        "deeper prefetch (--param prefetch=N)", "pinned host memory for device copies (--param pin_memory=on)",
        "cache decoded samples or move decoding off the critical path"}});
}

// Which ISA features give a precision native support on a CPU.
std::string MissingIsa(const std::string& precision, const std::set<std::string>& isa) {
  if (precision == "bf16" && !isa.count("avx512_bf16") && !isa.count("amx_bf16")) return "AVX512-BF16/AMX-BF16";
  if (precision == "fp16" && !isa.count("avx512_fp16") && !isa.count("amx_fp16")) return "AVX512-FP16/AMX-FP16";
  return "";
}

void ComputeFindings(const Evidence& e, const MachineFacts& m, Diagnosis& d) {
  const std::string precision = e.params.Get("precision", "");
  const auto it = e.medians.find("speedup");
  if (precision.empty() || precision == "fp32" || it == e.medians.end() || it->second >= kPrecisionLimit) return;
  const std::string missing = m.device == "cpu" ? MissingIsa(precision, m.cpu_isa) : "";
  std::string evidence = fmt::format("{} runs at {:.2f}x the speed of fp32 (speedup, median of {})", precision,
                                     it->second, e.counts.at("speedup"));
  if (!missing.empty()) evidence += fmt::format("; this CPU has no {}: {} autocast is emulated", missing, precision);
  d.findings.push_back({"compute", evidence,
                        fmt::format("a reduced precision below {:.1f}x fp32 (AMP should give 1.5-2x)", kPrecisionLimit),
                        {missing.empty() ? "check that the device runs " + precision + " natively (tensor cores)"
                                         : "stay in fp32 on this CPU",
                         "run " + precision + " on hardware with native support (AMX, AVX512-BF16/FP16, a GPU with tensor cores)"}});
}

// The profile trace's figures, and what they say about compute.
void TraceFindings(const Evidence& e, const MachineFacts& m, Diagnosis& d) {
  if (!e.trace) return;
  const TraceBreakdown& t = *e.trace;
  d.breakdown["matmul_share"] = t.matmul_share;
  d.breakdown["ops_per_step"] = t.ops_per_step;
  d.breakdown["median_op_s"] = t.median_op_s;
  const auto step = e.medians.find("step_time");
  const double step_s = step != e.medians.end() ? step->second : t.step_s;  // the timed step, not the profiled one
  const double achieved = step_s > 0 ? t.flop_per_step / step_s : 0;
  if (achieved > 0) d.breakdown["achieved_flops"] = achieved;
  if (achieved > 0 && e.achievable_flops > 0) d.breakdown["mfu"] = achieved / e.achievable_flops;
  if (t.matmul_share >= kMatmulShare && achieved > 0 && e.achievable_flops > 0 &&
      achieved < kUtilisationLimit * e.achievable_flops) {
    d.findings.push_back(
        {"compute",
         fmt::format("GEMM and convolution are {} of the step and reach {:.3g} FLOP/s, {} of the achievable {:.3g} "
                     "here (perfbench peak)", Share(t.matmul_share), achieved, Share(achieved / e.achievable_flops),
                     e.achievable_flops),
         fmt::format("below {} of the achievable peak (source documents: utilisation)", Share(kUtilisationLimit)),
         {}});
    auto& remedies = d.findings.back().remedies;
    if (m.device != "cpu" || MissingIsa("bf16", m.cpu_isa).empty())
      remedies.push_back("mixed precision, which this device runs natively (1.5-2x)");
    remedies.insert(remedies.end(), {"larger GEMMs: a bigger batch, fused layers", "operator fusion: fewer, larger kernels"});
  } else if (t.matmul_share < kMatmulShare && t.ops_per_step >= kManyOps && t.median_op_s < kShortOpS) {
    d.findings.push_back(
        {"compute",
         fmt::format("{:.0f} ops a step with a median of {:.3g} us, GEMM and convolution only {} of the step: "
                     "dispatch and launch overhead", t.ops_per_step, t.median_op_s * 1e6, Share(t.matmul_share)),
         fmt::format("median op under {:.0f} us, at least {:.0f} ops a step", kShortOpS * 1e6, kManyOps),
         {"operator fusion (torch.compile, fused optimisers and layers)", "CUDA graphs on a GPU",
          "a larger batch per step"}});
  }
}

// A number attribute ("0.62"), or nullopt (absent, "unavailable: ...").
std::optional<double> NumberAttribute(const Evidence& e, const char* name) {
  const auto it = e.attributes.find(name);
  if (it == e.attributes.end()) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != 0) return std::nullopt;
  return x;
}

// What the GPU monitor saw during the timed steps.
void GpuFindings(const Evidence& e, Diagnosis& d) {
  const auto util = NumberAttribute(e, "gpu_utilization"), sm = NumberAttribute(e, "sm_activity");
  if (util) d.breakdown["gpu_utilization"] = *util;
  if (sm) d.breakdown["sm_activity"] = *sm;
  if (util && *util < kUtilisationLimit)
    d.findings.push_back(
        {"compute",
         fmt::format("the GPU ran kernels {} of the timed steps (NVML utilisation{}): it waits for the host",
                     Share(*util), sm ? fmt::format("; SMs busy {} (GPM)", Share(*sm)) : ""),
         fmt::format("utilisation below {} (source documents); NVML counts any kernel running, not how many SMs it "
                     "keeps busy", Share(kUtilisationLimit)),
         {"find the idle gaps in a `perfbench profile` trace: input wait, host-side work, synchronisations",
          "more dataloader workers and prefetch if data_wait_share is high",
          "CUDA graphs or a larger batch to cut launch overhead"}});
  const auto throttled = NumberAttribute(e, "throttled_s");
  const auto events = e.attributes.find("clock_events");
  std::string why;
  if (throttled && *throttled > 0) why = fmt::format("the GPU was throttled {:.3g} s (power or thermal)", *throttled);
  if (events != e.attributes.end() && !events->second.empty())
    why += (why.empty() ? "clock events: " : "; clock events: ") + events->second;
  if (!why.empty()) d.suspect = why + " during the timed steps: its timings are suspect";
}

}  // namespace

Diagnosis Classify(const Evidence& e, const MachineFacts& m) {
  Diagnosis d{e.suite, e.workload, e.params, "balanced", e.status == ResultStatus::kOk ? "" : e.reason, {}, {}, ""};
  for (const char* metric : {"step_time", "throughput", "data_wait_share", "comm_share", "speedup", "peak_memory",
                             "peak_rss", "scaling_efficiency"})
    if (auto it = e.medians.find(metric); it != e.medians.end()) d.breakdown[metric] = it->second;
  MemoryFindings(e, m, d);
  CommunicationFindings(e, d);
  InputFindings(e, d);
  ComputeFindings(e, m, d);
  TraceFindings(e, m, d);
  GpuFindings(e, d);
  if (!d.findings.empty()) {
    d.verdict = d.findings.front().kind;  // pushed in order of severity
  } else if (e.status != ResultStatus::kOk) {
    d.verdict = "not measured";
  }
  return d;
}

nlohmann::ordered_json DiagnosisJson(const std::vector<Diagnosis>& ds) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = 1;
  doc["variants"] = nlohmann::ordered_json::array();
  for (const auto& d : ds) {
    nlohmann::ordered_json v, params = nlohmann::ordered_json::object(), breakdown = nlohmann::ordered_json::object();
    for (const auto& [k, x] : d.params.items()) params[k] = x;
    for (const auto& [k, x] : d.breakdown) breakdown[k] = x;
    v["suite"] = d.suite;
    v["workload"] = d.workload;
    v["params"] = params;
    v["verdict"] = d.verdict;
    v["reason"] = d.reason.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(d.reason);
    v["suspect"] = d.suspect.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(d.suspect);
    v["breakdown"] = breakdown;
    v["findings"] = nlohmann::ordered_json::array();
    for (const auto& f : d.findings)
      v["findings"].push_back(
          {{"kind", f.kind}, {"evidence", f.evidence}, {"threshold", f.threshold}, {"remedies", f.remedies}});
    doc["variants"].push_back(std::move(v));
  }
  return doc;
}

std::string DiagnosisText(const std::vector<Diagnosis>& ds, bool markdown) {
  std::ostringstream o;
  for (const auto& d : ds) {
    const std::string name = d.suite + "/" + d.workload + "/" + d.params.Encode();
    o << (markdown ? "### " : "") << name << ": " << (markdown ? "**" + d.verdict + "**" : d.verdict) << "\n";
    if (!d.reason.empty()) o << (markdown ? "- " : "  ") << d.reason << "\n";
    if (!d.suspect.empty()) o << (markdown ? "- " : "  ") << "suspect: " << d.suspect << "\n";
    if (d.findings.empty() && d.reason.empty()) {
      std::string seen;
      for (const auto& [k, x] : d.breakdown) seen += fmt::format("{}{} {:.4g}", seen.empty() ? "" : ", ", k, x);
      o << (markdown ? "- " : "  ") << "no threshold crossed" << (seen.empty() ? "" : " (" + seen + ")") << "\n";
    }
    for (const auto& f : d.findings) {
      o << (markdown ? "- " : "  ") << f.kind << ": " << f.evidence << " [" << f.threshold << "]\n";
      for (size_t i = 0; i < f.remedies.size(); ++i)
        o << (markdown ? "  " : "    ") << i + 1 << ". " << f.remedies[i] << "\n";
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace perfbench
