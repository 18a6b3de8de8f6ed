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

} // namespace

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
