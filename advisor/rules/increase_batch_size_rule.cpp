#include "advisor/rules/increase_batch_size_rule.h"

#include "advisor/analysis/format.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuwise::advisor {
namespace {

// The lowest level a series reaches after its first tenth (the model and optimizer state that
// persists across steps); nullopt without a usable series.
std::optional<uint64_t> persistentBytes(const MemorySeries& s) {
  const auto& levels = !s.allocated.empty() ? s.allocated : s.reserved;
  if (levels.size() < 10) return std::nullopt;
  std::optional<int64_t> low;
  for (size_t i = levels.size() / 10; i < levels.size(); ++i)
    if (levels[i] >= 0 && (!low || levels[i] < *low)) low = levels[i];
  if (!low) return std::nullopt;
  return static_cast<uint64_t>(*low);
}

} // namespace

std::optional<Recommendation> IncreaseBatchSizeRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.batch_size;
  auto fill = a.kernels.occupancy.smFill();
  auto busy = busyShare(a);
  if (!fill || !busy || *fill >= t.max_sm_fill) return std::nullopt;
  // The device that had to hold the most, and its capacity.
  const DeviceMemory* dm = nullptr;
  for (const auto& d : a.memory.devices)
    if (d.memory_total_bytes > 0 && (!dm || d.peak_bytes > dm->peak_bytes)) dm = &d;
  if (!dm || dm->peak_bytes == 0) return std::nullopt;
  uint64_t persistent = 0;
  bool modeled = false;
  for (const auto& s : a.utilization.memory)
    if (s.pid == dm->pid && s.device == dm->device)
      if (auto p = persistentBytes(s); p && *p < dm->peak_bytes) {
        persistent = *p;
        modeled = true;
      }
  double capacity = double(dm->memory_total_bytes);
  double usable = capacity * (1.0 - t.memory_headroom);
  double growing = double(dm->peak_bytes - persistent);
  double m = (usable - double(persistent)) / growing;
  m = std::min(t.max_multiplier, std::floor(m * 2.0) / 2.0);
  if (m < t.min_multiplier) return std::nullopt;

  double span_s = toSeconds(a.timeline.span_ns);
  double busy_s = toSeconds(a.timeline.busy_ns);
  // Kernel time per sample: B x max(1, m f) / m instead of B (see the header).
  double saving = std::clamp(busy_s / span_s * (1.0 - std::max(1.0, m * *fill) / m), 0.0, 1.0);
  double predicted_peak = double(persistent) + m * growing;

  Recommendation r;
  r.id = std::string(id());
  r.expected_saving_ratio = saving;
  r.confidence = Confidence::Low;
  r.title = "Increase the batch size up to " + formatSignificant(m) + "x: kernels filled " +
            formatPercent(*fill) + " of the SMs and the peak used " +
            formatPercent(double(dm->peak_bytes) / capacity) + " of device memory";
  r.action =
      "Multiply the per-GPU batch size by up to " + formatSignificant(m) +
      " (predicted peak " + formatSignificant(predicted_peak / 1e9) + " GB of " +
      formatSignificant(capacity / 1e9) + " GB, keeping " + formatPercent(t.memory_headroom) +
      " free): DataLoader(dataset, batch_size=batch_size * " + formatSignificant(m) +
      ", ...). Scale the learning rate with it (linear scaling: lr * " + formatSignificant(m) +
      ", with a warm-up), or keep the global batch and the learning rate and use fewer GPUs or "
      "gradient accumulation steps.";
  auto& ev = r.evidence;
  ev["sm_fill"] = *fill;
  ev["gpu_busy_share"] = *busy;
  ev["peak_memory_bytes"] = dm->peak_bytes;
  ev["peak_memory_ratio"] = double(dm->peak_bytes) / capacity;
  ev["device_memory_gb"] = capacity / 1e9;
  ev["persistent_memory_bytes"] = persistent;
  ev["growing_memory_bytes"] = growing;
  ev["memory_model"] = modeled ? "persistent_vs_growing" : "all_of_peak_grows";
  ev["batch_size_multiplier"] = m;
  ev["predicted_peak_gb"] = predicted_peak / 1e9;
  ev["memory_headroom"] = t.memory_headroom;
  ev["expected_saving_ratio"] = saving;
  ev["max_sm_fill_threshold"] = t.max_sm_fill;

  r.parameters["batch_size_multiplier"] = m;
  r.parameters["learning_rate_multiplier"] = m;
  r.parameters["memory_headroom"] = t.memory_headroom;
  return r;
}

} // namespace gpuwise::advisor
