#include "profiler/cupti/timestamp_mapper.h"

#include <algorithm>

namespace gpuwise::profiler {

bool TimestampMapper::addSample(int64_t host_before, uint64_t cupti, int64_t host_after) {
  const int64_t window = host_after - host_before;
  if (window < 0 || window > max_window_ns_ || cupti == 0) {
    ++rejected_;
    return false;
  }
  const int64_t host = host_before + window / 2;
  if (samples_ == 0) {
    first_host_ = host;
    first_cupti_ = cupti;
  } else if (cupti <= last_cupti_ || host <= last_host_) {
    ++rejected_; // one of the clocks went backwards: keep the line we have
    return false;
  }
  last_host_ = host;
  last_cupti_ = cupti;
  ++samples_;
  const int64_t host_span = last_host_ - first_host_;
  const int64_t cupti_span = int64_t(last_cupti_ - first_cupti_);
  if (host_span >= kMinBaselineNs && cupti_span > 0)
    slope_ = std::clamp(double(host_span) / double(cupti_span), 1.0 - kMaxDrift, 1.0 + kMaxDrift);
  return true;
}

int64_t TimestampMapper::toHost(uint64_t cupti) const {
  if (cupti == 0) return 0;
  if (samples_ == 0) return int64_t(cupti);
  // The difference first, in integers: a CUPTI timestamp is ~1e18 and a double would lose ns.
  const int64_t delta = int64_t(cupti - last_cupti_);
  return last_host_ + int64_t(double(delta) * slope_);
}

} // namespace gpuwise::profiler
