// The one event model: what the shim produces, the wire carries, the importers produce and the
// analyzers consume. Plain records, no CUDA/CUPTI/ZeroMQ types, so everything that consumes them
// is testable on a machine without a GPU.
//
// Time: every TimeNs is nanoseconds on one clock per process trace. Live runs use the host's
// CLOCK_MONOTONIC (CUPTI is told to stamp with it, so GPU and host times share one timeline);
// imported traces keep the trace's own clock (Kineto: microseconds since an epoch, scaled to ns).
// A TimeNs of 0 means "unknown" (for example GPU times on the interposer-only tier).
#pragma once

#include <cstdint>

namespace gpuwise::model {

using TimeNs = int64_t;
// Index into the process trace's NameTable. 0 is the empty name ("unknown").
using NameId = uint32_t;

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t{x} * y * z; }
  bool operator==(const Dim3&) const = default;
};

// Where the bytes of one side of a copy live. Pageable host memory is the expensive one: the
// driver stages it through a pinned bounce buffer and the copy cannot overlap with compute.
enum class MemoryKind : uint8_t { Unknown = 0, Pageable, Pinned, Device, Managed, Array };

enum class CopyDirection : uint8_t {
  Unknown = 0,
  HostToDevice,
  DeviceToHost,
  DeviceToDevice,
  HostToHost,
  PeerToPeer,
};

// What the host waited for while blocked in a synchronising call.
enum class SyncKind : uint8_t {
  Unknown = 0,
  Device,          // cudaDeviceSynchronize / cuCtxSynchronize
  Stream,          // cudaStreamSynchronize / cuStreamSynchronize
  Event,           // cudaEventSynchronize / cuEventSynchronize
  StreamWaitEvent, // device-side wait; host not blocked, kept for the GPU timeline
  SyncCopy,        // a synchronous cudaMemcpy/cudaMemset that blocked the host
};

enum class RangeKind : uint8_t {
  Unknown = 0,
  Step,          // one training step: ProfilerStep#N, an NVTX "step" range, or inferred
  DataLoader,    // enumerate(DataLoader)#...__next__ and friends: host waiting for input
  Annotation,    // user annotation (record_function) or NVTX range on the host
  GpuAnnotation, // gpu_user_annotation: an annotation projected on the GPU timeline
  Operator,      // a framework operator (cpu_op), kept only where an analyzer asks for it
};

// Flags on a kernel execution.
enum KernelFlags : uint8_t {
  kKernelFromGraph = 1u << 0, // executed as a node of a CUDA graph
  kKernelCooperative = 1u << 1,
  kKernelCommunication = 1u << 2, // NCCL or other collective communication kernel
};

// One kernel as it ran on the GPU, joined with the host call that launched it.
struct KernelExec {
  TimeNs start = 0, end = 0;               // GPU execution; 0 when unknown
  TimeNs launch_start = 0, launch_end = 0; // host API call that launched it; 0 when unknown
  uint64_t correlation = 0;                // joins to ApiCall::correlation; 0 when unknown
  NameId name = 0;                         // mangled or demangled kernel name
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t thread = 0; // OS thread id of the launching thread; 0 when unknown
  Dim3 grid, block;
  uint32_t registers_per_thread = 0; // 0 when unknown
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  uint32_t graph_id = 0; // CUDA graph the kernel ran in, 0 if none
  uint8_t flags = 0;     // KernelFlags
  // The trace's own "est. achieved occupancy %" / 100, when the source provides one; < 0 unknown.
  float achieved_occupancy = -1.0f;
  // The node of graph `graph_id` this kernel ran as (CUPTI's graphNodeId), 0 if none or unknown.
  uint64_t graph_node_id = 0;
};

struct Copy {
  TimeNs start = 0, end = 0;           // GPU execution; 0 when unknown
  TimeNs call_start = 0, call_end = 0; // host API call; 0 when unknown
  uint64_t correlation = 0;
  uint64_t bytes = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t thread = 0;
  CopyDirection direction = CopyDirection::Unknown;
  MemoryKind src = MemoryKind::Unknown;
  MemoryKind dst = MemoryKind::Unknown;
  bool async = false; // issued with an *Async call (the host was not meant to block)
};

