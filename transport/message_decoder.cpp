// MessageDecoder: an opened message (message_opener.cpp) -> model records (see codec.h). Every
// check on a batch runs before any of it is applied, so a rejected message leaves the decoder as
// it was. Each kind's conversion and checks are its RecordWire (record_wire.h).
#include "transport/codec.h"
#include "transport/envelope.h"
#include "transport/kernel_timing.h"
#include "transport/record_wire.h"
#include "transport/residual_planes.h"
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

DecodeError malformed(std::string detail) {
  return DecodeError{K::Malformed, std::move(detail)};
}

bool textOk(const Bytes* b) {
  return !b || b->size() <= kMaxTextBytes;
}
// At most `limit` bytes of `b`, counting in `truncated` when that cut it.
std::string boundedStr(const Bytes* b, size_t limit, uint32_t& truncated) {
  if (!b) return {};
  const size_t n = std::min<size_t>(b->size(), limit);
  truncated += n < b->size();
  return std::string(reinterpret_cast<const char*>(b->data()), n);
}

template <class T> size_t count(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

// FlatBuffers' verifier checks a struct vector's length word, not its elements' alignment; an
// honest builder aligns them, and reading a misaligned one in place would be undefined.
template <class W> bool aligned(const flatbuffers::Vector<const W*>* v) {
  return !v || reinterpret_cast<uintptr_t>(v->Data()) % alignof(W) == 0;
}

// Geometric growth: `v` may be a whole trace's vector that every batch appends to, and
// reserve(size + n) on every batch would reallocate it each time.
template <class T> void growFor(std::vector<T>& v, size_t n) {
  if (v.capacity() < v.size() + n) v.reserve(std::max(v.size() + n, 2 * v.capacity()));
}

template <class Column> using ColumnRecord = typename std::decay_t<Column>::value_type;

std::optional<DecodeError> checkNames(const wire::Batch& b) {
  if (!b.names()) return std::nullopt;
  for (const wire::NewName* n : *b.names()) {
    if (!n) return malformed("null name entry");
    if (n->id() == 0 || n->id() > model::NameTable::kMaxNames)
      return malformed("name id " + std::to_string(n->id()) + " out of range");
    if (!textOk(n->text())) return malformed("name longer than kMaxTextBytes");
  }
  return std::nullopt;
}

std::optional<DecodeError> checkSignatures(const wire::Batch& b) {
  if (!aligned(b.signatures())) return malformed("misaligned signature vector");
  if (!b.signatures()) return std::nullopt;
  for (const wire::KernelSignature* s : *b.signatures()) {
    if (s->id() == 0 || s->id() >= kMaxSignatures)
      return malformed("signature id " + std::to_string(s->id()) + " out of range");
    if (s->name() > model::NameTable::kMaxNames) return malformed("signature name id out of range");
  }
  return std::nullopt;
}

// Rows ascending and within the row count.
template <class Sparse> bool rowsInOrder(const flatbuffers::Vector<const Sparse*>* v, size_t rows) {
  if (!v) return true;
  int64_t prev = -1;
  for (const Sparse* e : *v) {
    if (int64_t{e->row()} <= prev || e->row() >= rows) return false;
    prev = e->row();
  }
  return true;
}

std::optional<DecodeError> checkKernels(const wire::KernelColumns& c, uint32_t version) {
  const size_t n = count(c.key());
  if (n > kMaxBatchEvents) return malformed("too many kernel rows");
  if (c.residual_planes()) { // the packed form; unpacked (and checked) by Impl::residualRows
    if (version < 2) return malformed("packed residual planes in a protocol 1 batch");
    if (c.residuals() || n == 0) return malformed("packed residual planes beside raw ones");
  } else if (count(c.residuals()) != kResidualBytesPerRow * n) {
    return malformed("kernel residual planes do not match the row count");
  }
  if (!aligned(c.escapes()) || !aligned(c.occupancy()) || !aligned(c.graph_nodes()))
    return malformed("misaligned kernel vector");
  size_t escapes = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t key = c.key()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const uint32_t id = key & kSignatureIdMask;
    const uint32_t form = key >> kSignatureIdBits;
    if (id == 0 || id >= kMaxSignatures)
      return malformed("kernel row with signature id out of range");
    if (form > kMaxTimingForm) return malformed("kernel row with unknown timing form");
    escapes += form == uint32_t(TimingForm::Escape);
  }
  if (escapes != count(c.escapes())) return malformed("kernel escape count mismatch");
  if (!rowsInOrder(c.occupancy(), n)) return malformed("kernel occupancy row out of order");
  if (!rowsInOrder(c.graph_nodes(), n)) return malformed("kernel graph node row out of order");
  return std::nullopt;
}

