// Driver API hooks (libcuda.so.1): launches, the _v2 copies, allocations and synchronisations that
// programs and libraries (Triton's launchers, hand-written driver code) call directly, and
// cuGetProcAddress, through which code resolves driver entry points at run time: for the functions
// hooked here it hands out our wrapper, for every other symbol the real pointer.
//
// The runtime's own driver calls go through pointers it resolved inside libcuda, so they do not
// come here; when they do (an unusual loader setup), the reentrancy guard keeps a runtime call and
// the driver call inside it from being recorded twice.
//
// Every hook forwards to the real function and returns its result unchanged, records only when the
// shim is recording, and cannot throw.
//
// Verified on the simulated device and on recorded traces only; not yet run on a GPU.
#include "interposer/real_symbol.h"
#include "interposer/recorder.h"
#include "interposer/runtime.h"
#include "profiler/model/events.h"

#include <cuda.h>

using namespace gpuwise::interposer;
using gpuwise::model::MemoryKind;
using gpuwise::model::SyncKind;

// cuda.h maps cuGetProcAddress to the _v2 entry point; the original (CUDA 11.3-12.x, four
// arguments) is still exported by the driver and still called by older code.
#undef cuGetProcAddress
extern "C" CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion,
                                             cuuint64_t flags);

namespace {

GPUWISE_REAL_DRIVER(cuLaunchKernel);
GPUWISE_REAL_DRIVER(cuLaunchKernelEx);
GPUWISE_REAL_DRIVER(cuMemcpyHtoD_v2);
GPUWISE_REAL_DRIVER(cuMemcpyDtoH_v2);
GPUWISE_REAL_DRIVER(cuMemcpyDtoD_v2);
GPUWISE_REAL_DRIVER(cuMemcpyHtoDAsync_v2);
GPUWISE_REAL_DRIVER(cuMemcpyDtoHAsync_v2);
GPUWISE_REAL_DRIVER(cuMemcpyDtoDAsync_v2);
GPUWISE_REAL_DRIVER(cuMemAlloc_v2);
GPUWISE_REAL_DRIVER(cuMemFree_v2);
GPUWISE_REAL_DRIVER(cuMemAllocHost_v2);
GPUWISE_REAL_DRIVER(cuCtxSynchronize);
GPUWISE_REAL_DRIVER(cuStreamSynchronize);
GPUWISE_REAL_DRIVER(cuGetProcAddress);
GPUWISE_REAL_DRIVER(cuGetProcAddress_v2);

constexpr CUresult kNoDriver = CUDA_ERROR_NOT_INITIALIZED;

inline uint16_t clamp16(unsigned v) {
  return v > 0xffff ? 0xffff : uint16_t(v);
}

// Counting inline, recording out of line, each hook stating its real call twice: see recordLaunch
// in hooks_launch.cpp.
template <class Call>
[[gnu::noinline]] CUresult recordLaunch(ApiId api, CUfunction f, unsigned gx, unsigned gy,
                                        unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                        unsigned shared, CUstream stream, Call&& call) {
  Recorder rec;
  if (!rec.begin()) return call();
  CUresult r = call();
  if (RawEvent* e = rec.end(EventKind::Launch, api, r, uint8_t(FuncKind::DriverFunction))) {
    e->u.launch.func = f;
    e->u.launch.stream = reinterpret_cast<uint64_t>(stream);
    e->u.launch.grid_x = gx;
    e->u.launch.grid_y = clamp16(gy);
    e->u.launch.grid_z = clamp16(gz);
    e->u.launch.block_x = clamp16(bx);
    e->u.launch.block_y = clamp16(by);
    e->u.launch.block_z = clamp16(bz);
    e->u.launch.flags = 0;
    e->u.launch.shared_bytes = shared;
    rec.publish();
  }
  return r;
}

template <class Call>
[[gnu::noinline]] CUresult recordCopy(ApiId api, CopyKind kind, uint64_t dst, uint64_t src,
                                      size_t bytes, CUstream stream, bool async, Call&& call) {
  Recorder rec;
  if (!rec.begin()) return call();
  CUresult r = call();
  if (RawEvent* e = rec.end(EventKind::Copy, api, r, uint8_t(kind))) {
    e->u.copy.dst = dst;
    e->u.copy.src = src;
    e->u.copy.bytes = bytes;
    e->u.copy.stream = reinterpret_cast<uint64_t>(stream);
    e->u.copy.async = async;
    MemoryKind s = MemoryKind::Device, d = MemoryKind::Device;
    PinnedRegistry* reg = pinnedRegistry();
    uint32_t reader = rec.readerIndex();
    if (kind == CopyKind::HostToDevice)
      s = reg ? reg->classify(reinterpret_cast<const void*>(src), reader) : MemoryKind::Pageable;
    if (kind == CopyKind::DeviceToHost)
      d = reg ? reg->classify(reinterpret_cast<const void*>(dst), reader) : MemoryKind::Pageable;
    e->u.copy.src_mem = uint8_t(s);
    e->u.copy.dst_mem = uint8_t(d);
    rec.publish();
  }
  return r;
}

template <class Call>
[[gnu::noinline]] CUresult recordSync(ApiId api, SyncKind kind, CUstream stream, Call&& call) {
  Recorder rec;
  if (!rec.begin()) return call();
  CUresult r = call();
  if (RawEvent* e = rec.end(EventKind::Sync, api, r, uint8_t(kind))) {
    e->u.sync.handle = reinterpret_cast<uint64_t>(stream);
    rec.publish();
  }
  return r;
}

[[gnu::noinline]] void finishAlloc(Recorder& rec, ApiId api, CUresult r, EventKind kind,
                                   MemoryKind mem, uint64_t address, size_t bytes) {
  if (RawEvent* e = rec.end(kind, api, r, uint8_t(mem))) {
    e->u.alloc.address = address;
    e->u.alloc.bytes = bytes;
    e->u.alloc.stream = 0;
    rec.publish();
  }
}

inline uint64_t u64(const void* p) {
  return reinterpret_cast<uint64_t>(p);
}

// Our wrapper for a driver entry point cuGetProcAddress returned, or the pointer itself.
void* substitute(void* p);

} // namespace

