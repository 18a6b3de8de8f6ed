#include "tests/simdevice/core/kernel_registry.h"

namespace gpuwise::sim {

KernelRegistry& KernelRegistry::instance() {
  // Leaked on purpose: atexit handlers (nvcc's __cudaUnregisterBinaryUtil, profilers flushing
  // records that point at kernel names) run after static destructors would have freed it.
  static KernelRegistry* registry = new KernelRegistry();
  return *registry;
}

void** KernelRegistry::registerModule(const void* fatbin) {
  std::lock_guard lock(mutex_);
  modules_.push_back(const_cast<void*>(fatbin));
  void** handle = &modules_.back();
  live_modules_.insert(handle);
  return handle;
}

void KernelRegistry::unregisterModule(void** module) {
  std::lock_guard lock(mutex_);
  live_modules_.erase(module); // kernels stay: their names may still be referenced by records
}

void KernelRegistry::registerFunction(void** module, const void* host_fun, const char* device_name,
                                      int thread_limit) {
  if (host_fun == nullptr || device_name == nullptr) return;
  std::lock_guard lock(mutex_);
  if (auto it = by_host_fun_.find(host_fun); it != by_host_fun_.end()) return;
  Entry& entry = entries_.emplace_back();
  entry.name = device_name;
  entry.module = module;
  entry.info.host_fun = host_fun;
  entry.info.name = entry.name.c_str();
  if (thread_limit > 0) entry.info.max_threads_per_block = thread_limit;
  entry.info.handle = reinterpret_cast<cudaKernel_t>(&entry);
  by_host_fun_[host_fun] = &entry;
  handles_.insert(&entry);
}

void KernelRegistry::registerVar(void** module, const void* host_var, const char* device_name,
                                 size_t size) {
  std::lock_guard lock(mutex_);
  vars_[host_var] = size;
}

KernelRegistry::Entry* KernelRegistry::findLocked(const void* func) const {
  if (func == nullptr) return nullptr;
  if (auto it = by_host_fun_.find(func); it != by_host_fun_.end()) return it->second;
  if (handles_.count(func) != 0) return static_cast<Entry*>(const_cast<void*>(func));
  return nullptr;
}

bool KernelRegistry::find(const void* func, KernelInfo* out) const {
  std::lock_guard lock(mutex_);
  Entry* entry = findLocked(func);
  if (entry == nullptr) return false;
  *out = entry->info;
  return true;
}

cudaError_t KernelRegistry::handleFor(const void* host_fun, cudaKernel_t* out) const {
  if (out == nullptr) return cudaErrorInvalidValue;
  std::lock_guard lock(mutex_);
  Entry* entry = findLocked(host_fun);
  if (entry == nullptr) return cudaErrorInvalidDeviceFunction;
  *out = entry->info.handle;
  return cudaSuccess;
}

bool KernelRegistry::setCost(const void* func, double work, int registers, size_t static_shared) {
  std::lock_guard lock(mutex_);
  Entry* entry = findLocked(func);
  if (entry == nullptr) return false;
  if (work > 0) entry->info.work = work;
  if (registers > 0 && registers <= 255) entry->info.registers = registers;
  entry->info.static_shared = static_shared;
  return true;
}

} // namespace gpuwise::sim
