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

// The smallest MIG profile that holds the job's peak memory and SM demand, and what measured it.
struct MigChoice {
  MigGpu gpu;
  const MigProfile* current = nullptr;    // the slice the job runs on; null: the whole GPU
  const MigProfile* chosen = nullptr;     // the recommended profile
  const MigProfile* memory_fit = nullptr; // smallest profile the memory alone allows
  uint32_t base_slices = 0;               // compute slices of the current slice or GPU
  double busy = 0, fill = 0, demand = 0;  // GPU busy share, SM fill, their product
  double peak_gb = 0, needed_gb = 0;      // peak memory, and with the headroom
  double share = 0, slowdown = 0;         // chosen's compute share of base, predicted slowdown
};

// The GPU's MIG table and the profile the job runs on: on a MIG slice (NVML said which),
// everything measured is relative to the slice. False: the GPU or the slice is not in the tables.
bool findMigGpu(const model::DeviceInfo& dev, MigChoice& c) {
  c.gpu = migGpuFor(dev.name, dev.memory_total_bytes);
  if (!dev.mig_profile.empty()) {
    c.current = findProfile(c.gpu, dev.mig_profile);
    if (!c.current) {
      // A slice reports its own memory, which may not tell the GPU's size: try the larger model.
      c.gpu = migGpuFor(dev.name, UINT64_MAX);
      c.current = findProfile(c.gpu, dev.mig_profile);
    }
    if (!c.current) return false;
  }
  return c.gpu.known();
}

// A smaller slice of the same GPU that fits, or nothing when the job already runs on the smallest
// one that does.
std::optional<MigChoice> chooseProfile(const RuleContext& ctx) {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.mig;
  const auto* dev = primaryGpu(a);
  auto busy = busyShare(a);
  auto peak = a.memory.peakBytes();
  if (!dev || !busy || !peak) return std::nullopt;
  MigChoice c;
  if (!findMigGpu(*dev, c)) return std::nullopt;
  c.base_slices = c.current ? c.current->compute_slices : c.gpu.compute_slices;
  c.busy = *busy;
  c.fill = a.kernels.occupancy.smFill().value_or(1.0);
  c.demand = c.busy * c.fill;
  if (c.demand >= t.max_demand) return std::nullopt;
  c.peak_gb = double(*peak) / 1e9;
  c.needed_gb = c.peak_gb / (1.0 - t.memory_headroom);
  for (const auto& p : c.gpu.profiles) {
    // The whole GPU (or the slice it already has) is not right-sizing.
    if (p.compute_slices >= c.base_slices) break;
    if (p.memory_gb < c.needed_gb) continue;
    if (!c.memory_fit) c.memory_fit = &p;
    double s = double(p.compute_slices) / double(c.base_slices);
    double slow = c.busy * std::max(0.0, c.fill / s - 1.0);
    if (s >= c.demand && slow <= t.max_slowdown) {
      c.chosen = &p, c.share = s, c.slowdown = slow;
      return c;
    }
  }
  return std::nullopt;
}

void addEvidence(const MigChoice& c, const Thresholds::Mig& t, double saving, Recommendation& r) {
  auto& ev = r.evidence;
  ev["gpu_model"] = c.gpu.model;
  ev["gpu_memory_gb"] = c.gpu.profiles.back().memory_gb; // the number in the model's name
  ev["mig_profile"] = c.chosen->name;
  ev["profile_memory_gb"] = c.chosen->memory_gb;
  ev["profile_compute_slices"] = c.chosen->compute_slices;
  ev["gpu_compute_slices"] = c.gpu.compute_slices;
  ev["profile_compute_share"] = c.share;
  ev["peak_memory_gb"] = c.peak_gb;
  ev["memory_needed_gb"] = c.needed_gb;
  ev["gpu_busy_share"] = c.busy;
  ev["sm_fill"] = c.fill;
  ev["sm_demand"] = c.demand;
  ev["predicted_slowdown"] = c.slowdown;
  ev["memory_headroom"] = t.memory_headroom;
  ev["max_slowdown"] = t.max_slowdown;
  ev["max_demand_threshold"] = t.max_demand;
  ev["slices_requested"] = 1;
  if (c.current) {
    ev["current_mig_profile"] = c.current->name;
    ev["current_compute_slices"] = c.current->compute_slices;
  }
  if (c.memory_fit && c.memory_fit != c.chosen) ev["memory_only_profile"] = c.memory_fit->name;
  ev["expected_saving_ratio"] = saving;
}

} // namespace

std::optional<Recommendation> RightSizeMigRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.mig;
  const auto choice = chooseProfile(ctx);
  if (!choice) return std::nullopt;
  const MigChoice& c = *choice;
  const MigProfile* current = c.current;
  const MigProfile* chosen = c.chosen;
  double saving = std::clamp(1.0 - c.share * (1.0 + c.slowdown), 0.0, 1.0);
  std::string resource = std::string(kMigResourcePrefix) + chosen->name;

  Recommendation r;
  r.id = std::string(id());
  r.expected_saving_ratio = saving;
  // The capacity the job leaves unused: the GPU span less its SM demand over time.
  r.explains = {"gpu.unused", toSeconds(a.timeline.span_ns) * (1.0 - c.demand),
                toSeconds(a.timeline.span_ns)};
  r.confidence = Confidence::Medium;
  const std::string of_what =
      current ? std::string("of the ") + current->name + " slice" : std::string("of the GPU");
  r.title = std::string("Right-size ") +
            (current ? std::string("from MIG ") + current->name + " " : "") + "to MIG " +
            chosen->name + ": peak memory " + formatSignificant(c.peak_gb) + " GB and SM demand " +
            formatPercent(c.demand) + " " + of_what + " fit " +
            std::to_string(chosen->compute_slices) + " of " + std::to_string(c.base_slices) +
            " slices, predicted slowdown " + formatPercent(c.slowdown);
  std::string note;
  if (c.memory_fit && c.memory_fit != chosen)
    note = std::string("\nThe memory alone would fit ") + c.memory_fit->name +
           ", but its compute share is too small for the job's SM demand (or slows it by more "
           "than " +
           formatPercent(t.max_slowdown) + ").";
  r.action = std::string("Request one MIG slice instead of ") +
             (current ? std::string("the ") + current->name + " slice of a " : "a whole ") +
             c.gpu.model +
             " (device plugin with the mixed MIG strategy):\n"
             "resources:\n  limits:\n    " +
             resource + ": " + std::to_string(1) + "\nThe slice keeps " +
             formatPercent(t.memory_headroom) +
             " of its memory free above the measured peak; kernels that filled the GPU run up "
             "to " +
             formatPercent(c.slowdown) + " longer in total." + note;
  addEvidence(c, t, saving, r);

  r.parameters["mig_profile"] = chosen->name;
  r.parameters["kubernetes_resource"] = resource;
  r.parameters["predicted_slowdown"] = c.slowdown;
  return r;
}

} // namespace gpuwise::advisor
