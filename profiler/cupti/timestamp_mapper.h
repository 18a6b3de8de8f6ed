// Maps CUPTI's own timestamps onto the host's timeline, for when CUPTI will not stamp records
// with our clock (cuptiActivityRegisterTimestampCallback refused: an older driver, a tool that
// registered its own). GPU records then carry CUPTI's clock (cuptiGetTimestamp's), which is
// neither CLOCK_MONOTONIC nor our counter clock; without this mapping nothing would join or line
// up with the hooks' times.
//
// The mapping is a line through bracketed samples: host time read just before and just after one
// cuptiGetTimestamp, the midpoint taken as the host time of the read. The slope comes from the
// first and the latest good sample (a long baseline, so drift between the two clocks is measured,
// not guessed), anchored at the latest. Samples whose bracket is wider than `max_window_ns` (the
// thread was preempted) say nothing and are rejected.
//
// Threads: addSample() and toHost() on one thread at a time (the drain thread, which samples once
// per cycle before it decodes). No allocation.
#pragma once

#include <cstdint>

namespace gpuwise::profiler {

class TimestampMapper {
public:
  static constexpr int64_t kDefaultMaxWindowNs = 20000; // 20 us
  static constexpr int64_t kMinBaselineNs = 10000000;   // slope measured over >= 10 ms
  static constexpr double kMaxDrift = 1e-3;             // clocks never differ by > 0.1 %

  explicit TimestampMapper(int64_t max_window_ns = kDefaultMaxWindowNs)
      : max_window_ns_(max_window_ns) {}

  // One sample: host ns before the CUPTI read, the CUPTI timestamp, host ns after. False (and
  // ignored) when the bracket is too wide or runs backwards.
  bool addSample(int64_t host_before, uint64_t cupti, int64_t host_after);
  bool calibrated() const { return samples_ > 0; }
  // CUPTI ns to host ns. 0 stays 0 (CUPTI's "unknown"); identity until the first sample.
  int64_t toHost(uint64_t cupti) const;
  double slope() const { return slope_; }
  uint64_t samples() const { return samples_; }
  uint64_t rejected() const { return rejected_; }

private:
  int64_t max_window_ns_;
  uint64_t samples_ = 0, rejected_ = 0;
  int64_t first_host_ = 0, last_host_ = 0;
  uint64_t first_cupti_ = 0, last_cupti_ = 0;
  double slope_ = 1.0;
};

} // namespace gpuwise::profiler
