// MessageDecoder and peekRoute: enveloped FlatBuffers -> model records (see codec.h). Every check
// on a batch runs before any of it is applied, so a rejected message leaves the decoder as it was.
#include "transport/codec.h"
#include "transport/envelope.h"
#include "transport/kernel_timing.h"
#include "transport/schema/gpuwise_generated.h"
#include "transport/signature_table.h"

#include <algorithm>
#include <optional>
#include <string>

namespace gpuwise::transport {
namespace {

using K = DecodeError::Kind;
using Bytes = flatbuffers::Vector<uint8_t>;

// Bounds on a Hello, enforced by truncation (and counted in Hello::truncated_fields) rather than
// rejection: a Hello refused would leave an honest process without its identity. What one stream
// can make the advisor hold stays small however many streams there are (64 devices x 3 short
// strings + a few KiB of text per stream: under 100 KiB even at StreamRouter::kMaxStreams), and
// the per-report work stays linear (CollectionResult::merge keys GPUs by host, index and name).
//
// Devices per process: a CUDA process sees the GPUs of its node (8 on a DGX/HGX board, 16 on the
// largest) or one MIG instance; 64 leaves room for the largest boxes sold and then some.
constexpr size_t kMaxHelloDevices = 64;
// Short identity strings: a host name is at most 255 bytes (RFC 1035, HOST_NAME_MAX is 64 on
// Linux); Kubernetes pod, namespace and container names are DNS labels or subdomains (at most 253
// bytes); a GPU's name ("NVIDIA H100 80GB HBM3"), NVML UUID ("GPU-"/"MIG-" + 36) and MIG profile
// ("7g.80gb") are far shorter.
constexpr size_t kMaxHelloNameBytes = 256;
// Free text a person reads: the tier's reason is one sentence the shim writes; the command line
// is what identifies a job (a launcher with its arguments), rarely more than a few hundred bytes.
constexpr size_t kMaxHelloReasonBytes = 1024;
constexpr size_t kMaxHelloCommandBytes = 4096;
// What one sender's names may make its decoder hold. Ids arrive with gaps (only the names records
// use are sent) and NameTable keeps far ids sparse, so an id costs its own name only; these bound
// the names themselves. A real job's names (mangled C++ kernel names of up to a few KiB, API and
// range names; tens of thousands with torch.compile) come to a few MiB. Names past either bound
// are not stored (their records resolve to the empty name) and are counted.
constexpr size_t kMaxNamesPerDecoder = size_t{1} << 20;
constexpr size_t kMaxNameBytesPerDecoder = size_t{32} << 20;

DecodeError malformed(std::string detail) { return DecodeError{K::Malformed, std::move(detail)}; }

bool textOk(const Bytes* b) { return !b || b->size() <= kMaxTextBytes; }
// At most `limit` bytes of `b`, counting in `truncated` when that cut it.
std::string boundedStr(const Bytes* b, size_t limit, uint32_t& truncated) {
  if (!b) return {};
  const size_t n = std::min<size_t>(b->size(), limit);
  truncated += n < b->size();
  return std::string(reinterpret_cast<const char*>(b->data()), n);
}

template <class T> size_t count(const flatbuffers::Vector<T>* v) { return v ? v->size() : 0; }

// FlatBuffers' verifier checks a struct vector's length word, not its elements' alignment; an
// honest builder aligns them, and reading a misaligned one in place would be undefined.
template <class W> bool aligned(const flatbuffers::Vector<const W*>* v) {
  return !v || reinterpret_cast<uintptr_t>(v->Data()) % alignof(W) == 0;
}

bool memoryKindOk(uint8_t v) { return v <= uint8_t(model::MemoryKind::Array); }

std::variant<Route, DecodeError> routeOf(const wire::Message& m) {
  if (const auto* h = m.body_as_Hello()) return Route{true, h->session_id(), h->pid()};
  if (const auto* b = m.body_as_Batch()) return Route{false, b->session_id(), b->pid()};
  return malformed("message has no Hello or Batch body");
}

} // namespace

struct MessageDecoder::Impl {
  explicit Impl(model::NameTable& n) : names(n) {}
  model::NameTable& names;
  EnvelopeReader reader;
  SignatureMirror signatures;
  KernelTimingModel timing;
  bool bound = false;
  uint64_t session = 0;
  bool epoch_known = false;
  uint32_t epoch = 0;
  uint64_t undecodable = 0;
  uint64_t names_dropped = 0;

