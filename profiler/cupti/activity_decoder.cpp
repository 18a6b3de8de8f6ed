#include "profiler/cupti/activity_decoder.h"

#include "profiler/cupti/cupti_cbids.h"
#include "profiler/cupti/cupti_port.h"
#include "profiler/cupti/timestamp_mapper.h"

#include <cstring>
#include <string>

namespace gpuwise::profiler {

namespace {

using model::CopyDirection;
using model::MemoryKind;

MemoryKind memoryKind(uint32_t k) {
  switch (k) {
  case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return MemoryKind::Pageable;
  case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return MemoryKind::Pinned;
  case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
  case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return MemoryKind::Device;
  case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return MemoryKind::Array;
  case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
  case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return MemoryKind::Managed;
  default: return MemoryKind::Unknown;
  }
}

CopyDirection copyDirection(uint32_t k) {
  switch (k) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return CopyDirection::HostToDevice;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return CopyDirection::DeviceToHost;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return CopyDirection::DeviceToDevice;
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return CopyDirection::HostToHost;
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return CopyDirection::PeerToPeer;
  default: return CopyDirection::Unknown;
  }
}

model::SyncKind syncKind(uint32_t t) {
  switch (t) {
  case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return model::SyncKind::Event;
  case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
    return model::SyncKind::StreamWaitEvent;
  case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return model::SyncKind::Stream;
  case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return model::SyncKind::Device;
  default: return model::SyncKind::Unknown;
  }
}

uint32_t dim(int32_t v) {
  return v > 0 ? uint32_t(v) : 1u;
}

bool isCommunicationKernel(const char* name) {
  // NCCL's kernels: ncclKernel_* (<= 2.18), ncclDevKernel_* (>= 2.19); mangled forms embed them.
  return name && (std::strstr(name, "ncclKernel") || std::strstr(name, "ncclDevKernel"));
}

} // namespace

void DecodedActivity::clear() {
  kernels.clear();
  copies.clear();
  memsets.clear();
  syncs.clear();
  allocations.clear();
  ranges.clear();
  api_spans.clear();
  cupti_overhead_ns = 0;
}

int64_t ActivityDecoder::host(uint64_t t) const {
  return mapper_ ? mapper_->toHost(t) : int64_t(t);
}

ActivityDecoder::ActivityDecoder(CuptiPort& port, model::NameTable& names, Options options)
    : port_(port), names_(names), options_(options) {}

// function-length: switch over record kinds
void ActivityDecoder::decode(uint8_t* buffer, size_t valid_bytes, int64_t now_ns,
                             DecodedActivity& out) {
  CUpti_Activity* rec = nullptr;
  for (;;) {
    CUptiResult r = port_.activityGetNextRecord(buffer, valid_bytes, &rec);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break; // end of the buffer
    if (r != CUPTI_SUCCESS || !rec) {
      ++stats_.bad_buffers;
      break;
    }
    ++stats_.records;
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      Held h{HeldKind::Kernel, now_ns, {}, {}, {}, {}};
      model::KernelExec& e = h.kernel;
      e.start = host(k->start);
      e.end = host(k->end);
      e.correlation = k->correlationId;
      e.name = names_.intern(k->name ? k->name : "");
      e.device = k->deviceId;
      e.stream = k->streamId;
      e.grid = {dim(k->gridX), dim(k->gridY), dim(k->gridZ)};
      e.block = {dim(k->blockX), dim(k->blockY), dim(k->blockZ)};
      e.registers_per_thread = k->registersPerThread;
      e.static_shared_bytes = k->staticSharedMemory > 0 ? uint32_t(k->staticSharedMemory) : 0;
      e.dynamic_shared_bytes = k->dynamicSharedMemory > 0 ? uint32_t(k->dynamicSharedMemory) : 0;
      e.graph_id = k->graphId;
      e.graph_node_id = k->graphNodeId;
      if (k->graphId != 0 || k->graphNodeId != 0) {
        e.flags |= model::kKernelFromGraph;
        ++stats_.graph_kernels;
      }
      if (k->launchType == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE ||
          k->launchType == CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE)
        e.flags |= model::kKernelCooperative;
      if (isCommunicationKernel(k->name)) e.flags |= model::kKernelCommunication;
      context_device_[k->contextId] = k->deviceId;
      onGpu(std::move(h), k->correlationId, now_ns, out);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
      Held h{HeldKind::Copy, now_ns, {}, {}, {}, {}};
      model::Copy& c = h.copy;
      c.start = host(m->start);
      c.end = host(m->end);
      c.correlation = m->correlationId;
      c.bytes = m->bytes;
      c.device = m->deviceId;
      c.stream = m->streamId;
      c.direction = copyDirection(m->copyKind);
      c.src = memoryKind(m->srcKind);
      c.dst = memoryKind(m->dstKind);
      c.async = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
      context_device_[m->contextId] = m->deviceId;
      onGpu(std::move(h), m->correlationId, now_ns, out);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
      Held h{HeldKind::Memset, now_ns, {}, {}, {}, {}};
      model::Memset& s = h.memset;
      s.start = host(m->start);
      s.end = host(m->end);
      s.correlation = m->correlationId;
      s.bytes = m->bytes;
      s.device = m->deviceId;
      s.stream = m->streamId;
      s.dst = memoryKind(m->memoryKind);
      s.async = (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) != 0;
      context_device_[m->contextId] = m->deviceId;
      onGpu(std::move(h), m->correlationId, now_ns, out);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* m = reinterpret_cast<const CUpti_ActivitySynchronization2*>(rec);
      Held h{HeldKind::Sync, now_ns, {}, {}, {}, {}};
      model::HostSync& s = h.sync;
      s.start = host(m->start);
      s.end = host(m->end);
      s.correlation = m->correlationId;
      s.kind = syncKind(m->type);
      s.device = deviceOfContext(m->contextId);
      bool has_stream =
          s.kind == model::SyncKind::Stream || s.kind == model::SyncKind::StreamWaitEvent;
      s.stream = has_stream && m->streamId != CUPTI_SYNCHRONIZATION_INVALID_VALUE ? m->streamId : 0;
      onGpu(std::move(h), m->correlationId, now_ns, out);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemory4*>(rec);
      model::Allocation a;
      a.time = host(m->timestamp);
      a.address = m->address;
      a.bytes = m->bytes;
      a.device = m->deviceId;
      a.kind = memoryKind(m->memoryKind);
      a.is_free = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
      out.allocations.push_back(a);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(rec);
      ApiSpan span;
      span.start = host(a->start);
      span.end = host(a->end);
      span.thread = a->threadId;
      span.correlation = a->correlationId;
      span.cls = classOfCbid(rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME, a->cbid);
      onApi(span, now_ns, out);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: onMarker(rec, out); break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(rec);
      ++stats_.overhead_records;
      if (o->end > o->start) {
        stats_.overhead_ns += o->end - o->start;
        out.cupti_overhead_ns += o->end - o->start;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: ++stats_.graph_traces; break;
    default: ++stats_.ignored; break;
    }
  }
}

