#include "advisor/rules/right_size_gpu_type_rule.h"

#include "advisor/gpu/gpu_type_choice.h"
#include "advisor/report/format.h"

#include <algorithm>
#include <string>

namespace gpuwise::advisor {
namespace {

// Kernel time with a precision the classifier recognised, over all kernel time.
double knownPrecisionShare(const JobAnalysis& a) {
  model::TimeNs known = 0, total = 0;
  for (const auto& k : a.kernels.by_name) {
    total += k.total_ns;
    if (k.kernel_class.known) known += k.total_ns;
  }
  return total > 0 ? double(known) / double(total) : 0.0;
}

std::string dollars(double usd) {
  return "$" + formatSignificant(usd);
}

// The GPU feature discovery label the NVIDIA device plugin's nodes carry ("NVIDIA-L4"): what a
// pod's nodeSelector names to land on the class.
std::string productLabel(const GpuClass& c) {
  std::string label = std::string("NVIDIA-") + c.name;
  std::replace(label.begin(), label.end(), ' ', '-');
  return label;
}

void addEvidence(const GpuTypeComparison& c, const GpuTypeOption& now, const GpuTypeOption& to,
                 double saving, Recommendation& r) {
  auto& ev = r.evidence;
  const auto& p = to.prediction;
  ev["current_gpu"] = c.current->name;
  ev["target_gpu"] = to.gpu->name;
  ev["gpus"] = c.gpus;
  ev["step_basis"] = p.step_basis;
  ev["step_seconds"] = p.step_seconds;
  ev["predicted_step_seconds"] = p.predicted_step_seconds;
  ev["predicted_slowdown"] = p.slowdown();
  ev["max_slowdown"] = c.max_slowdown;
  ev["gpu_busy_seconds"] = p.busy_seconds;
  ev["predicted_busy_scale"] = p.busy_scale;
  ev["peak_memory_gb"] = *c.peak_memory_gb;
  ev["memory_needed_gb"] = *c.memory_needed_gb;
  ev["memory_headroom"] = c.memory_headroom;
  ev["target_memory_gb"] = to.gpu->memory_gb;
  ev["current_memory_gb"] = c.current->memory_gb;
  ev["usd_per_hour_current"] = *now.usd_per_hour;
  ev["usd_per_hour_target"] = *to.usd_per_hour;
  ev["cost_per_step_current"] = *now.cost_per_step;
  ev["cost_per_step_target"] = *to.cost_per_step;
  for (const auto& t : p.terms) {
    ev["term_" + t.name + "_seconds"] = t.seconds;
    ev["term_" + t.name + "_predicted_seconds"] = t.predicted_seconds;
  }
  ev["expected_saving_ratio"] = saving;
}

} // namespace

std::optional<Recommendation> RightSizeGpuTypeRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  if (a.simulated()) return std::nullopt;
  const GpuTypeComparison c = compareGpuTypes(a, ctx.thresholds.gpu_type);
  const GpuTypeOption* to = c.cheapest();
  const GpuTypeOption* now = c.currentOption();
  if (!to || !now) return std::nullopt;
  const auto& p = to->prediction;
  const double saving = std::clamp(1.0 - *to->cost_per_step / *now->cost_per_step, 0.0, 1.0);
  const double span = toSeconds(a.timeline.span_ns);

  Recommendation r;
  r.id = std::string(id());
  r.expected_saving_ratio = saving;
  r.explains = {"gpu.class", span * saving, span};
  const bool steps = std::string_view(p.step_basis) != "gpu_span";
  r.confidence = steps && knownPrecisionShare(a) >= 0.8 ? Confidence::Medium : Confidence::Low;
  const std::string step_word = steps ? "step" : "run";
  r.title = std::string("Run on ") + to->gpu->name + " instead of " + c.current->name +
            ": predicted " + step_word + " " + formatSignificant(p.predicted_step_seconds) +
            " s (" + formatSignificant(p.slowdown()) + "x), " + dollars(*to->cost_per_step) +
            " per " + step_word + " instead of " + dollars(*now->cost_per_step);
  // The first line is what the terminal shows: no "=" or "(" below it, which it would take for
  // code (terminal_summary.cpp).
  r.action = std::string("Schedule the job on ") + to->gpu->name + " nodes instead of " +
             c.current->name +
             ", by the label NVIDIA GPU feature discovery puts on them:\n"
             "spec:\n  nodeSelector:\n    nvidia.com/gpu.product: " +
             productLabel(*to->gpu) + "\nIts peak memory " + formatSignificant(*c.peak_memory_gb) +
             " GB fits the " + formatSignificant(to->gpu->memory_gb) + " GB with " +
             formatPercent(c.memory_headroom) + " headroom; the " + step_word +
             " is predicted from the kernels' precision, memory traffic and SM fill on each "
             "class's datasheet figures: re-measure after the move. Accepted slowdown " +
             formatSignificant(c.max_slowdown) + "x, --max-gpu-slowdown.";
  addEvidence(c, *now, *to, saving, r);

  r.parameters["gpu"] = to->gpu->name;
  r.parameters["predicted_step_seconds"] = p.predicted_step_seconds;
  r.parameters["cost_per_step_current"] = *now->cost_per_step;
  r.parameters["cost_per_step_target"] = *to->cost_per_step;
  return r;
}

} // namespace gpuwise::advisor