GPUWISE_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                       CUstream stream, void** params, void** extra) {
  auto fn = real_cuLaunchKernel.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
  if (countingLaunches())
    return countLaunch(
        [=] { return fn(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra); });
  return recordLaunch(ApiId::cuLaunchKernel, f, gx, gy, gz, bx, by, bz, shared, stream,
                      [=] { return fn(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra); });
}

GPUWISE_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params,
                                         void** extra) {
  auto fn = real_cuLaunchKernelEx.get();
  if (!fn) return kNoDriver;
  if (!config) return fn(config, f, params, extra);
  if (Recorder::off()) return fn(config, f, params, extra);
  if (countingLaunches()) return countLaunch([=] { return fn(config, f, params, extra); });
  return recordLaunch(ApiId::cuLaunchKernelEx, f, config->gridDimX, config->gridDimY,
                      config->gridDimZ, config->blockDimX, config->blockDimY, config->blockDimZ,
                      config->sharedMemBytes, config->hStream,
                      [=] { return fn(config, f, params, extra); });
}

GPUWISE_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t bytes) {
  auto fn = real_cuMemcpyHtoD_v2.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn(dst, src, bytes);
  return recordCopy(ApiId::cuMemcpyHtoD_v2, CopyKind::HostToDevice, dst, u64(src), bytes, nullptr,
                    false, [=] { return fn(dst, src, bytes); });
}

GPUWISE_EXPORT CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t bytes) {
  auto fn = real_cuMemcpyDtoH_v2.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn(dst, src, bytes);
  return recordCopy(ApiId::cuMemcpyDtoH_v2, CopyKind::DeviceToHost, u64(dst), src, bytes, nullptr,
                    false, [=] { return fn(dst, src, bytes); });
}

GPUWISE_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  auto fn = real_cuMemcpyDtoD_v2.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn(dst, src, bytes);
  return recordCopy(ApiId::cuMemcpyDtoD_v2, CopyKind::DeviceToDevice, dst, src, bytes, nullptr,
                    false, [=] { return fn(dst, src, bytes); });
}

GPUWISE_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes,
                                             CUstream stream) {
  auto fn = real_cuMemcpyHtoDAsync_v2.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn(dst, src, bytes, stream);
  return recordCopy(ApiId::cuMemcpyHtoDAsync_v2, CopyKind::HostToDevice, dst, u64(src), bytes,
                    stream, true, [=] { return fn(dst, src, bytes, stream); });
}

GPUWISE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes,
                                             CUstream stream) {
  auto fn = real_cuMemcpyDtoHAsync_v2.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn(dst, src, bytes, stream);
  return recordCopy(ApiId::cuMemcpyDtoHAsync_v2, CopyKind::DeviceToHost, u64(dst), src, bytes,
                    stream, true, [=] { return fn(dst, src, bytes, stream); });
}

GPUWISE_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                             CUstream stream) {
  auto fn = real_cuMemcpyDtoDAsync_v2.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn(dst, src, bytes, stream);
  return recordCopy(ApiId::cuMemcpyDtoDAsync_v2, CopyKind::DeviceToDevice, dst, src, bytes, stream,
                    true, [=] { return fn(dst, src, bytes, stream); });
}