// The struct columns of every other kind: all aligned, then the batch's event count, then each
// record as its RecordWire judges it.
std::optional<DecodeError> checkRecords(const wire::Batch& b, size_t kernel_rows) {
  bool misaligned = false;
  size_t events = kernel_rows;
  model::RecordSet::forEachKind([&]<class Record>(std::type_identity<Record>) {
    if constexpr (!kColumnarKernels<Record>) {
      misaligned |= !aligned(RecordWire<Record>::of(b));
      events += count(RecordWire<Record>::of(b));
    }
  });
  if (misaligned) return malformed("misaligned record vector");
  if (events > kMaxBatchEvents) return malformed("batch of " + std::to_string(events) + " events");
  const char* problem = nullptr;
  model::RecordSet::forEachKind([&]<class Record>(std::type_identity<Record>) {
    if constexpr (!kColumnarKernels<Record>) {
      if (const auto* v = RecordWire<Record>::of(b))
        for (auto it = v->begin(); !problem && it != v->end(); ++it)
          problem = RecordWire<Record>::problem(**it);
    }
  });
  if (problem) return malformed(problem);
  return std::nullopt;
}

std::optional<DecodeError> checkBatch(const wire::Batch& b, uint32_t version) {
  if (auto e = checkNames(b)) return e;
  if (auto e = checkSignatures(b)) return e;
  size_t kernel_rows = 0;
  if (const wire::KernelColumns* c = b.kernels()) {
    if (auto e = checkKernels(*c, version)) return e;
    kernel_rows = count(c->key());
  }
  return checkRecords(b, kernel_rows);
}

KernelSignatureKey signatureOf(const wire::KernelSignature& s) {
  KernelSignatureKey k;
  k.name = s.name();
  k.device = s.device();
  k.stream = s.stream();
  k.thread = s.thread();
  k.grid_x = s.grid_x();
  k.grid_y = s.grid_y();
  k.grid_z = s.grid_z();
  k.block_x = s.block_x();
  k.block_y = s.block_y();
  k.block_z = s.block_z();
  k.registers = s.registers_per_thread();
  k.static_shared = s.static_shared_bytes();
  k.dynamic_shared = s.dynamic_shared_bytes();
  k.graph_id = s.graph_id();
  k.flags = s.flags();
  return k;
}

model::ShimCost shimCostOf(const wire::ShimCost& c) {
  model::ShimCost d;
  d.events_recorded = c.events_recorded();
  d.launches_counted = c.launches_counted();
  d.cupti_launch_records = c.cupti_launch_records();
  d.overhead_ns = c.overhead_ns();
  d.session_ns = c.session_ns();
  d.shed_ns = c.shed_ns();
  d.cupti_overhead_ns = c.cupti_overhead_ns();
  // Floats from the wire: a NaN or negative figure from a foreign sender must not reach a ratio.
  auto sane = [](float f) { return f >= 0 && f < 1e9f ? f : 0.0f; };
  d.full_call_ns = sane(c.full_call_ns());
  d.counted_call_ns = sane(c.counted_call_ns());
  d.budget_ratio = sane(c.budget_ratio());
  return d;
}