  std::variant<Hello, Batch, DecodeError> hello(const wire::Hello& h);
  std::variant<Hello, Batch, DecodeError> batch(const wire::Batch& b, Batch* append_to);
  std::optional<DecodeError> checkBatch(const wire::Batch& b) const;
  void decodeKernels(const wire::KernelColumns& c, std::vector<model::KernelExec>& out);
  // One batch's residual rows, unpacked into scratch shared by the thread's decoders.
  static const KernelResiduals* unpackResiduals(const uint8_t* planes, size_t rows);
};

// The byte planes back into rows (the inverse of writeResidualPlanes), plane by plane so every
// load stream is sequential; several times faster than gathering 16 bytes per row.
const KernelResiduals* MessageDecoder::Impl::unpackResiduals(const uint8_t* planes, size_t rows) {
  thread_local std::vector<KernelResiduals> scratch;
  if (scratch.size() < rows) scratch.resize(rows);
  // Keep the scratch small after one huge batch.
  if (scratch.capacity() > 4 * rows && scratch.capacity() > 4096) std::vector<KernelResiduals>(rows).swap(scratch);
  KernelResiduals* out = scratch.data();
  uint32_t KernelResiduals::*const columns[4] = {&KernelResiduals::host_gap, &KernelResiduals::launch,
                                                 &KernelResiduals::gpu_offset, &KernelResiduals::gpu_duration};
  for (size_t c = 0; c < 4; ++c) {
    const uint8_t* b0 = planes + (4 * c + 0) * rows;
    const uint8_t* b1 = planes + (4 * c + 1) * rows;
    const uint8_t* b2 = planes + (4 * c + 2) * rows;
    const uint8_t* b3 = planes + (4 * c + 3) * rows;
    uint32_t KernelResiduals::*col = columns[c];
    for (size_t i = 0; i < rows; ++i)
      out[i].*col = uint32_t{b0[i]} | uint32_t{b1[i]} << 8 | uint32_t{b2[i]} << 16 | uint32_t{b3[i]} << 24;
  }
  return out;
}

std::variant<Hello, Batch, DecodeError> MessageDecoder::Impl::hello(const wire::Hello& h) {
  if (bound && h.session_id() != session)
    return DecodeError{K::UnknownSession, "Hello of session " + std::to_string(h.session_id()) +
                                              " on the decoder of session " + std::to_string(session)};
  if (h.tier() > uint8_t(model::CollectionTier::Imported))
    return malformed("unknown collection tier");
  Hello out;
  out.protocol_version = kProtocolVersion;
  out.session_id = h.session_id();
  out.simulated = h.simulated();
  out.start_time = h.start_time();
  uint32_t& cut = out.truncated_fields;
  auto& p = out.process;
  p.pid = h.pid();
  p.ppid = h.ppid();
  p.host = boundedStr(h.host(), kMaxHelloNameBytes, cut);
  p.command = boundedStr(h.command(), kMaxHelloCommandBytes, cut);
  p.rank = h.rank();
  p.local_rank = h.local_rank();
  p.world_size = h.world_size();
  p.pod = boundedStr(h.pod(), kMaxHelloNameBytes, cut);
  p.ns = boundedStr(h.pod_namespace(), kMaxHelloNameBytes, cut);
  p.container = boundedStr(h.container(), kMaxHelloNameBytes, cut);
  p.tier = static_cast<model::CollectionTier>(h.tier());
  p.tier_reason = boundedStr(h.tier_reason(), kMaxHelloReasonBytes, cut);
  if (h.devices()) {
    const size_t n = std::min<size_t>(h.devices()->size(), kMaxHelloDevices);
    cut += n < h.devices()->size();
    out.devices.reserve(n);
    for (flatbuffers::uoffset_t i = 0; i < n; ++i) {
      const wire::Device* d = h.devices()->Get(i);
      if (!d) return malformed("null device entry");
      model::DeviceInfo m;
      m.index = d->index();
      m.name = boundedStr(d->name(), kMaxHelloNameBytes, cut);
      m.sm_count = d->sm_count();
      m.memory_total_bytes = d->memory_total_bytes();
      m.compute_major = d->compute_major();
      m.compute_minor = d->compute_minor();
      m.mig_profile = boundedStr(d->mig_profile(), kMaxHelloNameBytes, cut);
      m.uuid = boundedStr(d->uuid(), kMaxHelloNameBytes, cut);
      m.max_threads_per_sm = d->max_threads_per_sm();
      m.max_blocks_per_sm = d->max_blocks_per_sm();
      m.registers_per_sm = d->registers_per_sm();
      m.shared_memory_per_sm = d->shared_memory_per_sm();
      m.max_shared_memory_per_block = d->max_shared_memory_per_block();
      m.warp_size = d->warp_size();
      m.simulated = d->simulated();
      out.devices.push_back(std::move(m));
    }
  }
  // A Hello starts a connection epoch: the sender interns signatures afresh.
  bound = true;
  session = h.session_id();
  signatures.clear();
  epoch_known = false;
  return out;
}

std::optional<DecodeError> MessageDecoder::Impl::checkBatch(const wire::Batch& b) const {
  if (b.names()) {
    for (const wire::NewName* n : *b.names()) {
      if (!n) return malformed("null name entry");
      if (n->id() == 0 || n->id() > model::NameTable::kMaxNames)
        return malformed("name id " + std::to_string(n->id()) + " out of range");
      if (!textOk(n->text())) return malformed("name longer than kMaxTextBytes");
    }
  }
  if (!aligned(b.signatures())) return malformed("misaligned signature vector");
  if (b.signatures()) {
    for (const wire::KernelSignature* s : *b.signatures()) {
      if (s->id() == 0 || s->id() >= kMaxSignatures)
        return malformed("signature id " + std::to_string(s->id()) + " out of range");
      if (s->name() > model::NameTable::kMaxNames) return malformed("signature name id out of range");
    }
  }
  size_t events = 0;
  if (const wire::KernelColumns* c = b.kernels()) {
    const size_t n = count(c->key());
    if (n > kMaxBatchEvents) return malformed("too many kernel rows");
    if (count(c->residuals()) != kResidualBytesPerRow * n)
      return malformed("kernel residual planes do not match the row count");
    if (!aligned(c->escapes()) || !aligned(c->occupancy()) || !aligned(c->graph_nodes()))
      return malformed("misaligned kernel vector");
    size_t escapes = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t key = c->key()->Get(static_cast<flatbuffers::uoffset_t>(i));
      const uint32_t id = key & kSignatureIdMask;
      const uint32_t form = key >> kSignatureIdBits;
      if (id == 0 || id >= kMaxSignatures) return malformed("kernel row with signature id out of range");
      if (form > kMaxTimingForm) return malformed("kernel row with unknown timing form");
      escapes += form == uint32_t(TimingForm::Escape);
    }
    if (escapes != count(c->escapes())) return malformed("kernel escape count mismatch");
    if (c->occupancy()) {
      int64_t prev = -1;
      for (const wire::KernelOccupancy* o : *c->occupancy()) {
        if (int64_t{o->row()} <= prev || o->row() >= n) return malformed("kernel occupancy row out of order");
        prev = o->row();
      }
    }
    if (c->graph_nodes()) {
      int64_t prev = -1;
      for (const wire::KernelGraphNode* g : *c->graph_nodes()) {
        if (int64_t{g->row()} <= prev || g->row() >= n) return malformed("kernel graph node row out of order");
        prev = g->row();
      }
    }
    events += n;
  }
  if (!aligned(b.copies()) || !aligned(b.memsets()) || !aligned(b.syncs()) || !aligned(b.api_calls()) ||
      !aligned(b.allocations()) || !aligned(b.memory_samples()) || !aligned(b.ranges()) ||
      !aligned(b.device_samples()) || !aligned(b.blas_calls()))
    return malformed("misaligned record vector");
  events += count(b.copies()) + count(b.memsets()) + count(b.syncs()) + count(b.api_calls()) +
            count(b.allocations()) + count(b.memory_samples()) + count(b.ranges()) +
            count(b.device_samples()) + count(b.blas_calls());
  if (events > kMaxBatchEvents) return malformed("batch of " + std::to_string(events) + " events");
  if (b.copies())
    for (const wire::CopyEvent* e : *b.copies())
      if (e->direction() > uint8_t(model::CopyDirection::PeerToPeer) || !memoryKindOk(e->src()) ||
          !memoryKindOk(e->dst()))
        return malformed("copy with an unknown direction or memory kind");
  if (b.memsets())
    for (const wire::MemsetEvent* e : *b.memsets())
      if (!memoryKindOk(e->dst())) return malformed("memset with an unknown memory kind");
  if (b.syncs())
    for (const wire::SyncEvent* e : *b.syncs())
      if (e->kind() > uint8_t(model::SyncKind::SyncCopy)) return malformed("sync of unknown kind");
  if (b.api_calls())
    for (const wire::ApiCallEvent* e : *b.api_calls())
      if (e->name() > model::NameTable::kMaxNames) return malformed("API call name id out of range");
  if (b.allocations())
    for (const wire::AllocationEvent* e : *b.allocations())
      if (!memoryKindOk(e->kind())) return malformed("allocation of unknown memory kind");
  if (b.ranges())
    for (const wire::RangeEvent* e : *b.ranges())
      if (e->kind() > uint8_t(model::RangeKind::Operator) || e->name() > model::NameTable::kMaxNames)
        return malformed("range of unknown kind or name id out of range");
  if (b.blas_calls())
    for (const wire::BlasCallEvent* e : *b.blas_calls())
      if (e->api() > uint8_t(model::BlasApi::LtMatmul)) return malformed("BLAS call of unknown API");
  return std::nullopt;
}

