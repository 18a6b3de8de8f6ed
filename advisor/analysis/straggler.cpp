#include "advisor/analysis/straggler.h"

#include <algorithm>
#include <array>

namespace gpuwise::advisor {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Per step where every rank has steps (ranks do the same work per step), else per rank.
struct PerStep {
  bool by_step = true;
  double operator()(const RankSummary& r, double total) const {
    return by_step ? total / double(r.steps) : total;
  }
};

double inputSeconds(const RankSummary& r, const PerStep& per) {
  if (!r.input_stall_ratio) return 0;
  if (per.by_step) return *r.input_stall_ratio * r.step_mean_seconds.value_or(0);
  return *r.input_stall_ratio * r.step_mean_seconds.value_or(0) * double(r.steps);
}

StragglerCause causeOf(const std::vector<RankSummary>& ranks, size_t s, const PerStep& per) {
  auto excess = [&](auto figure) {
    std::vector<double> peers;
    for (size_t i = 0; i < ranks.size(); ++i)
      if (i != s) peers.push_back(figure(ranks[i]));
    return figure(ranks[s]) - median(std::move(peers));
  };
  const std::array<std::pair<StragglerCause, double>, 3> excesses{{
      {StragglerCause::Compute,
       excess([&](const RankSummary& r) { return per(r, r.compute_seconds); })},
      {StragglerCause::Input, excess([&](const RankSummary& r) { return inputSeconds(r, per); })},
      {StragglerCause::Host, excess([&](const RankSummary& r) { return per(r, r.host_seconds); })},
  }};
  auto best = std::max_element(excesses.begin(), excesses.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return best->second > 0 ? best->first : StragglerCause::Compute;
}

StragglerFinding finding(const std::vector<RankSummary>& ranks, size_t s, const PerStep& per,
                         double others_wait_seconds) {
  StragglerFinding f;
  f.rank = ranks[s].rank;
  f.cause = causeOf(ranks, s, per);
  f.others_wait_seconds = others_wait_seconds;
  f.step_p50_seconds = ranks[s].step_p50_seconds.value_or(0);
  std::vector<double> peers;
  for (size_t i = 0; i < ranks.size(); ++i)
    if (i != s && ranks[i].step_p50_seconds) peers.push_back(*ranks[i].step_p50_seconds);
  f.peers_step_p50_seconds = median(std::move(peers));
  return f;
}

std::optional<StragglerFinding> byWait(const std::vector<RankSummary>& ranks, const PerStep& per,
                                       const Thresholds::Straggler& t) {
  size_t s = 0;
  for (size_t i = 1; i < ranks.size(); ++i)
    if (per(ranks[i], ranks[i].collective_wait_seconds) <
        per(ranks[s], ranks[s].collective_wait_seconds))
      s = i;
  std::vector<double> others_wait, steps;
  double others_total = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].step_p50_seconds) steps.push_back(*ranks[i].step_p50_seconds);
    if (i == s) continue;
    others_wait.push_back(per(ranks[i], ranks[i].collective_wait_seconds));
    others_total += ranks[i].collective_wait_seconds;
  }
  const double wait = median(std::move(others_wait));
  // Per step against the step; per rank (no steps) against the rank's busy time.
  double reference = median(steps);
  if (!per.by_step || steps.empty()) {
    std::vector<double> busy;
    for (const auto& r : ranks)
      busy.push_back(per(r, r.compute_seconds + r.communication_seconds));
    reference = median(std::move(busy));
  }
  if (reference <= 0 || wait < t.min_others_wait_share * reference) return std::nullopt;
  if (per(ranks[s], ranks[s].collective_wait_seconds) > t.max_own_wait_ratio * wait)
    return std::nullopt;
  return finding(ranks, s, per, others_total);
}

std::optional<StragglerFinding> byStepTime(const std::vector<RankSummary>& ranks,
                                           const PerStep& per, const Thresholds::Straggler& t) {
  size_t s = ranks.size();
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (!ranks[i].step_p50_seconds) return std::nullopt; // every rank's step must be known
    if (s == ranks.size() || *ranks[i].step_p50_seconds > *ranks[s].step_p50_seconds) s = i;
  }
  std::vector<double> others;
  double saving = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i == s) continue;
    others.push_back(*ranks[i].step_p50_seconds);
    saving += std::max(0.0, *ranks[s].step_p50_seconds - *ranks[i].step_p50_seconds) *
              double(ranks[i].steps);
  }
  const double peers = median(std::move(others));
  if (peers <= 0 || *ranks[s].step_p50_seconds <= t.min_step_ratio * peers) return std::nullopt;
  return finding(ranks, s, per, saving);
}

} // namespace

std::optional<StragglerFinding> findStraggler(const std::vector<RankSummary>& ranks,
                                              const Thresholds::Straggler& thresholds) {
  if (ranks.size() < 2) return std::nullopt;
  PerStep per;
  bool waits = false;
  for (const auto& r : ranks) {
    per.by_step = per.by_step && r.steps > 0;
    waits = waits || r.collective_wait_seconds > 0;
  }
  return waits ? byWait(ranks, per, thresholds) : byStepTime(ranks, per, thresholds);
}

} // namespace gpuwise::advisor
