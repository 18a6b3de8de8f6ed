// Shared helpers of the stand-in libcudart.so.13's entry points.
//
// Every exported function is extern "C", catches everything (no exception may cross into the
// program: it returns cudaErrorUnknown instead), and, when traced, runs inside an ApiScope with
// the CUPTI callback id and the parameter struct real CUPTI would pass
// (generated_cuda_runtime_api_meta.h). Entry points the CUDA headers declare only under
// CUDA_API_PER_THREAD_DEFAULT_STREAM (the _ptsz / _ptds variants) are declared here.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h> // also brings generated_cuda_runtime_api_meta.h (no include guard of its own)

#include "tests/simdevice/core/api_scope.h"
#include "tests/simdevice/core/clock.h"
#include "tests/simdevice/core/simulator.h"

#define GWSIM_EXPORT extern "C" __attribute__((visibility("default")))
#define GWSIM_CBID(versioned) CUPTI_RUNTIME_TRACE_CBID_##versioned
#define GWSIM_GUARD_BEGIN try {
#define GWSIM_GUARD_END                                                                            \
  }                                                                                                \
  catch (...) {                                                                                    \
    ::gpuwise::sim::setLastError(cudaErrorUnknown);                                                \
    return cudaErrorUnknown;                                                                       \
  }

namespace gpuwise::sim {

// The driver calls the real runtime makes under its calls, for nested DRIVER_API callbacks/records.
inline constexpr DriverCall kCuLaunchKernel{CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                            "cuLaunchKernel"};
inline constexpr DriverCall kCuLaunchKernelEx{CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                              "cuLaunchKernelEx"};
inline constexpr DriverCall kCuMemAlloc{CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2"};
inline constexpr DriverCall kCuMemFree{CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, "cuMemFree_v2"};
inline constexpr DriverCall kCuMemAllocHost{CUPTI_DRIVER_TRACE_CBID_cuMemAllocHost_v2,
                                            "cuMemAllocHost_v2"};
inline constexpr DriverCall kCuMemHostAlloc{CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc,
                                            "cuMemHostAlloc"};
inline constexpr DriverCall kCuMemFreeHost{CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, "cuMemFreeHost"};
inline constexpr DriverCall kCuMemAllocAsync{CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
                                             "cuMemAllocAsync"};
inline constexpr DriverCall kCuMemFreeAsync{CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
                                            "cuMemFreeAsync"};
inline constexpr DriverCall kCuMemcpy{CUPTI_DRIVER_TRACE_CBID_cuMemcpy, "cuMemcpy"};
inline constexpr DriverCall kCuMemcpyAsync{CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, "cuMemcpyAsync"};
inline constexpr DriverCall kCuMemsetD8{CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, "cuMemsetD8_v2"};
inline constexpr DriverCall kCuMemsetD8Async{CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
                                             "cuMemsetD8Async"};
inline constexpr DriverCall kCuCtxSynchronize{CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
                                              "cuCtxSynchronize"};
inline constexpr DriverCall kCuStreamSynchronize{CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize,
                                                 "cuStreamSynchronize"};
inline constexpr DriverCall kCuEventSynchronize{CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize,
                                                "cuEventSynchronize"};
inline constexpr DriverCall kCuStreamWaitEvent{CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent,
                                               "cuStreamWaitEvent"};
inline constexpr DriverCall kCuEventRecord{CUPTI_DRIVER_TRACE_CBID_cuEventRecord, "cuEventRecord"};
inline constexpr DriverCall kCuGraphLaunch{CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch"};

// Burns the host-side cost of a call (a real launch costs the calling CPU thread microseconds).
inline void hostCost(const ApiScope& api, TimeNs cost) {
  spinUntil(api.call().start + cost);
}

} // namespace gpuwise::sim

// Per-thread-default-stream variants and nvcc's private entry points, which no public header
// declares for a host compiler.
extern "C" {
cudaError_t cudaLaunchKernel_ptsz(const void*, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t*, const void*, void**);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void*, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t cudaMemcpy_ptds(void*, const void*, size_t, cudaMemcpyKind);
cudaError_t cudaMemcpyAsync_ptsz(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemcpy2D_ptds(void*, size_t, const void*, size_t, size_t, size_t, cudaMemcpyKind);
cudaError_t cudaMemcpy2DAsync_ptsz(void*, size_t, const void*, size_t, size_t, size_t,
                                   cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemset_ptds(void*, int, size_t);
cudaError_t cudaMemsetAsync_ptsz(void*, int, size_t, cudaStream_t);
cudaError_t cudaMallocAsync_ptsz(void**, size_t, cudaStream_t);
cudaError_t cudaFreeAsync_ptsz(void*, cudaStream_t);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t);
cudaError_t cudaStreamQuery_ptsz(cudaStream_t);
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t, cudaEvent_t, unsigned int);
cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t, cudaStreamCaptureStatus*);
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t, cudaStreamCaptureMode);
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t, cudaGraph_t*);
cudaError_t cudaEventRecord_ptsz(cudaEvent_t, cudaStream_t);
cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t, cudaStream_t, unsigned int);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t, cudaStream_t);

void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaRegisterFatBinaryEnd(void** fatCubinHandle);
void __cudaUnregisterFatBinary(void** fatCubinHandle);
void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                            const char* deviceName, int thread_limit, uint3* tid, uint3* bid,
                            dim3* bDim, dim3* gDim, int* wSize);
void __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* deviceAddress,
                       const char* deviceName, int ext, size_t size, int constant, int global);
void __cudaRegisterManagedVar(void** fatCubinHandle, void** hostVarPtrAddress, char* deviceAddress,
                              const char* deviceName, int ext, size_t size, int constant,
                              int global);
char __cudaInitModule(void** fatCubinHandle);
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st* stream);
cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    size_t sharedMem, cudaStream_t stream);

// Simulator-only: 1 in this library (the shim finds it with dlsym so reports say "simulated").
int gwsimIsSimulated(void);
// Simulator-only cost hint for a kernel (host stub or cudaKernel_t): its work factor (one unit =
// one 2 us wave of a full SM, see tests/simdevice/README.md) and registers per thread (0 keeps
// 32). Returns 1 when func is a registered kernel. Programs find it with dlsym so they also run
// on the real runtime, where it does not exist.
int gwsimSetKernelWork(const void* func, double work, int registers_per_thread);
}
