#include "advisor/rules/share_gpu_rule.h"

#include "advisor/report/format.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuwise::advisor {

std::optional<Recommendation> ShareGpuRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.share_gpu;
  auto busy = busyShare(a);
  if (!busy || *busy <= 0 || *busy >= t.max_busy || a.timeline.idle.gaps == 0) return std::nullopt;
  model::TimeNs mean_gap =
      (a.timeline.span_ns - a.timeline.busy_ns) / static_cast<model::TimeNs>(a.timeline.idle.gaps);
  if (mean_gap < t.min_mean_idle_gap_ns) return std::nullopt;
  auto replicas = static_cast<uint32_t>(std::floor(t.target_busy / *busy));
  const DeviceMemory* dm = nullptr;
  for (const auto& d : a.memory.devices)
    if (d.memory_total_bytes > 0 && (!dm || d.peak_bytes > dm->peak_bytes)) dm = &d;
  if (dm && dm->peak_bytes > 0)
    replicas =
        std::min(replicas, static_cast<uint32_t>(std::floor(0.9 * double(dm->memory_total_bytes) /
                                                            double(dm->peak_bytes))));
  replicas = std::min(replicas, t.max_replicas);
  if (replicas < 2) return std::nullopt;
  double saving = 1.0 - 1.0 / double(replicas);

  Recommendation r;
  r.id = std::string(id());
  r.expected_saving_ratio = saving;
  {
    double fill = a.kernels.occupancy.smFill().value_or(1.0);
    r.explains = {"gpu.unused", toSeconds(a.timeline.span_ns) * (1.0 - *busy * fill),
                  toSeconds(a.timeline.span_ns)};
  }
  r.confidence = Confidence::Medium;
  r.title = "Share the GPU: the job kept it busy " + formatPercent(*busy) +
            " of the time, in bursts between idle gaps of " +
            formatSignificant(toSeconds(mean_gap) * 1e3) + " ms; " + std::to_string(replicas) +
            " such jobs fit on one GPU";
  const bool rocm = platformOf(a) == Platform::Rocm;
  if (rocm) {
    // The AMD device plugin hands out whole GPUs (amd.com/gpu): share by running the replicas in
    // one pod on one device, or split the device into compute partitions.
    r.action = "Run " + std::to_string(replicas) +
               " replicas as processes on the same AMD GPU (ROCm lets several processes share a "
               "device; the AMD device plugin allocates amd.com/gpu whole, so start them in one "
               "pod), or split the GPU into compute partitions with amd-smi (MI300X: CPX mode) "
               "and schedule one replica per partition.\n"
               "Sharing gives no memory isolation: each replica must stay within its share.";
  } else {
    r.action =
        "Time-slice the GPU among " + std::to_string(replicas) +
        " replicas with the NVIDIA device plugin (or run them under MPS):\n"
        "sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: " +
        std::to_string(replicas) +
        "\nTime-slicing gives no memory isolation: each replica must stay within its share.";
  }
  auto& ev = r.evidence;
  ev["gpu_busy_share"] = *busy;
  ev["mean_idle_gap_ms"] = toSeconds(mean_gap) * 1e3;
  ev["idle_gaps"] = a.timeline.idle.gaps;
  ev["replicas"] = replicas;
  if (dm) ev["peak_memory_gb"] = dm->peak_bytes / 1e9;
  ev["target_busy"] = t.target_busy;
  ev["expected_saving_ratio"] = saving;
  ev["max_busy_threshold"] = t.max_busy;

  r.parameters["replicas"] = replicas;
  r.parameters["sharing"] = rocm ? "processes_or_partitions" : "timeSlicing";
  r.parameters["platform"] = rocm ? "rocm" : "cuda";
  return r;
}

} // namespace gpuwise::advisor
