#include "advisor/rules/use_pinned_memory_rule.h"

#include "advisor/report/format.h"
#include "advisor/rules/pinned_bandwidth.h"

#include <algorithm>
#include <string>

namespace gpuwise::advisor {
namespace {

using model::CopyDirection;
using model::MemoryKind;

// The pinned link of the job's slowest GPU (the conservative choice when models differ).
PinnedLink tableLink(const JobAnalysis& a) {
  PinnedLink best;
  bool any = false;
  for (const auto& g : a.collection.gpus) {
    auto link = pinnedLinkFor(g.info.name);
    if (!any || link.bytes_per_second < best.bytes_per_second ||
        (link.bytes_per_second == best.bytes_per_second && !link.known_model)) {
      best = link;
      any = true;
    }
  }
  return best;
}

struct DirectionEstimate {
  double pinned_seconds = 0;
  double pinned_bytes_per_second = 0;
  bool measured = false;
};

DirectionEstimate estimate(const JobAnalysis& a, CopyDirection d, const PinnedLink& table,
                           const Thresholds::PinnedMemory& t) {
  DirectionEstimate e;
  const auto& pageable = a.copies.at(d, MemoryKind::Pageable);
  const auto& pinned = a.copies.at(d, MemoryKind::Pinned);
  auto measured = pinned.gpuBandwidthBytesPerSecond();
  if (measured && pinned.gpu_timed_bytes >= t.min_measured_pinned_bytes &&
      pinned.gpu_timed_count >= t.min_measured_pinned_copies) {
    e.pinned_bytes_per_second = *measured;
    e.measured = true;
  } else {
    e.pinned_bytes_per_second = table.bytes_per_second;
  }
  e.pinned_seconds = static_cast<double>(pageable.bytes) / e.pinned_bytes_per_second;
  return e;
}

} // namespace

std::optional<Recommendation> UsePinnedMemoryRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.pinned_memory;
  auto ref = referenceTime(a);
  if (!ref.known()) return std::nullopt;

  auto pageable = a.copies.hostTransfers(MemoryKind::Pageable);
  if (pageable.bytes < t.min_bytes || pageable.time_ns <= 0) return std::nullopt;
  double ref_s = toSeconds(ref.ns);
  double pageable_s = toSeconds(pageable.time_ns);
  double share = pageable_s / ref_s;
  if (share < t.min_share) return std::nullopt;

  auto table = tableLink(a);
  double pinned_s = 0;
  bool all_measured = true;
  double h2d_bw = 0, d2h_bw = 0;
  for (auto d : {CopyDirection::HostToDevice, CopyDirection::DeviceToHost}) {
    if (a.copies.at(d, MemoryKind::Pageable).bytes == 0) continue;
    auto e = estimate(a, d, table, t);
    pinned_s += e.pinned_seconds;
    all_measured = all_measured && e.measured;
    (d == CopyDirection::HostToDevice ? h2d_bw : d2h_bw) = e.pinned_bytes_per_second;
  }
  double saving_s = pageable_s - pinned_s;
  if (saving_s <= 0) return std::nullopt; // pageable copies already run at pinned speed
  double saving_ratio = std::min(1.0, saving_s / ref_s);
  // One figure for the text: the pinned rate over all pageable bytes.
  double pinned_bw = static_cast<double>(pageable.bytes) / pinned_s;
  double pageable_bw = static_cast<double>(pageable.bytes) / pageable_s;
  bool gpu_timed = pageable.gpu_timed_count == pageable.count;

  Recommendation r;
  r.id = std::string(id());
  r.expected_saving_ratio = saving_ratio;
  r.explains = {"copies.pageable", pageable_s, ref_s};
  r.confidence = all_measured        ? Confidence::High
                 : table.known_model ? Confidence::Medium
                                     : Confidence::Low;
  if (!gpu_timed && r.confidence == Confidence::High) r.confidence = Confidence::Medium;

  const char* ref_words = ref.kind == std::string_view("gpu_span")    ? "the GPU span"
                          : ref.kind == std::string_view("step_time") ? "step time"
                                                                      : "the wall time";
  r.title = "Pin host memory: pageable copies took " + formatPercent(share) + " of " + ref_words +
            " (" + formatSignificant(pageable_s) + " s)";
  r.action = "Pageable H2D/D2H copies moved " + formatSignificant(pageable.bytes / 1e9) +
             " GB in " + formatSignificant(pageable_s) + " s (" +
             formatSignificant(pageable_bw / 1e9) + " GB/s); from pinned memory the same bytes " +
             "take about " + formatSignificant(pinned_s) + " s at " +
             formatSignificant(pinned_bw / 1e9) + " GB/s, saving about " +
             formatSignificant(saving_s) + " s (" + formatPercent(saving_ratio) + ").\n";
  const std::string pytorch =
      "PyTorch: DataLoader(..., pin_memory=True) and tensor.to(device, non_blocking=True).";
  const std::string native =
      platformOf(a) == Platform::Rocm
          ? "HIP: allocate host buffers with hipHostMalloc (or page-lock existing ones with "
            "hipHostRegister) and copy with hipMemcpyAsync on a non-default stream."
          : "C++: allocate host buffers with cudaMallocHost (or page-lock existing ones with "
            "cudaHostRegister) and copy with cudaMemcpyAsync on a non-default stream.";
  // An Nsight Systems export is usually a native program (an MPI code, a CUDA sample): its fix
  // comes first; a PyTorch trace or a live run leads with the DataLoader.
  const bool native_first = a.source.kind == model::SourceKind::Nsys;
  r.action += native_first ? native + "\n" + pytorch : pytorch + "\n" + native;

  auto& ev = r.evidence;
  ev["pageable_share"] = share;
  ev["pageable_seconds"] = pageable_s;
  ev["reference_seconds"] = ref_s;
  ev["reference"] = ref.kind;
  ev["pageable_bytes"] = pageable.bytes;
  ev["pageable_gb"] = pageable.bytes / 1e9;
  ev["pageable_copies"] = pageable.count;
  ev["h2d_pageable_bytes"] = a.copies.at(CopyDirection::HostToDevice, MemoryKind::Pageable).bytes;
  ev["d2h_pageable_bytes"] = a.copies.at(CopyDirection::DeviceToHost, MemoryKind::Pageable).bytes;
  ev["pageable_time_source"] = gpu_timed ? "gpu" : "host_call";
  ev["pageable_bandwidth_gbps"] = pageable_bw / 1e9;
  ev["pinned_bandwidth_gbps"] = pinned_bw / 1e9;
  if (h2d_bw > 0) ev["pinned_h2d_bandwidth_gbps"] = h2d_bw / 1e9;
  if (d2h_bw > 0) ev["pinned_d2h_bandwidth_gbps"] = d2h_bw / 1e9;
  ev["pinned_bandwidth_source"] =
      all_measured
          ? std::string("measured")
          : std::string("table: ") + table.link + (table.known_model ? "" : " (GPU model unknown)");
  ev["pinned_seconds_estimate"] = pinned_s;
  ev["saving_seconds"] = saving_s;
  ev["expected_saving_ratio"] = saving_ratio;
  ev["min_share_threshold"] = t.min_share;

  r.parameters["pin_memory"] = true;
  r.parameters["non_blocking"] = true;
  r.parameters["host_allocator"] = "cudaMallocHost";
  return r;
}

} // namespace gpuwise::advisor
