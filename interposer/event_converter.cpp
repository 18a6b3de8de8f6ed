#include "interposer/event_converter.h"

#include "interposer/nccl_comm_table.h"

#include <cstdio>

namespace gpuwise::interposer {

using model::MemoryKind;

namespace {

// cudaStreamLegacy and cudaStreamPerThread are the handle values 0x1 and 0x2.
constexpr uint64_t kStreamLegacy = 0x1;
constexpr uint64_t kStreamPerThread = 0x2;

model::CopyDirection direction(CopyKind k, MemoryKind src, MemoryKind dst) {
  switch (k) {
  case CopyKind::HostToHost: return model::CopyDirection::HostToHost;
  case CopyKind::HostToDevice: return model::CopyDirection::HostToDevice;
  case CopyKind::DeviceToHost: return model::CopyDirection::DeviceToHost;
  case CopyKind::DeviceToDevice: return model::CopyDirection::DeviceToDevice;
  case CopyKind::Default:
    // cudaMemcpyDefault: the runtime infers the direction from unified addressing. We know only the
    // host ranges we saw registered; a registered side is host, the other we cannot tell.
    break;
  }
  (void)src;
  (void)dst;
  return model::CopyDirection::Unknown;
}

bool blocksHost(CopyKind k) {
  return k != CopyKind::DeviceToDevice;
}

// ncclDataType_t (ncclInt8 = 0 ... ncclFloat8e5m2 = 11) as the model's element type.
model::ElementType elementType(uint8_t nccl_type) {
  using T = model::ElementType;
  static constexpr T kTypes[] = {T::Int8,    T::Uint8,    T::Int32,      T::Uint32,
                                 T::Int64,   T::Uint64,   T::Float16,    T::Float32,
                                 T::Float64, T::BFloat16, T::Float8E4M3, T::Float8E5M2};
  return nccl_type < sizeof kTypes / sizeof kTypes[0] ? kTypes[nccl_type] : T::Unknown;
}

} // namespace

EventConverter::EventConverter(const profiler::Clock& clock, model::NameTable& names,
                               const KernelRegistry& kernels, NameResolver resolver)
    : clock_(clock), names_(names), kernels_(kernels), resolver_(std::move(resolver)) {}

model::NameId EventConverter::apiName(ApiId id) {
  size_t i = size_t(id);
  if (i >= size_t(ApiId::Count)) return 0;
  if (!api_names_[i]) api_names_[i] = names_.intern(interposer::apiName(id));
  return api_names_[i];
}

uint32_t EventConverter::streamId(uint64_t handle, uint32_t tid) {
  if (handle == 0 || handle == kStreamLegacy) return 0;
  if (handle == kStreamPerThread) return (1u << 31) | (tid & 0x7fffffffu);
  auto it = streams_.find(handle);
  if (it != streams_.end()) return it->second;
  if (streams_.size() >= (1u << 16)) return 0xffffffffu; // bounded: more streams share one id
  uint32_t id = next_stream_++;
  streams_.emplace(handle, id);
  return id;
}

model::NameId EventConverter::kernelName(const void* func, FuncKind kind) {
  uint64_t gen = kernels_.generation();
  auto it = kernel_names_.find(func);
  if (it != kernel_names_.end() &&
      (it->second.generation == ~uint64_t{0} || it->second.generation == gen))
    return it->second.id;
  std::string name;
  if (kind != FuncKind::DriverFunction) name = kernels_.nameOf(func);
  if (name.empty() && resolver_) name = resolver_(func, kind);
  CachedName cached;
  if (!name.empty()) {
    cached = {names_.intern(name), ~uint64_t{0}};
  } else {
    char buf[48];
    std::snprintf(buf, sizeof buf, "<unnamed kernel %p>", func);
    cached = {names_.intern(buf), gen}; // retried once something new is registered
  }
  kernel_names_[func] = cached;
  return cached.id;
}

// function-length: switch over record kinds
void EventConverter::convert(const RawEvent& e, uint32_t tid, Records& out) {
  int64_t start = ns(e.t0), end = ns(e.t1);
  auto api_call = [&] {
    model::ApiCall a;
    a.start = start;
    a.end = end;
    a.name = apiName(e.api);
    a.thread = tid;
    out.api_calls.push_back(a);
  };
  if (e.result != 0) {
    // The call failed: nothing ran, nothing was allocated. Keep the call itself visible.
    api_call();
    return;
  }
  switch (e.kind) {
  case EventKind::Launch: {
    model::KernelExec k;
    k.launch_start = start;
    k.launch_end = end;
    k.name = kernelName(e.u.launch.func, FuncKind(e.sub));
    k.device = e.device;
    k.stream = streamId(e.u.launch.stream, tid);
    k.thread = tid;
    k.grid = {e.u.launch.grid_x, e.u.launch.grid_y, e.u.launch.grid_z};
    k.block = {e.u.launch.block_x, e.u.launch.block_y, e.u.launch.block_z};
    k.dynamic_shared_bytes = e.u.launch.shared_bytes;
    out.kernels.push_back(k);
    break;
  }
  case EventKind::Copy: {
    model::Copy c;
    c.call_start = start;
    c.call_end = end;
    c.bytes = e.u.copy.bytes;
    c.device = e.device;
    c.stream = streamId(e.u.copy.stream, tid);
    c.thread = tid;
    c.src = MemoryKind(e.u.copy.src_mem);
    c.dst = MemoryKind(e.u.copy.dst_mem);
    c.direction = direction(CopyKind(e.sub), c.src, c.dst);
    c.async = e.u.copy.async != 0;
    out.copies.push_back(c);
    if (!c.async && blocksHost(CopyKind(e.sub))) {
      model::HostSync s;
      s.start = start;
      s.end = end;
      s.device = e.device;
      s.stream = c.stream;
      s.thread = tid;
      s.kind = model::SyncKind::SyncCopy;
      out.syncs.push_back(s);
    }
    break;
  }
  case EventKind::Memset: {
    model::Memset m;
    m.call_start = start;
    m.call_end = end;
    m.bytes = e.u.memset.bytes;
    m.device = e.device;
    m.stream = streamId(e.u.memset.stream, tid);
    m.thread = tid;
    m.dst = MemoryKind::Device;
    m.async = e.u.memset.async != 0;
    out.memsets.push_back(m);
    if (!m.async) {
      model::HostSync s;
      s.start = start;
      s.end = end;
      s.device = e.device;
      s.stream = m.stream;
      s.thread = tid;
      s.kind = model::SyncKind::SyncCopy;
      out.syncs.push_back(s);
    }
    break;
  }
  case EventKind::Sync: {
    model::HostSync s;
    s.start = start;
    s.end = end;
    s.device = e.device;
    s.kind = model::SyncKind(e.sub);
    bool on_stream =
        s.kind == model::SyncKind::Stream || s.kind == model::SyncKind::StreamWaitEvent;
    s.stream = on_stream ? streamId(e.u.sync.handle, tid) : 0;
    s.thread = tid;
    out.syncs.push_back(s);
    break;
  }
  case EventKind::Alloc: {
    api_call();
    if (e.u.alloc.address == 0) break;
    model::Allocation a;
    a.time = end; // the memory exists once the call returned
    a.address = e.u.alloc.address;
    a.bytes = e.u.alloc.bytes;
    a.device = e.device;
    a.kind = MemoryKind(e.sub);
    out.allocations.push_back(a);
    if (allocation_bytes_.size() < kMaxTrackedAllocations) allocation_bytes_[a.address] = a.bytes;
    break;
  }
  case EventKind::Free: {
    api_call();
    if (e.u.alloc.address == 0) break; // cudaFree(0): the context-creation idiom, not a free
    model::Allocation a;
    a.time = start;
    a.address = e.u.alloc.address;
    auto it = allocation_bytes_.find(a.address);
    if (it != allocation_bytes_.end()) {
      a.bytes = it->second;
      allocation_bytes_.erase(it);
    } else {
      a.bytes = e.u.alloc.bytes; // the hook may know it (cudaHostUnregister's range)
    }
    a.device = e.device;
    a.kind = MemoryKind(e.sub);
    a.is_free = true;
    out.allocations.push_back(a);
    break;
  }
  case EventKind::GraphLaunch: api_call(); break;
  case EventKind::Blas: {
    auto type = [](uint8_t v) { return v == 0xff ? int32_t{-1} : int32_t{v}; };
    model::BlasCall c;
    c.start = start;
    c.end = end;
    c.thread = tid;
    c.device = e.device;
    c.stream = e.u.blas.stream ? streamId(e.u.blas.stream, tid) : 0;
    c.api = model::BlasApi(e.sub);
    c.a_type = type(e.u.blas.a_type);
    c.b_type = type(e.u.blas.b_type);
    c.c_type = type(e.u.blas.c_type);
    c.scale_type = type(e.u.blas.scale_type);
    c.compute_type = type(e.u.blas.compute_type);
    c.math_mode = type(e.u.blas.math_mode);
    c.m = e.u.blas.m;
    c.n = e.u.blas.n;
    c.k = e.u.blas.k;
    c.batch = e.u.blas.batch;
    out.blas_calls.push_back(c);
    break;
  }
  case EventKind::Collective: out.collectives.push_back(collective(e, tid, start, end)); break;
  }
}

model::Collective EventConverter::collective(const RawEvent& e, uint32_t tid, int64_t start,
                                             int64_t end) {
  using Kind = model::CollectiveKind;
  const auto& raw = e.u.collective;
  model::Collective c;
  c.start = start;
  c.end = end;
  c.thread = tid;
  c.device = e.device;
  c.stream = streamId(raw.stream, tid);
  c.kind = Kind(e.sub);
  c.element = elementType(raw.element);
  c.sequence = raw.sequence;
  c.peer = raw.peer;
  if (raw.slot < NcclCommTable::kSlots) {
    const NcclCommTable::Facts& f = ncclComms().facts(raw.slot);
    c.communicator = f.id;
    c.group_size = f.size > 0 ? f.size : -1;
    c.group_rank = f.size > 0 && f.rank >= 0 ? f.rank : -1;
  } else {
    // Untracked (created by a call the hooks do not see): an id of this process only.
    c.communicator = raw.comm ? (raw.comm * 0x9E3779B97F4A7C15ull) | 1 : 0;
  }
  // NCCL's count is per rank for all-gather's input, reduce-scatter's output and each all-to-all
  // block; the other side is `ranks` times larger (unknown, 0, where the size is).
  const uint64_t n = c.group_size > 0 ? uint64_t(c.group_size) : 0;
  switch (c.kind) {
  case Kind::AllGather: c.in_count = raw.count, c.out_count = raw.count * n; break;
  case Kind::ReduceScatter: c.in_count = raw.count * n, c.out_count = raw.count; break;
  case Kind::AllToAll: c.in_count = c.out_count = raw.count * n; break;
  case Kind::Send: c.in_count = raw.count; break;
  case Kind::Recv: c.out_count = raw.count; break;
  default: c.in_count = c.out_count = raw.count; break;
  }
  return c;
}

const char* apiName(ApiId id) {
  static const char* const kNames[] = {"",
#define GPUWISE_API_NAME(name) #name,
                                       GPUWISE_HOOKED_APIS(GPUWISE_API_NAME)
#undef GPUWISE_API_NAME
  };
  size_t i = size_t(id);
  return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "";
}

} // namespace gpuwise::interposer
