#include "tests/simdevice/core/energy_meter.h"

#include <algorithm>
#include <array>

namespace gpuwise::sim {

namespace {
// Busy: the boards' TDP (H200 SXM 700 W, A100 SXM4 400 W, V100 SXM2 300 W, NVIDIA's datasheets);
// idle: round figures of an idle board's draw. Simulator constants, not measurements.
constexpr std::array<ModelPower, 3> kPower = {{
    {"h200", 90.0, 700.0},
    {"a100-80gb", 60.0, 400.0},
    {"v100", 40.0, 300.0},
}};
// More work than this unfolded (no NVML reader): fold at the current time.
constexpr size_t kMaxRunning = 4096;
} // namespace

ModelPower modelPower(std::string_view key) {
  for (const auto& p : kPower)
    if (p.key == key) return p;
  return kPower[0];
}

EnergyMeter::Device& EnergyMeter::deviceLocked(uint32_t device) {
  if (devices_.size() <= device) devices_.resize(device + 1);
  Device& d = devices_[device];
  if (d.folded_until == 0) d.folded_until = start_;
  return d;
}

void EnergyMeter::addBusy(uint32_t device, TimeNs start, TimeNs end) {
  if (end <= start) return;
  std::lock_guard<std::mutex> lock(mutex_);
  Device& d = deviceLocked(device);
  d.running.push_back({start, end});
  if (d.running.size() > kMaxRunning) foldLocked(d, nowNs());
}

// Adds the union of the running intervals inside [folded_until, now) to folded_ns and keeps those
// that end after now. Returns the busy time up to now.
TimeNs EnergyMeter::foldLocked(Device& d, TimeNs now) {
  if (now <= d.folded_until) return d.folded_ns;
  std::sort(d.running.begin(), d.running.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  TimeNs cursor = d.folded_until; // everything before it is counted
  for (const Interval& i : d.running) {
    TimeNs lo = std::max(i.start, cursor), hi = std::min(i.end, now);
    if (hi > lo) {
      d.folded_ns += hi - lo;
      cursor = hi;
    }
  }
  d.folded_until = now;
  std::erase_if(d.running, [&](const Interval& i) { return i.end <= now; });
  return d.folded_ns;
}

TimeNs EnergyMeter::busyNs(uint32_t device, TimeNs now) {
  std::lock_guard<std::mutex> lock(mutex_);
  return foldLocked(deviceLocked(device), now);
}

uint64_t EnergyMeter::energyLocked(uint32_t device, std::string_view key, TimeNs now) {
  const ModelPower p = modelPower(key);
  TimeNs busy = foldLocked(deviceLocked(device), now);
  double mj = p.idle_watts * double(now - start_) / 1e6 +
              (p.busy_watts - p.idle_watts) * double(busy) / 1e6;
  return kEnergyBaseMj + uint64_t(mj);
}

uint64_t EnergyMeter::energyMj(uint32_t device, std::string_view key, TimeNs now) {
  std::lock_guard<std::mutex> lock(mutex_);
  return energyLocked(device, key, now);
}

uint32_t EnergyMeter::powerMw(uint32_t device, std::string_view key, TimeNs now) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t mj = energyLocked(device, key, now);
  Device& d = deviceLocked(device);
  TimeNs from = d.power_read_at ? d.power_read_at : start_;
  uint64_t from_mj = d.power_read_at ? d.power_read_mj : kEnergyBaseMj;
  d.power_read_at = now;
  d.power_read_mj = mj;
  if (now <= from) return uint32_t(modelPower(key).idle_watts * 1000);
  // mJ per ns x 1e9 = mW.
  return uint32_t(double(mj - from_mj) * 1e9 / double(now - from));
}

EnergyMeter& energyMeter() {
  static EnergyMeter* meter = new EnergyMeter; // callbacks may read it during process exit
  return *meter;
}

namespace {
// The meter starts when the library loads (the simulated driver's start), not at its first read.
[[maybe_unused]] const bool kMeterStarted = (energyMeter(), true);
} // namespace

} // namespace gpuwise::sim
