// The address ranges the simulated device knows: device allocations (real host memory standing in
// for GPU memory), pinned host memory (cudaMallocHost / cudaHostAlloc / cudaHostRegister) and
// managed memory. Anything else is pageable host memory. Copies classify their pointers here;
// that decides the copy's direction, its CUPTI src/dst kinds and its bandwidth.
//
// Not thread-safe: the simulator calls it under its mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>

namespace gpuwise::sim {

enum class MemKind : uint8_t { Pageable, Pinned, Device, Managed };

struct Region {
  uintptr_t base = 0;
  size_t size = 0;      // bytes the program asked for
  size_t mapped = 0;    // bytes of backing memory we mapped (0 for cudaHostRegister'ed memory)
  size_t accounted = 0; // bytes charged to the device's memory
  MemKind kind = MemKind::Device;
  int device = 0;
  bool async = false;      // cudaMallocAsync
  bool registered = false; // cudaHostRegister: the program owns the memory
};

class MemoryMap {
public:
  void add(const Region& region) { regions_[region.base] = region; }
  // Removes the region starting exactly at p.
  std::optional<Region> remove(const void* p);
  // The region containing p, or nullptr.
  const Region* find(const void* p) const;
  // True when [p, p + bytes) overlaps a known region.
  bool overlaps(const void* p, size_t bytes) const;
  void clear() { regions_.clear(); }

private:
  std::map<uintptr_t, Region> regions_;
};

// Backing memory for a simulated allocation: anonymous, lazily committed (MAP_NORESERVE), so a
// program may "allocate" gigabytes of device memory and pay only for the pages it touches.
void* mapBacking(size_t bytes, size_t* mapped);
void unmapBacking(void* p, size_t mapped);

} // namespace gpuwise::sim
