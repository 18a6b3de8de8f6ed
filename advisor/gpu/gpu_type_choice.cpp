#include "advisor/gpu/gpu_type_choice.h"

#include <algorithm>

namespace gpuwise::advisor {
namespace {

bool isMultiRank(const JobAnalysis& a) {
  return a.distributed.world_size.value_or(1) > 1 || a.distributed.ranks.size() > 1 ||
         a.communication.any();
}

// Why `target` does not qualify for this job; empty when it does.
std::string disqualification(const GpuTypeComparison& c, const GpuTypeOption& o,
                             const GpuTypeOptions& options) {
  const GpuClass& t = *o.gpu;
  if (t.vendor != c.current->vendor)
    return t.vendor == GpuVendor::Amd ? "an AMD GPU: the job would need porting to ROCm"
                                      : "an NVIDIA GPU: the job would need porting to CUDA";
  if (!o.prediction.supported) return o.prediction.unsupported;
  if (c.multi_rank && c.current->nvlink_gb_per_s > 0 && t.nvlink_gb_per_s <= 0)
    return "no NVLink: the job's ranks would exchange their collectives over PCIe";
  if (!c.memory_needed_gb) return "peak memory unknown";
  if (!o.memory_fits) return "memory: the peak with headroom does not fit";
  if (!o.usd_per_hour) return "no price: pass --gpu-price " + std::string(t.name) + "=USD";
  // Right-sizing is a cheaper GPU: a class at the same hourly price that runs faster (an H100
  // NVL for an H100 SXM, both on one price row) is a speed-up, not this advice.
  if (c.current_usd_per_hour && *o.usd_per_hour >= *c.current_usd_per_hour)
    return "not cheaper per GPU-hour";
  if (o.prediction.slowdown() > options.max_slowdown) return "slower than the accepted slowdown";
  return {};
}

} // namespace

const GpuTypeOption* GpuTypeComparison::currentOption() const {
  for (const auto& o : options)
    if (o.current) return &o;
  return nullptr;
}

const GpuTypeOption* GpuTypeComparison::cheapest() const {
  const GpuTypeOption* now = currentOption();
  if (!now || !now->cost_per_step) return nullptr;
  const GpuTypeOption* best = nullptr;
  for (const auto& o : options)
    if (o.eligible && *o.cost_per_step < *now->cost_per_step &&
        (!best || *o.cost_per_step < *best->cost_per_step))
      best = &o;
  return best;
}

GpuTypeComparison compareGpuTypes(const JobAnalysis& a, const GpuTypeOptions& options) {
  GpuTypeComparison c;
  c.max_slowdown = options.max_slowdown;
  c.memory_headroom = options.memory_headroom;
  if (a.collection.gpus.empty()) {
    c.skipped = "the trace names no GPU";
    return c;
  }
  const auto& gpu = a.collection.gpus.front().info;
  if (!gpu.mig_profile.empty()) {
    c.skipped = "the job ran on a MIG slice (right_size_mig sizes those)";
    return c;
  }
  if (std::none_of(a.kernels.by_name.begin(), a.kernels.by_name.end(),
                   [](const KernelStats& k) { return k.total_ns > 0; })) {
    // Without kernel times there is nothing to scale: every class would predict the same step.
    c.skipped = "no kernel times to predict from";
    return c;
  }
  c.current = findGpuClass(gpu.name, gpu.memory_total_bytes);
  if (!c.current) {
    c.skipped = "the GPU '" + gpu.name + "' is not in the class table";
    return c;
  }
  c.gpus = a.collection.gpus.size();
  c.multi_rank = isMultiRank(a);
  if (auto peak = a.memory.peakBytes()) {
    c.peak_memory_gb = double(*peak) / 1e9;
    c.memory_needed_gb = *c.peak_memory_gb / (1.0 - options.memory_headroom);
  }
  c.current_usd_per_hour = options.prices.priceOf(*c.current, true);
  for (const auto& target : gpuClassTable()) {
    GpuTypeOption o;
    o.gpu = &target;
    o.current = &target == c.current;
    o.prediction = predictStepTime(a, *c.current, target);
    o.usd_per_hour = options.prices.priceOf(target, o.current);
    if (o.usd_per_hour)
      o.cost_per_step =
          *o.usd_per_hour * double(c.gpus) * o.prediction.predicted_step_seconds / 3600.0;
    o.memory_fits = c.memory_needed_gb && *c.memory_needed_gb <= target.memory_gb;
    if (!o.current) {
      o.reason = disqualification(c, o, options);
      o.eligible = o.reason.empty();
    }
    c.options.push_back(std::move(o));
  }
  return c;
}

} // namespace gpuwise::advisor