void MessageDecoder::Impl::decodeKernels(const wire::KernelColumns& c, std::vector<model::KernelExec>& out) {
  const size_t n = count(c.key());
  if (n == 0) return;
  // Grow geometrically ourselves: reserve(size + n) on every batch would reallocate the whole
  // trace each time.
  if (out.capacity() < out.size() + n) out.reserve(std::max(out.size() + n, 2 * out.capacity()));
  timing.reset(c.time_base());
  size_t escape = 0, occ = 0, node = 0;
  const size_t occ_n = count(c.occupancy());
  const size_t node_n = count(c.graph_nodes());
  const KernelResiduals* residuals = unpackResiduals(c.residuals()->data(), n);
  const auto* keys = c.key();
  // The row's signature, cached: a steady loop repeats a few launch sites.
  uint32_t cached_id = 0;
  const KernelSignatureKey* cached = nullptr;
  for (flatbuffers::uoffset_t i = 0; i < n; ++i) {
    const uint32_t key = keys->Get(i);
    const uint32_t id = key & kSignatureIdMask;
    const auto form = static_cast<TimingForm>(key >> kSignatureIdBits);
    KernelTimes t;
    if (form == TimingForm::Escape) {
      const wire::KernelTimes* e = c.escapes()->Get(static_cast<flatbuffers::uoffset_t>(escape++));
      t = {e->launch_start(), e->launch_end(), e->start(), e->end()};
      timing.skipEscape(id, t);
    } else {
      t = timing.decode(id, form, residuals[i]);
    }
    float occupancy = -1.0f;
    if (occ < occ_n && c.occupancy()->Get(static_cast<flatbuffers::uoffset_t>(occ))->row() == i)
      occupancy = c.occupancy()->Get(static_cast<flatbuffers::uoffset_t>(occ++))->value();
    uint64_t graph_node = 0;
    if (node < node_n && c.graph_nodes()->Get(static_cast<flatbuffers::uoffset_t>(node))->row() == i)
      graph_node = c.graph_nodes()->Get(static_cast<flatbuffers::uoffset_t>(node++))->node();
    if (id != cached_id || !cached) {
      cached = signatures.find(id);
      cached_id = id;
    }
    if (!cached) { // defined in a batch this decoder never got
      ++undecodable;
      continue;
    }
    model::KernelExec& k = out.emplace_back();
    cached->applyTo(k);
    k.launch_start = t.launch_start;
    k.launch_end = t.launch_end;
    k.start = t.start;
    k.end = t.end;
    k.achieved_occupancy = occupancy;
    k.graph_node_id = graph_node;
  }
}

