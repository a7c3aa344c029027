#include "inference.h"

#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace perfbench::stats {

double NormalSf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

double NormalQuantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("NormalQuantile: p outside (0, 1)");
  return boost::math::quantile(boost::math::normal_distribution<double>(), p);
}

namespace {

// P(U >= k) under H0 for sample sizes m, n without ties. The counts of U are
// the coefficients of the Gaussian binomial [m+n choose m]_q, built as
// prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i); each partial product is itself a
// polynomial, so the running coefficients stay non-negative.
double ExactUpperTail(int k, int m, int n) {
  if (m > n) std::swap(m, n);
  const int max_u = m * n;
  if (k <= 0) return 1.0;
  if (k > max_u) return 0.0;
  std::vector<long double> c(static_cast<size_t>(max_u) + 1, 0.0L);
  c[0] = 1.0L;
  int degree = 0;
  for (int i = 1; i <= m; ++i) {
    const int up = n + i;  // multiply by (1 - q^up)
    degree += up;
    for (int u = std::min(degree, max_u); u >= up; --u) c[u] -= c[u - up];
    // divide by (1 - q^i): Q[u] = P[u] + Q[u - i]
    degree -= i;
    for (int u = i; u <= std::min(degree, max_u); ++u) c[u] += c[u - i];
    // The quotient ends at `degree`; what P held above it is not part of it.
    for (int u = degree + 1; u <= std::min(degree + i, max_u); ++u) c[u] = 0;
  }
  long double total = 0, tail = 0;
  for (int u = 0; u <= max_u; ++u) {
    total += c[u];
    if (u >= k) tail += c[u];
  }
  return static_cast<double>(tail / total);
}

}  // namespace

MannWhitneyResult MannWhitneyU(const std::vector<double>& a, const std::vector<double>& b) {
  const size_t n1 = a.size(), n2 = b.size();
  if (n1 == 0 || n2 == 0) throw std::invalid_argument("MannWhitneyU: empty sample");
  // Mid-ranks of the pooled sample.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(n1 + n2);
  for (double x : a) pooled.emplace_back(x, 0);
  for (double x : b) pooled.emplace_back(x, 1);
  std::sort(pooled.begin(), pooled.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second == 0) rank_sum_a += mid_rank;
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  MannWhitneyResult r;
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2);
  r.u1 = rank_sum_a - dn1 * (dn1 + 1) / 2;
  const double u = std::max(r.u1, dn1 * dn2 - r.u1);
  r.exact = !(n1 > 8 && n2 > 8) && !ties;
  double p;
  if (r.exact) {
    p = ExactUpperTail(static_cast<int>(std::lround(u)), static_cast<int>(n1), static_cast<int>(n2));
  } else {
    const double n = dn1 + dn2;
    const double s = std::sqrt(dn1 * dn2 / 12 * ((n + 1) - tie_term / (n * (n - 1))));
    const double z = (u - dn1 * dn2 / 2 - 0.5) / s;  // continuity correction
    p = s > 0 ? NormalSf(z) : (u - dn1 * dn2 / 2 - 0.5 > 0 ? 0.0 : 1.0);
  }
  r.p_value = std::clamp(2 * p, 0.0, 1.0);
  return r;
}

std::vector<double> BenjaminiHochberg(const std::vector<double>& p) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < p.size(); ++i)
    if (!std::isnan(p[i])) idx.push_back(i);
  std::vector<double> q(p.size(), std::numeric_limits<double>::quiet_NaN());
  const double m = static_cast<double>(idx.size());
  std::sort(idx.begin(), idx.end(), [&](size_t l, size_t r) { return p[l] < p[r]; });
  double running = 1.0;
  for (size_t k = idx.size(); k-- > 0;) {
    running = std::min(running, p[idx[k]] * m / static_cast<double>(k + 1));
    q[idx[k]] = std::min(running, 1.0);
  }
  return q;
}

ShiftInterval HodgesLehmannShift(const std::vector<double>& a, const std::vector<double>& b, double confidence) {
  if (a.empty() || b.empty()) throw std::invalid_argument("HodgesLehmannShift: empty sample");
  std::vector<double> d;
  d.reserve(a.size() * b.size());
  for (double x : a)
    for (double y : b) d.push_back(y - x);
  std::sort(d.begin(), d.end());
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  const double nd = static_cast<double>(d.size());
  ShiftInterval out;
  const size_t mid = d.size() / 2;
  out.estimate = d.size() % 2 ? d[mid] : (d[mid - 1] + d[mid]) / 2;
  // Moses: with C = floor(n1 n2 / 2 - z sqrt(n1 n2 (n1 + n2 + 1) / 12)), the
  // interval is [d_(C+1), d_(n1 n2 - C)] (1-based order statistics).
  const double z = NormalQuantile(0.5 + confidence / 2);
  const double c = std::floor(nd / 2 - z * std::sqrt(n1 * n2 * (n1 + n2 + 1) / 12));
  const size_t k = c < 0 ? 0 : static_cast<size_t>(c);
  out.low = d[std::min(k, d.size() - 1)];
  out.high = d[d.size() - 1 - std::min(k, d.size() - 1)];
  return out;
}

}  // namespace perfbench::stats
