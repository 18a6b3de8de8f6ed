#include "interposer/kernel_registry.h"

namespace gpuwise::interposer {

KernelRegistry& KernelRegistry::process() {
  static KernelRegistry* r = new KernelRegistry; // leaked: registration can run during exit
  return *r;
}

void KernelRegistry::registerFunction(const void* host_fun, const char* device_name) {
  if (!host_fun || !device_name) return;
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    names_[host_fun] = device_name;
    generation_.fetch_add(1, std::memory_order_release);
  } catch (...) {
    // Out of memory while registering: the kernel stays unnamed; never let it reach the runtime.
  }
}

void KernelRegistry::registerKernelHandle(const void* handle, const void* host_fun) {
  if (!handle || !host_fun) return;
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    handles_[handle] = host_fun;
    generation_.fetch_add(1, std::memory_order_release);
  } catch (...) {
  }
}

std::string KernelRegistry::nameOf(const void* func) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto n = names_.find(func);
  if (n != names_.end()) return n->second;
  auto h = handles_.find(func);
  if (h != handles_.end()) {
    n = names_.find(h->second);
    if (n != names_.end()) return n->second;
  }
  return {};
}

size_t KernelRegistry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return names_.size();
}

} // namespace gpuwise::interposer