struct Memset {
  TimeNs start = 0, end = 0;
  TimeNs call_start = 0, call_end = 0;
  uint64_t correlation = 0;
  uint64_t bytes = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  uint32_t thread = 0;
  MemoryKind dst = MemoryKind::Unknown;
  bool async = false;
};

// Time the host spent blocked waiting for the GPU.
struct HostSync {
  TimeNs start = 0, end = 0;
  uint64_t correlation = 0;
  uint32_t device = 0;
  uint32_t stream = 0; // 0 for device-wide
  uint32_t thread = 0;
  SyncKind kind = SyncKind::Unknown;
};

// A host CUDA runtime or driver API call that is not already described by one of the records
// above (cudaMalloc, cudaGetDevice, cudaStreamCreate ...), or every call when the source lists them
// all (Kineto's cuda_runtime / cuda_driver events).
struct ApiCall {
  TimeNs start = 0, end = 0;
  uint64_t correlation = 0;
  NameId name = 0; // "cudaLaunchKernel", "cuMemAlloc_v2", ...
  uint32_t thread = 0;
};

// A device or pinned-host allocation or free, as the process asked for it.
struct Allocation {
  TimeNs time = 0;
  uint64_t address = 0;
  uint64_t bytes = 0; // for a free: the size that was freed, when known
  uint32_t device = 0;
  MemoryKind kind =
      MemoryKind::Unknown; // Device, Pinned (cudaMallocHost/HostAlloc/HostRegister), Managed
  bool is_free = false;
};

// A sample of the caching allocator's state (Kineto "[memory]" instant events) or of NVML.
struct MemorySample {
  TimeNs time = 0;
  uint32_t device = 0;
  int64_t allocated_bytes = -1; // < 0 unknown
  int64_t reserved_bytes = -1;  // < 0 unknown
};

// What NVML said about a device at one moment (live runs; sampled by the drain thread every
// second or so, never on an application thread). Each field < 0 when NVML could not say.
struct DeviceSample {
  TimeNs time = 0;
  uint32_t device = 0;             // CUDA device index, as everywhere else
  int64_t process_used_bytes = -1; // this process's memory on the device (compute processes)
  int64_t device_used_bytes = -1;  // the whole device's (or MIG slice's) used memory
  int64_t device_total_bytes = -1;
  int32_t gpu_utilization = -1;    // percent of the last sample period a kernel ran
  int32_t memory_utilization = -1; // percent of it device memory was read or written
};

// What NVML said about a device's power at one moment, sampled with the DeviceSample of the same
// tick. The energy counter (nvmlDeviceGetTotalEnergyConsumption) counts millijoules since the
// driver loaded: the job's energy is the difference between two samples. Some GPUs lack it
// (pre-Volta, some boards): energy_mj stays -1 and the advisor integrates power_mw instead.
// Each field < 0 when NVML could not say.
struct PowerSample {
  TimeNs time = 0;
  uint32_t device = 0;           // CUDA device index
  int64_t energy_mj = -1;        // total energy counter, millijoules since driver load
  int32_t power_mw = -1;         // board power draw, milliwatts (nvmlDeviceGetPowerUsage)
  int32_t sm_clock_mhz = -1;     // current SM clock (NVML_CLOCK_SM)
  int32_t memory_clock_mhz = -1; // current memory clock (NVML_CLOCK_MEM)
};

// Which cuBLAS entry point a BlasCall records.
enum class BlasApi : uint8_t { Unknown = 0, GemmEx, GemmStridedBatchedEx, LtMatmul };

