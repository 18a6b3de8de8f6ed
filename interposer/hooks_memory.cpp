// Runtime hooks for copies, memsets and allocations. A copy's host side is classified pinned or
// pageable from the PinnedRegistry (lock-free on this path); page-locking calls update the
// registry (rare, may lock). Synchronous copies and memsets also count as host blocked time (the
// drain thread derives that from the event).
//
// Every hook forwards to the real function and returns its result unchanged, records only when the
// shim is recording, and cannot throw.
#include "interposer/real_symbol.h"
#include "interposer/recorder.h"
#include "interposer/runtime.h"

#include <cuda_runtime_api.h>

using namespace gpuwise::interposer;
using gpuwise::model::MemoryKind;

namespace {

GPUWISE_REAL_RUNTIME(cudaMemcpy);
GPUWISE_REAL_RUNTIME(cudaMemcpyAsync);
GPUWISE_REAL_RUNTIME(cudaMemcpy2D);
GPUWISE_REAL_RUNTIME(cudaMemcpy2DAsync);
GPUWISE_REAL_RUNTIME(cudaMemset);
GPUWISE_REAL_RUNTIME(cudaMemsetAsync);
GPUWISE_REAL_RUNTIME(cudaMalloc);
GPUWISE_REAL_RUNTIME(cudaFree);
GPUWISE_REAL_RUNTIME(cudaMallocHost);
GPUWISE_REAL_RUNTIME(cudaFreeHost);
GPUWISE_REAL_RUNTIME(cudaHostAlloc);
GPUWISE_REAL_RUNTIME(cudaHostRegister);
GPUWISE_REAL_RUNTIME(cudaHostUnregister);
GPUWISE_REAL_RUNTIME(cudaMallocManaged);
GPUWISE_REAL_RUNTIME(cudaMallocAsync);
GPUWISE_REAL_RUNTIME(cudaFreeAsync);

constexpr cudaError_t kNoRuntime = cudaErrorInitializationError;

inline MemoryKind hostSide(const void* p, uint32_t reader) {
  PinnedRegistry* reg = pinnedRegistry();
  return reg ? reg->classify(p, reader) : MemoryKind::Pageable;
}

// cudaMemcpyDefault: only a registered host range tells us anything.
inline MemoryKind anySide(const void* p, uint32_t reader) {
  MemoryKind k = hostSide(p, reader);
  return k == MemoryKind::Pageable ? MemoryKind::Unknown : k;
}

template <class Call>
[[gnu::noinline]] cudaError_t recordCopy(ApiId api, cudaMemcpyKind kind, void* dst, const void* src,
                                         size_t bytes, cudaStream_t stream, bool async,
                                         Call&& call) {
  Recorder rec;
  if (!rec.begin()) return call();
  cudaError_t r = call();
  uint8_t k = kind >= cudaMemcpyHostToHost && kind <= cudaMemcpyDefault
                  ? uint8_t(kind)
                  : uint8_t(CopyKind::Default);
  if (RawEvent* e = rec.end(EventKind::Copy, api, r, k)) {
    e->u.copy.dst = reinterpret_cast<uint64_t>(dst);
    e->u.copy.src = reinterpret_cast<uint64_t>(src);
    e->u.copy.bytes = bytes;
    e->u.copy.stream = reinterpret_cast<uint64_t>(stream);
    e->u.copy.async = async;
    MemoryKind s = MemoryKind::Device, d = MemoryKind::Device;
    uint32_t reader = rec.readerIndex();
    switch (CopyKind(k)) {
    case CopyKind::HostToDevice: s = hostSide(src, reader); break;
    case CopyKind::DeviceToHost: d = hostSide(dst, reader); break;
    case CopyKind::HostToHost:
      s = hostSide(src, reader);
      d = hostSide(dst, reader);
      break;
    case CopyKind::DeviceToDevice: break;
    case CopyKind::Default:
      s = anySide(src, reader);
      d = anySide(dst, reader);
      break;
    }
    e->u.copy.src_mem = uint8_t(s);
    e->u.copy.dst_mem = uint8_t(d);
    rec.publish();
  }
  return r;
}

template <class Call>
[[gnu::noinline]] cudaError_t recordMemset(ApiId api, void* dst, size_t bytes, cudaStream_t stream,
                                           bool async, Call&& call) {
  Recorder rec;
  if (!rec.begin()) return call();
  cudaError_t r = call();
  if (RawEvent* e = rec.end(EventKind::Memset, api, r)) {
    e->u.memset.dst = reinterpret_cast<uint64_t>(dst);
    e->u.memset.bytes = bytes;
    e->u.memset.stream = reinterpret_cast<uint64_t>(stream);
    e->u.memset.async = async;
    rec.publish();
  }
  return r;
}

[[gnu::noinline]] void finishAlloc(Recorder& rec, ApiId api, cudaError_t r, EventKind kind,
                                   MemoryKind mem, const void* address, size_t bytes,
                                   cudaStream_t stream = nullptr) {
  if (RawEvent* e = rec.end(kind, api, r, uint8_t(mem))) {
    e->u.alloc.address = reinterpret_cast<uint64_t>(address);
    e->u.alloc.bytes = bytes;
    e->u.alloc.stream = reinterpret_cast<uint64_t>(stream);
    rec.publish();
  }
}

// A pointer-returning allocation: cudaMalloc, cudaMallocHost, cudaHostAlloc ...
template <class Call>
[[gnu::noinline]] cudaError_t recordAllocation(ApiId api, MemoryKind mem, bool register_host,
                                               void** ptr, size_t bytes, cudaStream_t stream,
                                               Call&& call) {
  Recorder rec;
  if (!rec.begin()) return call();
  cudaError_t r = call();
  void* p = (r == cudaSuccess && ptr) ? *ptr : nullptr;
  if (p && register_host)
    if (PinnedRegistry* reg = pinnedRegistry()) reg->add(p, bytes, mem);
  finishAlloc(rec, api, r, EventKind::Alloc, mem, p, bytes, stream);
  return r;
}

template <class Call>
[[gnu::noinline]] cudaError_t recordFree(ApiId api, MemoryKind mem, bool unregister_host, void* p,
                                         cudaStream_t stream, Call&& call) {
  Recorder rec;
  if (!rec.begin()) return call();
  size_t bytes = 0;
  // Unregister before the memory goes, so no copy on another thread can find a dead range.
  if (p && unregister_host)
    if (PinnedRegistry* reg = pinnedRegistry()) bytes = reg->remove(p);
  cudaError_t r = call();
  finishAlloc(rec, api, r, EventKind::Free, mem, p, bytes, stream);
  return r;
}

} // namespace

