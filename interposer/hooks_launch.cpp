// Runtime hooks for kernel registration and launches (including CUDA 13's <<<>>> path, which nvcc
// compiles to __cudaGetKernel once per kernel and __cudaLaunchKernel per launch), graph launches,
// and cudaSetDevice (so records carry the device the calling thread is on).
//
// Every hook forwards to the real function and returns its result unchanged, records only when the
// shim is recording, and cannot throw.
#include "interposer/cuda_declarations.h"
#include "interposer/kernel_registry.h"
#include "interposer/real_symbol.h"
#include "interposer/recorder.h"

using namespace gpuwise::interposer;

namespace {

GPUWISE_REAL_RUNTIME(__cudaRegisterFunction);
GPUWISE_REAL_RUNTIME(__cudaGetKernel);
GPUWISE_REAL_RUNTIME(__cudaLaunchKernel);
GPUWISE_REAL_RUNTIME(__cudaLaunchKernel_ptsz);
GPUWISE_REAL_RUNTIME(cudaLaunchKernel);
GPUWISE_REAL_RUNTIME(cudaLaunchKernel_ptsz);
GPUWISE_REAL_RUNTIME(cudaLaunchKernelExC);
GPUWISE_REAL_RUNTIME(cudaLaunchKernelExC_ptsz);
GPUWISE_REAL_RUNTIME(cudaGraphLaunch);
GPUWISE_REAL_RUNTIME(cudaSetDevice);

// What a runtime entry point answers when the real runtime is not there.
constexpr cudaError_t kNoRuntime = cudaErrorInitializationError;

inline uint16_t clamp16(unsigned v) {
  return v > 0xffff ? 0xffff : uint16_t(v);
}

// The launch hooks count inline and record out of line. In the CUPTI tier, the default, a hook only
// counts. Each hook states its real call twice, once per branch: with one closure shared by both,
// gcc built it on the stack before the branch, and the count path paid for the spills. Counting
// inside recordLaunch cost as much again in register saves: 16 -> 8 ns added per launch, 21 -> 14
// ns with cold caches (interposer_launch_bench BM_LaunchCounted).
template <class Call>
[[gnu::noinline]] cudaError_t recordLaunch(ApiId api, FuncKind kind, const void* func, dim3 grid,
                                           dim3 block, size_t shared, cudaStream_t stream,
                                           Call&& call) {
  Recorder rec;
  if (!rec.begin()) return call();
  cudaError_t r = call();
  if (RawEvent* e = rec.end(EventKind::Launch, api, r, uint8_t(kind))) {
    e->u.launch.func = func;
    e->u.launch.stream = reinterpret_cast<uint64_t>(stream);
    e->u.launch.grid_x = grid.x;
    e->u.launch.grid_y = clamp16(grid.y);
    e->u.launch.grid_z = clamp16(grid.z);
    e->u.launch.block_x = clamp16(block.x);
    e->u.launch.block_y = clamp16(block.y);
    e->u.launch.block_z = clamp16(block.z);
    e->u.launch.flags = 0;
    e->u.launch.shared_bytes = shared > 0xffffffffu ? 0xffffffffu : uint32_t(shared);
    rec.publish();
  }
  return r;
}

} // namespace

GPUWISE_EXPORT void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun,
                                           char* deviceFun, const char* deviceName,
                                           int thread_limit, uint3* tid, uint3* bid, dim3* bDim,
                                           dim3* gDim, int* wSize) {
  // Static constructors call this before main: it only notes the name (rare, may lock) and never
  // starts the shim.
  KernelRegistry::process().registerFunction(hostFun, deviceName ? deviceName : deviceFun);
  if (auto fn = real___cudaRegisterFunction.get())
    fn(fatCubinHandle, hostFun, deviceFun, deviceName, thread_limit, tid, bid, bDim, gDim, wSize);
}

GPUWISE_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun) {
  auto fn = real___cudaGetKernel.get();
  if (!fn) return kNoRuntime;
  cudaError_t r = fn(kernel, hostFun);
  if (r == cudaSuccess && kernel && *kernel)
    KernelRegistry::process().registerKernelHandle(*kernel, hostFun);
  return r;
}

