#include "advisor/rules/right_size_mig_rule.h"

#include "advisor/report/format.h"
#include "advisor/rules/gpu_tables.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace gpuwise::advisor {
namespace {

// The profile named `name` ("1g.18gb"; NVML's "+me"/"-me" variants match their base profile).
const MigProfile* findProfile(const MigGpu& gpu, std::string_view name) {
  if (!gpu.known()) return nullptr;
  std::string_view base = name.substr(0, name.find_first_of("+-"));
  for (const auto& p : gpu.profiles)
    if (base == p.name) return &p;
  return nullptr;
}

} // namespace

std::optional<Recommendation> RightSizeMigRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.mig;
  const auto* dev = primaryGpu(a);
  auto busy = busyShare(a);
  auto peak = a.memory.peakBytes();
  if (!dev || !busy || !peak) return std::nullopt;
  // On a MIG slice (NVML said which), everything measured is relative to the slice: recommend a
  // smaller slice of the same GPU, or nothing when it is already the smallest that fits.
  const MigProfile* current = nullptr;
  auto gpu = migGpuFor(dev->name, dev->memory_total_bytes);
  if (!dev->mig_profile.empty()) {
    current = findProfile(gpu, dev->mig_profile);
    if (!current) {
      // A slice reports its own memory, which may not tell the GPU's size: try the larger model.
      gpu = migGpuFor(dev->name, UINT64_MAX);
      current = findProfile(gpu, dev->mig_profile);
    }
    if (!current) return std::nullopt;
  }
  if (!gpu.known()) return std::nullopt;
  const uint32_t base_slices = current ? current->compute_slices : gpu.compute_slices;
  double fill = a.kernels.occupancy.smFill().value_or(1.0);
  double demand = *busy * fill;
  if (demand >= t.max_demand) return std::nullopt;
  double peak_gb = double(*peak) / 1e9;
  double needed_gb = peak_gb / (1.0 - t.memory_headroom);

  const MigProfile* memory_fit = nullptr; // smallest profile the memory alone allows
  const MigProfile* chosen = nullptr;
  double share = 0, slowdown = 0;
  for (const auto& p : gpu.profiles) {
    // The whole GPU (or the slice it already has) is not right-sizing.
    if (p.compute_slices >= base_slices) break;
    if (p.memory_gb < needed_gb) continue;
    if (!memory_fit) memory_fit = &p;
    double s = double(p.compute_slices) / double(base_slices);
    double slow = *busy * std::max(0.0, fill / s - 1.0);
    if (s >= demand && slow <= t.max_slowdown) {
      chosen = &p, share = s, slowdown = slow;
      break;
    }
  }
  if (!chosen) return std::nullopt;
  double saving = std::clamp(1.0 - share * (1.0 + slowdown), 0.0, 1.0);
  std::string resource = std::string(kMigResourcePrefix) + chosen->name;

  Recommendation r;
  r.id = std::string(id());
  r.expected_saving_ratio = saving;
  // The capacity the job leaves unused: the GPU span less its SM demand over time.
  r.explains = {"gpu.unused", toSeconds(a.timeline.span_ns) * (1.0 - demand),
                toSeconds(a.timeline.span_ns)};
  r.confidence = Confidence::Medium;
  const std::string of_what = current ? std::string("of the ") + current->name + " slice"
                                      : std::string("of the GPU");
  r.title = std::string("Right-size ") + (current ? std::string("from MIG ") + current->name + " " : "") +
            "to MIG " + chosen->name + ": peak memory " + formatSignificant(peak_gb) +
            " GB and SM demand " + formatPercent(demand) + " " + of_what + " fit " +
            std::to_string(chosen->compute_slices) + " of " + std::to_string(base_slices) +
            " slices, predicted slowdown " + formatPercent(slowdown);
  std::string note;
  if (memory_fit && memory_fit != chosen)
    note = std::string("\nThe memory alone would fit ") + memory_fit->name +
           ", but its compute share is too small for the job's SM demand (or slows it by more "
           "than " + formatPercent(t.max_slowdown) + ").";
  r.action = std::string("Request one MIG slice instead of ") +
             (current ? std::string("the ") + current->name + " slice of a " : "a whole ") + gpu.model +
             " (device plugin with the mixed MIG strategy):\n"
             "resources:\n  limits:\n    " + resource + ": " + std::to_string(1) +
             "\nThe slice keeps " + formatPercent(t.memory_headroom) +
             " of its memory free above the measured peak; kernels that filled the GPU run up "
             "to " + formatPercent(slowdown) + " longer in total." + note;
  auto& ev = r.evidence;
  ev["gpu_model"] = gpu.model;
  ev["gpu_memory_gb"] = gpu.profiles.back().memory_gb; // the number in the model's name
  ev["mig_profile"] = chosen->name;
  ev["profile_memory_gb"] = chosen->memory_gb;
  ev["profile_compute_slices"] = chosen->compute_slices;
  ev["gpu_compute_slices"] = gpu.compute_slices;
  ev["profile_compute_share"] = share;
  ev["peak_memory_gb"] = peak_gb;
  ev["memory_needed_gb"] = needed_gb;
  ev["gpu_busy_share"] = *busy;
  ev["sm_fill"] = fill;
  ev["sm_demand"] = demand;
  ev["predicted_slowdown"] = slowdown;
  ev["memory_headroom"] = t.memory_headroom;
  ev["max_slowdown"] = t.max_slowdown;
  ev["max_demand_threshold"] = t.max_demand;
  ev["slices_requested"] = 1;
  if (current) {
    ev["current_mig_profile"] = current->name;
    ev["current_compute_slices"] = current->compute_slices;
  }
  if (memory_fit && memory_fit != chosen) ev["memory_only_profile"] = memory_fit->name;
  ev["expected_saving_ratio"] = saving;

  r.parameters["mig_profile"] = chosen->name;
  r.parameters["kubernetes_resource"] = resource;
  r.parameters["predicted_slowdown"] = slowdown;
  return r;
}

} // namespace gpuwise::advisor
