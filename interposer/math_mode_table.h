// The math mode each cuBLAS handle was given with cublasSetMathMode, for the matmul hooks to
// record beside the call's types: TF32 tensor-op math turns an FP32 GEMM into a TF32 one.
//
// A fixed open-addressing table of atomics: set() and get() never allocate or lock, so both run on
// application threads. Handles past the capacity are not tracked (get() answers -1, "unknown");
// a handle destroyed and its address reused keeps the last mode set for that address.
//
// Threads: any.
#pragma once

#include <atomic>
#include <cstdint>

namespace gpuwise::interposer {

class MathModeTable {
public:
  static constexpr uint32_t kCapacity = 1024;

  void set(const void* handle, int32_t mode) {
    const uintptr_t key = reinterpret_cast<uintptr_t>(handle);
    if (!key) return;
    for (uint32_t i = 0, h = slotOf(key); i < kCapacity; ++i, h = (h + 1) & (kCapacity - 1)) {
      uintptr_t k = keys_[h].load(std::memory_order_acquire);
      if (k == 0) {
        uintptr_t expected = 0;
        if (!keys_[h].compare_exchange_strong(expected, key, std::memory_order_acq_rel) &&
            expected != key)
          continue;
        k = key;
      }
      if (k == key) {
        modes_[h].store(mode, std::memory_order_release);
        return;
      }
    }
  }

  // The mode last set for `handle`, -1 when it was never set (or not tracked).
  int32_t get(const void* handle) const {
    const uintptr_t key = reinterpret_cast<uintptr_t>(handle);
    if (!key) return -1;
    for (uint32_t i = 0, h = slotOf(key); i < kCapacity; ++i, h = (h + 1) & (kCapacity - 1)) {
      uintptr_t k = keys_[h].load(std::memory_order_acquire);
      if (k == key) return modes_[h].load(std::memory_order_acquire);
      if (k == 0) return -1;
    }
    return -1;
  }

private:
  static uint32_t slotOf(uintptr_t key) {
    return uint32_t((key >> 4) * 0x9E3779B97F4A7C15ull >> 40) & (kCapacity - 1);
  }
  // Zero-initialised (constant-initialised as a global): no constructor runs before use.
  std::atomic<uintptr_t> keys_[kCapacity] = {};
  std::atomic<int32_t> modes_[kCapacity] = {};
};

} // namespace gpuwise::interposer