void ActivityDecoder::onMarker(const void* marker2, DecodedActivity& out) {
  const auto* m = static_cast<const CUpti_ActivityMarker2*>(marker2);
  ++stats_.markers;
  const uint32_t flags = uint32_t(m->flags);
  const uint32_t thread =
      m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0;
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    auto it = open_ranges_.find(m->id);
    if (it == open_ranges_.end()) {
      ++stats_.ranges_unmatched;
      return;
    }
    const OpenRange& o = it->second;
    if (o.kind == model::RangeKind::Operator && !options_.keep_operator_ranges) {
      open_ranges_.erase(it);
      return;
    }
    model::Range r;
    r.start = o.start;
    r.end = host(m->timestamp) >= o.start ? host(m->timestamp) : o.start;
    r.name = o.name;
    r.thread = o.thread;
    r.kind = o.kind;
    r.step = o.step;
    out.ranges.push_back(r);
    open_ranges_.erase(it);
    return;
  }
  const bool start = (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0;
  const bool instant = (flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) != 0;
  if (!start && !instant) { // sync-object markers (acquire/release): not ranges we use
    ++stats_.ignored;
    return;
  }
  const char* name = m->name ? m->name : "";
  int64_t step = -1;
  model::RangeKind kind = nvtxRangeKind(name, &step);
  if (kind == model::RangeKind::Operator && !options_.keep_operator_ranges) {
    // Its end is still to come: remember the id with no name so the end is not "unmatched".
    if (start) open_ranges_[m->id] = OpenRange{host(m->timestamp), 0, thread, kind, -1};
    ++stats_.operator_ranges;
  } else if (instant) {
    model::Range r;
    r.start = r.end = host(m->timestamp);
    r.name = names_.intern(name);
    r.thread = thread;
    r.kind = kind == model::RangeKind::Step ? model::RangeKind::Annotation : kind; // no length
    out.ranges.push_back(r);
    return;
  } else {
    open_ranges_[m->id] = OpenRange{host(m->timestamp), names_.intern(name), thread, kind, step};
  }
  while (open_ranges_.size() > options_.max_open_ranges) {
    open_ranges_.erase(open_ranges_.begin()); // the oldest start: its end never came
    ++stats_.ranges_unmatched;
  }
}

