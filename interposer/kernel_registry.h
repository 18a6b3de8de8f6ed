// Kernel names as the runtime registers them: __cudaRegisterFunction maps a host stub address to
// its mangled device name, and __cudaGetKernel (CUDA 13's <<<>>> path) maps a cudaKernel_t handle
// to the host stub. Launch events carry only the pointer; the drain thread names it here.
//
// Registration is rare (static initialisation, module loads) and may lock; lookups happen on the
// drain thread once per new pointer (the converter caches them).
//
// Threads: any for register*(); lookups from the drain thread. Leaked at exit, kept across fork
// (the child's code is the parent's).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace gpuwise::interposer {

class KernelRegistry {
public:
  // The process-wide registry (created on first use, never destroyed).
  static KernelRegistry& process();

  void registerFunction(const void* host_fun, const char* device_name);
  void registerKernelHandle(const void* handle, const void* host_fun);
  // Name for a host stub or a kernel handle; empty when unknown.
  std::string nameOf(const void* func) const;
  // Advances whenever something is registered, so callers can retry names they could not find.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  size_t size() const;

  void lockForFork() { mutex_.lock(); }
  void unlockAfterFork() { mutex_.unlock(); }

private:
  mutable std::mutex mutex_;
  std::unordered_map<const void*, std::string> names_;   // host stub -> device name
  std::unordered_map<const void*, const void*> handles_; // cudaKernel_t -> host stub
  std::atomic<uint64_t> generation_{0};
};

} // namespace gpuwise::interposer