GPUWISE_EXPORT cudaError_t cudaMemcpy(void* dst, const void* src, size_t count,
                                      cudaMemcpyKind kind) {
  auto fn = real_cudaMemcpy.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(dst, src, count, kind);
  return recordCopy(ApiId::cudaMemcpy, kind, dst, src, count, nullptr, false,
                    [=] { return fn(dst, src, count, kind); });
}

GPUWISE_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count,
                                           cudaMemcpyKind kind, cudaStream_t stream) {
  auto fn = real_cudaMemcpyAsync.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(dst, src, count, kind, stream);
  return recordCopy(ApiId::cudaMemcpyAsync, kind, dst, src, count, stream, true,
                    [=] { return fn(dst, src, count, kind, stream); });
}

GPUWISE_EXPORT cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch,
                                        size_t width, size_t height, cudaMemcpyKind kind) {
  auto fn = real_cudaMemcpy2D.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(dst, dpitch, src, spitch, width, height, kind);
  return recordCopy(ApiId::cudaMemcpy2D, kind, dst, src, width * height, nullptr, false,
                    [=] { return fn(dst, dpitch, src, spitch, width, height, kind); });
}

GPUWISE_EXPORT cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src,
                                             size_t spitch, size_t width, size_t height,
                                             cudaMemcpyKind kind, cudaStream_t stream) {
  auto fn = real_cudaMemcpy2DAsync.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(dst, dpitch, src, spitch, width, height, kind, stream);
  return recordCopy(ApiId::cudaMemcpy2DAsync, kind, dst, src, width * height, stream, true,
                    [=] { return fn(dst, dpitch, src, spitch, width, height, kind, stream); });
}

