// NVML's view of the devices, per (process, device): the peak memory NVML saw the process use
// (context and allocator overhead included, unlike the allocator's own figures), the device's peak
// used memory and mean utilisation, from the shim's DeviceSamples (live runs only); and the
// device's energy over the run from its PowerSamples: the difference of NVML's total energy counter
// between the first and the last sample, or, on a GPU without the counter, the power draw
// integrated over the samples (each reading times the interval since the previous one: NVML's
// reading is the mean draw over about the last second on Ampere and newer). The counter is the
// whole device's: other processes on the same GPU are in it too.
//
// Pure; any thread.
#pragma once

#include "profiler/model/trace.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

// A device's energy readings over a stretch of samples, mergeable with the next stretch.
struct EnergyReadings {
  model::TimeNs counter_first_time = 0, counter_last_time = 0;
  int64_t counter_first_mj = -1, counter_last_mj = -1; // -1: no counter reading
  // The power draw integrated over (power_first_time, power_last_time].
  model::TimeNs power_first_time = 0, power_last_time = 0;
  int32_t power_first_mw = -1; // -1: no power reading
  double power_integral_mj = 0;
  uint64_t power_samples = 0;
  double power_sum_mw = 0;
  int32_t sm_clock_max_mhz = -1, memory_clock_max_mhz = -1;

  void add(const model::PowerSample& s); // in time order
  // The first reading's time (counter or power); 0 without readings.
  model::TimeNs firstTime() const;
  // This stretch followed by `later` (a later window of the same device).
  void append(const EnergyReadings& later);
  // The counter's difference when it was read twice; else the integral of two or more power
  // readings; else nullopt.
  std::optional<double> joules() const;
  // "nvml" (the counter), "nvml_power" (integrated draw), or "" (neither).
  const char* source() const;
  std::optional<double> meanPowerWatts() const;
};

struct NvmlDeviceFigures {
  int64_t pid = 0;
  int32_t rank = -1; // with pid, tells apart processes of different ranks (containers reuse pids)
  uint32_t device = 0;
  uint64_t samples = 0;
  int64_t process_used_peak_bytes = -1; // -1: NVML never listed the process (pid namespace)
  int64_t device_used_peak_bytes = -1;
  int64_t device_total_bytes = -1;
  double gpu_utilization_mean = -1; // percent; -1 unknown (MIG slices report none)
  std::string uuid;                 // the device's NVML UUID from its Hello, empty unknown
  EnergyReadings energy;
};

struct NvmlResult {
  std::vector<NvmlDeviceFigures> devices; // by pid, rank, then device
  bool sampled() const { return !devices.empty(); }
  // Sum over physical devices (each UUID once: processes sharing a GPU see one counter) of their
  // energy; nullopt when any sampled device has none, or none was sampled.
  std::optional<double> energyJoules() const;
  void merge(const NvmlResult& other);
};

NvmlResult analyzeNvml(const model::Trace& trace);

} // namespace gpuwise::advisor
