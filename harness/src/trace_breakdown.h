// What a profile trace (`perfbench profile`, Chrome trace JSON) says about a
// step: the share of GEMM and convolution, how many ops and how short, and
// the GEMM FLOP, for `perfbench diagnose`.
//
// Per `ProfilerStep#<i>` (the user_annotation each profiled step is wrapped
// in), over the CPU ops of the step's thread that start inside it:
//   matmul_share   time in GEMM/convolution ops (aten::addmm, mm, bmm,
//                  baddbmm, convolution, convolution_backward and their
//                  internal variants), outermost occurrences only / step time
//   ops_per_step   aten:: ops that no other aten:: op encloses (what the
//                  framework dispatches), and median_op_s their median time
//   flop_per_step  2mkn per outermost addmm/mm (2bmkn per bmm/baddbmm) from the
//                  recorded input shapes; per convolution 2 (C_in/groups)
//                  prod(kernel) per output element (N C_out prod(out), the
//                  output's size from stride, padding and dilation in the
//                  recorded concrete inputs), and per convolution_backward
//                  that for each of grad_input and grad_weight its
//                  output_mask asks for; transposed convolutions not counted
// Each figure is the median over the trace's steps.
#pragma once

#include <nlohmann/json.hpp>

namespace perfbench {

struct TraceBreakdown {
  size_t steps = 0;
  double step_s = 0;
  double matmul_share = 0;
  double ops_per_step = 0;
  double median_op_s = 0;
  double flop_per_step = 0;
};

// Throws std::invalid_argument when `doc` has no traceEvents or no
// ProfilerStep# event.
TraceBreakdown BreakdownOfTrace(const nlohmann::json& doc);

}  // namespace perfbench