void ActivityDecoder::onApi(const ApiSpan& span, int64_t now_ns, DecodedActivity& out) {
  if (span.cls != ApiClass::Other) out.api_spans.push_back(span);
  if (span.correlation == 0) return;
  auto [it, inserted] = api_.try_emplace(span.correlation);
  ApiInfo& info = it->second;
  if (inserted) {
    if (span.cls == ApiClass::GraphLaunch) ++stats_.graph_launches;
    info = {span.start, span.end, span.thread, now_ns};
    api_order_.emplace_back(now_ns, span.correlation);
    if (api_.size() > options_.max_api_entries) {
      // Oldest first; stale queue entries (already aged out) are skipped.
      while (!api_order_.empty() && api_.size() > options_.max_api_entries) {
        auto [arrived, corr] = api_order_.front();
        api_order_.pop_front();
        auto old = api_.find(corr);
        if (old != api_.end() && old->second.arrived == arrived && corr != span.correlation) {
          api_.erase(old);
          ++stats_.evicted_api;
        }
      }
    }
  } else {
    // A runtime call and the driver call inside it share the correlation id: keep the outer span.
    if (span.start < info.start) info.start = span.start;
    if (span.end > info.end) info.end = span.end;
    if (!info.thread) info.thread = span.thread;
  }
  auto held = held_.find(span.correlation);
  if (held == held_.end()) return;
  for (Held& h : held->second) {
    join(h, api_[span.correlation]);
    emit(h, out);
    ++stats_.joined;
  }
  held_count_ -= held->second.size();
  held_.erase(held);
}

void ActivityDecoder::onGpu(Held&& h, uint32_t correlation, int64_t now_ns, DecodedActivity& out) {
  if (correlation != 0) {
    auto api = api_.find(correlation);
    if (api != api_.end()) {
      join(h, api->second);
      emit(h, out);
      ++stats_.joined;
      return;
    }
  } else {
    emit(h, out);
    ++stats_.unjoined;
    return;
  }
  h.arrived = now_ns;
  held_[correlation].push_back(std::move(h));
  held_order_.emplace_back(now_ns, correlation);
  ++held_count_;
  while (held_count_ > options_.max_held_records && !held_order_.empty()) {
    uint32_t corr = held_order_.front().second;
    held_order_.pop_front();
    auto it = held_.find(corr);
    if (it == held_.end()) continue;
    for (Held& old : it->second) {
      emit(old, out);
      ++stats_.unjoined;
    }
    held_count_ -= it->second.size();
    held_.erase(it);
  }
}

void ActivityDecoder::join(Held& h, const ApiInfo& api) {
  switch (h.kind) {
  case HeldKind::Kernel:
    h.kernel.launch_start = api.start;
    h.kernel.launch_end = api.end;
    h.kernel.thread = api.thread;
    break;
  case HeldKind::Copy:
    h.copy.call_start = api.start;
    h.copy.call_end = api.end;
    h.copy.thread = api.thread;
    break;
  case HeldKind::Memset:
    h.memset.call_start = api.start;
    h.memset.call_end = api.end;
    h.memset.thread = api.thread;
    break;
  case HeldKind::Sync: h.sync.thread = api.thread; break;
  }
}

void ActivityDecoder::emit(Held& h, DecodedActivity& out) {
  switch (h.kind) {
  case HeldKind::Kernel: out.kernels.push_back(h.kernel); break;
  case HeldKind::Copy: out.copies.push_back(h.copy); break;
  case HeldKind::Memset: out.memsets.push_back(h.memset); break;
  case HeldKind::Sync: out.syncs.push_back(h.sync); break;
  }
}

void ActivityDecoder::age(int64_t now_ns, DecodedActivity& out) {
  int64_t cutoff = now_ns - options_.hold_ns;
  while (!held_order_.empty() && held_order_.front().first < cutoff) {
    auto [arrived, corr] = held_order_.front();
    held_order_.pop_front();
    auto it = held_.find(corr);
    if (it == held_.end()) continue;
    // Records under one correlation may have arrived at different times; emit those that are due.
    auto& v = it->second;
    size_t kept = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i].arrived <= arrived) {
        emit(v[i], out);
        ++stats_.unjoined;
      } else {
        v[kept++] = std::move(v[i]);
      }
    }
    held_count_ -= v.size() - kept;
    v.resize(kept);
    if (v.empty()) held_.erase(it);
  }
  while (!api_order_.empty() && api_order_.front().first < cutoff) {
    auto [arrived, corr] = api_order_.front();
    api_order_.pop_front();
    auto it = api_.find(corr);
    if (it != api_.end() && it->second.arrived == arrived) api_.erase(it);
  }
}

void ActivityDecoder::flushHeld(DecodedActivity& out) {
  for (auto& [corr, v] : held_) {
    for (Held& h : v) {
      emit(h, out);
      ++stats_.unjoined;
    }
  }
  held_.clear();
  held_order_.clear();
  held_count_ = 0;
}

uint32_t ActivityDecoder::deviceOfContext(uint32_t context) const {
  auto it = context_device_.find(context);
  return it == context_device_.end() ? 0 : it->second;
}

} // namespace gpuwise::profiler
