#include "profiler/model/trace.h"

#include <algorithm>

namespace gpuwise::model {
namespace {

// Spans (records with a start) by start, ties by end; instants by time.
template <typename T> void sortByTime(std::vector<T>& v) {
  if constexpr (requires(const T& r) { r.start; }) {
    std::stable_sort(v.begin(), v.end(), [](const T& a, const T& b) {
      return a.start != b.start ? a.start < b.start : a.end < b.end;
    });
  } else {
    std::stable_sort(v.begin(), v.end(), [](const T& a, const T& b) { return a.time < b.time; });
  }
}

} // namespace

void ProcessTrace::sortByTime() {
  forEachColumn([](auto& column) { model::sortByTime(column); });
}

const DeviceInfo* ProcessTrace::device(uint32_t index) const {
  for (const auto& d : devices)
    if (d.index == index) return &d;
  return nullptr;
}

std::set<uint32_t> ProcessTrace::activeDevices() const {
  std::set<uint32_t> d;
  // Records come in long runs of one device: a set insert per record was ~2 % of the live ingest.
  auto insertRuns = [&d](const auto& column) {
    const uint32_t* last = nullptr;
    for (const auto& r : column) {
      if (last && *last == r.device) continue;
      d.insert(r.device);
      last = &r.device;
    }
  };
  insertRuns(kernels);
  insertRuns(copies);
  insertRuns(memsets);
  for (const auto& a : allocations)
    if (a.kind == MemoryKind::Device) d.insert(a.device);
  for (const auto& s : memory_samples)
    d.insert(s.device);
  return d;
}

const char* toString(MemoryKind k) {
  switch (k) {
  case MemoryKind::Pageable: return "pageable";
  case MemoryKind::Pinned: return "pinned";
  case MemoryKind::Device: return "device";
  case MemoryKind::Managed: return "managed";
  case MemoryKind::Array: return "array";
  case MemoryKind::Unknown: break;
  }
  return "unknown";
}

const char* toString(CopyDirection d) {
  switch (d) {
  case CopyDirection::HostToDevice: return "h2d";
  case CopyDirection::DeviceToHost: return "d2h";
  case CopyDirection::DeviceToDevice: return "d2d";
  case CopyDirection::HostToHost: return "h2h";
  case CopyDirection::PeerToPeer: return "p2p";
  case CopyDirection::Unknown: break;
  }
  return "unknown";
}

const char* toString(SyncKind k) {
  switch (k) {
  case SyncKind::Device: return "device";
  case SyncKind::Stream: return "stream";
  case SyncKind::Event: return "event";
  case SyncKind::StreamWaitEvent: return "stream_wait_event";
  case SyncKind::SyncCopy: return "sync_copy";
  case SyncKind::Unknown: break;
  }
  return "unknown";
}

const char* toString(RangeKind k) {
  switch (k) {
  case RangeKind::Step: return "step";
  case RangeKind::DataLoader: return "data_loader";
  case RangeKind::Annotation: return "annotation";
  case RangeKind::GpuAnnotation: return "gpu_annotation";
  case RangeKind::Operator: return "operator";
  case RangeKind::Unknown: break;
  }
  return "unknown";
}

const char* toString(CollectionTier t) {
  switch (t) {
  case CollectionTier::Interposer: return "interposer";
  case CollectionTier::Cupti: return "cupti";
  case CollectionTier::Imported: return "imported";
  case CollectionTier::Unknown: break;
  }
  return "unknown";
}

const char* toString(SourceKind k) {
  switch (k) {
  case SourceKind::Live: return "live";
  case SourceKind::Kineto: return "kineto";
  case SourceKind::Gwt: return "gwt";
  case SourceKind::Nsys: return "nsys";
  }
  return "unknown";
}

const char* toString(BlasApi a) {
  switch (a) {
  case BlasApi::GemmEx: return "cublasGemmEx";
  case BlasApi::GemmStridedBatchedEx: return "cublasGemmStridedBatchedEx";
  case BlasApi::LtMatmul: return "cublasLtMatmul";
  case BlasApi::Unknown: break;
  }
  return "unknown";
}

// nccl-tests' and NCCL's own names for the operations.
const char* toString(CollectiveKind k) {
  switch (k) {
  case CollectiveKind::AllReduce: return "all_reduce";
  case CollectiveKind::AllGather: return "all_gather";
  case CollectiveKind::ReduceScatter: return "reduce_scatter";
  case CollectiveKind::Broadcast: return "broadcast";
  case CollectiveKind::Reduce: return "reduce";
  case CollectiveKind::AllToAll: return "all_to_all";
  case CollectiveKind::Send: return "send";
  case CollectiveKind::Recv: return "recv";
  case CollectiveKind::Barrier: return "barrier";
  case CollectiveKind::Unknown: break;
  }
  return "unknown";
}

const char* toString(ElementType t) {
  switch (t) {
  case ElementType::Int8: return "int8";
  case ElementType::Uint8: return "uint8";
  case ElementType::Int32: return "int32";
  case ElementType::Uint32: return "uint32";
  case ElementType::Int64: return "int64";
  case ElementType::Uint64: return "uint64";
  case ElementType::Float16: return "float16";
  case ElementType::Float32: return "float32";
  case ElementType::Float64: return "float64";
  case ElementType::BFloat16: return "bfloat16";
  case ElementType::Float8E4M3: return "float8_e4m3";
  case ElementType::Float8E5M2: return "float8_e5m2";
  case ElementType::Unknown: break;
  }
  return "unknown";
}

} // namespace gpuwise::model
