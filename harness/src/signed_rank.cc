#include "signed_rank.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <stdexcept>

namespace perfbench::stats {
namespace {

// P(T+ <= k) under H0 for n non-zero, untied differences: the counts of
// subsets of {1..n} by their sum.
double ExactLowerTail(int k, int n) {
  const int max_sum = n * (n + 1) / 2;
  std::vector<long double> c(static_cast<size_t>(max_sum) + 1, 0.0L);
  c[0] = 1.0L;
  for (int r = 1; r <= n; ++r)
    for (int s = max_sum; s >= r; --s) c[s] += c[s - r];
  long double total = 0, low = 0;
  for (int s = 0; s <= max_sum; ++s) {
    total += c[s];
    if (s <= k) low += c[s];
  }
  return static_cast<double>(low / total);
}

struct Ranked {
  double r_plus = 0, r_minus = 0, tie_term = 0;
  bool ties = false;
  std::vector<double> ranks;  // mid-ranks of |d|, in input order
};

// Every sign assignment of the ranks (2^n, n <= 13): two-sided p of R+ as
// SciPy's permutation method gives it.
double PermutationP(const Ranked& k) {
  const size_t n = k.ranks.size();
  const uint32_t count = 1u << n;
  const double tol = 1e-9 * std::max(1.0, k.r_plus);
  uint32_t low = 0, high = 0;
  for (uint32_t mask = 0; mask < count; ++mask) {
    double r = 0;
    for (size_t i = 0; i < n; ++i)
      if (mask & (1u << i)) r += k.ranks[i];
    if (r <= k.r_plus + tol) ++low;
    if (r >= k.r_plus - tol) ++high;
  }
  return std::min(1.0, 2.0 * std::min(low, high) / count);
}
Ranked RankMagnitudes(const std::vector<double>& d) {
  std::vector<double> mags;
  for (double x : d) mags.push_back(std::fabs(x));
  std::vector<size_t> idx(d.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t l, size_t r) { return mags[l] < mags[r]; });
  Ranked out;
  out.ranks.assign(d.size(), 0);
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j < idx.size() && mags[idx[j]] == mags[idx[i]]) ++j;
    const double t = static_cast<double>(j - i);
    const double mid = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      (d[idx[k]] > 0 ? out.r_plus : out.r_minus) += mid;
      out.ranks[idx[k]] = mid;
    }
    if (t > 1) {
      out.ties = true;
      out.tie_term += t * t * t - t;
    }
    i = j;
  }
  return out;
}

}  // namespace

SignedRankResult WilcoxonSignedRank(const std::vector<double>& all) {
  std::vector<double> d;
  for (double x : all)
    if (x != 0) d.push_back(x);
  SignedRankResult r;
  r.n = static_cast<int>(d.size());
  if (d.empty()) return r;  // nothing differs: p = 1
  const Ranked k = RankMagnitudes(d);
  r.statistic = std::min(k.r_plus, k.r_minus);
  const bool zeros = d.size() != all.size();
  r.exact = all.size() <= 50 && !k.ties && !zeros;
  const double n = r.n;
  if (r.exact) {
    r.p_value = std::min(1.0, 2 * ExactLowerTail(static_cast<int>(std::lround(r.statistic)), r.n));
    return r;
  }
  if (all.size() <= 13) {  // ties or zeros in a small sample: every sign assignment
    r.exact = true;
    r.p_value = PermutationP(k);
    return r;
  }
  const double mean = n * (n + 1) / 4;
  const double var = n * (n + 1) * (2 * n + 1) / 24 - k.tie_term / 48;
  r.p_value = var > 0 ? std::min(1.0, 2 * NormalSf(std::fabs(r.statistic - mean) / std::sqrt(var))) : 1.0;
  return r;
}

ShiftInterval HodgesLehmannPaired(const std::vector<double>& d, double confidence) {
  if (d.empty()) throw std::invalid_argument("HodgesLehmannPaired: no differences");
  std::vector<double> w;
  for (size_t i = 0; i < d.size(); ++i)
    for (size_t j = i; j < d.size(); ++j) w.push_back((d[i] + d[j]) / 2);
  std::sort(w.begin(), w.end());
  ShiftInterval out;
  const size_t mid = w.size() / 2;
  out.estimate = w.size() % 2 ? w[mid] : (w[mid - 1] + w[mid]) / 2;
  const double n = static_cast<double>(d.size());
  const double z = NormalQuantile(0.5 + confidence / 2);
  const double c = std::floor(static_cast<double>(w.size()) / 2 - z * std::sqrt(n * (n + 1) * (2 * n + 1) / 24));
  const size_t k = std::min(c < 0 ? size_t{0} : static_cast<size_t>(c), w.size() - 1);
  out.low = w[k];
  out.high = w[w.size() - 1 - k];
  return out;
}

}  // namespace perfbench::stats
