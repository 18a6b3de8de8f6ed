// Stand-in libcudart.so.13: allocation, copies and memsets. Device memory is real host memory, so
// copies really move bytes; pinned host memory is what cudaMallocHost / cudaHostAlloc /
// cudaHostRegister produced, everything else is pageable.
#include "tests/simdevice/cudart/runtime_common.h"

using namespace gpuwise::sim;

namespace {

cudaError_t copyCommon(ApiScope& api, void* dst, size_t dpitch, const void* src, size_t spitch,
                       size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t stream,
                       bool async, bool per_thread) {
  CopyRequest request;
  request.dst = dst;
  request.src = src;
  request.width = width;
  request.height = height;
  request.dst_pitch = dpitch;
  request.src_pitch = spitch;
  request.kind = kind;
  request.stream = stream;
  request.async = async;
  request.per_thread = per_thread;
  const cudaError_t err = api.sim().copy(request, api.call());
  if (async) hostCost(api, api.sim().config().async_host_ns);
  return api.finish(err);
}

cudaError_t memsetCommon(ApiScope& api, void* p, int value, size_t count, cudaStream_t stream,
                         bool async, bool per_thread) {
  const cudaError_t err = api.sim().memset(p, value, count, stream, async, per_thread, api.call());
  hostCost(api, api.sim().config().async_host_ns);
  return api.finish(err);
}

cudaError_t allocCommon(ApiScope& api, void** p, size_t size, MemKind kind,
                        cudaStream_t stream = nullptr, bool async = false) {
  const cudaError_t err = api.sim().allocate(p, size, kind, api.call(), stream, async);
  hostCost(api, async ? api.sim().config().async_host_ns : api.sim().config().alloc_host_ns);
  return api.finish(err);
}

cudaError_t freeCommon(ApiScope& api, void* p, MemKind kind, bool async = false) {
  const cudaError_t err = api.sim().release(p, kind, api.call(), async);
  hostCost(api, async ? api.sim().config().async_host_ns : api.sim().config().alloc_host_ns);
  return api.finish(err);
}

} // namespace

// ---- allocation ----