GPUWISE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes) {
  auto fn = real_cuMemAlloc_v2.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn(dptr, bytes);
  Recorder rec;
  if (!rec.begin()) return fn(dptr, bytes);
  CUresult r = fn(dptr, bytes);
  finishAlloc(rec, ApiId::cuMemAlloc_v2, r, EventKind::Alloc, MemoryKind::Device,
              r == CUDA_SUCCESS && dptr ? *dptr : 0, bytes);
  return r;
}

GPUWISE_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  auto fn = real_cuMemFree_v2.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn(dptr);
  Recorder rec;
  if (!rec.begin()) return fn(dptr);
  CUresult r = fn(dptr);
  finishAlloc(rec, ApiId::cuMemFree_v2, r, EventKind::Free, MemoryKind::Device, dptr, 0);
  return r;
}

GPUWISE_EXPORT CUresult cuMemAllocHost_v2(void** pp, size_t bytes) {
  auto fn = real_cuMemAllocHost_v2.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn(pp, bytes);
  Recorder rec;
  if (!rec.begin()) return fn(pp, bytes);
  CUresult r = fn(pp, bytes);
  void* p = r == CUDA_SUCCESS && pp ? *pp : nullptr;
  if (p)
    if (PinnedRegistry* reg = pinnedRegistry()) reg->add(p, bytes, MemoryKind::Pinned);
  finishAlloc(rec, ApiId::cuMemAllocHost_v2, r, EventKind::Alloc, MemoryKind::Pinned, u64(p),
              bytes);
  return r;
}

GPUWISE_EXPORT CUresult cuCtxSynchronize() {
  auto fn = real_cuCtxSynchronize.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn();
  return recordSync(ApiId::cuCtxSynchronize, SyncKind::Device, nullptr, [=] { return fn(); });
}

GPUWISE_EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  auto fn = real_cuStreamSynchronize.get();
  if (!fn) return kNoDriver;
  if (Recorder::off()) return fn(stream);
  return recordSync(ApiId::cuStreamSynchronize, SyncKind::Stream, stream,
                    [=] { return fn(stream); });
}

GPUWISE_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion,
                                         cuuint64_t flags) {
  auto fn = real_cuGetProcAddress.get();
  if (!fn) return kNoDriver;
  CUresult r = fn(symbol, pfn, cudaVersion, flags);
  if (r == CUDA_SUCCESS && pfn && *pfn) *pfn = substitute(*pfn);
  return r;
}

GPUWISE_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion,
                                            cuuint64_t flags,
                                            CUdriverProcAddressQueryResult* status) {
  auto fn = real_cuGetProcAddress_v2.get();
  if (!fn) return kNoDriver;
  CUresult r = fn(symbol, pfn, cudaVersion, flags, status);
  if (r == CUDA_SUCCESS && pfn && *pfn) *pfn = substitute(*pfn);
  return r;
}

namespace {

void* substitute(void* p) {
  // Compare against the real entry points rather than the requested name: the name the caller
  // asks for ("cuMemAlloc") is versioned by cudaVersion, and the pointer says which one it got.
  // Per-thread-stream variants (_ptsz/_ptds) are different functions and pass through untouched.
#define GPUWISE_SUBSTITUTE(name)                                                                   \
  if (void* real = reinterpret_cast<void*>(real_##name.get()); real && p == real)                  \
    return reinterpret_cast<void*>(&::name);
  GPUWISE_SUBSTITUTE(cuLaunchKernel)
  GPUWISE_SUBSTITUTE(cuLaunchKernelEx)
  GPUWISE_SUBSTITUTE(cuMemcpyHtoD_v2)
  GPUWISE_SUBSTITUTE(cuMemcpyDtoH_v2)
  GPUWISE_SUBSTITUTE(cuMemcpyDtoD_v2)
  GPUWISE_SUBSTITUTE(cuMemcpyHtoDAsync_v2)
  GPUWISE_SUBSTITUTE(cuMemcpyDtoHAsync_v2)
  GPUWISE_SUBSTITUTE(cuMemcpyDtoDAsync_v2)
  GPUWISE_SUBSTITUTE(cuMemAlloc_v2)
  GPUWISE_SUBSTITUTE(cuMemFree_v2)
  GPUWISE_SUBSTITUTE(cuMemAllocHost_v2)
  GPUWISE_SUBSTITUTE(cuCtxSynchronize)
  GPUWISE_SUBSTITUTE(cuStreamSynchronize)
  GPUWISE_SUBSTITUTE(cuGetProcAddress)
  GPUWISE_SUBSTITUTE(cuGetProcAddress_v2)
#undef GPUWISE_SUBSTITUTE
  return p;
}

} // namespace
