#include "energy_window.h"

#include <fmt/format.h>

#include <algorithm>

namespace perfbench {

std::string EnergyWindow::Text() const {
  return fmt::format("{} steps, {} counter updates in {:.3g} s, error <= {:.2g}%", steps, updates, seconds,
                     100 * error);
}

namespace {

struct Edge {
  double joules = 0, t = 0;
  int steps = 0;  // steps run since the window opened
};

EnergyWindow Unavailable(const std::string& why) {
  EnergyWindow w;
  w.unavailable = why;
  return w;
}

}  // namespace

EnergyWindow MeasureEnergyWindow(const std::function<Status()>& step, EnergyMeter& meter,
                                 const std::function<double()>& now, const EnergyWindowLimits& limits,
                                 Status* step_error) {
  *step_error = Status::Ok();
  if (!meter.Unavailable().empty()) return Unavailable(meter.Unavailable());
  std::string why;
  auto last = meter.Read(&why);
  if (!last) return Unavailable(why);
  const double t_start = now();
  bool open = false;
  Edge first, edge;
  int updates = 0, steps = 0;
  while (now() - t_start < limits.max_seconds) {
    if (Status st = step(); !st.ok()) {
      *step_error = st;
      return Unavailable("a step failed during the energy window");
    }
    ++steps;
    const auto e = meter.Read(&why);
    if (!e) return Unavailable(why);
    if (*e == *last) continue;
    last = e;
    if (!open) {  // the first edge opens the window
      open = true;
      first = edge = {*e, now(), 0};
      steps = 0;
      continue;
    }
    ++updates;
    edge = {*e, now(), steps};
    if (updates >= limits.min_updates && 1.0 / steps <= limits.max_error) break;
  }
  if (updates < limits.min_updates || edge.steps < 1 || 1.0 / edge.steps > limits.max_error)
    return Unavailable(fmt::format("the energy counter moved {} times over {} steps in {:.3g} s: a window needs "
                                   "{} moves and an error bound 1 / steps of at most {:g}%",
                                   open ? updates + 1 : 0, steps, now() - t_start, limits.min_updates + 1,
                                   100 * limits.max_error));
  EnergyWindow w;
  w.steps = edge.steps;
  w.updates = updates;
  w.seconds = edge.t - first.t;
  w.joules_per_step = (edge.joules - first.joules) / w.steps;
  w.watts = w.seconds > 0 ? (edge.joules - first.joules) / w.seconds : 0;
  w.error = 1.0 / w.steps;
  return w;
}

}  // namespace perfbench
