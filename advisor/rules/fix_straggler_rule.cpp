#include "advisor/rules/fix_straggler_rule.h"

#include "advisor/report/format.h"

#include <algorithm>
#include <string>

namespace gpuwise::advisor {
namespace {

std::string actionFor(StragglerCause cause, const std::string& rank) {
  switch (cause) {
  case StragglerCause::Input:
    return "Rank " + rank +
           "'s data loader does not keep up with its peers': give that rank's DataLoader more "
           "workers (num_workers, prefetch_factor, persistent_workers=True, pin_memory=True), "
           "check "
           "its storage or network reads and the free cores of its host, and shard the data so "
           "every rank reads alike.";
  case StragglerCause::Host:
    return "Rank " + rank +
           "'s host launches its work later than its peers': check that rank's CPU affinity and "
           "free cores (one NUMA node per rank, OMP_NUM_THREADS), other processes on its host, and "
           "host work only it does (logging, metrics, checkpointing on rank 0: move it off the "
           "step "
           "or to a background thread); CUDA graphs cut what is left of the launch cost.";
  case StragglerCause::Compute: break;
  }
  return "Rank " + rank +
         "'s kernels take longer than its peers' for the same work: check its GPU (nvidia-smi -q "
         "-d "
         "PERFORMANCE,CLOCK,TEMPERATURE for throttling; ECC errors; the PCIe link width), move the "
         "rank to another GPU or node, or even out the work per rank (uneven shards or sequence "
         "lengths: bucket batches by length).";
}

double medianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// The cause's figure per step (per rank without steps), for the straggler and its peers' median.
std::pair<double, double> causeFigures(const DistributedResult& d, StragglerCause cause) {
  auto figure = [&](const RankSummary& r) {
    const double per = r.steps > 0 ? double(r.steps) : 1.0;
    switch (cause) {
    case StragglerCause::Input:
      return r.input_stall_ratio.value_or(0) * r.step_mean_seconds.value_or(0);
    case StragglerCause::Host: return r.host_seconds / per;
    case StragglerCause::Compute: break;
    }
    return r.compute_seconds / per;
  };
  double mine = 0;
  std::vector<double> peers;
  for (const auto& r : d.ranks) {
    if (r.rank == d.straggler->rank)
      mine = figure(r);
    else
      peers.push_back(figure(r));
  }
  return {mine, medianOf(std::move(peers))};
}

} // namespace

double rankReferenceSeconds(const JobAnalysis& a, const char** kind) {
  double steps = 0;
  bool all_steps = !a.distributed.ranks.empty();
  for (const auto& r : a.distributed.ranks) {
    all_steps = all_steps && r.steps > 0 && r.step_mean_seconds;
    if (r.steps > 0 && r.step_mean_seconds) steps += *r.step_mean_seconds * double(r.steps);
  }
  if (all_steps && steps > 0) {
    *kind = "step_time";
    return steps;
  }
  *kind = "gpu_span";
  return toSeconds(a.timeline.span_ns);
}

std::optional<Recommendation> FixStragglerRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& s = a.distributed.straggler;
  if (!s) return std::nullopt;
  const char* kind = "gpu_span";
  const double reference = rankReferenceSeconds(a, &kind);
  if (reference <= 0) return std::nullopt;
  const double saving = std::min(1.0, s->others_wait_seconds / reference);
  const std::string rank = std::to_string(s->rank);
  const std::string cause = toString(s->cause);
  const auto [mine, peers] = causeFigures(a.distributed, s->cause);

  Recommendation rec;
  rec.id = std::string(id());
  rec.expected_saving_ratio = saving;
  rec.explains = {"communication.wait", s->others_wait_seconds, reference};
  rec.confidence = Confidence::Medium;
  rec.title = "Rank " + rank + " is the straggler: the other ranks waited " +
              formatSignificant(s->others_wait_seconds) + " s for it (" + formatPercent(saving) +
              " of " + (std::string_view(kind) == "step_time" ? "step time" : "the GPU span") +
              "); it spends longer on " + cause + " than its peers";
  rec.action = actionFor(s->cause, rank);

  auto& ev = rec.evidence;
  ev["rank"] = s->rank;
  ev["cause"] = cause;
  ev["others_wait_seconds"] = s->others_wait_seconds;
  ev["expected_saving_ratio"] = saving;
  ev["reference_seconds"] = reference;
  ev["reference"] = kind;
  ev["ranks"] = a.distributed.ranks.size();
  ev["straggler_step_p50_seconds"] = s->step_p50_seconds;
  ev["peers_step_p50_seconds"] = s->peers_step_p50_seconds;
  ev["straggler_" + cause + "_seconds_per_step"] = mine;
  ev["peers_" + cause + "_seconds_per_step"] = peers;
  ev["min_others_wait_share_threshold"] = ctx.thresholds.straggler.min_others_wait_share;

  rec.parameters["rank"] = s->rank;
  rec.parameters["cause"] = cause;
  rec.parameters["others_wait_seconds"] = s->others_wait_seconds;
  return rec;
}

} // namespace gpuwise::advisor
