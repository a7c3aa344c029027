// Energy per step, measured over a window of consecutive steps of one
// variant, from one counter edge to another.
//
// Energy counters advance in steps of their own (NVML's total energy about
// every 100 ms, whatever the step time), so a delta around one 2-40 ms step
// is mostly 0 and sometimes a whole update: no number at all. Instead the
// window starts when the counter is first seen to move after a step and
// ends when it moves again after at least `min_updates` moves and enough
// steps for the error bound: each end of the window lies inside the step
// after which the move was seen, so the window's energy is that of its
// counted steps give or take one step: relative error <= 1 / steps.
#pragma once

#include <functional>
#include <string>

#include "energy.h"
#include "perfbench/status.h"

namespace perfbench {

struct EnergyWindowLimits {
  int min_updates = 10;     // counter moves inside the window (about 1 s of NVML)
  double max_error = 0.05;  // the stated bound, 1 / steps, the window is extended for
  double max_seconds = 10;  // the window's wall-clock limit (the variant's budget caps it too)
};

struct EnergyWindow {
  std::string unavailable;  // why there is no figure ("" when measured)
  double joules_per_step = 0;
  double watts = 0;         // window energy / window time
  double seconds = 0;       // from the first edge to the last
  int steps = 0;            // steps between the edges
  int updates = 0;          // counter moves between the edges
  double error = 0;         // relative bound: 1 / steps
  // "240 steps, 11 counter updates in 1.1 s, error <= 0.4%"
  std::string Text() const;
};

// Runs `step` (one untimed step of the variant, synchronised) until the
// window closes or `limits.max_seconds` pass on `now`. A failed step ends
// it: *step_error holds the step's status. A failed counter read, or a
// window that did not reach `min_updates` and `max_error` in time, is
// "unavailable: <why>", never a number.
EnergyWindow MeasureEnergyWindow(const std::function<Status()>& step, EnergyMeter& meter,
                                 const std::function<double()>& now, const EnergyWindowLimits& limits,
                                 Status* step_error);

}  // namespace perfbench
