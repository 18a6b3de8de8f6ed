// The fixed-size POD event a hook writes into its thread's ring: raw values only (ticks, pointers,
// enum codes), so the application thread never formats, interns or allocates. The drain thread
// turns it into model records (event_converter.h).
#pragma once

#include <cstdint>

namespace gpuwise::interposer {

enum class EventKind : uint8_t {
  Launch = 1,
  Copy,
  Memset,
  Sync,        // host blocked in a synchronising call (or stream-wait-event, not blocking)
  Alloc,       // an allocation (device, pinned host, managed) or a host registration
  Free,        // its release
  GraphLaunch, // cudaGraphLaunch: an API call; the graph's kernels come from CUPTI
  Blas,        // a cuBLAS / cuBLASLt matmul: its data and compute types (hooks_blas.cpp)
  Collective,  // an NCCL collective or send/recv (hooks_nccl.cpp)
};

// Every hooked function, in one list: the drain thread names ApiCall records from it. (clang-format
// 14 reflows this list differently on each pass, so it is laid out by hand.)
// clang-format off
#define GPUWISE_HOOKED_APIS(X)                                                                     \
  X(__cudaLaunchKernel) X(__cudaLaunchKernel_ptsz) X(cudaLaunchKernel) X(cudaLaunchKernel_ptsz)    \
  X(cudaLaunchKernelExC) X(cudaLaunchKernelExC_ptsz) X(cudaMemcpy) X(cudaMemcpyAsync)             \
  X(cudaMemcpy2D) X(cudaMemcpy2DAsync) X(cudaMemset) X(cudaMemsetAsync) X(cudaMalloc) X(cudaFree)  \
  X(cudaMallocHost) X(cudaFreeHost) X(cudaHostAlloc) X(cudaHostRegister) X(cudaHostUnregister)     \
  X(cudaMallocManaged) X(cudaMallocAsync) X(cudaFreeAsync) X(cudaDeviceSynchronize)                \
  X(cudaStreamSynchronize) X(cudaEventSynchronize) X(cudaStreamWaitEvent) X(cudaGraphLaunch)       \
  X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuMemcpyHtoD_v2) X(cuMemcpyDtoH_v2) X(cuMemcpyDtoD_v2)   \
  X(cuMemcpyHtoDAsync_v2) X(cuMemcpyDtoHAsync_v2) X(cuMemcpyDtoDAsync_v2) X(cuMemAlloc_v2)         \
  X(cuMemFree_v2) X(cuMemAllocHost_v2) X(cuCtxSynchronize) X(cuStreamSynchronize)              \
  X(cublasGemmEx) X(cublasGemmStridedBatchedEx) X(cublasLtMatmul)                                \
  X(ncclAllReduce) X(ncclAllGather) X(ncclReduceScatter) X(ncclBroadcast) X(ncclBcast)            \
  X(ncclReduce) X(ncclAlltoAll) X(ncclSend) X(ncclRecv)
// clang-format on

enum class ApiId : uint16_t {
  None = 0,
#define GPUWISE_API_ENUM(name) name,
  GPUWISE_HOOKED_APIS(GPUWISE_API_ENUM)
#undef GPUWISE_API_ENUM
      Count
};

// The name of a hooked function ("cudaMemcpyAsync"); "" for None.
const char* apiName(ApiId id);

// What a launch's `func` pointer is, so the drain thread knows how to name the kernel.
enum class FuncKind : uint8_t {
  HostFunction = 0,   // the host stub address (cudaLaunchKernel, __cudaRegisterFunction's hostFun)
  KernelHandle = 1,   // cudaKernel_t from __cudaGetKernel (CUDA 13's <<<>>> path)
  DriverFunction = 2, // CUfunction (cuLaunchKernel*)
};

// Copy direction as the caller declared it (cudaMemcpyKind values; the driver's names map here).
enum class CopyKind : uint8_t {
  HostToHost = 0,
  HostToDevice = 1,
  DeviceToHost = 2,
  DeviceToDevice = 3,
  Default = 4
};

struct RawEvent {
  uint64_t t0; // ticks at entry (profiler/clock/tick.h)
  uint64_t t1; // ticks after the real call returned
  EventKind kind;
  uint8_t sub; // Launch: FuncKind; Copy: CopyKind; Sync: model::SyncKind; Alloc/Free: MemoryKind;
               // Blas: model::BlasApi; Collective: model::CollectiveKind
  ApiId api;
  int16_t result;  // cudaError_t or CUresult of the real call (all codes fit; clamped if not)
  uint16_t device; // the calling thread's current device as far as the hooks know
  union {
    struct {
      const void* func;
      uint64_t stream;
      uint32_t grid_x;
      uint16_t grid_y, grid_z; // the hardware limits are 65535
      uint16_t block_x, block_y, block_z;
      uint16_t flags;
      uint32_t shared_bytes;
    } launch;
    struct {
      uint64_t dst, src, bytes, stream;
      uint8_t src_mem, dst_mem; // model::MemoryKind classification of the host sides
      uint8_t async;
    } copy;
    struct {
      uint64_t dst, bytes, stream;
      uint8_t async;
    } memset;
    struct {
      uint64_t handle; // stream or event; 0 for device-wide
    } sync;
    struct {
      uint64_t address, bytes, stream;
    } alloc;
    struct {
      uint64_t handle, stream;
    } api;
    struct {
      uint64_t stream;         // cuBLASLt's stream argument; 0 for the handle-based calls
      uint32_t m, n, k, batch; // saturated at 2^32-1
      // cudaDataType_t / cublasComputeType_t / cublasMath_t values, all below 255; 0xff unknown.
      uint8_t a_type, b_type, c_type, scale_type, compute_type, math_mode;
    } blas;
    struct {
      uint64_t stream;
      uint64_t count;    // the call's count argument (NCCL's meaning differs by kind)
      uint64_t sequence; // the collective's number on its communicator; 0 for send/recv
      uint64_t comm;     // the ncclComm_t, for a communicator the table does not know
      int32_t peer;      // send/recv: the other rank; -1 otherwise
      uint16_t slot;     // NcclCommTable slot; NcclCommTable::kNoSlot when untracked
      uint8_t element;   // ncclDataType_t; 0xff unknown
    } collective;
  } u;
};
static_assert(sizeof(RawEvent) == 64, "one cache line per event");

} // namespace gpuwise::interposer
