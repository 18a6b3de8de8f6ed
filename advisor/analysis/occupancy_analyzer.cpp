#include "advisor/analysis/occupancy_analyzer.h"

#include "advisor/analysis/interval_union.h"

#include <functional>

namespace gpuwise::advisor {
namespace {

std::optional<double> mean(double weighted, model::TimeNs weight) {
  if (weight <= 0) return std::nullopt;
  return weighted / double(weight);
}

} // namespace

void OccupancyStats::add(const OccupancyStats& o) {
  timed_ns += o.timed_ns;
  occupancy_ns += o.occupancy_ns;
  active_blocks_ns += o.active_blocks_ns;
  fill_timed_ns += o.fill_timed_ns;
  sm_fill_ns += o.sm_fill_ns;
  tail_loss_ns += o.tail_loss_ns;
  waves_ns += o.waves_ns;
  achieved_timed_ns += o.achieved_timed_ns;
  achieved_ns += o.achieved_ns;
  for (size_t i = 0; i < kOccupancyLimiters; ++i)
    limiter_ns[i] += o.limiter_ns[i];
  known += o.known;
  unknown += o.unknown;
  registers_unknown = registers_unknown || o.registers_unknown;
}

std::optional<double> OccupancyStats::occupancy() const {
  return mean(occupancy_ns, timed_ns);
}
std::optional<double> OccupancyStats::activeBlocksPerSm() const {
  return mean(active_blocks_ns, timed_ns);
}
std::optional<double> OccupancyStats::smFill() const {
  return mean(sm_fill_ns, fill_timed_ns);
}
std::optional<double> OccupancyStats::tailLoss() const {
  return mean(tail_loss_ns, fill_timed_ns);
}
std::optional<double> OccupancyStats::waves() const {
  return mean(waves_ns, fill_timed_ns);
}
std::optional<double> OccupancyStats::achieved() const {
  return mean(achieved_ns, achieved_timed_ns);
}

profiler::OccupancyLimiter OccupancyStats::limiter() const {
  size_t best = 0;
  for (size_t i = 1; i < kOccupancyLimiters; ++i)
    if (limiter_ns[i] > limiter_ns[best]) best = i;
  return limiter_ns[best] > 0 ? static_cast<profiler::OccupancyLimiter>(best)
                              : profiler::OccupancyLimiter::None;
}

std::optional<double> OccupancyStats::limiterShare(profiler::OccupancyLimiter l) const {
  if (timed_ns <= 0) return std::nullopt;
  return double(limiter_ns[static_cast<size_t>(l)]) / double(timed_ns);
}

size_t OccupancyCalculator::KeyHash::operator()(const Key& k) const {
  size_t h = std::hash<uint64_t>{}(k.blocks);
  for (uint32_t v : {k.device, k.threads, k.registers, k.static_shared, k.dynamic_shared})
    h = h * 1000003u ^ std::hash<uint32_t>{}(v);
  return h;
}

OccupancyCalculator::OccupancyCalculator(const model::ProcessTrace& process) : process_(process) {}

const profiler::DeviceLimits* OccupancyCalculator::limits(uint32_t device) {
  // Kernels come in long runs of one device: the last one found is looked at first (map entries
  // never move).
  if (!last_limits_ || last_device_ != device) {
    auto it = limits_.find(device);
    if (it == limits_.end()) {
      // Not valid(): no occupancy for a device the trace does not describe.
      profiler::DeviceLimits l;
      if (const auto* info = process_.device(device)) l = profiler::resolveDeviceLimits(*info);
      it = limits_.emplace(device, l).first;
    }
    last_device_ = device;
    last_limits_ = &it->second;
  }
  return last_limits_->valid() ? last_limits_ : nullptr;
}

void OccupancyCalculator::add(const model::KernelExec& k, OccupancyStats& s) {
  const model::TimeNs d = isTimed(k.start, k.end) ? k.end - k.start : 0;
  if (k.achieved_occupancy >= 0 && d > 0) {
    s.achieved_timed_ns += d;
    s.achieved_ns += double(k.achieved_occupancy) * double(d);
  }
  const auto* lim = limits(k.device);
  if (!lim) {
    ++s.unknown;
    return;
  }
  Key key{k.device,
          uint32_t(std::min<uint64_t>(k.block.count(), UINT32_MAX)),
          k.registers_per_thread,
          k.static_shared_bytes,
          k.dynamic_shared_bytes,
          k.grid.count()};
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, profiler::analyzeLaunch(k, *lim)).first;
  const auto& a = it->second;
  if (!a.occupancy.valid) {
    ++s.unknown;
    return;
  }
  ++s.known;
  s.registers_unknown = s.registers_unknown || a.occupancy.registers_unknown;
  if (d <= 0) return;
  s.timed_ns += d;
  s.occupancy_ns += a.occupancy.occupancy * double(d);
  s.active_blocks_ns += double(a.occupancy.active_blocks_per_sm) * double(d);
  auto limiter = static_cast<size_t>(a.occupancy.limiter);
  if (limiter < kOccupancyLimiters) s.limiter_ns[limiter] += d;
  if (a.fill.valid) {
    s.fill_timed_ns += d;
    s.sm_fill_ns += a.fill.sm_fill * double(d);
    s.tail_loss_ns += a.fill.tail_loss * double(d);
    s.waves_ns += a.fill.waves * double(d);
  }
}

} // namespace gpuwise::advisor
