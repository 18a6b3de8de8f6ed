#include "advisor/report/gpu_types_json.h"

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;

template <typename T> json orNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json classJson(const GpuTypeOption& o) {
  const GpuClass& g = *o.gpu;
  json j;
  j["gpu"] = g.name;
  j["memory_gb"] = g.memory_gb;
  j["hbm_gb_per_s"] = g.hbm_gb_per_s;
  j["fp32_tflops"] = g.fp32_tflops;
  j["tf32_tensor_tflops"] = g.tf32_tensor_tflops;
  j["bf16_tensor_tflops"] = g.bf16_tensor_tflops;
  j["fp8_tensor_tflops"] = g.fp8_tensor_tflops;
  j["sm_count"] = g.sm_count;
  j["board_power_w"] = g.board_power_w;
  j["usd_per_hour"] = orNull(o.usd_per_hour);
  j["predicted_step_seconds"] =
      o.prediction.supported ? json(o.prediction.predicted_step_seconds) : json(nullptr);
  j["predicted_slowdown"] = o.prediction.supported ? json(o.prediction.slowdown()) : json(nullptr);
  // GPU busy time on the class over the measured: the step's GPU-bound part alone.
  j["predicted_busy_scale"] =
      o.prediction.supported ? json(o.prediction.busy_scale) : json(nullptr);
  j["cost_per_step"] = o.prediction.supported ? orNull(o.cost_per_step) : json(nullptr);
  j["memory_fits"] = o.memory_fits;
  j["current"] = o.current;
  j["eligible"] = o.eligible;
  j["reason"] = o.reason.empty() ? json(nullptr) : json(o.reason);
  return j;
}

} // namespace

nlohmann::ordered_json gpuTypesJson(const GpuTypeComparison& c) {
  json j;
  j["current"] = c.current ? json(c.current->name) : json(nullptr);
  j["skipped"] = c.skipped.empty() ? json(nullptr) : json(c.skipped);
  const GpuTypeOption* now = c.currentOption();
  j["step_basis"] = now ? json(now->prediction.step_basis) : json(nullptr);
  j["step_seconds"] = now ? json(now->prediction.step_seconds) : json(nullptr);
  j["peak_memory_gb"] = orNull(c.peak_memory_gb);
  j["memory_needed_gb"] = orNull(c.memory_needed_gb);
  j["memory_headroom"] = c.memory_headroom;
  j["max_slowdown"] = c.max_slowdown;
  j["gpus"] = c.gpus;
  j["multi_rank"] = c.multi_rank;
  const GpuTypeOption* chosen = c.cheapest();
  j["chosen"] = chosen ? json(chosen->gpu->name) : json(nullptr);
  j["classes"] = json::array();
  for (const auto& o : c.options)
    j["classes"].push_back(classJson(o));
  return j;
}

} // namespace gpuwise::advisor
