#include "advisor/rules/prefetch_input_rule.h"

#include "advisor/report/format.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuwise::advisor {

namespace {

// The rank whose loader alone stalls: over the threshold while the median of the other ranks is
// under it (one slow loader among many ranks dilutes the job-wide ratio); nullptr otherwise, and
// for single-process jobs.
const RankSummary* slowLoaderRank(const DistributedResult& d, double min_ratio) {
  if (d.ranks.size() < 2) return nullptr;
  const RankSummary* worst = nullptr;
  for (const auto& r : d.ranks)
    if (r.input_stall_ratio && r.step_mean_seconds && r.steps > 0 &&
        (!worst || *r.input_stall_ratio > *worst->input_stall_ratio))
      worst = &r;
  if (!worst || *worst->input_stall_ratio < min_ratio) return nullptr;
  std::vector<double> others;
  for (const auto& r : d.ranks)
    if (&r != worst) others.push_back(r.input_stall_ratio.value_or(0));
  std::sort(others.begin(), others.end());
  return others[others.size() / 2] < min_ratio ? worst : nullptr;
}

// The steps of one process, to measure its stall's recurrence alone.
StepResult stepsOf(const StepResult& steps, const RankSummary& r) {
  StepResult one;
  for (const auto& p : steps.processes)
    if (p.pid == r.pid && p.rank == r.rank) one.processes.push_back(p);
  return one;
}

} // namespace

std::optional<Recommendation> PrefetchInputRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.prefetch_input;
  const RankSummary* rank = slowLoaderRank(a.distributed, t.min_ratio);
  auto ratio = rank ? rank->input_stall_ratio : a.inputStallRatio();
  if (!ratio || *ratio < t.min_ratio || *ratio >= 1.0) return std::nullopt;
  double r = *ratio;
  // One rank's loader: its own stall over its own steady step time.
  double reference_s =
      rank ? *rank->step_mean_seconds * double(rank->steps) : toSeconds(a.inputStallReferenceNs());
  double stall_s = rank ? r * reference_s : toSeconds(a.inputStallNs());
  bool with_steps = a.steps.count() > 0;
  bool measured = a.timeline.idle.input_data_loader_ns > 0;
  bool training_loop = a.steps.source() == StepSource::ProfilerStep ||
                       a.steps.source() == StepSource::Nvtx ||
                       a.steps.count() >= t.min_inferred_steps;
  if (!measured && !training_loop) return std::nullopt;
  // With steps: the stall must recur, not sit in a few steps (thresholds.h); one that does not
  // is reported as a note.
  const auto stalled_share =
      rank ? stepsOf(a.steps, *rank).inputStalledStepShare(t.stalled_step_min_ratio)
           : a.steps.inputStalledStepShare(t.stalled_step_min_ratio);
  const bool transient = with_steps && stalled_share && *stalled_share < t.min_stalled_step_share;

  // r/(1-r): how many steps' worth of GPU time one worker needs per batch; +1 for variation.
  double workers_needed = r / (1.0 - r);
  auto workers = static_cast<uint32_t>(std::ceil(workers_needed - 1e-9)) + 1;
  workers = std::clamp(workers, t.min_workers, t.max_workers);
  const int prefetch_factor = 2;

  Recommendation rec;
  rec.id = std::string(id());
  rec.expected_saving_ratio = std::min(1.0, r);
  rec.explains = {"idle.input", stall_s, reference_s};
  rec.confidence = measured ? Confidence::High : Confidence::Medium;
  std::string where = with_steps ? "step time" : "the GPU span";
  rec.title = "Prefetch input: the GPU waited for the next batch " + formatPercent(r) + " of " +
              where + " (" + formatSignificant(stall_s) + " s)";
  if (rank)
    rec.title += " on rank " + std::to_string(rank->rank) + ", whose loader the others wait for";
  rec.action =
      "Load and transform batches in background workers, ahead of the GPU, and copy them on a "
      "side stream so the copy overlaps compute.\n"
      "PyTorch: DataLoader(dataset, batch_size=..., num_workers=" +
      std::to_string(workers) + ", prefetch_factor=" + std::to_string(prefetch_factor) +
      ", persistent_workers=True, pin_memory=True); move batches with "
      "batch.to(device, non_blocking=True) inside torch.cuda.stream(copy_stream), or use a "
      "prefetcher that stays one batch ahead. Raise num_workers while the stall remains and the "
      "host has idle cores.";

  if (transient) {
    rec.note_only = true;
    rec.confidence = Confidence::Low;
    rec.title = "Input stalls held " + formatPercent(r) + " of step time but came in " +
                formatPercent(*stalled_share) +
                " of the steps: transient (the host busy elsewhere, a slow read), not a data "
                "loader to tune";
  }

  auto& ev = rec.evidence;
  ev["input_stall_ratio"] = r;
  ev["input_stall_seconds"] = stall_s;
  ev["reference_seconds"] = reference_s;
  ev["reference"] = with_steps ? "step_time" : "gpu_span";
  ev["steps"] = rank ? rank->steps : a.steps.steadyCount(); // the steady steps measured
  ev["warmup_steps"] = a.steps.warmupCount();
  if (stalled_share) ev["stalled_step_share"] = *stalled_share;
  if (transient) {
    ev["min_stalled_step_share"] = t.min_stalled_step_share;
    ev["note"] = "stall in too few steps to be the loader";
  }
  ev["input_stall_source"] = measured ? "data_loader_ranges" : "inferred_from_host_state";
  ev["input_data_loader_seconds"] = toSeconds(a.timeline.idle.input_data_loader_ns);
  ev["workers_needed"] = workers_needed;
  ev["suggested_num_workers"] = workers;
  ev["prefetch_factor"] = prefetch_factor;
  ev["expected_saving_ratio"] = rec.expected_saving_ratio;
  ev["min_ratio_threshold"] = t.min_ratio;

  if (rank) {
    ev["rank"] = rank->rank;
    rec.parameters["rank"] = rank->rank;
  }
  rec.parameters["num_workers"] = workers;
  rec.parameters["prefetch_factor"] = prefetch_factor;
  rec.parameters["persistent_workers"] = true;
  rec.parameters["pin_memory"] = true;
  rec.parameters["copy_on_side_stream"] = true;
  return rec;
}

} // namespace gpuwise::advisor
