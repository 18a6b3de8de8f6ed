#include "advisor/analysis/copy_analyzer.h"

#include "advisor/analysis/interval_union.h"

namespace gpuwise::advisor {

void CopyStats::add(const model::Copy& c) {
  ++count;
  bytes += c.bytes;
  bool gpu_timed = isTimed(c.start, c.end);
  bool call_timed = isTimed(c.call_start, c.call_end);
  if (gpu_timed) {
    ++gpu_timed_count;
    gpu_timed_bytes += c.bytes;
    gpu_ns += c.end - c.start;
    time_ns += c.end - c.start;
  }
  if (call_timed) {
    ++call_timed_count;
    call_timed_bytes += c.bytes;
    call_ns += c.call_end - c.call_start;
    if (!gpu_timed) time_ns += c.call_end - c.call_start;
  }
}

void CopyStats::merge(const CopyStats& o) {
  count += o.count;
  bytes += o.bytes;
  time_ns += o.time_ns;
  gpu_timed_count += o.gpu_timed_count;
  gpu_timed_bytes += o.gpu_timed_bytes;
  gpu_ns += o.gpu_ns;
  call_timed_count += o.call_timed_count;
  call_timed_bytes += o.call_timed_bytes;
  call_ns += o.call_ns;
}

std::optional<double> CopyStats::gpuBandwidthBytesPerSecond() const {
  if (gpu_ns <= 0) return std::nullopt;
  return static_cast<double>(gpu_timed_bytes) * 1e9 / static_cast<double>(gpu_ns);
}

std::optional<double> CopyStats::bandwidthBytesPerSecond() const {
  if (auto gpu = gpuBandwidthBytesPerSecond()) return gpu;
  if (call_ns <= 0) return std::nullopt;
  return static_cast<double>(call_timed_bytes) * 1e9 / static_cast<double>(call_ns);
}

model::MemoryKind hostMemoryKind(const model::Copy& c) {
  using model::CopyDirection;
  using model::MemoryKind;
  switch (c.direction) {
  case CopyDirection::HostToDevice: return c.src;
  case CopyDirection::DeviceToHost: return c.dst;
  case CopyDirection::HostToHost:
    if (c.src == MemoryKind::Pageable || c.dst == MemoryKind::Pageable) return MemoryKind::Pageable;
    return c.src;
  case CopyDirection::DeviceToDevice:
  case CopyDirection::PeerToPeer: return MemoryKind::Device;
  case CopyDirection::Unknown: break;
  }
  return MemoryKind::Unknown;
}

CopyStats CopyResult::hostTransfers(model::MemoryKind host) const {
  CopyStats s = at(model::CopyDirection::HostToDevice, host);
  s.merge(at(model::CopyDirection::DeviceToHost, host));
  return s;
}

void CopyResult::merge(const CopyResult& o) {
  total.merge(o.total);
  synchronous.merge(o.synchronous);
  for (size_t d = 0; d < kCopyDirections; ++d) {
    by_direction[d].merge(o.by_direction[d]);
    for (size_t k = 0; k < kMemoryKinds; ++k)
      by_direction_host[d][k].merge(o.by_direction_host[d][k]);
  }
}

CopyResult analyzeCopies(const model::Trace& trace) {
  CopyResult r;
  for (const auto& p : trace.processes) {
    for (const auto& c : p.copies) {
      auto d = static_cast<size_t>(c.direction);
      auto k = static_cast<size_t>(hostMemoryKind(c));
      if (d >= kCopyDirections) d = 0; // out-of-range enum from a corrupt source: "unknown"
      if (k >= kMemoryKinds) k = 0;
      r.total.add(c);
      r.by_direction[d].add(c);
      r.by_direction_host[d][k].add(c);
      if (!c.async) r.synchronous.add(c);
    }
  }
  return r;
}

} // namespace gpuwise::advisor
