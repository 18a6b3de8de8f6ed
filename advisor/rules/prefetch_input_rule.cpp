#include "advisor/rules/prefetch_input_rule.h"

#include "advisor/report/format.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuwise::advisor {

std::optional<Recommendation> PrefetchInputRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.prefetch_input;
  auto ratio = a.inputStallRatio();
  if (!ratio || *ratio < t.min_ratio || *ratio >= 1.0) return std::nullopt;
  double r = *ratio;
  double stall_s = toSeconds(a.inputStallNs());
  double reference_s = toSeconds(a.inputStallReferenceNs());
  bool with_steps = a.steps.count() > 0;
  bool measured = a.timeline.idle.input_data_loader_ns > 0;
  bool training_loop = a.steps.source() == StepSource::ProfilerStep ||
                       a.steps.source() == StepSource::Nvtx ||
                       a.steps.count() >= t.min_inferred_steps;
  if (!measured && !training_loop) return std::nullopt;
  // With steps: the stall must recur, not sit in a few steps (thresholds.h); one that does not
  // is reported as a note.
  const auto stalled_share = a.steps.inputStalledStepShare(t.stalled_step_min_ratio);
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
  ev["steps"] = a.steps.steadyCount(); // the steady steps the ratio is measured on
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

  rec.parameters["num_workers"] = workers;
  rec.parameters["prefetch_factor"] = prefetch_factor;
  rec.parameters["persistent_workers"] = true;
  rec.parameters["pin_memory"] = true;
  rec.parameters["copy_on_side_stream"] = true;
  return rec;
}

} // namespace gpuwise::advisor