std::variant<Hello, Batch, DecodeError> MessageDecoder::Impl::batch(const wire::Batch& b, Batch* append_to) {
  if (bound && b.session_id() != session)
    return DecodeError{K::UnknownSession, "batch of session " + std::to_string(b.session_id()) +
                                              " on the decoder of session " + std::to_string(session)};
  if (auto e = checkBatch(b)) return *e;

  bound = true;
  session = b.session_id();
  if (epoch_known && b.epoch() != epoch) signatures.clear(); // the sender started over
  epoch_known = true;
  epoch = b.epoch();
  if (b.names()) {
    for (const wire::NewName* n : *b.names()) {
      const Bytes* t = n->text();
      const size_t bytes = t ? t->size() : 0;
      const size_t held = names.get(n->id()).size(); // a new epoch sends a name again
      if ((held == 0 && names.count() >= kMaxNamesPerDecoder) ||
          names.textBytes() - held + bytes > kMaxNameBytesPerDecoder) {
        ++names_dropped; // see kMaxNamesPerDecoder
        continue;
      }
      names.assign(n->id(), t ? std::string_view(reinterpret_cast<const char*>(t->data()), t->size())
                              : std::string_view());
    }
  }
  if (b.signatures()) {
    for (const wire::KernelSignature* s : *b.signatures()) {
      KernelSignatureKey k;
      k.name = s->name();
      k.device = s->device();
      k.stream = s->stream();
      k.thread = s->thread();
      k.grid_x = s->grid_x();
      k.grid_y = s->grid_y();
      k.grid_z = s->grid_z();
      k.block_x = s->block_x();
      k.block_y = s->block_y();
      k.block_z = s->block_z();
      k.registers = s->registers_per_thread();
      k.static_shared = s->static_shared_bytes();
      k.dynamic_shared = s->dynamic_shared_bytes();
      k.graph_id = s->graph_id();
      k.flags = s->flags();
      signatures.define(s->id(), k);
    }
  }

  Batch out;
  out.session_id = b.session_id();
  out.pid = b.pid();
  out.sequence = b.sequence();
  out.events_dropped = b.events_dropped();
  out.final = b.final();
  out.sent_time = b.sent_time();
  if (const wire::ShimCost* c = b.shim_cost()) {
    model::ShimCost& d = out.shim_cost;
    d.events_recorded = c->events_recorded();
    d.launches_counted = c->launches_counted();
    d.cupti_launch_records = c->cupti_launch_records();
    d.overhead_ns = c->overhead_ns();
    d.session_ns = c->session_ns();
    d.shed_ns = c->shed_ns();
    d.cupti_overhead_ns = c->cupti_overhead_ns();
    // Floats from the wire: a NaN or negative figure from a foreign sender must not reach a ratio.
    auto sane = [](float f) { return f >= 0 && f < 1e9f ? f : 0.0f; };
    d.full_call_ns = sane(c->full_call_ns());
    d.counted_call_ns = sane(c->counted_call_ns());
    d.budget_ratio = sane(c->budget_ratio());
  }
  Batch& into = append_to ? *append_to : out;
  if (b.kernels()) decodeKernels(*b.kernels(), into.kernels);
  auto each = [](const auto* vec, auto& dst, auto convert) {
    if (!vec) return;
    // Geometric growth: `dst` may be a whole trace's vector that every batch appends to.
    if (dst.capacity() < dst.size() + vec->size())
      dst.reserve(std::max(dst.size() + vec->size(), 2 * dst.capacity()));
    for (const auto* e : *vec) dst.push_back(convert(*e));
  };
  each(b.copies(), into.copies, [](const wire::CopyEvent& e) {
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
  });
  each(b.memsets(), into.memsets, [](const wire::MemsetEvent& e) {
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
  });
  each(b.syncs(), into.syncs, [](const wire::SyncEvent& e) {
    model::HostSync s;
    s.start = e.start();
    s.end = e.end();
    s.device = e.device();
    s.stream = e.stream();
    s.thread = e.thread();
    s.kind = model::SyncKind(e.kind());
    return s;
  });
  each(b.api_calls(), into.api_calls, [](const wire::ApiCallEvent& e) {
    model::ApiCall a;
    a.start = e.start();
    a.end = e.end();
    a.name = e.name();
    a.thread = e.thread();
    return a;
  });
  each(b.allocations(), into.allocations, [](const wire::AllocationEvent& e) {
    model::Allocation a;
    a.time = e.time();
    a.address = e.address();
    a.bytes = e.bytes();
    a.device = e.device();
    a.kind = model::MemoryKind(e.kind());
    a.is_free = e.is_free();
    return a;
  });
  each(b.memory_samples(), into.memory_samples, [](const wire::MemorySampleEvent& e) {
    model::MemorySample m;
    m.time = e.time();
    m.device = e.device();
    m.allocated_bytes = e.allocated_bytes();
    m.reserved_bytes = e.reserved_bytes();
    return m;
  });
  each(b.ranges(), into.ranges, [](const wire::RangeEvent& e) {
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
  });
  each(b.device_samples(), into.device_samples, [](const wire::DeviceSampleEvent& e) {
    model::DeviceSample d;
    d.time = e.time();
    d.device = e.device();
    d.process_used_bytes = e.process_used_bytes();
    d.device_used_bytes = e.device_used_bytes();
    d.device_total_bytes = e.device_total_bytes();
    d.gpu_utilization = e.gpu_utilization();
    d.memory_utilization = e.memory_utilization();
    return d;
  });
  each(b.blas_calls(), into.blas_calls, [](const wire::BlasCallEvent& e) {
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
  });
  return out;
}

