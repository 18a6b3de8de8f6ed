// What nvcc's generated code registers: fat binaries (modules), kernels (host stub address ->
// mangled device name) and device variables. Kernels never run on the simulated device; what the
// registry keeps is what the launch path needs: the name CUPTI reports and the kernel's cost hints.
//
// Registration happens in static constructors, before main and before any simulator exists, so
// the registry is its own leaked singleton that survives fork (a child launches the kernels its
// parent registered). Any thread may call; one internal mutex, never held while calling out.
// Names are owned here and never freed: CUPTI records point at them until the process ends.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <cuda_runtime_api.h>

namespace gpuwise::sim {

// A snapshot of one registered kernel, safe to use without the registry lock.
struct KernelInfo {
  const void* host_fun = nullptr;
  const char* name = nullptr; // mangled device name, lives until process exit
  double work = 1.0;          // cost model work factor (gwsimSetKernelWork)
  int registers = 32;         // registers per thread reported to CUPTI and the occupancy model
  size_t static_shared = 0;   // static shared memory per block
  int max_threads_per_block = 1024;
  cudaKernel_t handle = nullptr; // what __cudaGetKernel hands out for it
};

class KernelRegistry {
public:
  static KernelRegistry& instance();

  void** registerModule(const void* fatbin);
  void unregisterModule(void** module);
  void registerFunction(void** module, const void* host_fun, const char* device_name,
                        int thread_limit);
  void registerVar(void** module, const void* host_var, const char* device_name, size_t size);

  // Finds a kernel by host stub address or by the cudaKernel_t handle __cudaGetKernel returned
  // (the runtime accepts both where it takes a `const void* func`).
  bool find(const void* func_or_handle, KernelInfo* out) const;
  // __cudaGetKernel: the handle for a registered host stub.
  cudaError_t handleFor(const void* host_fun, cudaKernel_t* out) const;
  // gwsimSetKernelWork: false when func is not a registered kernel.
  bool setCost(const void* func_or_handle, double work, int registers, size_t static_shared);

  // fork() support: the prepare handler locks, the parent and child handlers unlock.
  void lockForFork() { mutex_.lock(); }
  void unlockAfterFork() { mutex_.unlock(); }

private:
  struct Entry {
    KernelInfo info;
    std::string name;
    void** module = nullptr;
  };
  KernelRegistry() = default;
  Entry* findLocked(const void* func_or_handle) const;

  mutable std::mutex mutex_;
  std::deque<Entry> entries_; // stable addresses: an Entry* is the cudaKernel_t handle
  std::unordered_map<const void*, Entry*> by_host_fun_;
  std::unordered_set<const void*> handles_;
  std::deque<void*> modules_; // one slot per module: the void** handed back to nvcc's code
  std::unordered_set<void**> live_modules_;
  std::unordered_map<const void*, size_t> vars_;
};

} // namespace gpuwise::sim
