#include "offline_batch.h"

#include <fmt/format.h>

#include <map>
#include <stdexcept>

namespace perfbench::quant {

BatchChoice SmallestSufficientBatch(const std::function<double(int64_t)>& throughput, int64_t first, int64_t largest,
                                    double tolerance) {
  if (first < 1 || first > largest) throw std::invalid_argument("offline batch search: need 1 <= first <= largest");
  std::map<int64_t, double> seen;
  const auto at = [&](int64_t b) {
    auto it = seen.find(b);
    return it != seen.end() ? it->second : seen.emplace(b, throughput(b)).first->second;
  };
  BatchChoice c{first, ""};
  while (c.batch < largest) {
    const int64_t next = std::min(2 * c.batch, largest);
    if (at(c.batch) >= (1 - tolerance) * at(next)) break;
    c.batch = next;
  }
  at(c.batch);
  for (const auto& [b, rate] : seen) c.trail += fmt::format("{}{}: {:.4g}/s", c.trail.empty() ? "" : ", ", b, rate);
  return c;
}

}  // namespace perfbench::quant
