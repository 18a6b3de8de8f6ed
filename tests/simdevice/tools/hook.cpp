// libgwsim_test_hook.so: an LD_PRELOAD library shaped like the shim's hooks (forwarding with
// dlvsym(RTLD_NEXT, name, "libcudart.so.13")), so a test can show that interposing over the
// stand-in works: every launch passes through the hook and reaches the simulator. At exit it
// writes `launches=N memcpys=N simulated=0|1` to $GWSIM_HOOK_OUT.
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime_api.h>

namespace {

std::atomic<long> g_launches{0}, g_memcpys{0};

template <typename Fn> Fn next(const char* name) {
  void* symbol = dlvsym(RTLD_NEXT, name, "libcudart.so.13");
  return reinterpret_cast<Fn>(symbol != nullptr ? symbol : dlsym(RTLD_NEXT, name));
}

[[gnu::destructor]] void report() {
  const char* path = std::getenv("GWSIM_HOOK_OUT");
  FILE* out = path != nullptr ? std::fopen(path, "w") : nullptr;
  if (out == nullptr) return;
  auto is_simulated = reinterpret_cast<int (*)()>(dlsym(RTLD_NEXT, "gwsimIsSimulated"));
  std::fprintf(out, "launches=%ld memcpys=%ld simulated=%d\n", g_launches.load(), g_memcpys.load(),
               is_simulated != nullptr ? is_simulated() : 0);
  std::fclose(out);
}

} // namespace

extern "C" __attribute__((visibility("default"))) cudaError_t
__cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                   cudaStream_t stream) {
  using Fn = cudaError_t (*)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
  static const Fn real = next<Fn>("__cudaLaunchKernel");
  g_launches.fetch_add(1, std::memory_order_relaxed);
  return real(kernel, grid, block, args, shared, stream);
}

extern "C" __attribute__((visibility("default"))) cudaError_t
cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                cudaStream_t stream) {
  using Fn = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
  static const Fn real = next<Fn>("cudaMemcpyAsync");
  g_memcpys.fetch_add(1, std::memory_order_relaxed);
  return real(dst, src, bytes, kind, stream);
}
