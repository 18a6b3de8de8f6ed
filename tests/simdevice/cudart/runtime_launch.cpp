// Stand-in libcudart.so.13: nvcc's registration and <<<>>> launch path, the launch API, kernel
// attributes and occupancy. Kernels never execute: a launch is placed on the simulator's timeline.
//
// The CUDA 13 <<<>>> path, as `nvcc -cuda` shows it:
//   static ctor: __cudaRegisterFatBinary -> __cudaRegisterFunction (host stub -> mangled name)
//                -> __cudaRegisterFatBinaryEnd; atexit(__cudaUnregisterFatBinary)
//   k<<<g, b, smem, s>>>(args): __cudaPushCallConfiguration(g, b, smem, s); then in the stub:
//                __cudaGetKernel(&handle, stub) once, __cudaPopCallConfiguration(...),
//                __cudaLaunchKernel(handle, g, b, args, smem, s)
#include <algorithm>
#include <vector>

#include <cuda_occupancy.h>

#include "tests/simdevice/core/kernel_registry.h"
#include "tests/simdevice/cudart/runtime_common.h"

using namespace gpuwise::sim;

namespace {

struct CallConfiguration {
  dim3 grid, block;
  size_t shared = 0;
  cudaStream_t stream = nullptr;
};

std::vector<CallConfiguration>& configurationStack() {
  thread_local std::vector<CallConfiguration> stack;
  return stack;
}

// What __cudaLaunchKernel's callbacks carry as functionParams: cudaLaunchKernel's parameter
// layout with the cudaKernel_t in place of the host function (no generated struct exists for it).
struct InternalLaunchParams {
  cudaKernel_t kernel;
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};

cudaError_t launchCommon(uint32_t cbid, const char* name, const void* params, const void* func,
                         dim3 grid, dim3 block, size_t shared, cudaStream_t stream, bool per_thread,
                         bool cooperative, DriverCall driver) {
  KernelInfo info;
  const char* symbol = KernelRegistry::instance().find(func, &info) ? info.name : nullptr;
  ApiScope api(cbid, name, params, symbol, driver);
  LaunchRequest request{func, grid, block, shared, stream, per_thread, cooperative};
  const cudaError_t err = api.sim().launch(request, api.call());
  hostCost(api, api.sim().config().launch_host_ns);
  return api.finish(err);
}

cudaError_t launchEx(uint32_t cbid, const char* name, const cudaLaunchConfig_t* config,
                     const void* func, void** args, bool per_thread) {
  if (config == nullptr) {
    ApiScope api(cbid, name, nullptr);
    return api.finish(cudaErrorInvalidValue);
  }
  bool cooperative = false;
  for (unsigned i = 0; config->attrs != nullptr && i < config->numAttrs; ++i) {
    if (config->attrs[i].id == cudaLaunchAttributeCooperative) {
      cooperative = config->attrs[i].val.cooperative != 0;
    }
  }
  cudaLaunchKernelExC_v11060_params params{config, func, args};
  return launchCommon(cbid, name, &params, func, config->gridDim, config->blockDim,
                      config->dynamicSmemBytes, config->stream, per_thread, cooperative,
                      kCuLaunchKernelEx);
}

} // namespace

// ---- registration (static constructors: no CUPTI tracing, no injection) ----

GWSIM_EXPORT void** __cudaRegisterFatBinary(void* fatCubin) {
  try {
    return KernelRegistry::instance().registerModule(fatCubin);
  } catch (...) {
    return nullptr;
  }
}

GWSIM_EXPORT void __cudaRegisterFatBinaryEnd(void** fatCubinHandle) {}

GWSIM_EXPORT void __cudaUnregisterFatBinary(void** fatCubinHandle) {
  try {
    KernelRegistry::instance().unregisterModule(fatCubinHandle);
  } catch (...) {
  }
}

GWSIM_EXPORT void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun,
                                         char* deviceFun, const char* deviceName, int thread_limit,
                                         uint3* tid, uint3* bid, dim3* bDim, dim3* gDim,
                                         int* wSize) {
  try {
    KernelRegistry::instance().registerFunction(fatCubinHandle, hostFun, deviceName, thread_limit);
  } catch (...) {
  }
}

