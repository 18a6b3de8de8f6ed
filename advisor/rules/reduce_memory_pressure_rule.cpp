#include "advisor/rules/reduce_memory_pressure_rule.h"

#include "advisor/report/format.h"

#include <algorithm>
#include <string>

namespace gpuwise::advisor {

std::optional<Recommendation> ReduceMemoryPressureRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.memory_pressure;
  const DeviceMemory* worst = nullptr;
  double worst_ratio = 0;
  for (const auto& d : a.memory.devices) {
    if (d.memory_total_bytes == 0) continue;
    double ratio = double(d.peak_bytes) / double(d.memory_total_bytes);
    if (!worst || ratio > worst_ratio) worst = &d, worst_ratio = ratio;
  }
  if (!worst) return std::nullopt;
  // Fragmentation from the series of that device: reserved the allocator holds vs allocated.
  double fragmentation = 0, reserved_peak = 0, allocated_peak = 0;
  for (const auto& s : a.utilization.memory) {
    if (s.pid != worst->pid || s.rank != worst->rank || s.device != worst->device ||
        s.reserved.empty())
      continue;
    for (size_t i = 0; i < s.reserved.size() && i < s.allocated.size(); ++i) {
      if (s.reserved[i] <= 0 || s.allocated[i] < 0) continue;
      if (double(s.reserved[i]) / double(worst->memory_total_bytes) <
          t.min_fragmented_reserved_ratio)
        continue;
      double f = 1.0 - double(s.allocated[i]) / double(s.reserved[i]);
      if (f > fragmentation)
        fragmentation = f, reserved_peak = double(s.reserved[i]),
        allocated_peak = double(s.allocated[i]);
    }
  }
  bool near_full = worst_ratio >= t.min_peak_ratio;
  bool fragmented = fragmentation >= t.min_fragmentation;
  if (!near_full && !fragmented) return std::nullopt;

  Recommendation r;
  r.id = std::string(id());
  r.expected_saving_ratio = 0.0; // a risk (OOM, allocator retries), not measurable time
  r.explains = {"risk.memory", 0.0, 0.0};
  r.confidence = Confidence::High;
  r.title = near_full ? "Reduce memory pressure: the peak reached " + formatPercent(worst_ratio) +
                            " of device memory (" + formatSignificant(worst->peak_bytes / 1e9) +
                            " GB of " + formatSignificant(worst->memory_total_bytes / 1e9) + " GB)"
                      : "Reduce memory fragmentation: the allocator held " +
                            formatPercent(fragmentation) +
                            " of its reserved memory unused near the device limit";
  // ROCm builds of PyTorch read the allocator's settings from PYTORCH_HIP_ALLOC_CONF.
  const char* alloc_conf =
      platformOf(a) == Platform::Rocm ? "PYTORCH_HIP_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF";
  r.action =
      "Lower the activation memory or let the allocator reuse it:\n"
      "- activation checkpointing: torch.utils.checkpoint.checkpoint(block, x, "
      "use_reentrant=False) "
      "on the largest blocks;\n"
      "- smaller micro-batches with gradient accumulation (same global batch): divide batch_size "
      "and call optimizer.step() every k micro-batches;\n"
      "- " +
      std::string(alloc_conf) +
      "=expandable_segments:True against fragmentation;\n"
      "- mixed precision halves activation memory.";
  auto& ev = r.evidence;
  ev["peak_memory_ratio"] = worst_ratio;
  ev["peak_memory_gb"] = worst->peak_bytes / 1e9;
  ev["device_memory_gb"] = worst->memory_total_bytes / 1e9;
  ev["memory_source"] = toString(worst->source);
  ev["fragmentation"] = fragmentation;
  if (fragmented) {
    ev["fragmented_reserved_gb"] = reserved_peak / 1e9;
    ev["fragmented_allocated_gb"] = allocated_peak / 1e9;
  }
  ev["min_peak_ratio_threshold"] = t.min_peak_ratio;
  ev["expected_saving_ratio"] = 0.0;

  r.parameters["activation_checkpointing"] = true;
  r.parameters["gradient_accumulation"] = true;
  r.parameters[alloc_conf] = "expandable_segments:True";
  return r;
}

} // namespace gpuwise::advisor
