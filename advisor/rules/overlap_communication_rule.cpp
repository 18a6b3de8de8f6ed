#include "advisor/rules/overlap_communication_rule.h"

#include "advisor/analysis/collective_alignment.h"
#include "advisor/report/format.h"
#include "advisor/rules/gpu_tables.h"

#include <algorithm>
#include <map>
#include <string>

namespace gpuwise::advisor {
namespace {

using model::CollectiveKind;

// Collective kernel seconds by kind: the communication analyzer's, else from the kernel names.
std::map<CollectiveKind, double> secondsByKind(const JobAnalysis& a) {
  std::map<CollectiveKind, double> out;
  for (const auto& k : a.communication.by_kind)
    out[k.kind] += toSeconds(k.kernel_ns);
  if (!out.empty()) return out;
  for (const auto& k : a.kernels.by_name)
    if (k.flags & model::kKernelCommunication)
      out[collectiveKindOfKernelName(k.name)] += toSeconds(k.total_ns);
  return out;
}

// The bus bandwidth of the dominant sized kind, bytes per second; nullopt unknown.
std::optional<double> busBandwidth(const JobAnalysis& a) {
  const CollectiveKindStats* best = nullptr;
  for (const auto& k : a.communication.by_kind)
    if (k.bus_bytes_per_second && (!best || k.kernel_ns > best->kernel_ns)) best = &k;
  if (!best) return std::nullopt;
  return best->bus_bytes_per_second;
}

struct Variant {
  const char* name;
  std::string action;
};

Variant variantFor(const std::map<CollectiveKind, double>& kinds, double overlap,
                   const Thresholds::OverlapCommunication& t) {
  double total = 0;
  for (const auto& [kind, s] : kinds)
    total += s;
  auto share = [&](CollectiveKind k) {
    auto it = kinds.find(k);
    return total > 0 && it != kinds.end() ? it->second / total : 0.0;
  };
  if (overlap >= t.good_overlap_ratio)
    return {"fewer_syncs",
            "Communication is already overlapped; synchronise less often: accumulate gradients "
            "over several micro-batches and all-reduce once (with model.no_sync(): for the first "
            "micro-batches of each step, loss.backward() inside `with model.no_sync():`, the last "
            "one outside it), or raise the per-rank batch size so each synchronisation carries "
            "more work."};
  if (share(CollectiveKind::AllGather) + share(CollectiveKind::ReduceScatter) >= 0.5)
    return {"fsdp",
            "FSDP: prefetch the next all-gather while the current layer computes: "
            "FullyShardedDataParallel(model, forward_prefetch=True, "
            "backward_prefetch=BackwardPrefetch.BACKWARD_PRE, limit_all_gathers=True); with "
            "FSDP2 (fully_shard), set module.set_modules_to_forward_prefetch / "
            "set_modules_to_backward_prefetch."};
  return {"ddp",
          "DDP: let the all-reduce of each gradient bucket start while the backward pass goes on: "
          "DistributedDataParallel(model, bucket_cap_mb=25, gradient_as_bucket_view=True, "
          "static_graph=True) (smaller buckets start sooner; tune bucket_cap_mb between 10 and "
          "100), and avoid anything that waits for every gradient before the optimizer step (a "
          "manual all_reduce after backward(), clip_grad_norm_ outside the overlap)."};
}

} // namespace

std::optional<Recommendation> OverlapCommunicationRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.overlap_communication;
  const bool analyzed = a.communication.any();
  const double communication =
      toSeconds(analyzed ? a.communication.busy_ns : a.timeline.communication_busy_ns);
  const double exposed =
      toSeconds(analyzed ? a.communication.exposed_ns : a.timeline.communication_exposed_ns);
  const double span = toSeconds(a.timeline.span_ns);
  if (communication <= 0 || span <= 0) return std::nullopt;
  const double wait = std::min(a.distributed.collective_wait_all_seconds, exposed);
  const double transfer_exposed = exposed - wait;
  const double transfer = std::max(0.0, communication - wait);
  const double overlap = (communication - exposed) / communication;
  const double exposed_share = transfer_exposed / span;
  const double communication_share = transfer / span;
  const bool exposed_enough = exposed_share >= t.min_exposed_share;
  const bool dominates =
      overlap >= t.good_overlap_ratio && communication_share >= t.min_communication_share;
  if (!exposed_enough && !dominates) return std::nullopt;

  const auto variant = variantFor(secondsByKind(a), overlap, t);
  const bool fewer = std::string_view(variant.name) == "fewer_syncs";
  Recommendation rec;
  rec.id = std::string(id());
  rec.expected_saving_ratio = std::min(1.0, exposed_share * (fewer ? 0.75 : 1.0));
  rec.explains = {"communication.exposed", transfer_exposed, span};
  rec.confidence = Confidence::Medium;
  rec.title = "Overlap communication: " + formatSignificant(transfer_exposed) +
              " s of collective communication ran with no compute beside it (" +
              formatPercent(exposed_share) + " of the GPU span; overlap ratio " +
              formatSignificant(overlap) + ")";
  rec.action = variant.action;

  auto& ev = rec.evidence;
  ev["communication_seconds"] = communication;
  ev["communication_exposed_seconds"] = exposed;
  ev["collective_wait_seconds"] = wait;
  ev["exposed_transfer_seconds"] = transfer_exposed;
  ev["exposed_share_of_span"] = exposed_share;
  ev["communication_share_of_span"] = communication_share;
  ev["overlap_ratio"] = overlap;
  ev["reference_seconds"] = span;
  ev["reference"] = "gpu_span";
  ev["variant"] = variant.name;
  ev["ranks"] = a.distributed.ranks.size();
  ev["expected_saving_ratio"] = rec.expected_saving_ratio;
  ev["min_exposed_share_threshold"] = t.min_exposed_share;
  ev["good_overlap_ratio_threshold"] = t.good_overlap_ratio;
  if (fewer) ev["accumulation_steps"] = 4;
  if (fewer) ev["sync_share_kept"] = 0.25;
  if (!fewer) ev["bucket_cap_mb"] = 25;
  if (!fewer) ev["bucket_cap_mb_low"] = 10;
  if (!fewer) ev["bucket_cap_mb_high"] = 100;
  if (auto bus = busBandwidth(a)) {
    ev["bus_bandwidth_gb_per_s"] = *bus / 1e9;
    if (const auto* gpu = primaryGpu(a)) {
      const auto link = linkBandwidthFor(gpu->name);
      const double nominal = link.nvlink_gb_per_s > 0 ? link.nvlink_gb_per_s : link.pcie_gb_per_s;
      if (nominal > 0) {
        ev["nominal_link"] = link.nvlink_gb_per_s > 0 ? "nvlink" : "pcie";
        ev["nominal_link_gb_per_s"] = nominal;
        ev["bus_bandwidth_share_of_nominal"] = *bus / 1e9 / nominal;
      }
    }
  }

  rec.parameters["variant"] = variant.name;
  if (std::string_view(variant.name) == "ddp") {
    rec.parameters["bucket_cap_mb"] = 25;
    rec.parameters["gradient_as_bucket_view"] = true;
    rec.parameters["static_graph"] = true;
  } else if (std::string_view(variant.name) == "fsdp") {
    rec.parameters["forward_prefetch"] = true;
    rec.parameters["backward_prefetch"] = "BACKWARD_PRE";
    rec.parameters["limit_all_gathers"] = true;
  } else {
    rec.parameters["gradient_accumulation_steps"] = 4;
    rec.parameters["no_sync"] = true;
  }
  return rec;
}

} // namespace gpuwise::advisor