GWSIM_EXPORT void __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* deviceAddress,
                                    const char* deviceName, int ext, size_t size, int constant,
                                    int global) {
  try {
    KernelRegistry::instance().registerVar(fatCubinHandle, hostVar, deviceName, size);
  } catch (...) {
  }
}

GWSIM_EXPORT void __cudaRegisterManagedVar(void** fatCubinHandle, void** hostVarPtrAddress,
                                           char* deviceAddress, const char* deviceName, int ext,
                                           size_t size, int constant, int global) {
  try {
    KernelRegistry::instance().registerVar(fatCubinHandle, hostVarPtrAddress, deviceName, size);
  } catch (...) {
  }
}

GWSIM_EXPORT char __cudaInitModule(void** fatCubinHandle) {
  return 1;
}

// ---- the <<<>>> launch path ----

GWSIM_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                  struct CUstream_st* stream) {
  try {
    configurationStack().push_back({gridDim, blockDim, sharedMem, stream});
    return 0;
  } catch (...) {
    return 1; // the generated code then skips the launch
  }
}

GWSIM_EXPORT cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim,
                                                    size_t* sharedMem, void* stream) {
  auto& stack = configurationStack();
  if (stack.empty()) return cudaErrorMissingConfiguration;
  const CallConfiguration config = stack.back();
  stack.pop_back();
  *gridDim = config.grid;
  *blockDim = config.block;
  *sharedMem = config.shared;
  *static_cast<cudaStream_t*>(stream) = config.stream;
  return cudaSuccess;
}

GWSIM_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun) {
  GWSIM_GUARD_BEGIN
  ApiScope api(GWSIM_CBID(__cudaGetKernel_v13000), "__cudaGetKernel", nullptr, nullptr, {}, false);
  return api.finish(KernelRegistry::instance().handleFor(hostFun, kernel));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                            void** args, size_t sharedMem, cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  InternalLaunchParams params{kernel, gridDim, blockDim, args, sharedMem, stream};
  return launchCommon(GWSIM_CBID(__cudaLaunchKernel_v13000), "__cudaLaunchKernel", &params, kernel,
                      gridDim, blockDim, sharedMem, stream, false, false, kCuLaunchKernel);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
                                                 void** args, size_t sharedMem,
                                                 cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  InternalLaunchParams params{kernel, gridDim, blockDim, args, sharedMem, stream};
  return launchCommon(GWSIM_CBID(__cudaLaunchKernel_ptsz_v13000), "__cudaLaunchKernel_ptsz",
                      &params, kernel, gridDim, blockDim, sharedMem, stream, true, false,
                      kCuLaunchKernel);
  GWSIM_GUARD_END
}

// ---- the launch API ----

GWSIM_EXPORT cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim,
                                          void** args, size_t sharedMem, cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaLaunchKernel_v7000_params params{func, gridDim, blockDim, args, sharedMem, stream};
  return launchCommon(GWSIM_CBID(cudaLaunchKernel_v7000), "cudaLaunchKernel", &params, func,
                      gridDim, blockDim, sharedMem, stream, false, false, kCuLaunchKernel);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim,
                                               void** args, size_t sharedMem, cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaLaunchKernel_ptsz_v7000_params params{func, gridDim, blockDim, args, sharedMem, stream};
  return launchCommon(GWSIM_CBID(cudaLaunchKernel_ptsz_v7000), "cudaLaunchKernel_ptsz", &params,
                      func, gridDim, blockDim, sharedMem, stream, true, false, kCuLaunchKernel);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim,
                                                     void** args, size_t sharedMem,
                                                     cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaLaunchCooperativeKernel_v9000_params params{func, gridDim, blockDim, args, sharedMem, stream};
  return launchCommon(GWSIM_CBID(cudaLaunchCooperativeKernel_v9000), "cudaLaunchCooperativeKernel",
                      &params, func, gridDim, blockDim, sharedMem, stream, false, true,
                      kCuLaunchKernel);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 gridDim,
                                                          dim3 blockDim, void** args,
                                                          size_t sharedMem, cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaLaunchCooperativeKernel_ptsz_v9000_params params{func, gridDim,   blockDim,
                                                       args, sharedMem, stream};
  return launchCommon(GWSIM_CBID(cudaLaunchCooperativeKernel_ptsz_v9000),
                      "cudaLaunchCooperativeKernel_ptsz", &params, func, gridDim, blockDim,
                      sharedMem, stream, true, true, kCuLaunchKernel);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func,
                                             void** args) {
  GWSIM_GUARD_BEGIN
  return launchEx(GWSIM_CBID(cudaLaunchKernelExC_v11060), "cudaLaunchKernelExC", config, func, args,
                  false);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config,
                                                  const void* func, void** args) {
  GWSIM_GUARD_BEGIN
  return launchEx(GWSIM_CBID(cudaLaunchKernelExC_ptsz_v11060), "cudaLaunchKernelExC_ptsz", config,
                  func, args, true);
  GWSIM_GUARD_END
}

