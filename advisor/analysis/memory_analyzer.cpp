#include "advisor/analysis/memory_analyzer.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace gpuwise::advisor {
namespace {

bool countsAsDeviceMemory(model::MemoryKind k) {
  return k == model::MemoryKind::Device || k == model::MemoryKind::Managed ||
         k == model::MemoryKind::Unknown;
}

struct Peak {
  int64_t reserved = -1, allocated = -1;
};

// Running sum of allocations on each device, in time order.
std::map<uint32_t, uint64_t> peaksFromAllocations(const model::ProcessTrace& p) {
  std::vector<const model::Allocation*> order;
  for (const auto& a : p.allocations)
    if (countsAsDeviceMemory(a.kind)) order.push_back(&a);
  std::stable_sort(
      order.begin(), order.end(),
      [](const model::Allocation* a, const model::Allocation* b) { return a->time < b->time; });
  std::map<uint32_t, uint64_t> current, peak;
  std::unordered_map<uint64_t, uint64_t> live; // address -> bytes, for frees without a size
  for (const auto* a : order) {
    auto& cur = current[a->device];
    if (!a->is_free) {
      cur += a->bytes;
      if (a->address != 0) live[a->address] = a->bytes;
      peak[a->device] = std::max(peak[a->device], cur);
      continue;
    }
    uint64_t bytes = a->bytes;
    if (auto it = live.find(a->address); a->address != 0 && it != live.end()) {
      if (bytes == 0) bytes = it->second;
      live.erase(it);
    }
    cur -= std::min(cur, bytes);
  }
  return peak;
}

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
    auto from_allocations = peaksFromAllocations(p);
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
    for (const auto& [device, bytes] : from_allocations) {
      if (!found.contains(device))
        found[device] = {p.info.pid, p.info.rank, device, bytes, MemorySource::Allocations};
    }
    for (auto& [device, m] : found) {
      if (const auto* info = p.device(device)) m.memory_total_bytes = info->memory_total_bytes;
      r.devices.push_back(m);
    }
  }
  return r;
}

} // namespace gpuwise::advisor
