#include "advisor/analysis/nvml_analyzer.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace gpuwise::advisor {
namespace {

struct Acc {
  NvmlDeviceFigures f;
  double util_sum = 0;
  uint64_t util_n = 0;
};

void fold(NvmlDeviceFigures& into, const NvmlDeviceFigures& o, uint64_t& util_n_into,
          uint64_t util_n_other) {
  if (into.uuid.empty()) into.uuid = o.uuid;
  // Windows of one stream arrive in any order: the earlier stretch first.
  if (o.energy.firstTime() && o.energy.firstTime() < into.energy.firstTime()) {
    EnergyReadings later = into.energy;
    into.energy = o.energy;
    into.energy.append(later);
  } else {
    into.energy.append(o.energy);
  }
  into.process_used_peak_bytes = std::max(into.process_used_peak_bytes, o.process_used_peak_bytes);
  into.device_used_peak_bytes = std::max(into.device_used_peak_bytes, o.device_used_peak_bytes);
  into.device_total_bytes = std::max(into.device_total_bytes, o.device_total_bytes);
  if (util_n_other) {
    double sum =
        (into.gpu_utilization_mean < 0 ? 0 : into.gpu_utilization_mean * double(util_n_into)) +
        o.gpu_utilization_mean * double(util_n_other);
    util_n_into += util_n_other;
    into.gpu_utilization_mean = sum / double(util_n_into);
  }
  into.samples += o.samples;
}

const model::DeviceInfo* deviceInfo(const model::ProcessTrace& p, uint32_t device) {
  for (const auto& d : p.devices)
    if (d.index == device) return &d;
  return nullptr;
}

} // namespace

void EnergyReadings::add(const model::PowerSample& s) {
  // A stretch of one reading, appended: append() holds the one rule for joining readings.
  EnergyReadings one;
  if (s.energy_mj >= 0) {
    one.counter_first_mj = one.counter_last_mj = s.energy_mj;
    one.counter_first_time = one.counter_last_time = s.time;
  }
  if (s.power_mw >= 0) {
    one.power_first_mw = s.power_mw;
    one.power_first_time = one.power_last_time = s.time;
    one.power_sum_mw = s.power_mw;
    one.power_samples = 1;
  }
  one.sm_clock_max_mhz = s.sm_clock_mhz;
  one.memory_clock_max_mhz = s.memory_clock_mhz;
  append(one);
}

void EnergyReadings::append(const EnergyReadings& later) {
  if (later.counter_first_mj >= 0) {
    if (counter_first_mj < 0) {
      counter_first_mj = later.counter_first_mj;
      counter_first_time = later.counter_first_time;
    }
    counter_last_mj = later.counter_last_mj;
    counter_last_time = later.counter_last_time;
  }
  if (later.power_first_mw >= 0) {
    if (power_first_mw < 0) {
      power_first_mw = later.power_first_mw;
      power_first_time = later.power_first_time;
    } else if (later.power_first_time > power_last_time) {
      // The interval between the stretches, read by the later one's first reading.
      power_integral_mj +=
          double(later.power_first_mw) * double(later.power_first_time - power_last_time) / 1e9;
    }
    power_integral_mj += later.power_integral_mj;
    power_last_time = std::max(power_last_time, later.power_last_time);
  }
  power_sum_mw += later.power_sum_mw;
  power_samples += later.power_samples;
  sm_clock_max_mhz = std::max(sm_clock_max_mhz, later.sm_clock_max_mhz);
  memory_clock_max_mhz = std::max(memory_clock_max_mhz, later.memory_clock_max_mhz);
}

model::TimeNs EnergyReadings::firstTime() const {
  model::TimeNs t = 0;
  if (counter_first_mj >= 0) t = counter_first_time;
  if (power_first_mw >= 0 && (t == 0 || power_first_time < t)) t = power_first_time;
  return t;
}

std::optional<double> EnergyReadings::joules() const {
  if (counter_first_mj >= 0 && counter_last_time > counter_first_time &&
      counter_last_mj >= counter_first_mj)
    return double(counter_last_mj - counter_first_mj) / 1000.0;
  if (power_first_mw >= 0 && power_last_time > power_first_time) return power_integral_mj / 1000.0;
  return std::nullopt;
}

