#include "advisor/rules/reduce_host_syncs_rule.h"

#include "advisor/report/format.h"

#include <algorithm>
#include <string>

namespace gpuwise::advisor {

std::optional<Recommendation> ReduceHostSyncsRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& tl = a.timeline;
  if (!tl.known() || tl.span_ns <= 0 || a.syncs.calls == 0) return std::nullopt;
  model::TimeNs span = tl.span_ns, busy = tl.busy_ns;
  model::TimeNs host_own = std::max<model::TimeNs>(0, span - a.syncs.blocked_ns);
  model::TimeNs without_syncs = std::max(busy, host_own);
  model::TimeNs sync_idle = tl.idle.at(IdleCause::Sync);
  // The overlap bound (span - max(B, H)) stays in evidence only: a loaded host's descheduling
  // inflates H, which would hide syncs that drain the GPU at every call.
  model::TimeNs overlap_bound = std::max<model::TimeNs>(0, span - without_syncs);
  model::TimeNs per_sync_cap =
      static_cast<model::TimeNs>(a.syncs.calls) * ctx.thresholds.host_syncs.max_cost_per_sync_ns;
  // The host sat in syncs for blocked_ns while the GPU was busy for at most busy_ns of it: the
  // rest is GPU idle inside the syncs (the drained GPU waiting for a host that has not woken up),
  // which removing the syncs recovers in full. Only the idle after a sync returns is the host's own
  // work and capped per sync.
  model::TimeNs idle_inside_syncs = std::max<model::TimeNs>(0, a.syncs.blocked_ns - busy);
  model::TimeNs recoverable = std::min(sync_idle, idle_inside_syncs + per_sync_cap);
  double span_s = toSeconds(span);
  double ratio = toSeconds(recoverable) / span_s;
  if (ratio < ctx.thresholds.host_syncs.min_saving) return std::nullopt;

  // The kind of sync with the most blocked time, for the text.
  static constexpr const char* kKindNames[kSyncKinds] = {
      "unknown", "device", "stream", "event", "stream_wait_event", "synchronous_copy"};
  size_t top = 0;
  for (size_t k = 0; k < kSyncKinds; ++k)
    if (a.syncs.by_kind[k].blocked_ns > a.syncs.by_kind[top].blocked_ns) top = k;
  double per_step = a.steps.count() ? double(a.syncs.calls) / double(a.steps.count()) : 0.0;

  Recommendation r;
  r.id = std::string(id());
  r.expected_saving_ratio = std::min(1.0, ratio);
  r.explains = idleExplains(a, IdleCause::Sync);
  r.confidence = Confidence::Medium;
  r.title = "Reduce host syncs: the GPU drained and idled at " + std::to_string(a.syncs.calls) +
            " synchronising calls, " + formatPercent(ratio) + " of the GPU span (" +
            formatSignificant(toSeconds(recoverable)) + " s) that queued work would fill";
  const bool rocm = platformOf(a) == Platform::Rocm;
  r.action =
      std::string("Let the host run ahead of the GPU: remove torch.cuda.synchronize() / ") +
      (rocm ? "hipDeviceSynchronize()" : "cudaDeviceSynchronize()") +
      " and stream syncs from the step; replace loss.item(), .cpu(), "
      ".tolist(), print(tensor) and Python conditions on GPU values with tensors kept on the GPU "
      "(accumulate the loss on the device and read it every N steps); use "
      "torch.cuda.set_sync_debug_mode(\"warn\") to find implicit syncs; wait with events (" +
      (rocm ? "hipStreamWaitEvent" : "cudaStreamWaitEvent") + ") instead of blocking the host.";
  auto& ev = r.evidence;
  ev["recoverable_idle_share_of_span"] = ratio;
  ev["recoverable_idle_seconds"] = toSeconds(recoverable);
  ev["sync_idle_seconds"] = toSeconds(sync_idle);
  ev["host_blocked_seconds"] = toSeconds(a.syncs.blocked_ns);
  ev["idle_inside_syncs_lower_bound_seconds"] = toSeconds(idle_inside_syncs);
  ev["host_own_seconds"] = toSeconds(host_own);
  ev["overlap_bound_seconds"] = toSeconds(overlap_bound);
  ev["gpu_busy_seconds"] = toSeconds(busy);
  ev["gpu_span_seconds"] = span_s;
  ev["sync_calls"] = a.syncs.calls;
  ev["sync_calls_per_step"] = per_step;
  ev["max_cost_per_sync_seconds"] = toSeconds(ctx.thresholds.host_syncs.max_cost_per_sync_ns);
  ev["top_sync_kind"] = kKindNames[top];
  ev["expected_saving_ratio"] = r.expected_saving_ratio;
  ev["min_saving_threshold"] = ctx.thresholds.host_syncs.min_saving;

  r.parameters["sync_debug_mode"] = "warn";
  r.parameters["max_syncs_per_step"] = 1;
  return r;
}

} // namespace gpuwise::advisor
