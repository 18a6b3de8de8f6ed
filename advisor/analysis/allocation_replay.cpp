#include "advisor/analysis/allocation_replay.h"

#include <algorithm>
#include <unordered_map>

namespace gpuwise::advisor {

bool countsAsDeviceMemory(model::MemoryKind k) {
  return k == model::MemoryKind::Device || k == model::MemoryKind::Managed ||
         k == model::MemoryKind::Unknown;
}

std::map<uint32_t, DeviceAllocations> replayAllocations(const model::ProcessTrace& p) {
  std::vector<const model::Allocation*> order;
  for (const auto& a : p.allocations)
    if (countsAsDeviceMemory(a.kind) && a.time != 0) order.push_back(&a);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->time < b->time; });
  std::map<uint32_t, DeviceAllocations> devices;
  std::map<uint32_t, uint64_t> current;
  std::unordered_map<uint64_t, uint64_t> live; // address -> bytes, for frees without a size
  for (const auto* a : order) {
    auto& cur = current[a->device];
    auto& device = devices[a->device];
    if (!a->is_free) {
      cur += a->bytes;
      if (a->address != 0) live[a->address] = a->bytes;
      device.allocated = true;
    } else {
      uint64_t bytes = a->bytes;
      if (auto it = live.find(a->address); a->address != 0 && it != live.end()) {
        if (bytes == 0) bytes = it->second;
        live.erase(it);
      }
      cur -= std::min(cur, bytes);
    }
    device.levels.push_back({a->time, cur});
    device.peak_bytes = std::max(device.peak_bytes, cur);
  }
  return devices;
}

} // namespace gpuwise::advisor
