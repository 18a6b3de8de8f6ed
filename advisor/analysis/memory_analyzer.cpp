#include "advisor/analysis/memory_analyzer.h"

#include "advisor/analysis/allocation_replay.h"

#include <algorithm>
#include <map>

namespace gpuwise::advisor {
namespace {

struct Peak {
  int64_t reserved = -1, allocated = -1;
};

} // namespace

const char* toString(MemorySource s) {
  switch (s) {
  case MemorySource::Reserved: return "reserved";
  case MemorySource::Allocated: return "allocated";
  case MemorySource::Allocations: return "allocations";
  }
  return "unknown";
}

std::optional<uint64_t> MemoryResult::peakBytes() const {
  if (devices.empty()) return std::nullopt;
  uint64_t peak = 0;
  for (const auto& d : devices)
    peak = std::max(peak, d.peak_bytes);
  return peak;
}

void MemoryResult::merge(const MemoryResult& o) {
  for (const auto& d : o.devices) {
    auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceMemory& x) {
      return x.pid == d.pid && x.rank == d.rank && x.device == d.device;
    });
    if (it == devices.end()) {
      devices.push_back(d);
    } else if (d.peak_bytes > it->peak_bytes) {
      it->peak_bytes = d.peak_bytes;
      it->source = d.source;
    }
  }
}

MemoryResult analyzeMemory(const model::Trace& trace) {
  MemoryResult r;
  for (const auto& p : trace.processes) {
    std::map<uint32_t, Peak> samples;
    for (const auto& s : p.memory_samples) {
      auto& peak = samples[s.device];
      peak.reserved = std::max(peak.reserved, s.reserved_bytes);
      peak.allocated = std::max(peak.allocated, s.allocated_bytes);
    }
    const auto from_allocations = replayAllocations(p);
    std::map<uint32_t, DeviceMemory> found;
    for (const auto& [device, peak] : samples) {
      if (peak.reserved >= 0) {
        found[device] = {p.info.pid, p.info.rank, device, static_cast<uint64_t>(peak.reserved),
                         MemorySource::Reserved};
      } else if (peak.allocated >= 0) {
        found[device] = {p.info.pid, p.info.rank, device, static_cast<uint64_t>(peak.allocated),
                         MemorySource::Allocated};
      }
    }
    for (const auto& [device, replay] : from_allocations) {
      if (replay.allocated && !found.contains(device))
        found[device] = {p.info.pid, p.info.rank, device, replay.peak_bytes,
                         MemorySource::Allocations};
    }
    for (auto& [device, m] : found) {
      if (const auto* info = p.device(device)) m.memory_total_bytes = info->memory_total_bytes;
      r.devices.push_back(m);
    }
  }
  return r;
}

} // namespace gpuwise::advisor
