// The plan of `perfbench peak`'s sweep (suites/micro/peak_workloads.cc runs
// it): which GEMM shapes and array sizes it tries, how long one is projected
// to take, and the time budget that decides which of them start.
// Header-only and torch-free (no {fmt} either), so that
// tests/peak_sweep_test.cc checks it without LibTorch, on a fake clock.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace perfbench::micro {

// `perfbench peak --budget SECONDS` reaches the sweep as the run's
// `--param budget=SECONDS` (no variant has that param, so none is renamed;
// the run stores it with its param_overrides). Default 60 s on a GPU and on a
// CPU alike: a bound, not a target (a full sweep is projected at about 45 s
// on an H200 and 30 s on a 2-core CPU).
inline constexpr const char* kBudgetParam = "budget";
inline constexpr double kDefaultBudgetS = 60;
// A variant's share of that budget: each of the five GEMM dtypes (fp32,
// bf16, fp16, fp8, int8) 15%, each of the two bandwidth ops an eighth (all
// seven: the whole budget). `run --timeout` (per variant) caps a share
// further.
inline constexpr double kGemmShare = 0.15;
inline constexpr double kBandwidthShare = 0.125;

// C (m x n) = A (m x k) B (k x n).
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  double Flop() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
  std::string Text() const { return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k); }
  bool operator==(const GemmShape&) const = default;
};

// `shapes` in ascending order of work (ties by m, n, k), each once.
inline std::vector<GemmShape> SortedUnique(std::vector<GemmShape> shapes) {
  const auto key = [](const GemmShape& s) { return std::make_tuple(s.Flop(), s.m, s.n, s.k); };
  std::sort(shapes.begin(), shapes.end(), [&](const GemmShape& a, const GemmShape& b) { return key(a) < key(b); });
  shapes.erase(std::unique(shapes.begin(), shapes.end()), shapes.end());
  return shapes;
}

// peak/gemm's shapes, ascending in work, none twice:
//   GPU  square n = 1024, 2048, 4096, 6144, 8192, 12288, 16384 and MAMF's
//        quick m-sweep (m, 4096, 4096) for m = 2048..20480 step 2048 (its
//        m = 4096 is the square 4096^3, kept once): 16 shapes, the largest
//        16384^3. --quick: n and m up to 8192: 8 shapes, the largest 8192^3.
//   CPU  square n = 128, 256, 384, 512, 768, 1024, 1536, 2048; --quick: n
//        up to 1024.
inline std::vector<GemmShape> PeakGemmShapes(bool cuda, bool quick) {
  const std::vector<int64_t> squares = cuda ? std::vector<int64_t>{1024, 2048, 4096, 6144, 8192, 12288, 16384}
                                            : std::vector<int64_t>{128, 256, 384, 512, 768, 1024, 1536, 2048};
  const int64_t top = cuda ? (quick ? 8192 : 20480) : (quick ? 1024 : 2048);
  std::vector<GemmShape> s;
  for (int64_t n : squares)
    if (n <= top) s.push_back({n, n, n});
  if (cuda)
    for (int64_t m = 2048; m <= top; m += 2048) s.push_back({m, 4096, 4096});
  return SortedUnique(std::move(s));
}

// peak/bandwidth's fp32 array sizes in MiB, ascending (STREAM's rule: far
// beyond the caches): 256 and 1024, and 4096 on a GPU (an H200's L2 is
// 50 MB). --quick: 256 on a CPU, 256 and 1024 on a GPU.
inline std::vector<int64_t> PeakBandwidthMiB(bool cuda, bool quick) {
  if (quick) return cuda ? std::vector<int64_t>{256, 1024} : std::vector<int64_t>{256};
  return cuda ? std::vector<int64_t>{256, 1024, 4096} : std::vector<int64_t>{256, 1024};
}

// About how long Google Benchmark takes to measure a shape whose call lasts
// `call_s`: its warm-up and the first repetition's search for an iteration
// count about one repetition each, then `repetitions` repetitions of at
// least `min_time_s` (one call each when a call is longer).
inline double MeasureSeconds(double call_s, int repetitions, double min_time_s) {
  return static_cast<double>(repetitions + 2) * std::max(call_s, min_time_s);
}

// A shape's call before it is made: `work` at the rate of the shape before
// it (`prev_work` in `prev_call_s`); 0 (unknown) for the first shape.
inline double ProjectCall(double work, double prev_work, double prev_call_s) {
  return prev_work > 0 && prev_call_s > 0 ? work / prev_work * prev_call_s : 0;
}

// One sweep's time budget on an injectable clock (seconds, never decreasing:
// the steady clock in the sweep, a fake one in tests), started when the
// budget is made. Shapes are tried in order: the next may start while the
// time spent so far plus its projection stays within the budget; the first
// that would not ends the sweep, and it and every later (larger) shape are
// left out, with the reason. A sweep may also end for another reason (a
// failed or a very slow shape): End leaves the shapes not yet tried out.
class SweepBudget {
 public:
  using Clock = std::function<double()>;

  SweepBudget(std::vector<std::string> shapes, double budget_s, Clock clock)
      : shapes_(std::move(shapes)), budget_s_(budget_s), clock_(std::move(clock)), start_(clock_()) {}

  // True once every shape was tried or the sweep ended.
  bool Done() const { return ended_ || next_ >= shapes_.size(); }
  // The shape to try next (while !Done()) and its index.
  size_t Index() const { return next_; }
  const std::string& Next() const { return shapes_.at(next_); }
  double Spent() const { return clock_() - start_; }
  double budget_s() const { return budget_s_; }

  // Whether the next shape, projected to take `projected_s` more, fits; when
  // it does not, the sweep ends there. May be asked again for the same shape
  // with a better projection (after its set-up, from its own call estimate).
  bool Fits(double projected_s) {
    const double spent = Spent();
    if (spent + projected_s <= budget_s_) return true;
    End("over budget: " + Next() + " projected " + Seconds(projected_s) + " with " +
        Seconds(std::max(0.0, budget_s_ - spent)) + " of " + Seconds(budget_s_) + " left");
    return false;
  }
  // The next shape was tried (measured, or failed): the one after it is next.
  void Advance() { ++next_; }
  // Ends the sweep: the shapes not yet tried are left out, for `why`.
  void End(const std::string& why) {
    if (ended_) return;
    ended_ = true;
    left_out_.assign(shapes_.begin() + static_cast<std::ptrdiff_t>(std::min(next_, shapes_.size())), shapes_.end());
    if (!left_out_.empty()) why_ = why;
  }

  const std::vector<std::string>& LeftOut() const { return left_out_; }
  const std::string& Why() const { return why_; }
  // "8192x8192x8192, 16384x16384x16384 (over budget: ...)"; empty when
  // nothing was left out.
  std::string LeftOutText() const {
    std::string out;
    for (const auto& s : left_out_) out += (out.empty() ? "" : ", ") + s;
    return out.empty() ? out : out + " (" + why_ + ")";
  }

  // "0.25 s", three significant digits.
  static std::string Seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g s", s);
    return buf;
  }

 private:
  std::vector<std::string> shapes_;
  double budget_s_;
  Clock clock_;
  double start_;
  size_t next_ = 0;
  bool ended_ = false;
  std::vector<std::string> left_out_;
  std::string why_;
};

}  // namespace perfbench::micro
