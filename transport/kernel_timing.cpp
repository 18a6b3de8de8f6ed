#include "transport/kernel_timing.h"

#include <cstddef>
#include <limits>

namespace gpuwise::transport {
namespace {

uint64_t u(int64_t v) {
  return static_cast<uint64_t>(v);
}
int64_t s(uint64_t v) {
  return static_cast<int64_t>(v);
}

bool fitsInt32(uint64_t residual) {
  const int64_t v = s(residual);
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}
uint32_t zigzag(uint64_t residual) {
  const auto v = static_cast<int32_t>(s(residual));
  return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
}
uint64_t unzigzag(uint32_t z) {
  const int32_t v = static_cast<int32_t>(z >> 1) ^ -static_cast<int32_t>(z & 1);
  return u(static_cast<int64_t>(v));
}

} // namespace

void writeResidualPlanes(const std::vector<KernelResiduals>& rows, uint8_t* out) {
  // Plane by plane, so every store stream is sequential.
  const size_t n = rows.size();
  uint32_t KernelResiduals::*const columns[4] = {
      &KernelResiduals::host_gap, &KernelResiduals::launch, &KernelResiduals::gpu_offset,
      &KernelResiduals::gpu_duration};
  for (size_t c = 0; c < 4; ++c)
    for (size_t b = 0; b < 4; ++b) {
      uint8_t* plane = out + (4 * c + b) * n;
      for (size_t i = 0; i < n; ++i)
        plane[i] = static_cast<uint8_t>(rows[i].*columns[c] >> (8 * b));
    }
}

KernelResiduals readResidualPlanes(const uint8_t* planes, size_t rows, size_t row) {
  uint32_t columns[4];
  for (size_t c = 0; c < 4; ++c) {
    uint32_t v = 0;
    for (size_t b = 0; b < 4; ++b)
      v |= uint32_t{planes[(4 * c + b) * rows + row]} << (8 * b);
    columns[c] = v;
  }
  return {columns[0], columns[1], columns[2], columns[3]};
}

void KernelTimingModel::reset(int64_t time_base, uint32_t protocol) {
  protocol2_ = protocol >= 2;
  prev_launch_ = u(time_base);
  prev_end_ = u(time_base);
  for (uint32_t id : touched_) {
    last_[id] = Last{};
    seen_[id] = 0;
  }
  touched_.clear();
}

KernelTimingModel::Last& KernelTimingModel::last(uint32_t signature) {
  if (signature >= last_.size()) {
    // Grow geometrically to the id (bounded by kMaxSignatures): a few KiB for a real model.
    std::size_t n = last_.empty() ? 256 : last_.size();
    while (n <= signature)
      n *= 2;
    last_.resize(n);
    seen_.resize(n);
  }
  if (!seen_[signature]) {
    seen_[signature] = 1;
    touched_.push_back(signature);
  }
  return last_[signature];
}

KernelTimingModel::Derived KernelTimingModel::derive(const KernelTimes& t, bool host,
                                                     bool gpu) const {
  Derived d;
  d.host = host;
  d.gpu = gpu;
  if (host) {
    d.gap = u(t.launch_start) - prev_launch_; // prev_launch_: see its declaration
    d.launch = u(t.launch_end) - u(t.launch_start);
  }
  if (gpu) {
    uint64_t ref = prev_end_;
    if (host && t.launch_start > s(prev_end_)) ref = u(t.launch_start);
    d.offset = u(t.start) - ref;
    d.duration = u(t.end) - u(t.start);
  }
  return d;
}

void KernelTimingModel::commit(uint32_t signature, const Derived& d, const KernelTimes& t) {
  Last& l = last(signature);
  if (d.host) {
    l.gap += step(d.gap - l.gap, l.host_seen);
    l.launch += step(d.launch - l.launch, l.host_seen);
    l.host_seen = true;
    prev_launch_ = u(protocol2_ ? t.launch_end : t.launch_start);
  }
  if (d.gpu) {
    l.offset += step(d.offset - l.offset, l.gpu_seen);
    l.duration += step(d.duration - l.duration, l.gpu_seen);
    l.gpu_seen = true;
    prev_end_ = u(t.end);
  }
}

TimingForm KernelTimingModel::encode(uint32_t signature, const KernelTimes& t,
                                     KernelResiduals* out) {
  const bool host = t.launch_start != 0 && t.launch_end != 0;
  const bool gpu = t.start != 0 && t.end != 0;
  const bool host_none = t.launch_start == 0 && t.launch_end == 0;
  const bool gpu_none = t.start == 0 && t.end == 0;
  const Derived d = derive(t, host, gpu);
  *out = KernelResiduals{};
  bool escape = !(host || host_none) || !(gpu || gpu_none);
  if (!escape) {
    const Last& l = last(signature);
    const uint64_t r_gap = d.gap - l.gap, r_launch = d.launch - l.launch;
    const uint64_t r_off = d.offset - l.offset, r_dur = d.duration - l.duration;
    if (host && (!fitsInt32(r_gap) || !fitsInt32(r_launch))) escape = true;
    if (gpu && (!fitsInt32(r_off) || !fitsInt32(r_dur))) escape = true;
    if (!escape) {
      if (host) {
        out->host_gap = zigzag(r_gap);
        out->launch = zigzag(r_launch);
      }
      if (gpu) {
        out->gpu_offset = zigzag(r_off);
        out->gpu_duration = zigzag(r_dur);
      }
    }
  }
  commit(signature, d, t);
  if (escape) {
    *out = KernelResiduals{};
    return TimingForm::Escape;
  }
  if (host && gpu) return TimingForm::Full;
  if (host) return TimingForm::HostOnly;
  if (gpu) return TimingForm::GpuOnly;
  return TimingForm::None;
}

KernelTimes KernelTimingModel::decode(uint32_t signature, TimingForm form,
                                      const KernelResiduals& r) {
  const bool host = form == TimingForm::Full || form == TimingForm::HostOnly;
  const bool gpu = form == TimingForm::Full || form == TimingForm::GpuOnly;
  // One lookup of the signature's state, updated in place (what commit() does): the decoder's
  // per-row cost is the advisor's ingest rate.
  Last& l = last(signature);
  KernelTimes t;
  if (host) {
    const uint64_t r_gap = unzigzag(r.host_gap), r_launch = unzigzag(r.launch);
    t.launch_start = s(prev_launch_ + l.gap + r_gap);
    t.launch_end = s(u(t.launch_start) + l.launch + r_launch);
    l.gap += step(r_gap, l.host_seen);
    l.launch += step(r_launch, l.host_seen);
    l.host_seen = true;
    prev_launch_ = u(protocol2_ ? t.launch_end : t.launch_start);
  }
  if (gpu) {
    uint64_t ref = prev_end_;
    if (host && t.launch_start > s(prev_end_)) ref = u(t.launch_start);
    const uint64_t r_off = unzigzag(r.gpu_offset), r_dur = unzigzag(r.gpu_duration);
    t.start = s(ref + l.offset + r_off);
    t.end = s(u(t.start) + l.duration + r_dur);
    l.offset += step(r_off, l.gpu_seen);
    l.duration += step(r_dur, l.gpu_seen);
    l.gpu_seen = true;
    prev_end_ = u(t.end);
  }
  return t;
}

void KernelTimingModel::skipEscape(uint32_t signature, const KernelTimes& t) {
  const bool host = t.launch_start != 0 && t.launch_end != 0;
  const bool gpu = t.start != 0 && t.end != 0;
  commit(signature, derive(t, host, gpu), t);
}

} // namespace gpuwise::transport