// One cuBLAS / cuBLASLt matrix multiply as the application asked for it: the ground truth for the
// precision its kernels run in, beside what their names say (advisor/precision). Types carry the
// numeric values of the CUDA headers (cudaDataType_t, cublasComputeType_t, cublasMath_t), kept
// raw so the model includes no CUDA header; -1 when unknown.
struct BlasCall {
  TimeNs start = 0, end = 0; // host call
  uint32_t thread = 0;
  uint32_t device = 0;
  uint32_t stream = 0; // cuBLASLt: the call's stream; GemmEx: 0 (the handle's, not tracked)
  BlasApi api = BlasApi::Unknown;
  int32_t a_type = -1, b_type = -1, c_type = -1; // cudaDataType_t
  int32_t compute_type = -1;                     // cublasComputeType_t
  int32_t scale_type = -1;                       // cudaDataType_t of alpha/beta (cuBLASLt)
  int32_t math_mode = -1; // cublasMath_t of the handle set with cublasSetMathMode; -1 never set
  int32_t status = 0;     // cublasStatus_t the call returned
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
};

// What a collective call does (NCCL's and RCCL's operations; PyTorch's names map onto these).
enum class CollectiveKind : uint8_t {
  Unknown = 0,
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,
  Reduce,
  AllToAll,
  Send,
  Recv,
  Barrier,
};

// The element type of a collective's buffers (ncclDataType_t's set, plus the FP8 formats).
enum class ElementType : uint8_t {
  Unknown = 0,
  Int8,
  Uint8,
  Int32,
  Uint32,
  Int64,
  Uint64,
  Float16,
  Float32,
  Float64,
  BFloat16,
  Float8E4M3,
  Float8E5M2,
};

// Bytes of one element, 0 for Unknown.
constexpr uint32_t elementBytes(ElementType t) {
  switch (t) {
  case ElementType::Int8:
  case ElementType::Uint8:
  case ElementType::Float8E4M3:
  case ElementType::Float8E5M2: return 1;
  case ElementType::Float16:
  case ElementType::BFloat16: return 2;
  case ElementType::Int32:
  case ElementType::Uint32: return 4;
  case ElementType::Int64:
  case ElementType::Uint64:
  case ElementType::Float64: return 8;
  case ElementType::Float32: return 4;
  case ElementType::Unknown: break;
  }
  return 0;
}

// One collective (or point-to-point) communication call as the application issued it: the shim's
// NCCL hooks (live runs) or the profiler's record_param_comms operator and collective kernel
// arguments (Kineto). Its GPU time is its kernel's (a KernelExec flagged kKernelCommunication),
// joined by `correlation` where the source gives one.
struct Collective {
  TimeNs start = 0, end = 0; // host call
  uint64_t correlation = 0;  // the collective kernel's correlation id; 0 when unknown
  uint64_t communicator = 0; // id of the communicator (process group); 0 when unknown
  uint64_t sequence = 0;     // this call's number on its communicator, from 1; 0 when unknown
  uint64_t in_count = 0;     // elements in this rank's input buffer
  uint64_t out_count = 0;    // elements in this rank's output buffer
  uint32_t thread = 0;
  uint32_t device = 0;
  uint32_t stream = 0;
  int32_t group_size = -1; // ranks in the communicator; -1 unknown
  int32_t group_rank = -1; // this rank's index in it; -1 unknown
  int32_t peer = -1;       // Send / Recv: the other rank; -1 otherwise
  CollectiveKind kind = CollectiveKind::Unknown;
  ElementType element = ElementType::Unknown;

  // The collective's size in nccl-tests' terms (the larger of this rank's input and output
  // buffers: the whole buffer for all-reduce, the gathered output for all-gather, the scattered
  // input for reduce-scatter); 0 when the element type is unknown.
  uint64_t bytes() const {
    return (in_count > out_count ? in_count : out_count) * elementBytes(element);
  }
};

// A named host (or GPU-projected) range: steps, data-loader waits, annotations, NVTX ranges.
struct Range {
  TimeNs start = 0, end = 0;
  NameId name = 0;
  uint32_t thread = 0;
  uint32_t device = 0; // for GpuAnnotation
  uint32_t stream = 0; // for GpuAnnotation
  RangeKind kind = RangeKind::Unknown;
  int64_t step = -1; // step number for RangeKind::Step when known
};

} // namespace gpuwise::model
