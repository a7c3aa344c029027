#include "trace_breakdown.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "perfbench/statistics.h"

namespace perfbench {
namespace {

struct Op {
  std::string name;
  double ts = 0, end = 0;
  const nlohmann::json* event = nullptr;
};

bool IsMatmul(const std::string& n) {
  static const std::set<std::string> names = {
      "aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm", "aten::convolution", "aten::convolution_backward",
      "aten::_convolution", "aten::mkldnn_convolution", "aten::cudnn_convolution", "aten::_int_mm"};
  return names.count(n) > 0;
}

double Dim(const nlohmann::json& dims, size_t i, size_t j) {
  if (!dims.is_array() || dims.size() <= i || !dims[i].is_array() || dims[i].size() <= j) return 0;
  return dims[i][j].is_number() ? dims[i][j].get<double>() : 0;
}

// "[True, False]" (a recorded list) -> {"True", "False"}; empty when absent.
std::vector<std::string> Words(const nlohmann::json& concrete, size_t i) {
  std::vector<std::string> out;
  if (!concrete.is_array() || concrete.size() <= i || !concrete[i].is_string()) return out;
  std::string s = concrete[i].get<std::string>();
  for (char& c : s)
    if (c == '[' || c == ']' || c == ',') c = ' ';
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// "[1, 1]" -> {1, 1}; empty when it is not a list of numbers.
std::vector<double> Ints(const nlohmann::json& concrete, size_t i) {
  std::vector<double> out;
  for (const auto& w : Words(concrete, i)) {
    char* end = nullptr;
    out.push_back(std::strtod(w.c_str(), &end));
    if (*end != 0) return {};
  }
  return out;
}

// 2 x (C/groups) x prod(kernel) FLOP per output element of a convolution,
// times the output elements: N x C_out x prod(spatial out). `out` holds the
// output's spatial sizes.
double ConvFlop(const nlohmann::json& weight, double n, const std::vector<double>& out) {
  if (!weight.is_array() || weight.size() < 3 || out.size() + 2 != weight.size()) return 0;
  double per_output = 2;
  for (size_t i = 1; i < weight.size(); ++i) per_output *= weight[i].get<double>();
  double elements = n * weight[0].get<double>();
  for (double o : out) elements *= o;
  return per_output * elements;
}

// aten::convolution(input, weight, bias, stride, padding, dilation,
// transposed, output_padding, groups): output sizes from the input's.
double ConvolutionFlop(const nlohmann::json& dims, const nlohmann::json& concrete) {
  if (!dims.is_array() || dims.size() < 2 || !dims[0].is_array() || dims[0].size() < 3) return 0;
  if (concrete.is_array() && concrete.size() > 6 && concrete[6] == "True") return 0;  // transposed: not counted
  const auto stride = Ints(concrete, 3), padding = Ints(concrete, 4), dilation = Ints(concrete, 5);
  const size_t spatial = dims[0].size() - 2;
  if (stride.size() != spatial || padding.size() != spatial || dilation.size() != spatial) return 0;
  std::vector<double> out;
  for (size_t i = 0; i < spatial; ++i) {
    const double in = Dim(dims, 0, i + 2), k = Dim(dims, 1, i + 2);
    out.push_back(std::floor((in + 2 * padding[i] - dilation[i] * (k - 1) - 1) / stride[i]) + 1);
  }
  return ConvFlop(dims[1], Dim(dims, 0, 0), out);
}

// aten::convolution_backward(grad_output, input, weight, ..., output_mask):
// a forward's FLOP for each of grad_input and grad_weight computed.
double ConvolutionBackwardFlop(const nlohmann::json& dims, const nlohmann::json& concrete) {
  if (!dims.is_array() || dims.size() < 3 || !dims[0].is_array() || dims[0].size() < 3) return 0;
  std::vector<double> out;
  for (size_t i = 2; i < dims[0].size(); ++i) out.push_back(Dim(dims, 0, i));
  const double forward = ConvFlop(dims[2], Dim(dims, 0, 0), out);
  auto mask = Words(concrete, 10);
  if (mask.size() < 2) mask = {"True", "True"};  // not recorded: both, as a training step asks
  return forward * ((mask[0] == "True" ? 1.0 : 0.0) + (mask[1] == "True" ? 1.0 : 0.0));
}

// FLOP from the recorded input shapes; 0 where they are missing.
double Flop(const Op& op) {
  const auto& args = op.event->value("args", nlohmann::json::object());
  const auto dims = args.value("Input Dims", nlohmann::json::array());
  const auto concrete = args.value("Concrete Inputs", nlohmann::json::array());
  if (op.name == "aten::convolution") return ConvolutionFlop(dims, concrete);
  if (op.name == "aten::convolution_backward") return ConvolutionBackwardFlop(dims, concrete);
  if (op.name == "aten::addmm") return 2 * Dim(dims, 1, 0) * Dim(dims, 1, 1) * Dim(dims, 2, 1);
  if (op.name == "aten::mm" || op.name == "aten::_int_mm") return 2 * Dim(dims, 0, 0) * Dim(dims, 0, 1) * Dim(dims, 1, 1);
  if (op.name == "aten::bmm") return 2 * Dim(dims, 0, 0) * Dim(dims, 0, 1) * Dim(dims, 0, 2) * Dim(dims, 1, 2);
  if (op.name == "aten::baddbmm") return 2 * Dim(dims, 1, 0) * Dim(dims, 1, 1) * Dim(dims, 1, 2) * Dim(dims, 2, 2);
  return 0;
}

struct StepFigures {
  double matmul_s = 0, flop = 0;
  std::vector<double> top_level;  // durations of the dispatched aten ops
};

// `ops` sorted by start, longer first: an op encloses those that start
// before it ends.
StepFigures Walk(const std::vector<Op>& ops) {
  StepFigures f;
  double aten_end = -1, matmul_end = -1;
  for (const Op& op : ops) {
    const bool aten = op.name.rfind("aten::", 0) == 0;
    if (aten && op.ts >= aten_end) {
      f.top_level.push_back(op.end - op.ts);
      aten_end = op.end;
    }
    if (IsMatmul(op.name) && op.ts >= matmul_end) {
      f.matmul_s += op.end - op.ts;
      f.flop += Flop(op);
      matmul_end = op.end;
    }
  }
  return f;
}

}  // namespace

TraceBreakdown BreakdownOfTrace(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    throw std::invalid_argument("not a Chrome trace: no traceEvents");
  const auto& events = doc["traceEvents"];
  std::vector<const nlohmann::json*> steps;
  for (const auto& e : events)
    if (e.value("name", "").rfind("ProfilerStep#", 0) == 0 && e.contains("dur")) steps.push_back(&e);
  if (steps.empty()) throw std::invalid_argument("the trace has no ProfilerStep# events");
  std::vector<double> step_s, share, ops, op_s, flop;
  for (const auto* s : steps) {
    const double t0 = (*s)["ts"].get<double>(), t1 = t0 + (*s)["dur"].get<double>();
    std::vector<Op> in_step;
    for (const auto& e : events) {
      if (e.value("cat", "") != "cpu_op" || !e.contains("dur") || e.value("tid", -1) != s->value("tid", -2)) continue;
      const double ts = e["ts"].get<double>();
      if (ts >= t0 && ts < t1) in_step.push_back({e.value("name", ""), ts, ts + e["dur"].get<double>(), &e});
    }
    std::sort(in_step.begin(), in_step.end(), [](const Op& a, const Op& b) { return a.ts != b.ts ? a.ts < b.ts : a.end > b.end; });
    const StepFigures f = Walk(in_step);
    const double dur_s = (t1 - t0) / 1e6;  // trace times are microseconds
    step_s.push_back(dur_s);
    share.push_back(dur_s > 0 ? f.matmul_s / 1e6 / dur_s : 0);
    ops.push_back(static_cast<double>(f.top_level.size()));
    if (!f.top_level.empty()) op_s.push_back(stats::Median(f.top_level) / 1e6);
    flop.push_back(f.flop);
  }
  TraceBreakdown b;
  b.steps = steps.size();
  b.step_s = stats::Median(step_s);
  b.matmul_share = stats::Median(share);
  b.ops_per_step = stats::Median(ops);
  b.median_op_s = op_s.empty() ? 0 : stats::Median(op_s);
  b.flop_per_step = stats::Median(flop);
  return b;
}

}  // namespace perfbench
