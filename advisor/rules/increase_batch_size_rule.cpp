#include "advisor/rules/increase_batch_size_rule.h"

#include "advisor/report/format.h"

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

std::string dims(const model::Dim3& d) {
  std::string s = std::to_string(d.x);
  if (d.y > 1 || d.z > 1) s += "x" + std::to_string(d.y);
  if (d.z > 1) s += "x" + std::to_string(d.z);
  return s;
}

// Outside a training loop (or without a memory model) there is no batch to scale: the finding is
// the launch configuration. The kernel with the most time among those filling under the
// threshold, its most frequent grid, and the grid of one full wave on this GPU; the saving is the
// under-filled kernels' time a filled grid would cut (time x (1 - fill)), over the GPU span.
std::optional<Recommendation> underFilledLaunch(const JobAnalysis& a,
                                                const Thresholds::BatchSize& t) {
  const auto* dev = primaryGpu(a);
  if (!dev || dev->sm_count == 0 || a.timeline.span_ns <= 0) return std::nullopt;
  const KernelStats* top = nullptr;
  double cut_s = 0;
  for (const auto& k : a.kernels.by_name) {
    auto f = k.occupancy.smFill();
    // A one-thread block is how a record without its launch configuration reads: nothing to
    // resize from.
    if (!f || *f >= t.max_sm_fill || k.timed_count == 0 || k.configs.empty() ||
        k.configs.front().block.count() <= 1)
      continue;
    cut_s += toSeconds(k.total_ns) * (1.0 - *f);
    if (!top) top = &k;
  }
  if (!top) return std::nullopt;
  const auto& cfg = top->configs.front();
  double kernel_fill = top->occupancy.smFill().value_or(0.0);
  double per_sm = std::max(1.0, std::floor(top->occupancy.activeBlocksPerSm().value_or(1.0)));
  auto wave_blocks = static_cast<uint64_t>(per_sm) * dev->sm_count;
  double span_s = toSeconds(a.timeline.span_ns);
  double saving = std::clamp(cut_s / span_s, 0.0, 1.0);
  std::string name = top->display_name.substr(0, top->display_name.find('('));

  Recommendation r;
  r.id = "increase_batch_size";
  r.expected_saving_ratio = saving;
  r.confidence = Confidence::Low;
  r.explains = {"busy", toSeconds(a.timeline.busy_ns), span_s};
  r.title = "Under-filled launches: " + name + " ran grids of " + dims(cfg.grid) + " blocks x " +
            dims(cfg.block) + " threads on a " + std::to_string(dev->sm_count) +
            "-SM GPU (SM fill " + formatPercent(kernel_fill) + "); launch at least " +
            std::to_string(wave_blocks) + " blocks";
  r.action = "Size the grid to the GPU: one full wave is " + std::to_string(wave_blocks) +
             " blocks of " + dims(cfg.block) + " threads (" + formatSignificant(per_sm) +
             " per SM x " + std::to_string(dev->sm_count) +
             " SMs). Launch grid = max(ceil(n / block), " + std::to_string(wave_blocks) +
             ") with a grid-stride loop in the kernel (for (i = blockIdx.x * blockDim.x + "
             "threadIdx.x; i < n; i += gridDim.x * blockDim.x)), or give each launch more work "
             "(a larger batch, several arrays per launch).";
  auto& ev = r.evidence;
  ev["sm_fill"] = a.kernels.occupancy.smFill().value_or(0.0);
  ev["kernel"] = name;
  ev["kernel_sm_fill"] = kernel_fill;
  ev["kernel_seconds"] = toSeconds(top->total_ns);
  ev["grid_blocks"] = cfg.grid.count();
  ev["block_threads"] = cfg.block.count();
  ev["sm_count"] = dev->sm_count;
  ev["blocks_per_sm"] = per_sm;
  ev["full_wave_blocks"] = wave_blocks;
  ev["under_filled_kernel_cut_seconds"] = cut_s;
  ev["gpu_span_seconds"] = span_s;
  ev["expected_saving_ratio"] = saving;
  ev["max_sm_fill_threshold"] = t.max_sm_fill;
  r.parameters["launch_config"] = {{"kernel", name},
                                   {"grid", {cfg.grid.x, cfg.grid.y, cfg.grid.z}},
                                   {"block", {cfg.block.x, cfg.block.y, cfg.block.z}},
                                   {"suggested_grid_blocks", wave_blocks}};
  return r;
}

} // namespace

std::optional<Recommendation> IncreaseBatchSizeRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.batch_size;
  auto fill = a.kernels.occupancy.smFill();
  auto busy = busyShare(a);
  if (!fill || !busy || *fill >= t.max_sm_fill) return std::nullopt;
  // A batch exists only in a training loop: steps from ranges, or enough inferred repetitions.
  const bool training_loop = a.steps.source() == StepSource::ProfilerStep ||
                             a.steps.source() == StepSource::Nvtx ||
                             a.steps.count() >= ctx.thresholds.prefetch_input.min_inferred_steps;
  if (!training_loop) return underFilledLaunch(a, t);
  // The device that had to hold the most, and its capacity.
  const DeviceMemory* dm = nullptr;
  for (const auto& d : a.memory.devices)
    if (d.memory_total_bytes > 0 && (!dm || d.peak_bytes > dm->peak_bytes)) dm = &d;
  if (!dm || dm->peak_bytes == 0) return underFilledLaunch(a, t);
  uint64_t persistent = 0;
  bool modeled = false;
  for (const auto& s : a.utilization.memory)
    if (s.pid == dm->pid && s.rank == dm->rank && s.device == dm->device)
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
  r.explains = {"busy", busy_s, span_s};
  r.confidence = Confidence::Low;
  r.title = "Increase the batch size up to " + formatSignificant(m) + "x: kernels filled " +
            formatPercent(*fill) + " of the SMs and the peak used " +
            formatPercent(double(dm->peak_bytes) / capacity) + " of device memory";
  r.action =
      "Multiply the per-GPU batch size by up to " + formatSignificant(m) + " (predicted peak " +
      formatSignificant(predicted_peak / 1e9) + " GB of " + formatSignificant(capacity / 1e9) +
      " GB, keeping " + formatPercent(t.memory_headroom) +
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