GPUWISE_EXPORT cudaError_t cudaMemset(void* dst, int value, size_t count) {
  auto fn = real_cudaMemset.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(dst, value, count);
  return recordMemset(ApiId::cudaMemset, dst, count, nullptr, false,
                      [=] { return fn(dst, value, count); });
}

GPUWISE_EXPORT cudaError_t cudaMemsetAsync(void* dst, int value, size_t count,
                                           cudaStream_t stream) {
  auto fn = real_cudaMemsetAsync.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(dst, value, count, stream);
  return recordMemset(ApiId::cudaMemsetAsync, dst, count, stream, true,
                      [=] { return fn(dst, value, count, stream); });
}

GPUWISE_EXPORT cudaError_t cudaMalloc(void** ptr, size_t size) {
  auto fn = real_cudaMalloc.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(ptr, size);
  return recordAllocation(ApiId::cudaMalloc, MemoryKind::Device, false, ptr, size, nullptr,
                          [=] { return fn(ptr, size); });
}

GPUWISE_EXPORT cudaError_t cudaFree(void* ptr) {
  auto fn = real_cudaFree.get();
  if (!fn) return kNoRuntime;
  // cudaFree also releases managed memory, which the registry tracks.
  if (Recorder::off()) return fn(ptr);
  return recordFree(ApiId::cudaFree, MemoryKind::Device, true, ptr, nullptr,
                    [=] { return fn(ptr); });
}

GPUWISE_EXPORT cudaError_t cudaMallocHost(void** ptr, size_t size) {
  auto fn = real_cudaMallocHost.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(ptr, size);
  return recordAllocation(ApiId::cudaMallocHost, MemoryKind::Pinned, true, ptr, size, nullptr,
                          [=] { return fn(ptr, size); });
}

GPUWISE_EXPORT cudaError_t cudaFreeHost(void* ptr) {
  auto fn = real_cudaFreeHost.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(ptr);
  return recordFree(ApiId::cudaFreeHost, MemoryKind::Pinned, true, ptr, nullptr,
                    [=] { return fn(ptr); });
}

GPUWISE_EXPORT cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int flags) {
  auto fn = real_cudaHostAlloc.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(ptr, size, flags);
  return recordAllocation(ApiId::cudaHostAlloc, MemoryKind::Pinned, true, ptr, size, nullptr,
                          [=] { return fn(ptr, size, flags); });
}

GPUWISE_EXPORT cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  auto fn = real_cudaHostRegister.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(ptr, size, flags);
  Recorder rec;
  if (!rec.begin()) return fn(ptr, size, flags);
  cudaError_t r = fn(ptr, size, flags);
  if (r == cudaSuccess)
    if (PinnedRegistry* reg = pinnedRegistry()) reg->add(ptr, size, MemoryKind::Pinned);
  finishAlloc(rec, ApiId::cudaHostRegister, r, EventKind::Alloc, MemoryKind::Pinned,
              r == cudaSuccess ? ptr : nullptr, size);
  return r;
}

GPUWISE_EXPORT cudaError_t cudaHostUnregister(void* ptr) {
  auto fn = real_cudaHostUnregister.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(ptr);
  return recordFree(ApiId::cudaHostUnregister, MemoryKind::Pinned, true, ptr, nullptr,
                    [=] { return fn(ptr); });
}

GPUWISE_EXPORT cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int flags) {
  auto fn = real_cudaMallocManaged.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(ptr, size, flags);
  return recordAllocation(ApiId::cudaMallocManaged, MemoryKind::Managed, true, ptr, size, nullptr,
                          [=] { return fn(ptr, size, flags); });
}

GPUWISE_EXPORT cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream) {
  auto fn = real_cudaMallocAsync.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(ptr, size, stream);
  return recordAllocation(ApiId::cudaMallocAsync, MemoryKind::Device, false, ptr, size, stream,
                          [=] { return fn(ptr, size, stream); });
}

GPUWISE_EXPORT cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  auto fn = real_cudaFreeAsync.get();
  if (!fn) return kNoRuntime;
  if (Recorder::off()) return fn(ptr, stream);
  return recordFree(ApiId::cudaFreeAsync, MemoryKind::Device, false, ptr, stream,
                    [=] { return fn(ptr, stream); });
}
