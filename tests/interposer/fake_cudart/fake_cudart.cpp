// FakeCudart: a tiny stand-in for libcudart.so.13 (and a few libcuda entry points) so tests can
// check that the hooks forward, pass results through unchanged, and record. Runtime symbols carry
// the libcudart.so.13 version node like the real library; driver symbols are unversioned-default.
//
// Behaviour: "device" memory is malloc'd host memory, copies are memcpy, kernels do nothing.
// Copies and memsets run one at a time under one lock, as a device's copy engine orders them: the
// test programs memset the same buffer from several threads, which on a GPU is not a host race.
// Special inputs produce errors so result pass-through can be checked: cudaMalloc of
// kFailBytes bytes fails with cudaErrorMemoryAllocation (2); cuMemAlloc_v2 likewise with
// CUDA_ERROR_OUT_OF_MEMORY (2). fakeCalls(name) counts calls that reached this library.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <unordered_map>

#include <pthread.h>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
std::mutex g_mutex;
std::mutex g_device; // orders the "device" work (copies, memsets) of all threads
template <typename F> void onDevice(F&& work) {
  std::lock_guard<std::mutex> lock(g_device);
  work();
}
std::unordered_map<std::string, long>& calls() {
  static auto* m = new std::unordered_map<std::string, long>;
  return *m;
}
void count(const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++calls()[name];
}
// The counters' lock must not be inherited held by a fork child (the fork test forks while other
// threads are calling in here).
__attribute__((constructor)) void registerForkHandlers() {
  pthread_atfork([] { g_mutex.lock(); }, [] { g_mutex.unlock(); }, [] { g_mutex.unlock(); });
  pthread_atfork([] { g_device.lock(); }, [] { g_device.unlock(); }, [] { g_device.unlock(); });
}
std::atomic<long> g_sync_delay_ns{0};
void delay() {
  long ns = g_sync_delay_ns.load();
  if (ns > 0) {
    timespec ts{ns / 1000000000, ns % 1000000000};
    nanosleep(&ts, nullptr);
  }
}
constexpr size_t kFailBytes = 0xdead;
} // namespace

FAKE_EXPORT long fakeCalls(const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = calls().find(name);
  return it == calls().end() ? 0 : it->second;
}
FAKE_EXPORT void fakeSetSyncDelayNs(long ns) {
  g_sync_delay_ns = ns;
}
FAKE_EXPORT int gwsimIsSimulated() {
  return 1;
}

// --- runtime -----------------------------------------------------------------------------------

extern "C" {
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, uint3*, uint3*, dim3*,
                            dim3*, int*);
cudaError_t __cudaGetKernel(cudaKernel_t*, const void*);
cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
}

