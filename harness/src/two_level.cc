#include "two_level.h"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "perfbench/statistics.h"

namespace perfbench::stats {

std::vector<std::vector<double>> Groups(const std::vector<double>& samples, const std::vector<int>& process) {
  if (!process.empty() && process.size() != samples.size())
    throw std::invalid_argument("Groups: process indices and samples differ in length");
  std::vector<std::vector<double>> out;
  std::map<int, size_t> slot;
  for (size_t i = 0; i < samples.size(); ++i) {
    const int p = process.empty() ? 0 : process[i];
    auto [it, fresh] = slot.emplace(p, out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(samples[i]);
  }
  return out;
}

std::vector<double> ProcessMedians(const std::vector<std::vector<double>>& groups) {
  std::vector<double> out;
  for (const auto& g : groups)
    if (!g.empty()) out.push_back(Median(g));
  return out;
}

VarianceComponents EstimateComponents(const std::vector<std::vector<double>>& groups) {
  VarianceComponents c;
  double ss_within = 0, df_within = 0, inv_n = 0;
  std::vector<double> means;
  for (const auto& g : groups) {
    if (g.empty()) continue;
    const double m = Mean(g);
    for (double x : g) ss_within += (x - m) * (x - m);
    df_within += static_cast<double>(g.size()) - 1;
    inv_n += 1.0 / static_cast<double>(g.size());
    means.push_back(m);
  }
  c.processes = means.size();
  c.has_within = df_within > 0;
  if (c.has_within) c.within = ss_within / df_within;
  c.has_between = means.size() >= 2;
  if (c.has_between) {
    const double s = StdDev(means);
    c.between = std::max(0.0, s * s - c.within * inv_n / static_cast<double>(means.size()));
  }
  return c;
}

int OptimalRepetitions(const VarianceComponents& c, double cost_process, double cost_repetition, int min_reps,
                       int max_reps) {
  if (!(c.between > 0) || !(cost_repetition > 0)) return max_reps;
  const double r = std::sqrt(std::max(cost_process, 0.0) / cost_repetition * c.within / c.between);
  const double up = std::ceil(r);
  if (!(up < max_reps)) return max_reps;
  return std::max(min_reps, static_cast<int>(up));
}

double StudentTCritical(double df, double confidence) {
  if (!(df > 0)) throw std::invalid_argument("StudentTCritical: df must be positive");
  if (!(confidence > 0 && confidence < 1)) throw std::invalid_argument("StudentTCritical: confidence outside (0, 1)");
  return boost::math::quantile(boost::math::students_t_distribution<double>(df), 0.5 + confidence / 2);
}

std::vector<double> Logs(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) {
    if (!(x > 0)) throw std::invalid_argument("log ratio: values must be positive");
    out.push_back(std::log(x));
  }
  return out;
}

namespace {

WelchResult Exponentiated(WelchResult r) {
  r.difference = std::exp(r.difference);
  r.low = std::exp(r.low);
  r.high = std::exp(r.high);
  return r;
}

// t test of mean(b) - mean(a) with a known-df standard error.
WelchResult TTest(double difference, double se, double df, double confidence) {
  WelchResult r;
  r.difference = difference;
  r.df = df;
  if (!(se > 0)) {
    r.p_value = difference == 0 ? 1.0 : 0.0;
    r.low = r.high = difference;
    return r;
  }
  r.t = difference / se;
  const boost::math::students_t_distribution<double> dist(df);
  r.p_value = std::min(1.0, 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(r.t))));
  const double h = StudentTCritical(df, confidence) * se;
  r.low = difference - h;
  r.high = difference + h;
  return r;
}

}  // namespace

WelchResult WelchT(const std::vector<double>& a, const std::vector<double>& b, double confidence) {
  return WelchT(a, b, confidence, 0, 1);
}

WelchResult WelchT(const std::vector<double>& a, const std::vector<double>& b, double confidence, double extra,
                   double extra_df) {
  if (a.size() < 2 || b.size() < 2) throw std::invalid_argument("WelchT: needs two values per side");
  if (!(extra >= 0) || !(extra_df > 0)) throw std::invalid_argument("WelchT: the extra variance needs extra >= 0, df > 0");
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  const double sa = StdDev(a), sb = StdDev(b);
  const double va = sa * sa / na, vb = sb * sb / nb, se2 = va + vb + extra;
  // Welch-Satterthwaite; with no spread on either side the test is degenerate.
  const double df = se2 > 0 ? se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1) + extra * extra / extra_df)
                            : na + nb - 2;
  return TTest(Mean(b) - Mean(a), std::sqrt(se2), df, confidence);
}

WelchResult WelchLogRatio(const std::vector<double>& a, const std::vector<double>& b, double confidence, double extra,
                          double extra_df) {
  return Exponentiated(WelchT(Logs(a), Logs(b), confidence, extra, extra_df));
}

WelchResult OneVersusManyLogRatio(const std::vector<double>& a, const std::vector<double>& b, double confidence) {
  const auto& many = a.size() >= b.size() ? a : b;
  if (std::min(a.size(), b.size()) < 1 || many.size() < 2)
    throw std::invalid_argument("OneVersusManyLogRatio: needs one value on a side and two on the other");
  const auto la = Logs(a), lb = Logs(b), lm = Logs(many);
  const double s = StdDev(lm);
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  return Exponentiated(
      TTest(Mean(lb) - Mean(la), s * std::sqrt(1 / na + 1 / nb), static_cast<double>(many.size()) - 1, confidence));
}

}  // namespace perfbench::stats
