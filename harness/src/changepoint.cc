#include "changepoint.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <optional>

namespace perfbench {

double PooledTTestP(double m1, double s1, double n1, double m2, double s2, double n2) {
  if (n1 + n2 <= 2) return 1;
  const double df = n1 + n2 - 2;
  const double sp2 = ((n1 - 1) * s1 * s1 + (n2 - 1) * s2 * s2) / df;
  const double denom = std::sqrt(sp2 * (1 / n1 + 1 / n2));
  const double diff = m1 - m2;
  if (denom == 0) return diff == 0 ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  const boost::math::students_t t(df);
  return 2 * boost::math::cdf(boost::math::complement(t, std::abs(diff / denom)));
}

namespace {

using Series = std::vector<double>;

struct Stats {
  double mean_before = 0, mean_after = 0, p = 1;
};

// Otava's test of x[lo, tau) against x[tau, hi): population standard deviations.
Stats Test(const Series& x, size_t lo, size_t tau, size_t hi) {
  const auto moments = [&](size_t a, size_t b, double* mean, double* sd) {
    const double n = static_cast<double>(b - a);
    double s = 0, ss = 0;
    for (size_t i = a; i < b; ++i) s += x[i];
    *mean = s / n;
    for (size_t i = a; i < b; ++i) ss += (x[i] - *mean) * (x[i] - *mean);
    *sd = b - a >= 2 ? std::sqrt(ss / n) : 0.0;
  };
  Stats st;
  double s1 = 0, s2 = 0;
  moments(lo, tau, &st.mean_before, &s1);
  moments(tau, hi, &st.mean_after, &s2);
  st.p = PooledTTestP(st.mean_before, s1, static_cast<double>(tau - lo), st.mean_after, s2,
                      static_cast<double>(hi - tau));
  return st;
}

// The energy statistic of X = x[lo, tau) and Y = x[tau, kappa) from the sums
// of distances between them and within each.
double Q(double n, double m, double between, double within_x, double within_y) {
  double q = 2 / (m + n) * between;
  if (n > 1) q -= 2 * m / (m + n) / (n - 1) * within_x;
  if (m > 1) q -= 2 * n / (m + n) / (m - 1) * within_y;
  return q;
}

struct Candidate {
  size_t tau = 0;
  double q = 0;
};

// The best split of [lo, hi) with segments of at least s points; nullopt
// when none fits. For each tau, Y grows one point at a time, its sums updated
// in O(W): O(W^3) per interval (Otava's matrix form is O(W^2) per split in
// memory; windows are at most 1000 points).
std::optional<Candidate> Best(const Series& x, size_t lo, size_t hi, size_t s) {
  std::optional<Candidate> best;
  for (size_t tau = lo + s; tau + s <= hi; ++tau) {
    double within_x = 0, between = 0, within_y = 0;
    for (size_t i = lo; i < tau; ++i)
      for (size_t k = i + 1; k < tau; ++k) within_x += std::abs(x[i] - x[k]);
    for (size_t kappa = tau + 1; kappa <= hi; ++kappa) {
      const double v = x[kappa - 1];
      for (size_t i = lo; i < tau; ++i) between += std::abs(x[i] - v);
      for (size_t j = tau; j + 1 < kappa; ++j) within_y += std::abs(x[j] - v);
      if (kappa < tau + s) continue;
      const double q = Q(static_cast<double>(tau - lo), static_cast<double>(kappa - tau), between, within_x, within_y);
      if (!best || q > best->q) best = Candidate{tau, q};
    }
  }
  return best;
}

// Bounds 0, cps..., n.
std::vector<size_t> Bounds(const std::vector<size_t>& cps, size_t n) {
  std::vector<size_t> b{0};
  b.insert(b.end(), cps.begin(), cps.end());
  b.push_back(n);
  return b;
}

// Change points of one window (local indices).
std::vector<size_t> DetectWindow(const Series& w, double p_first, size_t s) {
  std::vector<size_t> cps;
  for (;;) {
    const auto b = Bounds(cps, w.size());
    std::optional<Candidate> pick;
    size_t lo = 0, hi = 0;
    for (size_t i = 0; i + 1 < b.size(); ++i) {
      if (b[i + 1] - b[i] < 2 * s) continue;
      const auto c = Best(w, b[i], b[i + 1], s);
      if (c && (!pick || c->q > pick->q)) pick = c, lo = b[i], hi = b[i + 1];
    }
    if (!pick || !(Test(w, lo, pick->tau, hi).p <= p_first)) return cps;
    cps.insert(std::upper_bound(cps.begin(), cps.end(), pick->tau), pick->tau);
  }
}

double Magnitude(const Stats& s) {
  const double forward = s.mean_before == 0 ? 0 : s.mean_after / s.mean_before - 1;
  const double backward = s.mean_after == 0 ? 0 : s.mean_before / s.mean_after - 1;
  return std::max(std::abs(forward), std::abs(backward));
}

// Each change point tested against its neighbouring ones.
std::vector<Stats> AllStats(const Series& x, const std::vector<size_t>& cps) {
  const auto b = Bounds(cps, x.size());
  std::vector<Stats> out;
  for (size_t k = 0; k < cps.size(); ++k) out.push_back(Test(x, b[k], cps[k], b[k + 2]));
  return out;
}

// Otava's merge: drop the weakest point until every one is significant and large enough.
void Merge(const Series& x, std::vector<size_t>& cps, const ChangePointOptions& o) {
  while (!cps.empty()) {
    const auto st = AllStats(x, cps);
    size_t w = 0;
    for (size_t k = 1; k < st.size(); ++k)  // the first largest p (NaN never larger)
      if (st[k].p > st[w].p) w = k;
    if (st[w].p < o.max_pvalue) {  // all significant (a NaN p is dropped, as in Otava)
      w = 0;
      for (size_t k = 1; k < st.size(); ++k)
        if (Magnitude(st[k]) < Magnitude(st[w])) w = k;
      if (Magnitude(st[w]) > o.min_magnitude) return;
    }
    cps.erase(cps.begin() + static_cast<std::ptrdiff_t>(w));
  }
}

}  // namespace

std::vector<ChangePoint> FindChangePoints(const std::vector<double>& x, const ChangePointOptions& o) {
  const double p_first = o.max_pvalue < 0.05 ? o.max_pvalue * 10 : o.max_pvalue < 0.5 ? o.max_pvalue * 2 : o.max_pvalue;
  const size_t s = std::max<size_t>(1, o.min_segment), step = std::max<size_t>(1, o.window / 2);
  std::vector<size_t> cps;
  for (size_t start = 0; start < x.size();) {
    const size_t end = std::min(start + o.window, x.size());
    const Series w(x.begin() + static_cast<std::ptrdiff_t>(start), x.begin() + static_cast<std::ptrdiff_t>(end));
    size_t last = 0;
    for (size_t c : DetectWindow(w, p_first, s)) {
      last = c + start;
      if (std::find(cps.begin(), cps.end(), last) == cps.end()) cps.push_back(last);
    }
    start = std::max(last, start + step);
  }
  std::sort(cps.begin(), cps.end());
  Merge(x, cps, o);
  std::vector<ChangePoint> out;
  const auto st = AllStats(x, cps);
  for (size_t k = 0; k < cps.size(); ++k)
    out.push_back({cps[k], st[k].mean_before == 0 ? 0 : st[k].mean_after / st[k].mean_before - 1, st[k].p,
                   st[k].mean_before, st[k].mean_after});
  return out;
}

}  // namespace perfbench
