#include "tests/simdevice/core/memory_map.h"

#include <sys/mman.h>
#include <unistd.h>

namespace gpuwise::sim {

std::optional<Region> MemoryMap::remove(const void* p) {
  auto it = regions_.find(reinterpret_cast<uintptr_t>(p));
  if (it == regions_.end()) return std::nullopt;
  Region region = it->second;
  regions_.erase(it);
  return region;
}

const Region* MemoryMap::find(const void* p) const {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  auto it = regions_.upper_bound(addr);
  if (it == regions_.begin()) return nullptr;
  --it;
  const Region& region = it->second;
  // A zero-size lookup at one past the end is outside; the region covers [base, base + size).
  if (addr >= region.base && addr < region.base + (region.size == 0 ? 1 : region.size)) {
    return &region;
  }
  return nullptr;
}

bool MemoryMap::overlaps(const void* p, size_t bytes) const {
  const auto lo = reinterpret_cast<uintptr_t>(p);
  const uintptr_t hi = lo + bytes;
  auto it = regions_.lower_bound(hi);
  if (it == regions_.begin()) return false;
  --it;
  return it->second.base + it->second.size > lo;
}

void* mapBacking(size_t bytes, size_t* mapped) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t length = ((bytes == 0 ? 1 : bytes) + page - 1) / page * page;
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  *mapped = length;
  return p;
}

void unmapBacking(void* p, size_t mapped) {
  if (p != nullptr && mapped != 0) munmap(p, mapped);
}

} // namespace gpuwise::sim
