// The simulated device's energy: what its NVML reports as the total energy counter
// (nvmlDeviceGetTotalEnergyConsumption), the power draw and the clocks.
//
// The board draws its idle power all the time and its busy power while any kernel, copy or memset
// runs on it (busy time is the union of their intervals, as the advisor measures it):
//
//   energy_mj(t) = kEnergyBaseMj + idle_W x (t - t0) / 1e6 + (busy_W - idle_W) x busy_ns(t0, t) /
//   1e6
//
// with t0 the meter's start (when libgwsim_core loaded) and times in ns. The base
// stands for the energy since the driver loaded, so a reader must take differences, as on a real
// GPU. Power (milliwatts) is the mean draw since the previous power read of the device (since t0 on
// the first), so summing power x interval over consecutive reads gives the counter's difference.
// The watts are round figures per model (busy: the board's TDP; idle: what an idle board of the
// class shows in nvidia-smi), constants of the simulator, not measurements.
//
// Work placed after a read never starts before it (starts are at or after the placing call), so
// busy time is folded up to each read and only work still running is kept. Deferred kernels (the
// stand-in NCCL's) are added when resolved; a part of one before the previous read is not counted.
//
// Thread-safe (one mutex of its own, never held while calling out); no lock order with the
// simulator's mutex beyond simulator -> meter.
#pragma once

#include "tests/simdevice/core/clock.h"

#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace gpuwise::sim {

struct ModelPower {
  std::string_view key; // DeviceModel::key
  double idle_watts, busy_watts;
};
// By model key; h200's for an unknown key.
ModelPower modelPower(std::string_view key);

inline constexpr uint64_t kEnergyBaseMj = 123'456'789;

class EnergyMeter {
public:
  // Called where a kernel, copy or memset is placed on `device` (any thread).
  void addBusy(uint32_t device, TimeNs start, TimeNs end);
  // The counter of `device` (whose model's key is `key`) at `now`.
  uint64_t energyMj(uint32_t device, std::string_view key, TimeNs now);
  // The mean draw since the previous powerMw of the device, in milliwatts.
  uint32_t powerMw(uint32_t device, std::string_view key, TimeNs now);
  // Busy time of `device` from the meter's start to `now` (tests).
  TimeNs busyNs(uint32_t device, TimeNs now);
  // fork(): held across it (process_state.cpp), so a child never inherits the mutex taken by a
  // thread it lacks (the profiler's NVML sampling thread reads power while the application forks).
  // The child keeps the meter: it is the board's counter, not the process's.
  void lockForFork() { mutex_.lock(); }
  void unlockAfterFork() { mutex_.unlock(); }

private:
  struct Interval {
    TimeNs start, end;
  };
  struct Device {
    TimeNs folded_until = 0; // busy before this is in folded_ns
    TimeNs folded_ns = 0;
    std::vector<Interval> running; // work not yet folded
    TimeNs power_read_at = 0;
    uint64_t power_read_mj = 0;
  };
  Device& deviceLocked(uint32_t device);
  TimeNs foldLocked(Device& d, TimeNs now);
  uint64_t energyLocked(uint32_t device, std::string_view key, TimeNs now);

  std::mutex mutex_;
  TimeNs start_ = nowNs();
  std::vector<Device> devices_;
};

// The process's meter (never destroyed).
EnergyMeter& energyMeter();

} // namespace gpuwise::sim