GWSIM_EXPORT cudaError_t cudaMalloc(void** devPtr, size_t size) {
  GWSIM_GUARD_BEGIN
  cudaMalloc_v3020_params params{devPtr, size};
  ApiScope api(GWSIM_CBID(cudaMalloc_v3020), "cudaMalloc", &params, nullptr, kCuMemAlloc);
  return allocCommon(api, devPtr, size, MemKind::Device);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaFree(void* devPtr) {
  GWSIM_GUARD_BEGIN
  cudaFree_v3020_params params{devPtr};
  ApiScope api(GWSIM_CBID(cudaFree_v3020), "cudaFree", &params, nullptr, kCuMemFree);
  return freeCommon(api, devPtr, MemKind::Device);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMallocHost(void** ptr, size_t size) {
  GWSIM_GUARD_BEGIN
  cudaMallocHost_v3020_params params{ptr, size};
  ApiScope api(GWSIM_CBID(cudaMallocHost_v3020), "cudaMallocHost", &params, nullptr,
               kCuMemAllocHost);
  return allocCommon(api, ptr, size, MemKind::Pinned);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaHostAlloc_v3020_params params{pHost, size, flags};
  ApiScope api(GWSIM_CBID(cudaHostAlloc_v3020), "cudaHostAlloc", &params, nullptr, kCuMemHostAlloc);
  return allocCommon(api, pHost, size, MemKind::Pinned);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaFreeHost(void* ptr) {
  GWSIM_GUARD_BEGIN
  cudaFreeHost_v3020_params params{ptr};
  ApiScope api(GWSIM_CBID(cudaFreeHost_v3020), "cudaFreeHost", &params, nullptr, kCuMemFreeHost);
  return freeCommon(api, ptr, MemKind::Pinned);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaMallocManaged_v6000_params params{devPtr, size, flags};
  ApiScope api(GWSIM_CBID(cudaMallocManaged_v6000), "cudaMallocManaged", &params);
  return allocCommon(api, devPtr, size, MemKind::Managed);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width,
                                         size_t height) {
  GWSIM_GUARD_BEGIN
  cudaMallocPitch_v3020_params params{devPtr, pitch, width, height};
  ApiScope api(GWSIM_CBID(cudaMallocPitch_v3020), "cudaMallocPitch", &params, nullptr, kCuMemAlloc);
  if (pitch == nullptr) return api.finish(cudaErrorInvalidValue);
  *pitch = (width + 511) / 512 * 512; // the pitch alignment the real devices report
  return allocCommon(api, devPtr, *pitch * height, MemKind::Device);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  GWSIM_GUARD_BEGIN
  cudaMallocAsync_v11020_params params{devPtr, size, hStream};
  ApiScope api(GWSIM_CBID(cudaMallocAsync_v11020), "cudaMallocAsync", &params, nullptr,
               kCuMemAllocAsync);
  return allocCommon(api, devPtr, size, MemKind::Device, hStream, true);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
  GWSIM_GUARD_BEGIN
  cudaMallocAsync_ptsz_v11020_params params{devPtr, size, hStream};
  ApiScope api(GWSIM_CBID(cudaMallocAsync_ptsz_v11020), "cudaMallocAsync_ptsz", &params, nullptr,
               kCuMemAllocAsync);
  return allocCommon(api, devPtr, size, MemKind::Device, hStream, true);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  GWSIM_GUARD_BEGIN
  cudaFreeAsync_v11020_params params{devPtr, hStream};
  ApiScope api(GWSIM_CBID(cudaFreeAsync_v11020), "cudaFreeAsync", &params, nullptr,
               kCuMemFreeAsync);
  return freeCommon(api, devPtr, MemKind::Device, true);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) {
  GWSIM_GUARD_BEGIN
  cudaFreeAsync_ptsz_v11020_params params{devPtr, hStream};
  ApiScope api(GWSIM_CBID(cudaFreeAsync_ptsz_v11020), "cudaFreeAsync_ptsz", &params, nullptr,
               kCuMemFreeAsync);
  return freeCommon(api, devPtr, MemKind::Device, true);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaHostRegister_v4000_params params{ptr, size, flags};
  ApiScope api(GWSIM_CBID(cudaHostRegister_v4000), "cudaHostRegister", &params);
  const cudaError_t err = api.sim().hostRegister(ptr, size);
  hostCost(api, api.sim().config().alloc_host_ns);
  return api.finish(err);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaHostUnregister(void* ptr) {
  GWSIM_GUARD_BEGIN
  cudaHostUnregister_v4000_params params{ptr};
  ApiScope api(GWSIM_CBID(cudaHostUnregister_v4000), "cudaHostUnregister", &params);
  return api.finish(api.sim().hostUnregister(ptr));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaHostGetDevicePointer_v3020_params params{pDevice, pHost, flags};
  ApiScope api(GWSIM_CBID(cudaHostGetDevicePointer_v3020), "cudaHostGetDevicePointer", &params);
  cudaPointerAttributes attributes;
  if (pDevice == nullptr || api.sim().pointerAttributes(&attributes, pHost) != cudaSuccess ||
      attributes.type != cudaMemoryTypeHost) {
    return api.finish(cudaErrorInvalidValue);
  }
  *pDevice = pHost; // unified addressing: the same address on both sides
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  GWSIM_GUARD_BEGIN
  cudaMemGetInfo_v3020_params params{free, total};
  ApiScope api(GWSIM_CBID(cudaMemGetInfo_v3020), "cudaMemGetInfo", &params);
  return api.finish(api.sim().memGetInfo(free, total));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes,
                                                  const void* ptr) {
  GWSIM_GUARD_BEGIN
  cudaPointerGetAttributes_v4000_params params{attributes, ptr};
  ApiScope api(GWSIM_CBID(cudaPointerGetAttributes_v4000), "cudaPointerGetAttributes", &params);
  return api.finish(api.sim().pointerAttributes(attributes, ptr));
  GWSIM_GUARD_END
}

// ---- copies ----

GWSIM_EXPORT cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  GWSIM_GUARD_BEGIN
  cudaMemcpy_v3020_params params{dst, src, count, kind};
  ApiScope api(GWSIM_CBID(cudaMemcpy_v3020), "cudaMemcpy", &params, nullptr, kCuMemcpy);
  return copyCommon(api, dst, 0, src, 0, count, 1, kind, nullptr, false, false);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count,
                                         cudaMemcpyKind kind) {
  GWSIM_GUARD_BEGIN
  cudaMemcpy_ptds_v7000_params params{dst, src, count, kind};
  ApiScope api(GWSIM_CBID(cudaMemcpy_ptds_v7000), "cudaMemcpy_ptds", &params, nullptr, kCuMemcpy);
  return copyCommon(api, dst, 0, src, 0, count, 1, kind, nullptr, false, true);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count,
                                         cudaMemcpyKind kind, cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaMemcpyAsync_v3020_params params{dst, src, count, kind, stream};
  ApiScope api(GWSIM_CBID(cudaMemcpyAsync_v3020), "cudaMemcpyAsync", &params, nullptr,
               kCuMemcpyAsync);
  return copyCommon(api, dst, 0, src, 0, count, 1, kind, stream, true, false);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count,
                                              cudaMemcpyKind kind, cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaMemcpyAsync_ptsz_v7000_params params{dst, src, count, kind, stream};
  ApiScope api(GWSIM_CBID(cudaMemcpyAsync_ptsz_v7000), "cudaMemcpyAsync_ptsz", &params, nullptr,
               kCuMemcpyAsync);
  return copyCommon(api, dst, 0, src, 0, count, 1, kind, stream, true, true);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch,
                                      size_t width, size_t height, cudaMemcpyKind kind) {
  GWSIM_GUARD_BEGIN
  cudaMemcpy2D_v3020_params params{dst, dpitch, src, spitch, width, height, kind};
  ApiScope api(GWSIM_CBID(cudaMemcpy2D_v3020), "cudaMemcpy2D", &params);
  return copyCommon(api, dst, dpitch, src, spitch, width, height, kind, nullptr, false, false);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch,
                                           size_t width, size_t height, cudaMemcpyKind kind) {
  GWSIM_GUARD_BEGIN
  cudaMemcpy2D_ptds_v7000_params params{dst, dpitch, src, spitch, width, height, kind};
  ApiScope api(GWSIM_CBID(cudaMemcpy2D_ptds_v7000), "cudaMemcpy2D_ptds", &params);
  return copyCommon(api, dst, dpitch, src, spitch, width, height, kind, nullptr, false, true);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                           size_t width, size_t height, cudaMemcpyKind kind,
                                           cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaMemcpy2DAsync_v3020_params params{dst, dpitch, src, spitch, width, height, kind, stream};
  ApiScope api(GWSIM_CBID(cudaMemcpy2DAsync_v3020), "cudaMemcpy2DAsync", &params);
  return copyCommon(api, dst, dpitch, src, spitch, width, height, kind, stream, true, false);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src,
                                                size_t spitch, size_t width, size_t height,
                                                cudaMemcpyKind kind, cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaMemcpy2DAsync_ptsz_v7000_params params{dst, dpitch, src, spitch, width, height, kind, stream};
  ApiScope api(GWSIM_CBID(cudaMemcpy2DAsync_ptsz_v7000), "cudaMemcpy2DAsync_ptsz", &params);
  return copyCommon(api, dst, dpitch, src, spitch, width, height, kind, stream, true, true);
  GWSIM_GUARD_END
}

// ---- memsets ----

GWSIM_EXPORT cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  GWSIM_GUARD_BEGIN
  cudaMemset_v3020_params params{devPtr, value, count};
  ApiScope api(GWSIM_CBID(cudaMemset_v3020), "cudaMemset", &params, nullptr, kCuMemsetD8);
  return memsetCommon(api, devPtr, value, count, nullptr, false, false);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMemset_ptds(void* devPtr, int value, size_t count) {
  GWSIM_GUARD_BEGIN
  cudaMemset_ptds_v7000_params params{devPtr, value, count};
  ApiScope api(GWSIM_CBID(cudaMemset_ptds_v7000), "cudaMemset_ptds", &params, nullptr, kCuMemsetD8);
  return memsetCommon(api, devPtr, value, count, nullptr, false, true);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count,
                                         cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaMemsetAsync_v3020_params params{devPtr, value, count, stream};
  ApiScope api(GWSIM_CBID(cudaMemsetAsync_v3020), "cudaMemsetAsync", &params, nullptr,
               kCuMemsetD8Async);
  return memsetCommon(api, devPtr, value, count, stream, true, false);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count,
                                              cudaStream_t stream) {
  GWSIM_GUARD_BEGIN
  cudaMemsetAsync_ptsz_v7000_params params{devPtr, value, count, stream};
  ApiScope api(GWSIM_CBID(cudaMemsetAsync_ptsz_v7000), "cudaMemsetAsync_ptsz", &params, nullptr,
               kCuMemsetD8Async);
  return memsetCommon(api, devPtr, value, count, stream, true, true);
  GWSIM_GUARD_END
}
