// What the hooks cost the application's threads, and what to do when that is too much.
//
// Timing every hook call would double its cost, so the cost is estimated: at session start the
// drain thread calibrates the price of one fully recorded call (two counter reads, the TLS checks,
// a 64-byte ring write and its release store) and of one counted launch (a TLS read and a plain
// store) by running those same operations on a private ring, and every cycle multiplies them by
// the counts the rings carry. The estimate leaves out cache misses the application's own code
// suffers because of ours; the report calls it an estimate.
//
// Shedding: the budget is a share of wall time (GPUWISE_OVERHEAD_BUDGET, default 1%). When
// recording every launch would cost more than that over a window of recent cycles, the governor
// has launches counted instead of recorded for all but one cycle in `period`, sampling windows of
// full detail; the report says so and how much wall time was shed. The CUPTI tier counts launches
// already (CUPTI records them), so there shedding rarely has anything left to do.
//
// Threads: the drain thread only (calibrate, onCycle); the flag it drives is read by hooks.
#pragma once

#include "profiler/model/process.h"

#include <cstdint>

namespace gpuwise::interposer {

struct HookCosts {
  double full_ns = 0;    // one fully recorded hook call, the shim's part
  double counted_ns = 0; // one counted launch, the shim's part
};

// Runs the hot-path operations `iterations` times on a private ring (about 2 ms for 20000).
HookCosts calibrateHookCosts(uint32_t iterations = 20000);

class OverheadGovernor {
public:
  struct Cycle {
    int64_t now_ns = 0;
    uint64_t recorded = 0;         // hook events written in full since the previous cycle
    uint64_t counted = 0;          // launches counted only since the previous cycle
    bool launches_covered = false; // CUPTI records launches: counting is the normal state
  };
  // What the hooks should do from this cycle on.
  enum class LaunchMode : uint8_t { Record, Count };

  OverheadGovernor(HookCosts costs, double budget_ratio, int64_t start_ns);

  // Accounts one drain cycle and decides the launch mode for the next one.
  LaunchMode onCycle(const Cycle& c);

  // Cumulative figures for the report.
  void fill(model::ShimCost& out) const;
  bool shedding() const { return period_ > 1; }
  uint32_t period() const { return period_; }

private:
  HookCosts costs_;
  double budget_;
  int64_t start_ns_, last_ns_;
  uint64_t recorded_total_ = 0, counted_total_ = 0;
  double overhead_ns_ = 0;
  int64_t shed_ns_ = 0;
  // The recent window: what recording every launch would have cost, and its wall time.
  double window_full_cost_ns_ = 0;
  int64_t window_wall_ns_ = 0;
  uint32_t period_ = 1; // record one cycle in `period_`
  uint32_t phase_ = 0;
};

} // namespace gpuwise::interposer