FAKE_EXPORT void __cudaRegisterFunction(void**, const char*, char*, const char*, int, uint3*,
                                        uint3*, dim3*, dim3*, int*) {
  count("__cudaRegisterFunction");
}
FAKE_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* k, const void* hostFun) {
  count("__cudaGetKernel");
  // A handle distinct from the host stub, as the real runtime's is.
  *k = reinterpret_cast<cudaKernel_t>(reinterpret_cast<uintptr_t>(hostFun) + 0x1000);
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t) {
  count("__cudaLaunchKernel");
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaLaunchKernel(const void*, dim3 grid, dim3, void**, size_t,
                                         cudaStream_t) {
  count("cudaLaunchKernel");
  return grid.x == 0 ? cudaErrorInvalidConfiguration : cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t*, const void*, void**) {
  count("cudaLaunchKernelExC");
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) {
  count("cudaGraphLaunch");
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaSetDevice(int d) {
  count("cudaSetDevice");
  return d >= 0 && d < 4 ? cudaSuccess : cudaErrorInvalidDevice;
}
FAKE_EXPORT cudaError_t cudaGetDeviceCount(int* n) {
  *n = 2;
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d) {
  std::memset(p, 0, sizeof *p);
  std::strcpy(p->name, d == 0 ? "Fake GPU 0" : "Fake GPU 1");
  p->totalGlobalMem = size_t(80) << 30;
  p->multiProcessorCount = 132;
  p->major = 9;
  p->minor = 0;
  p->warpSize = 32;
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int) {
  *v = a == cudaDevAttrMaxThreadsPerMultiProcessor ? 2048 : 0;
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaMalloc(void** p, size_t n) {
  count("cudaMalloc");
  if (n == kFailBytes) return cudaErrorMemoryAllocation;
  *p = std::malloc(n ? n : 1);
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaFree(void* p) {
  count("cudaFree");
  std::free(p);
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaMallocHost(void** p, size_t n) {
  count("cudaMallocHost");
  *p = std::malloc(n);
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaFreeHost(void* p) {
  count("cudaFreeHost");
  std::free(p);
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaHostAlloc(void** p, size_t n, unsigned) {
  count("cudaHostAlloc");
  *p = std::malloc(n);
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaHostRegister(void*, size_t, unsigned) {
  count("cudaHostRegister");
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaHostUnregister(void*) {
  count("cudaHostUnregister");
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaMallocManaged(void** p, size_t n, unsigned) {
  count("cudaMallocManaged");
  *p = std::malloc(n);
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t) {
  count("cudaMallocAsync");
  *p = std::malloc(n);
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaFreeAsync(void* p, cudaStream_t) {
  count("cudaFreeAsync");
  std::free(p);
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) {
  count("cudaMemcpy");
  onDevice([&] { std::memcpy(d, s, n); });
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind,
                                        cudaStream_t) {
  count("cudaMemcpyAsync");
  onDevice([&] { std::memcpy(d, s, n); });
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaMemcpy2D(void*, size_t, const void*, size_t, size_t, size_t,
                                     cudaMemcpyKind) {
  count("cudaMemcpy2D");
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaMemcpy2DAsync(void*, size_t, const void*, size_t, size_t, size_t,
                                          cudaMemcpyKind, cudaStream_t) {
  count("cudaMemcpy2DAsync");
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaMemset(void* p, int v, size_t n) {
  count("cudaMemset");
  onDevice([&] { std::memset(p, v, n); });
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t) {
  count("cudaMemsetAsync");
  onDevice([&] { std::memset(p, v, n); });
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaDeviceSynchronize() {
  count("cudaDeviceSynchronize");
  delay();
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t) {
  count("cudaStreamSynchronize");
  delay();
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t) {
  count("cudaEventSynchronize");
  delay();
  return cudaSuccess;
}
FAKE_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) {
  count("cudaStreamWaitEvent");
  return cudaSuccess;
}

// --- driver ------------------------------------------------------------------------------------

FAKE_EXPORT CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, CUstream, void**, void**) {
  count("cuLaunchKernel");
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  count("cuMemAlloc_v2");
  if (n == kFailBytes) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = reinterpret_cast<CUdeviceptr>(std::malloc(n));
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr p) {
  count("cuMemFree_v2");
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, size_t n) {
  count("cuMemcpyHtoD_v2");
  onDevice([&] { std::memcpy(reinterpret_cast<void*>(d), s, n); });
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult cuCtxSynchronize() {
  count("cuCtxSynchronize");
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult cuFuncGetName(const char** name, CUfunction) {
  *name = "triton_fused_kernel";
  return CUDA_SUCCESS;
}
FAKE_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int, cuuint64_t,
                                         CUdriverProcAddressQueryResult* status) {
  count("cuGetProcAddress_v2");
  void* p = nullptr;
  if (!std::strcmp(symbol, "cuLaunchKernel"))
    p = reinterpret_cast<void*>(&cuLaunchKernel);
  else if (!std::strcmp(symbol, "cuMemAlloc"))
    p = reinterpret_cast<void*>(&cuMemAlloc_v2);
  else if (!std::strcmp(symbol, "cuFuncGetName"))
    p = reinterpret_cast<void*>(&cuFuncGetName);
  if (status) *status = p ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  *pfn = p;
  return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