// The header fields of a batch; its records go to the caller's RecordSet.
Batch headerOf(const wire::Batch& b) {
  Batch out;
  out.session_id = b.session_id();
  out.pid = b.pid();
  out.sequence = b.sequence();
  out.events_dropped = b.events_dropped();
  out.events_delivered = b.events_delivered();
  out.final = b.final();
  out.sent_time = b.sent_time();
  if (const wire::ShimCost* c = b.shim_cost()) out.shim_cost = shimCostOf(*c);
  return out;
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

  // The batch being decoded: its protocol version and its kernels' residual rows.
  uint32_t version = kProtocolVersion;
  const KernelResiduals* residuals = nullptr;

  Result hello(const wire::Hello& h, uint32_t version);
  Result batch(const wire::Batch& b, model::RecordSet* append_to, uint32_t version);
  // A checked batch's residual rows (in thread scratch), or why its packed planes are malformed.
  Expected<const KernelResiduals*, DecodeError> residualRows(const wire::Batch& b);
  // A checked batch's new names and signatures into this decoder's tables.
  void applyNames(const wire::Batch& b);
  void applySignatures(const wire::Batch& b);
  void decodeRecords(const wire::Batch& b, model::RecordSet& into);
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
  if (scratch.capacity() > 4 * rows && scratch.capacity() > 4096)
    std::vector<KernelResiduals>(rows).swap(scratch);
  KernelResiduals* out = scratch.data();
  uint32_t KernelResiduals::*const columns[4] = {
      &KernelResiduals::host_gap, &KernelResiduals::launch, &KernelResiduals::gpu_offset,
      &KernelResiduals::gpu_duration};
  for (size_t c = 0; c < 4; ++c) {
    const uint8_t* b0 = planes + (4 * c + 0) * rows;
    const uint8_t* b1 = planes + (4 * c + 1) * rows;
    const uint8_t* b2 = planes + (4 * c + 2) * rows;
    const uint8_t* b3 = planes + (4 * c + 3) * rows;
    uint32_t KernelResiduals::*col = columns[c];
    for (size_t i = 0; i < rows; ++i)
      out[i].*col =
          uint32_t{b0[i]} | uint32_t{b1[i]} << 8 | uint32_t{b2[i]} << 16 | uint32_t{b3[i]} << 24;
  }
  return out;
}

