// Occupancy of the kernels that ran: theoretical occupancy and its limiter, SM fill and tail-wave
// loss of each execution (advisor/occupancy), and the trace's own achieved-occupancy estimate
// where it has one (Kineto's "est. achieved occupancy %"), kept beside ours, never mixed.
//
// Every mean is kernel-time weighted: a 2 ms GEMM at 25% matters more than a thousand 2 us
// elementwise kernels at 100%. Executions without GPU times weigh nothing (they are counted).
// Theoretical occupancy needs the block size and valid device limits (the trace's device
// properties, else the compute-capability or GPU-name tables); without registers per thread it
// is an upper bound (registers_unknown). Non-NVIDIA devices have none.
//
// Per kernel name (KernelStats::occupancy) and for the job (KernelResult::occupancy). One
// OccupancyCalculator per process (its devices' limits), computing each distinct launch
// configuration once. Not thread-safe; pure otherwise.
#pragma once

#include "advisor/occupancy/occupancy.h"
#include "profiler/model/trace.h"

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <unordered_map>

namespace gpuwise::advisor {

inline constexpr size_t kOccupancyLimiters = 6; // profiler::OccupancyLimiter values

struct OccupancyStats {
  model::TimeNs timed_ns = 0;      // kernel time with a known theoretical occupancy
  double occupancy_ns = 0;         // sum of occupancy x duration
  double active_blocks_ns = 0;     // sum of resident blocks per SM x duration
  model::TimeNs fill_timed_ns = 0; // kernel time with a known wave fill (SM count known)
  double sm_fill_ns = 0, tail_loss_ns = 0, waves_ns = 0;
  model::TimeNs achieved_timed_ns = 0; // kernel time with the trace's achieved occupancy
  double achieved_ns = 0;
  std::array<model::TimeNs, kOccupancyLimiters> limiter_ns{}; // time by primary limiter
  uint64_t known = 0, unknown = 0; // executions with / without a theoretical occupancy
  bool registers_unknown = false;  // some occupancy left registers out (an upper bound)

  void add(const OccupancyStats& other);
  std::optional<double> occupancy() const; // time-weighted means, nullopt when unknown
  std::optional<double> activeBlocksPerSm() const;
  std::optional<double> smFill() const;
  std::optional<double> tailLoss() const;
  std::optional<double> waves() const;
  std::optional<double> achieved() const;
  // The limiter with the most kernel time; None when unknown.
  profiler::OccupancyLimiter limiter() const;
  // Share of timed kernel time whose primary limiter is `l`.
  std::optional<double> limiterShare(profiler::OccupancyLimiter l) const;
};

class OccupancyCalculator {
public:
  explicit OccupancyCalculator(const model::ProcessTrace& process);
  OccupancyCalculator(const OccupancyCalculator&) = delete; // last_limits_ points into limits_
  OccupancyCalculator& operator=(const OccupancyCalculator&) = delete;

  // Adds one execution to `stats`, weighted by its GPU duration.
  void add(const model::KernelExec& kernel, OccupancyStats& stats);

private:
  struct Key {
    uint32_t device, threads, registers, static_shared, dynamic_shared;
    uint64_t blocks;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  const profiler::DeviceLimits* limits(uint32_t device);

  const model::ProcessTrace& process_;
  std::map<uint32_t, profiler::DeviceLimits> limits_;
  uint32_t last_device_ = 0;                            // the device limits() found last
  const profiler::DeviceLimits* last_limits_ = nullptr; // its entry
  std::unordered_map<Key, profiler::LaunchAnalysis, KeyHash> cache_;
};

} // namespace gpuwise::advisor
