// The offline scenario's batch on a GPU, chosen as MLPerf submitters tune
// theirs: the smallest batch whose throughput is within 5% of the next
// doubling's (a larger batch then only adds latency and memory).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace perfbench::quant {

struct BatchChoice {
  int64_t batch = 0;
  std::string trail;  // "8: 1.2e+04/s, 16: 2.3e+04/s, ..." every batch measured
};

// Doubles from `first` while the next doubling (at most `largest`) gives
// more than 1 / (1 - tolerance) times the throughput; `throughput(b)` is
// samples per second at batch b. `largest` when every doubling still pays.
// Throws std::invalid_argument unless 1 <= first <= largest.
BatchChoice SmallestSufficientBatch(const std::function<double(int64_t)>& throughput, int64_t first, int64_t largest,
                                    double tolerance = 0.05);

}  // namespace perfbench::quant