MessageDecoder::Result MessageDecoder::Impl::hello(const wire::Hello& h, uint32_t message_version) {
  if (bound && h.session_id() != session)
    return unexpected(DecodeError{K::UnknownSession,
                                  "Hello of session " + std::to_string(h.session_id()) +
                                      " on the decoder of session " + std::to_string(session)});
  if (h.tier() > uint8_t(model::CollectionTier::Imported))
    return unexpected(malformed("unknown collection tier"));
  Hello out;
  out.protocol_version = message_version;
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
  p.job = boundedStr(h.job(), kMaxHelloNameBytes, cut);
  p.node = boundedStr(h.node(), kMaxHelloNameBytes, cut);
  p.tier = static_cast<model::CollectionTier>(h.tier());
  p.tier_reason = boundedStr(h.tier_reason(), kMaxHelloReasonBytes, cut);
  if (h.devices()) {
    const size_t n = std::min<size_t>(h.devices()->size(), kMaxHelloDevices);
    cut += n < h.devices()->size();
    out.devices.reserve(n);
    for (flatbuffers::uoffset_t i = 0; i < n; ++i) {
      const wire::Device* d = h.devices()->Get(i);
      if (!d) return unexpected(malformed("null device entry"));
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
      m.nvml_index = std::max(d->nvml_index(), -1);
      m.gpu_instance = std::max(d->gpu_instance(), -1);
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

void MessageDecoder::Impl::decodeKernels(const wire::KernelColumns& c,
                                         std::vector<model::KernelExec>& out) {
  const size_t n = count(c.key());
  if (n == 0) return;
  growFor(out, n);
  timing.reset(c.time_base(), version);
  size_t escape = 0, occ = 0, node = 0;
  const size_t occ_n = count(c.occupancy());
  const size_t node_n = count(c.graph_nodes());
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
    if (node < node_n &&
        c.graph_nodes()->Get(static_cast<flatbuffers::uoffset_t>(node))->row() == i)
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

void MessageDecoder::Impl::applyNames(const wire::Batch& b) {
  if (!b.names()) return;
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

void MessageDecoder::Impl::applySignatures(const wire::Batch& b) {
  if (!b.signatures()) return;
  for (const wire::KernelSignature* s : *b.signatures())
    signatures.define(s->id(), signatureOf(*s));
}

void MessageDecoder::Impl::decodeRecords(const wire::Batch& b, model::RecordSet& into) {
  into.forEachColumn([&](auto& column) {
    using Record = ColumnRecord<decltype(column)>;
    if constexpr (kColumnarKernels<Record>) {
      if (b.kernels()) decodeKernels(*b.kernels(), column);
    } else if (const auto* v = RecordWire<Record>::of(b)) {
      growFor(column, v->size());
      for (const auto* e : *v)
        column.push_back(RecordWire<Record>::fromWire(*e));
    }
  });
}

Expected<const KernelResiduals*, DecodeError>
MessageDecoder::Impl::residualRows(const wire::Batch& b) {
  const wire::KernelColumns* c = b.kernels();
  const size_t n = c ? count(c->key()) : 0;
  if (n == 0) return nullptr;
  if (!c->residual_planes()) return unpackResiduals(c->residuals()->data(), n);
  thread_local std::vector<uint8_t> planes;
  planes.resize(kResidualBytesPerRow * n);
  if (planes.capacity() > 4 * planes.size() && planes.capacity() > (1u << 16))
    std::vector<uint8_t>(planes.size()).swap(planes); // small again after one huge batch
  const auto* packed = c->residual_planes();
  if (const char* why = unpackResidualPlanes({packed->data(), packed->size()}, n, planes.data()))
    return unexpected(malformed(why));
  return unpackResiduals(planes.data(), n);
}

MessageDecoder::Result MessageDecoder::Impl::batch(const wire::Batch& b,
                                                   model::RecordSet* append_to,
                                                   uint32_t message_version) {
  if (bound && b.session_id() != session)
    return unexpected(DecodeError{K::UnknownSession,
                                  "batch of session " + std::to_string(b.session_id()) +
                                      " on the decoder of session " + std::to_string(session)});
  if (auto e = checkBatch(b, message_version)) return unexpected(std::move(*e));
  auto rows = residualRows(b);
  if (!rows) return unexpected(std::move(rows.error()));
  version = message_version;
  residuals = *rows;

  bound = true;
  session = b.session_id();
  if (epoch_known && b.epoch() != epoch) signatures.clear(); // the sender started over
  epoch_known = true;
  epoch = b.epoch();
  applyNames(b);
  applySignatures(b);
  Batch out = headerOf(b);
  decodeRecords(b, append_to ? *append_to : out);
  return out;
}

MessageDecoder::MessageDecoder(model::NameTable& names) : impl_(std::make_unique<Impl>(names)) {}
MessageDecoder::~MessageDecoder() = default;

MessageDecoder::Result MessageDecoder::decode(std::span<const uint8_t> message) {
  try {
    auto opened = impl_->reader.open(message);
    if (auto* e = std::get_if<DecodeError>(&opened)) return unexpected(std::move(*e));
    const wire::Message* m = std::get<const wire::Message*>(opened);
    const uint32_t v = m->protocol_version(); // the envelope checked it
    if (const auto* h = m->body_as_Hello()) return impl_->hello(*h, v);
    if (const auto* b = m->body_as_Batch()) return impl_->batch(*b, nullptr, v);
    return unexpected(malformed("message has no Hello or Batch body"));
  } catch (const std::bad_alloc&) {
    return unexpected(DecodeError{K::TooLarge, "out of memory decoding the message"});
  }
}

MessageDecoder::Result MessageDecoder::decode(const MessageOpener& opened,
                                              model::RecordSet* append_to) {
  try {
    const wire::Message* m = opened.current();
    if (!m) return unexpected(malformed("no opened message"));
    const uint32_t v = m->protocol_version(); // the envelope checked it
    if (const auto* h = m->body_as_Hello()) return impl_->hello(*h, v);
    if (const auto* b = m->body_as_Batch()) return impl_->batch(*b, append_to, v);
    return unexpected(malformed("message has no Hello or Batch body"));
  } catch (const std::bad_alloc&) {
    return unexpected(DecodeError{K::TooLarge, "out of memory decoding the message"});
  }
}

uint64_t MessageDecoder::undecodableEvents() const {
  return impl_->undecodable;
}
uint64_t MessageDecoder::namesDropped() const {
  return impl_->names_dropped;
}

} // namespace gpuwise::transport