// ---- kernel attributes and occupancy ----

GWSIM_EXPORT cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  GWSIM_GUARD_BEGIN
  cudaFuncGetAttributes_v3020_params params{attr, func};
  ApiScope api(GWSIM_CBID(cudaFuncGetAttributes_v3020), "cudaFuncGetAttributes", &params);
  KernelInfo info;
  if (attr == nullptr) return api.finish(cudaErrorInvalidValue);
  if (!KernelRegistry::instance().find(func, &info))
    return api.finish(cudaErrorInvalidDeviceFunction);
  const DeviceModel& model = api.sim().model(api.sim().currentDevice());
  *attr = cudaFuncAttributes{};
  attr->sharedSizeBytes = info.static_shared;
  attr->maxThreadsPerBlock =
      std::min({info.max_threads_per_block, 1024,
                model.registers_per_block / std::max(info.registers, 1) / 32 * 32});
  attr->numRegs = info.registers;
  attr->ptxVersion = model.cc_major * 10 + model.cc_minor;
  attr->binaryVersion = attr->ptxVersion;
  attr->maxDynamicSharedSizeBytes = static_cast<int>(model.shared_per_block - info.static_shared);
  attr->preferredShmemCarveout = -1;
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  GWSIM_GUARD_BEGIN
  cudaFuncSetAttribute_v9000_params params{func, attr, value};
  ApiScope api(GWSIM_CBID(cudaFuncSetAttribute_v9000), "cudaFuncSetAttribute", &params);
  KernelInfo info;
  if (!KernelRegistry::instance().find(func, &info))
    return api.finish(cudaErrorInvalidDeviceFunction);
  // Accepted and not modelled: the cost model already lets kernels use opt-in shared memory.
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

namespace {

cudaError_t occupancy(int* blocks, const void* func, int block_size, size_t dynamic_shared,
                      const Simulator& sim) {
  if (blocks == nullptr || block_size <= 0) return cudaErrorInvalidValue;
  KernelInfo info;
  if (!KernelRegistry::instance().find(func, &info)) return cudaErrorInvalidDeviceFunction;
  *blocks = occupancyBlocksPerSm(sim.model(sim.currentDevice()), block_size, info.registers,
                                 dynamic_shared + info.static_shared);
  return cudaSuccess;
}

} // namespace

GWSIM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks,
                                                                       const void* func,
                                                                       int blockSize,
                                                                       size_t dynamicSMemSize) {
  GWSIM_GUARD_BEGIN
  cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6050_params params{numBlocks, func, blockSize,
                                                                    dynamicSMemSize};
  ApiScope api(GWSIM_CBID(cudaOccupancyMaxActiveBlocksPerMultiprocessor_v6050),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor", &params);
  return api.finish(occupancy(numBlocks, func, blockSize, dynamicSMemSize, api.sim()));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* numBlocks, const void* func, int blockSize, size_t dynamicSMemSize, unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000_params params{
      numBlocks, func, blockSize, dynamicSMemSize, flags};
  ApiScope api(GWSIM_CBID(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags_v7000),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", &params);
  return api.finish(occupancy(numBlocks, func, blockSize, dynamicSMemSize, api.sim()));
  GWSIM_GUARD_END
}

// ---- simulator-only exports ----

GWSIM_EXPORT int gwsimIsSimulated(void) {
  return 1;
}

GWSIM_EXPORT int gwsimSetKernelWork(const void* func, double work, int registers_per_thread) {
  try {
    KernelInfo info;
    if (!KernelRegistry::instance().find(func, &info)) return 0;
    return KernelRegistry::instance().setCost(func, work, registers_per_thread, info.static_shared)
               ? 1
               : 0;
  } catch (...) {
    return 0;
  }
}