GPUWISE_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block,
                                              void** args, size_t shared, cudaStream_t stream) {
  auto fn = real___cudaLaunchKernel.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(kernel, grid, block, args, shared, stream);
  if (countingLaunches())
    return countLaunch([=] { return fn(kernel, grid, block, args, shared, stream); });
  return recordLaunch(ApiId::__cudaLaunchKernel, FuncKind::KernelHandle, kernel, grid, block,
                      shared, stream,
                      [=] { return fn(kernel, grid, block, args, shared, stream); });
}

GPUWISE_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block,
                                                   void** args, size_t shared,
                                                   cudaStream_t stream) {
  auto fn = real___cudaLaunchKernel_ptsz.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(kernel, grid, block, args, shared, stream);
  if (countingLaunches())
    return countLaunch([=] { return fn(kernel, grid, block, args, shared, stream); });
  return recordLaunch(ApiId::__cudaLaunchKernel_ptsz, FuncKind::KernelHandle, kernel, grid, block,
                      shared, stream,
                      [=] { return fn(kernel, grid, block, args, shared, stream); });
}

GPUWISE_EXPORT cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args,
                                            size_t shared, cudaStream_t stream) {
  auto fn = real_cudaLaunchKernel.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(func, grid, block, args, shared, stream);
  if (countingLaunches())
    return countLaunch([=] { return fn(func, grid, block, args, shared, stream); });
  return recordLaunch(ApiId::cudaLaunchKernel, FuncKind::HostFunction, func, grid, block, shared,
                      stream, [=] { return fn(func, grid, block, args, shared, stream); });
}

GPUWISE_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 grid, dim3 block,
                                                 void** args, size_t shared, cudaStream_t stream) {
  auto fn = real_cudaLaunchKernel_ptsz.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(func, grid, block, args, shared, stream);
  if (countingLaunches())
    return countLaunch([=] { return fn(func, grid, block, args, shared, stream); });
  return recordLaunch(ApiId::cudaLaunchKernel_ptsz, FuncKind::HostFunction, func, grid, block,
                      shared, stream, [=] { return fn(func, grid, block, args, shared, stream); });
}

GPUWISE_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func,
                                               void** args) {
  auto fn = real_cudaLaunchKernelExC.get();
  if (!fn) return kNoRuntime;
  // A null config: the runtime reports the bad argument.
  if (Recorder::off() || !config) return fn(config, func, args);
  if (countingLaunches()) return countLaunch([=] { return fn(config, func, args); });
  return recordLaunch(ApiId::cudaLaunchKernelExC, FuncKind::HostFunction, func, config->gridDim,
                      config->blockDim, config->dynamicSmemBytes, config->stream,
                      [=] { return fn(config, func, args); });
}

GPUWISE_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config,
                                                    const void* func, void** args) {
  auto fn = real_cudaLaunchKernelExC_ptsz.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off() || !config) return fn(config, func, args);
  if (countingLaunches()) return countLaunch([=] { return fn(config, func, args); });
  return recordLaunch(ApiId::cudaLaunchKernelExC_ptsz, FuncKind::HostFunction, func,
                      config->gridDim, config->blockDim, config->dynamicSmemBytes, config->stream,
                      [=] { return fn(config, func, args); });
}

GPUWISE_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  auto fn = real_cudaGraphLaunch.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(exec, stream);
  Recorder rec;
  if (!rec.begin()) return fn(exec, stream);
  cudaError_t r = fn(exec, stream);
  if (RawEvent* e = rec.end(EventKind::GraphLaunch, ApiId::cudaGraphLaunch, r)) {
    e->u.api.handle = reinterpret_cast<uint64_t>(exec);
    e->u.api.stream = reinterpret_cast<uint64_t>(stream);
    rec.publish();
  }
  return r;
}

GPUWISE_EXPORT cudaError_t cudaSetDevice(int device) {
  auto fn = real_cudaSetDevice.get();
  if (!fn) return kNoRuntime;
  cudaError_t r = fn(device);
  if (r == cudaSuccess && device >= 0) t_state.device = uint32_t(device);
  return r;
}