struct MessageOpener::Impl {
  EnvelopeReader reader;
  const wire::Message* current = nullptr;
};

MessageDecoder::MessageDecoder(model::NameTable& names) : impl_(std::make_unique<Impl>(names)) {}
MessageDecoder::~MessageDecoder() = default;

MessageDecoder::Result MessageDecoder::decode(std::span<const uint8_t> message) {
  try {
    auto opened = impl_->reader.open(message);
    if (auto* e = std::get_if<DecodeError>(&opened)) return std::move(*e);
    const wire::Message* m = std::get<const wire::Message*>(opened);
    if (const auto* h = m->body_as_Hello()) return impl_->hello(*h);
    if (const auto* b = m->body_as_Batch()) return impl_->batch(*b, nullptr);
    return malformed("message has no Hello or Batch body");
  } catch (const std::bad_alloc&) {
    return DecodeError{K::TooLarge, "out of memory decoding the message"};
  }
}

MessageDecoder::Result MessageDecoder::decode(const MessageOpener& opened, Batch* append_to) {
  try {
    const wire::Message* m = opened.impl_->current;
    if (!m) return malformed("no opened message");
    if (const auto* h = m->body_as_Hello()) return impl_->hello(*h);
    if (const auto* b = m->body_as_Batch()) return impl_->batch(*b, append_to);
    return malformed("message has no Hello or Batch body");
  } catch (const std::bad_alloc&) {
    return DecodeError{K::TooLarge, "out of memory decoding the message"};
  }
}