const char* EnergyReadings::source() const {
  if (counter_first_mj >= 0 && counter_last_time > counter_first_time &&
      counter_last_mj >= counter_first_mj)
    return "nvml";
  if (power_first_mw >= 0 && power_last_time > power_first_time) return "nvml_power";
  return "";
}

std::optional<double> EnergyReadings::meanPowerWatts() const {
  if (!power_samples) return std::nullopt;
  return power_sum_mw / double(power_samples) / 1000.0;
}

std::optional<double> NvmlResult::energyJoules() const {
  std::map<std::string, double> by_uuid; // one counter per physical GPU
  double unnamed = 0;
  bool any = false;
  for (const auto& d : devices) {
    auto j = d.energy.joules();
    if (!j) return std::nullopt;
    any = true;
    if (d.uuid.empty())
      unnamed += *j;
    else
      by_uuid[d.uuid] = std::max(by_uuid[d.uuid], *j);
  }
  if (!any) return std::nullopt;
  for (const auto& [uuid, j] : by_uuid)
    unnamed += j;
  return unnamed;
}

NvmlResult analyzeNvml(const model::Trace& trace) {
  // By (pid, rank, device): two ranks in two containers can both be pid 1.
  std::map<std::tuple<int64_t, int32_t, uint32_t>, Acc> by;
  for (const auto& p : trace.processes)
    for (const auto& s : p.device_samples) {
      Acc& a = by[{p.info.pid, p.info.rank, s.device}];
      a.f.pid = p.info.pid;
      a.f.rank = p.info.rank;
      a.f.device = s.device;
      ++a.f.samples;
      a.f.process_used_peak_bytes = std::max(a.f.process_used_peak_bytes, s.process_used_bytes);
      a.f.device_used_peak_bytes = std::max(a.f.device_used_peak_bytes, s.device_used_bytes);
      a.f.device_total_bytes = std::max(a.f.device_total_bytes, s.device_total_bytes);
      if (s.gpu_utilization >= 0) {
        a.util_sum += s.gpu_utilization;
        ++a.util_n;
      }
    }
  for (const auto& p : trace.processes) {
    std::vector<model::PowerSample> power = p.power_samples;
    std::stable_sort(power.begin(), power.end(),
                     [](const auto& x, const auto& y) { return x.time < y.time; });
    for (const auto& s : power) {
      Acc& a = by[{p.info.pid, p.info.rank, s.device}];
      a.f.pid = p.info.pid;
      a.f.rank = p.info.rank;
      a.f.device = s.device;
      a.f.energy.add(s);
    }
    for (auto& [key, a] : by)
      if (std::get<0>(key) == p.info.pid && std::get<1>(key) == p.info.rank && a.f.uuid.empty())
        if (const auto* info = deviceInfo(p, std::get<2>(key))) a.f.uuid = info->uuid;
  }
  NvmlResult r;
  for (auto& [key, a] : by) {
    if (a.util_n) a.f.gpu_utilization_mean = a.util_sum / double(a.util_n);
    r.devices.push_back(a.f);
  }
  return r;
}

void NvmlResult::merge(const NvmlResult& o) {
  // Utilisation means are combined weighted by sample count (every sample is assumed to have one).
  for (const auto& d : o.devices) {
    auto it = std::find_if(devices.begin(), devices.end(), [&](const NvmlDeviceFigures& x) {
      return x.pid == d.pid && x.rank == d.rank && x.device == d.device;
    });
    if (it == devices.end()) {
      devices.push_back(d);
      continue;
    }
    uint64_t n_into = it->gpu_utilization_mean < 0 ? 0 : it->samples;
    uint64_t n_other = d.gpu_utilization_mean < 0 ? 0 : d.samples;
    fold(*it, d, n_into, n_other);
  }
  std::sort(devices.begin(), devices.end(),
            [](const NvmlDeviceFigures& a, const NvmlDeviceFigures& b) {
              return std::tie(a.pid, a.rank, a.device) < std::tie(b.pid, b.rank, b.device);
            });
}

} // namespace gpuwise::advisor
