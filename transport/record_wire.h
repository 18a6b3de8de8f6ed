// Each record kind's wire form: one RecordWire<Record> per kind of model::RecordSet other than
// kernels (which travel as interned columns: kernel_timing.h, signature_table.h).
//
// A RecordWire says which FlatBuffers struct carries the record (Event), how to convert both ways,
// what the decoder rejects before it applies a batch (problem: a line, or nullptr), and where the
// column sits in wire::Batch (of, addTo). The encoder and decoder walk every kind with
// RecordSet::forEachKind / forEachColumn, so a kind added to the record set without a
// RecordWire here fails to compile in both. Internal to transport/; pure functions, any thread.
#pragma once

#include "profiler/model/name_table.h"
#include "profiler/model/record_set.h"
#include "transport/schema/gpuwise_generated.h"

#include <type_traits>

namespace gpuwise::transport {

// Declared, never defined: a record kind without a wire form is a compile error where it is used.
template <class Record> struct RecordWire;

// Kernels have no RecordWire: they travel as wire::KernelColumns.
template <class Record>
inline constexpr bool kColumnarKernels = std::is_same_v<Record, model::KernelExec>;

namespace wire_detail {
inline uint8_t u8(auto e) {
  return static_cast<uint8_t>(e);
}
inline bool memoryKindOk(uint8_t v) {
  return v <= uint8_t(model::MemoryKind::Array);
}
inline bool nameOk(uint32_t id) {
  return id <= model::NameTable::kMaxNames;
}
} // namespace wire_detail

template <> struct RecordWire<model::Copy> {
  using Event = wire::CopyEvent;
  static auto of(const wire::Batch& b) { return b.copies(); }
  static void addTo(wire::BatchBuilder& b,
                    flatbuffers::Offset<flatbuffers::Vector<const Event*>> v) {
    b.add_copies(v);
  }
  static Event toWire(const model::Copy& c) {
    using wire_detail::u8;
    return Event(c.start, c.end, c.call_start, c.call_end, c.bytes, c.device, c.stream, c.thread,
                 u8(c.direction), u8(c.src), u8(c.dst), c.async);
  }
  static const char* problem(const Event& e) {
    using wire_detail::memoryKindOk;
    if (e.direction() > uint8_t(model::CopyDirection::PeerToPeer) || !memoryKindOk(e.src()) ||
        !memoryKindOk(e.dst()))
      return "copy with an unknown direction or memory kind";
    return nullptr;
  }
  static model::Copy fromWire(const Event& e) {
    model::Copy c;
    c.start = e.start();
    c.end = e.end();
    c.call_start = e.call_start();
    c.call_end = e.call_end();
    c.bytes = e.bytes();
    c.device = e.device();
    c.stream = e.stream();
    c.thread = e.thread();
    c.direction = model::CopyDirection(e.direction());
    c.src = model::MemoryKind(e.src());
    c.dst = model::MemoryKind(e.dst());
    c.async = e.async();
    return c;
  }
};

template <> struct RecordWire<model::Memset> {
  using Event = wire::MemsetEvent;
  static auto of(const wire::Batch& b) { return b.memsets(); }
  static void addTo(wire::BatchBuilder& b,
                    flatbuffers::Offset<flatbuffers::Vector<const Event*>> v) {
    b.add_memsets(v);
  }
  static Event toWire(const model::Memset& m) {
    return Event(m.start, m.end, m.call_start, m.call_end, m.bytes, m.device, m.stream, m.thread,
                 wire_detail::u8(m.dst), m.async);
  }
  static const char* problem(const Event& e) {
    return wire_detail::memoryKindOk(e.dst()) ? nullptr : "memset with an unknown memory kind";
  }
  static model::Memset fromWire(const Event& e) {
    model::Memset m;
    m.start = e.start();
    m.end = e.end();
    m.call_start = e.call_start();
    m.call_end = e.call_end();
    m.bytes = e.bytes();
    m.device = e.device();
    m.stream = e.stream();
    m.thread = e.thread();
    m.dst = model::MemoryKind(e.dst());
    m.async = e.async();
    return m;
  }
};

template <> struct RecordWire<model::HostSync> {
  using Event = wire::SyncEvent;
  static auto of(const wire::Batch& b) { return b.syncs(); }
  static void addTo(wire::BatchBuilder& b,
                    flatbuffers::Offset<flatbuffers::Vector<const Event*>> v) {
    b.add_syncs(v);
  }
  static Event toWire(const model::HostSync& s) {
    return Event(s.start, s.end, s.device, s.stream, s.thread, wire_detail::u8(s.kind));
  }
  static const char* problem(const Event& e) {
    return e.kind() > uint8_t(model::SyncKind::SyncCopy) ? "sync of unknown kind" : nullptr;
  }
  static model::HostSync fromWire(const Event& e) {
    model::HostSync s;
    s.start = e.start();
    s.end = e.end();
    s.device = e.device();
    s.stream = e.stream();
    s.thread = e.thread();
    s.kind = model::SyncKind(e.kind());
    return s;
  }
};

template <> struct RecordWire<model::ApiCall> {
  using Event = wire::ApiCallEvent;
  static auto of(const wire::Batch& b) { return b.api_calls(); }
  static void addTo(wire::BatchBuilder& b,
                    flatbuffers::Offset<flatbuffers::Vector<const Event*>> v) {
    b.add_api_calls(v);
  }
  static Event toWire(const model::ApiCall& a) { return Event(a.start, a.end, a.name, a.thread); }
  static const char* problem(const Event& e) {
    return wire_detail::nameOk(e.name()) ? nullptr : "API call name id out of range";
  }
  static model::ApiCall fromWire(const Event& e) {
    model::ApiCall a;
    a.start = e.start();
    a.end = e.end();
    a.name = e.name();
    a.thread = e.thread();
    return a;
  }
};

template <> struct RecordWire<model::Allocation> {
  using Event = wire::AllocationEvent;
  static auto of(const wire::Batch& b) { return b.allocations(); }
  static void addTo(wire::BatchBuilder& b,
                    flatbuffers::Offset<flatbuffers::Vector<const Event*>> v) {
    b.add_allocations(v);
  }
  static Event toWire(const model::Allocation& a) {
    return Event(a.time, a.address, a.bytes, a.device, wire_detail::u8(a.kind), a.is_free);
  }
  static const char* problem(const Event& e) {
    return wire_detail::memoryKindOk(e.kind()) ? nullptr : "allocation of unknown memory kind";
  }
  static model::Allocation fromWire(const Event& e) {
    model::Allocation a;
    a.time = e.time();
    a.address = e.address();
    a.bytes = e.bytes();
    a.device = e.device();
    a.kind = model::MemoryKind(e.kind());
    a.is_free = e.is_free();
    return a;
  }
};

template <> struct RecordWire<model::MemorySample> {
  using Event = wire::MemorySampleEvent;
  static auto of(const wire::Batch& b) { return b.memory_samples(); }
  static void addTo(wire::BatchBuilder& b,
                    flatbuffers::Offset<flatbuffers::Vector<const Event*>> v) {
    b.add_memory_samples(v);
  }
  static Event toWire(const model::MemorySample& m) {
    return Event(m.time, m.allocated_bytes, m.reserved_bytes, m.device);
  }
  static const char* problem(const Event&) { return nullptr; }
  static model::MemorySample fromWire(const Event& e) {
    model::MemorySample m;
    m.time = e.time();
    m.device = e.device();
    m.allocated_bytes = e.allocated_bytes();
    m.reserved_bytes = e.reserved_bytes();
    return m;
  }
};

template <> struct RecordWire<model::Range> {
  using Event = wire::RangeEvent;
  static auto of(const wire::Batch& b) { return b.ranges(); }
  static void addTo(wire::BatchBuilder& b,
                    flatbuffers::Offset<flatbuffers::Vector<const Event*>> v) {
    b.add_ranges(v);
  }
  static Event toWire(const model::Range& r) {
    return Event(r.start, r.end, r.step, r.name, r.thread, r.device, r.stream,
                 wire_detail::u8(r.kind));
  }
  static const char* problem(const Event& e) {
    if (e.kind() > uint8_t(model::RangeKind::Operator) || !wire_detail::nameOk(e.name()))
      return "range of unknown kind or name id out of range";
    return nullptr;
  }
  static model::Range fromWire(const Event& e) {
    model::Range r;
    r.start = e.start();
    r.end = e.end();
    r.name = e.name();
    r.thread = e.thread();
    r.device = e.device();
    r.stream = e.stream();
    r.kind = model::RangeKind(e.kind());
    r.step = e.step();
    return r;
  }
};

template <> struct RecordWire<model::DeviceSample> {
  using Event = wire::DeviceSampleEvent;
  static auto of(const wire::Batch& b) { return b.device_samples(); }
  static void addTo(wire::BatchBuilder& b,
                    flatbuffers::Offset<flatbuffers::Vector<const Event*>> v) {
    b.add_device_samples(v);
  }
  static Event toWire(const model::DeviceSample& d) {
    return Event(d.time, d.process_used_bytes, d.device_used_bytes, d.device_total_bytes, d.device,
                 d.gpu_utilization, d.memory_utilization);
  }
  static const char* problem(const Event&) { return nullptr; }
  static model::DeviceSample fromWire(const Event& e) {
    model::DeviceSample d;
    d.time = e.time();
    d.device = e.device();
    d.process_used_bytes = e.process_used_bytes();
    d.device_used_bytes = e.device_used_bytes();
    d.device_total_bytes = e.device_total_bytes();
    d.gpu_utilization = e.gpu_utilization();
    d.memory_utilization = e.memory_utilization();
    return d;
  }
};

template <> struct RecordWire<model::BlasCall> {
  using Event = wire::BlasCallEvent;
  static auto of(const wire::Batch& b) { return b.blas_calls(); }
  static void addTo(wire::BatchBuilder& b,
                    flatbuffers::Offset<flatbuffers::Vector<const Event*>> v) {
    b.add_blas_calls(v);
  }
  static Event toWire(const model::BlasCall& c) {
    return Event(c.start, c.end, c.m, c.n, c.k, c.batch, c.thread, c.device, c.stream, c.a_type,
                 c.b_type, c.c_type, c.compute_type, c.scale_type, c.math_mode, c.status,
                 wire_detail::u8(c.api));
  }
  static const char* problem(const Event& e) {
    return e.api() > uint8_t(model::BlasApi::LtMatmul) ? "BLAS call of unknown API" : nullptr;
  }
  static model::BlasCall fromWire(const Event& e) {
    model::BlasCall c;
    c.start = e.start();
    c.end = e.end();
    c.thread = e.thread();
    c.device = e.device();
    c.stream = e.stream();
    c.api = model::BlasApi(e.api());
    c.a_type = e.a_type();
    c.b_type = e.b_type();
    c.c_type = e.c_type();
    c.compute_type = e.compute_type();
    c.scale_type = e.scale_type();
    c.math_mode = e.math_mode();
    c.status = e.status();
    c.m = e.m();
    c.n = e.n();
    c.k = e.k();
    c.batch = e.batch();
    return c;
  }
};

template <> struct RecordWire<model::Collective> {
  using Event = wire::CollectiveEvent;
  static auto of(const wire::Batch& b) { return b.collectives(); }
  static void addTo(wire::BatchBuilder& b,
                    flatbuffers::Offset<flatbuffers::Vector<const Event*>> v) {
    b.add_collectives(v);
  }
  static Event toWire(const model::Collective& c) {
    return Event(c.start, c.end, c.correlation, c.communicator, c.sequence, c.in_count, c.out_count,
                 c.thread, c.device, c.stream, c.group_size, c.group_rank, c.peer,
                 wire_detail::u8(c.kind), wire_detail::u8(c.element));
  }
  static const char* problem(const Event& e) {
    if (e.kind() > uint8_t(model::CollectiveKind::Barrier)) return "collective of unknown kind";
    if (e.element() > uint8_t(model::ElementType::Float8E5M2))
      return "collective of unknown element type";
    return nullptr;
  }
  static model::Collective fromWire(const Event& e) {
    model::Collective c;
    c.start = e.start();
    c.end = e.end();
    c.correlation = e.correlation();
    c.communicator = e.communicator();
    c.sequence = e.sequence();
    c.in_count = e.in_count();
    c.out_count = e.out_count();
    c.thread = e.thread();
    c.device = e.device();
    c.stream = e.stream();
    c.group_size = e.group_size();
    c.group_rank = e.group_rank();
    c.peer = e.peer();
    c.kind = model::CollectiveKind(e.kind());
    c.element = model::ElementType(e.element());
    return c;
  }
};

template <> struct RecordWire<model::PowerSample> {
  using Event = wire::PowerSampleEvent;
  static auto of(const wire::Batch& b) { return b.power_samples(); }
  static void addTo(wire::BatchBuilder& b,
                    flatbuffers::Offset<flatbuffers::Vector<const Event*>> v) {
    b.add_power_samples(v);
  }
  static Event toWire(const model::PowerSample& p) {
    return Event(p.time, p.energy_mj, p.device, p.power_mw, p.sm_clock_mhz, p.memory_clock_mhz);
  }
  static const char* problem(const Event&) { return nullptr; }
  static model::PowerSample fromWire(const Event& e) {
    model::PowerSample p;
    p.time = e.time();
    p.device = e.device();
    p.energy_mj = e.energy_mj();
    p.power_mw = e.power_mw();
    p.sm_clock_mhz = e.sm_clock_mhz();
    p.memory_clock_mhz = e.memory_clock_mhz();
    return p;
  }
};

} // namespace gpuwise::transport