MessageOpener::MessageOpener() : impl_(std::make_unique<Impl>()) {}
MessageOpener::~MessageOpener() = default;

std::variant<Route, DecodeError> MessageOpener::open(std::span<const uint8_t> message) {
  try {
    impl_->current = nullptr;
    auto opened = impl_->reader.open(message);
    if (auto* e = std::get_if<DecodeError>(&opened)) return std::move(*e);
    auto route = routeOf(*std::get<const wire::Message*>(opened));
    if (std::holds_alternative<Route>(route)) impl_->current = std::get<const wire::Message*>(opened);
    return route;
  } catch (const std::bad_alloc&) {
    return DecodeError{K::TooLarge, "out of memory reading the message"};
  }
}

uint64_t MessageDecoder::undecodableEvents() const { return impl_->undecodable; }
uint64_t MessageDecoder::namesDropped() const {
  return impl_->names_dropped;
}

std::variant<Route, DecodeError> peekRoute(std::span<const uint8_t> message) {
  try {
    // One reader per thread: its zstd context and scratch buffer are reused across messages.
    thread_local EnvelopeReader reader;
    auto opened = reader.open(message);
    if (auto* e = std::get_if<DecodeError>(&opened)) return std::move(*e);
    return routeOf(*std::get<const wire::Message*>(opened));
  } catch (const std::bad_alloc&) {
    return DecodeError{K::TooLarge, "out of memory reading the message"};
  }
}

const char* toString(DecodeError::Kind kind) {
  switch (kind) {
  case K::TooLarge: return "too large";
  case K::BadEnvelope: return "bad envelope";
  case K::UnsupportedVersion: return "unsupported version";
  case K::BadCompression: return "bad compression";
  case K::Malformed: return "malformed";
  case K::UnknownSession: return "unknown session";
  }
  return "unknown";
}

} // namespace gpuwise::transport
