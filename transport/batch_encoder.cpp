// BatchEncoder and encodeHello: model records -> enveloped FlatBuffers (see codec.h).
#include "transport/codec.h"
#include "transport/envelope.h"
#include "transport/kernel_timing.h"
#include "transport/record_wire.h"
#include "transport/residual_planes.h"
#include "transport/schema/gpuwise_generated.h"
#include "transport/signature_table.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace gpuwise::transport {
namespace {

using Fbb = flatbuffers::FlatBufferBuilder;

flatbuffers::Offset<flatbuffers::Vector<uint8_t>> text(Fbb& fbb, std::string_view s) {
  const size_t n = std::min(s.size(), kMaxTextBytes);
  return fbb.CreateVector(reinterpret_cast<const uint8_t*>(s.data()), n);
}

using wire_detail::u8;

// Names waiting for room in a later message; a bound on the encoder's memory (a name referenced
// again is queued again anyway).
constexpr size_t kMaxDeferredNames = 1u << 16;

// A builder that grew for one huge batch gives its memory back afterwards.
constexpr size_t kBuilderKeepBytes = 4u << 20;

// Copied out rather than std::bit_cast: the portable shim builds with bullseye's gcc 10, which has
// no <bit> bit_cast.
bool sameBits(float a, float b) {
  uint32_t x = 0;
  uint32_t y = 0;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return x == y;
}

} // namespace

std::vector<uint8_t> encodeHello(const Hello& hello) {
  try {
    Fbb fbb(4096);
    std::vector<flatbuffers::Offset<wire::Device>> devices;
    for (const auto& d : hello.devices) {
      auto name = text(fbb, d.name);
      auto mig = text(fbb, d.mig_profile);
      auto uuid = d.uuid.empty() ? 0 : text(fbb, d.uuid);
      wire::DeviceBuilder b(fbb);
      b.add_index(d.index);
      b.add_name(name);
      b.add_sm_count(d.sm_count);
      b.add_memory_total_bytes(d.memory_total_bytes);
      b.add_compute_major(d.compute_major);
      b.add_compute_minor(d.compute_minor);
      b.add_mig_profile(mig);
      b.add_max_threads_per_sm(d.max_threads_per_sm);
      b.add_max_blocks_per_sm(d.max_blocks_per_sm);
      b.add_registers_per_sm(d.registers_per_sm);
      b.add_shared_memory_per_sm(d.shared_memory_per_sm);
      b.add_max_shared_memory_per_block(d.max_shared_memory_per_block);
      b.add_warp_size(d.warp_size);
      b.add_simulated(d.simulated);
      if (!uuid.IsNull()) b.add_uuid(uuid);
      b.add_nvml_index(d.nvml_index);
      b.add_gpu_instance(d.gpu_instance);
      devices.push_back(b.Finish());
    }
    const auto& p = hello.process;
    auto host = text(fbb, p.host);
    auto command = text(fbb, p.command);
    auto pod = text(fbb, p.pod);
    auto ns = text(fbb, p.ns);
    auto container = text(fbb, p.container);
    auto job = p.job.empty() ? 0 : text(fbb, p.job);
    auto node = p.node.empty() ? 0 : text(fbb, p.node);
    auto reason = text(fbb, p.tier_reason);
    auto devs = fbb.CreateVector(devices);
    wire::HelloBuilder h(fbb);
    h.add_session_id(hello.session_id);
    h.add_pid(p.pid);
    h.add_ppid(p.ppid);
    h.add_host(host);
    h.add_command(command);
    h.add_rank(p.rank);
    h.add_local_rank(p.local_rank);
    h.add_world_size(p.world_size);
    h.add_pod(pod);
    h.add_pod_namespace(ns);
    h.add_container(container);
    h.add_tier(u8(p.tier));
    h.add_tier_reason(reason);
    h.add_devices(devs);
    h.add_simulated(hello.simulated);
    h.add_start_time(hello.start_time);
    if (!job.IsNull()) h.add_job(job);
    if (!node.IsNull()) h.add_node(node);
    auto body = h.Finish();
    // The version field states what the message is written in, whatever the struct says.
    wire::FinishMessageBuffer(
        fbb, wire::CreateMessage(fbb, kProtocolVersion, wire::Body::Hello, body.Union()));
    EnvelopeWriter envelope;
    return envelope.seal({fbb.GetBufferPointer(), fbb.GetSize()});
  } catch (...) {
    return {};
  }
}

struct BatchEncoder::Impl {
  Impl(const model::NameTable& n, uint64_t sid, int64_t p) : names(n), session_id(sid), pid(p) {}

  const model::NameTable& names;
  const uint64_t session_id;
  const int64_t pid;
  uint64_t sequence = 0;
  uint32_t epoch = 0;
  uint32_t protocol = kProtocolVersion; // what this encoder writes (writeProtocol)

  model::RecordSet records;  // pending, not yet encoded
  uint64_t self_dropped = 0; // dropped by this encoder, reported with the next message
  // Events of the messages confirmed delivered (Batch.events_delivered), and those the last
  // message carries, counted in once it is.
  uint64_t events_delivered = 0;
  uint64_t last_message_events = 0;
  model::ShimCost shim_cost; // carried by every batch once set

  SignatureInterner signatures;
  std::vector<uint64_t> sent_names;    // one bit per NameId carried this epoch
  std::vector<model::NameId> deferred; // referenced names that did not fit the last message

  // What the last encode() introduced, forgotten again by confirm(false).
  bool awaiting_confirm = false;
  uint32_t first_new_signature = 1;
  std::vector<model::NameId> new_names;
  size_t new_name_bytes = 0;
  std::vector<model::NameId> deferred_next; // deferred by the message being built
  std::vector<uint64_t> queued;             // one bit per id in deferred_next

  // Scratch reused across batches.
  std::vector<uint32_t> key;
  std::vector<KernelResiduals> residuals;
  std::vector<wire::KernelTimes> escapes;
  std::vector<wire::KernelOccupancy> occupancy;
  std::vector<wire::KernelGraphNode> graph_nodes;
  std::vector<wire::KernelSignature> new_signatures;
  std::vector<uint8_t> planes;        // the residual planes of a batch
  std::vector<uint8_t> packed_planes; // and their packed form
  ResidualPlaneWriter plane_writer;
  KernelTimingModel timing;
  Fbb fbb{size_t{64} * 1024};
  EnvelopeWriter envelope;

  size_t pending() const { return records.size(); }

  static bool testBit(const std::vector<uint64_t>& bits, model::NameId id) {
    const size_t w = id >> 6;
    return w < bits.size() && (bits[w] >> (id & 63) & 1);
  }
  static void setBit(std::vector<uint64_t>& bits, model::NameId id, bool on) {
    const size_t w = id >> 6;
    if (w >= bits.size()) bits.resize(w + 1);
    if (on)
      bits[w] |= uint64_t{1} << (id & 63);
    else
      bits[w] &= ~(uint64_t{1} << (id & 63));
  }
  bool isSent(model::NameId id) const { return testBit(sent_names, id); }
  void setSent(model::NameId id, bool on) { setBit(sent_names, id, on); }

  // The id a record carries for `id`, queueing the name if this epoch has not carried it yet.
  model::NameId nameRef(model::NameId id) {
    if (id == 0 || id > model::NameTable::kMaxNames) return 0; // a decoder would reject it
    if (isSent(id)) return id;
    const size_t bytes = std::min(names.get(id).size(), kMaxTextBytes);
    if (new_name_bytes + bytes > kMaxNewNameBytesPerMessage) { // next message
      if (!testBit(queued, id) && deferred_next.size() < kMaxDeferredNames) {
        setBit(queued, id, true);
        deferred_next.push_back(id);
      }
      return id;
    }
    setSent(id, true);
    new_names.push_back(id);
    new_name_bytes += bytes;
    return id;
  }

  void startEpoch() {
    ++epoch;
    signatures.clear();
    sent_names.clear();
    deferred.clear();
    for (model::NameId id : deferred_next)
      setBit(queued, id, false);
    deferred_next.clear();
  }

  void forgetLastMessage() {
    signatures.truncate(first_new_signature);
    for (model::NameId id : new_names)
      setSent(id, false);
    new_names.clear();
  }

  void encodeKernels();
  flatbuffers::Offset<wire::KernelColumns> kernelColumns();
  // The struct column of every kind but kernels (0: empty), in RecordSet order.
  using ColumnOffsets = std::array<flatbuffers::uoffset_t, model::kRecordKinds>;
  ColumnOffsets recordColumns();
  static void addRecordColumns(wire::BatchBuilder& batch, const ColumnOffsets& offsets);
  std::vector<uint8_t> build(uint64_t events_dropped, bool final, model::TimeNs sent_time);
};

void BatchEncoder::Impl::encodeKernels() {
  key.clear();
  residuals.clear();
  escapes.clear();
  occupancy.clear();
  graph_nodes.clear();
  new_signatures.clear();
  const auto& kernels = records.kernels;
  if (kernels.empty()) return;
  timing.reset(KernelTimingModel::anchorOf({kernels[0].launch_start, kernels[0].launch_end,
                                            kernels[0].start, kernels[0].end}),
               protocol);
  for (const auto& k : kernels) {
    KernelSignatureKey sig = KernelSignatureKey::of(k);
    sig.name = nameRef(sig.name);
    bool introduced = false;
    const uint32_t id = signatures.intern(sig, &introduced);
    if (id == 0) { // more distinct kernels in one batch than an epoch holds
      ++self_dropped;
      continue;
    }
    if (introduced) {
      new_signatures.emplace_back(id, sig.name, sig.device, sig.stream, sig.thread, sig.grid_x,
                                  sig.grid_y, sig.grid_z, sig.block_x, sig.block_y, sig.block_z,
                                  sig.registers, sig.static_shared, sig.dynamic_shared,
                                  sig.graph_id, sig.flags);
    }
    const KernelTimes t{k.launch_start, k.launch_end, k.start, k.end};
    KernelResiduals r;
    const TimingForm form = timing.encode(id, t, &r);
    if (form == TimingForm::Escape)
      escapes.emplace_back(t.launch_start, t.launch_end, t.start, t.end);
    if (!sameBits(k.achieved_occupancy, -1.0f))
      occupancy.emplace_back(static_cast<uint32_t>(key.size()), k.achieved_occupancy);
    if (k.graph_node_id != 0)
      graph_nodes.emplace_back(static_cast<uint32_t>(key.size()), k.graph_node_id);
    key.push_back(id | uint32_t{u8(form)} << kSignatureIdBits);
    residuals.push_back(r);
  }
}

flatbuffers::Offset<wire::KernelColumns> BatchEncoder::Impl::kernelColumns() {
  if (key.empty()) return 0;
  const auto& kernels = records.kernels;
  auto kv = fbb.CreateVector(key);
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> rv, pv; // residuals raw, or packed
  if (key.size() < kMinPackedPlaneRows || protocol < 2) {
    uint8_t* raw = nullptr;
    rv = fbb.CreateUninitializedVector(kResidualBytesPerRow * key.size(), &raw);
    writeResidualPlanes(residuals, raw);
  } else {
    planes.resize(kResidualBytesPerRow * key.size());
    writeResidualPlanes(residuals, planes.data());
    plane_writer.pack(planes.data(), key.size(), packed_planes);
    pv = fbb.CreateVector(packed_planes);
  }
  auto ev = escapes.empty() ? 0 : fbb.CreateVectorOfStructs(escapes);
  auto cv = occupancy.empty() ? 0 : fbb.CreateVectorOfStructs(occupancy);
  auto gv = graph_nodes.empty() ? 0 : fbb.CreateVectorOfStructs(graph_nodes);
  return wire::CreateKernelColumns(
      fbb,
      KernelTimingModel::anchorOf(
          {kernels[0].launch_start, kernels[0].launch_end, kernels[0].start, kernels[0].end}),
      kv, rv, ev, cv, gv, pv);
}

BatchEncoder::Impl::ColumnOffsets BatchEncoder::Impl::recordColumns() {
  ColumnOffsets offsets{};
  size_t column = 0;
  records.forEachColumn([&](const auto& v) {
    using Record = typename std::decay_t<decltype(v)>::value_type;
    if constexpr (!kColumnarKernels<Record>) {
      using Event = typename RecordWire<Record>::Event;
      if (!v.empty()) {
        Event* out = nullptr;
        offsets[column] = fbb.CreateUninitializedVectorOfStructs<Event>(v.size(), &out).o;
        for (const auto& r : v)
          *out++ = RecordWire<Record>::toWire(r);
      }
    }
    ++column;
  });
  return offsets;
}

void BatchEncoder::Impl::addRecordColumns(wire::BatchBuilder& batch, const ColumnOffsets& offsets) {
  size_t column = 0;
  model::RecordSet::forEachKind([&]<class Record>(std::type_identity<Record>) {
    if constexpr (!kColumnarKernels<Record>) {
      using Column =
          flatbuffers::Offset<flatbuffers::Vector<const typename RecordWire<Record>::Event*>>;
      if (offsets[column] != 0) RecordWire<Record>::addTo(batch, Column(offsets[column]));
    }
    ++column;
  });
}

std::vector<uint8_t> BatchEncoder::Impl::build(uint64_t events_dropped, bool final,
                                               model::TimeNs sent_time) {
  // Leave the epoch room for every kernel of this batch to be new.
  const auto& kernels = records.kernels;
  if (size_t{signatures.nextId()} + std::min<size_t>(kernels.size(), kMaxSignatures) >
      kMaxSignatures)
    startEpoch();
  first_new_signature = signatures.nextId();
  new_names.clear();
  new_name_bytes = 0;
  deferred.swap(deferred_next);
  deferred_next.clear();
  for (model::NameId id : deferred)
    setBit(queued, id, false);
  for (model::NameId id : deferred)
    nameRef(id); // names that waited for room come first

  encodeKernels();
  for (auto& a : records.api_calls)
    a.name = nameRef(a.name);
  for (auto& r : records.ranges)
    r.name = nameRef(r.name);

  fbb.Clear();
  std::vector<flatbuffers::Offset<wire::NewName>> name_offsets;
  name_offsets.reserve(new_names.size());
  for (model::NameId id : new_names)
    name_offsets.push_back(wire::CreateNewName(fbb, id, text(fbb, names.get(id))));
  auto names_vec = name_offsets.empty() ? 0 : fbb.CreateVector(name_offsets);
  auto sigs_vec = new_signatures.empty() ? 0 : fbb.CreateVectorOfStructs(new_signatures);

  const auto columns = kernelColumns();

  // Every other kind's column, created before the Batch table that refers to them.
  const ColumnOffsets record_columns = recordColumns();

  const uint64_t dropped = events_dropped + self_dropped;
  self_dropped = 0;
  // What a decoder will find in this message: every pending record but the kernels left out above.
  last_message_events = pending() - records.kernels.size() + key.size();
  flatbuffers::Offset<wire::ShimCost> cost_table;
  if (shim_cost.session_ns || shim_cost.events_recorded || shim_cost.launches_counted)
    cost_table = wire::CreateShimCost(
        fbb, shim_cost.events_recorded, shim_cost.launches_counted, shim_cost.cupti_launch_records,
        shim_cost.overhead_ns, shim_cost.session_ns, shim_cost.shed_ns, shim_cost.full_call_ns,
        shim_cost.counted_call_ns, shim_cost.budget_ratio, shim_cost.cupti_overhead_ns);
  wire::BatchBuilder batch_builder(fbb);
  batch_builder.add_sent_time(sent_time);
  batch_builder.add_events_delivered(events_delivered);
  batch_builder.add_events_dropped(dropped);
  batch_builder.add_sequence(sequence);
  batch_builder.add_pid(pid);
  batch_builder.add_session_id(session_id);
  addRecordColumns(batch_builder, record_columns);
  if (!cost_table.IsNull()) batch_builder.add_shim_cost(cost_table);
  if (!columns.IsNull()) batch_builder.add_kernels(columns);
  if (!sigs_vec.IsNull()) batch_builder.add_signatures(sigs_vec);
  if (!names_vec.IsNull()) batch_builder.add_names(names_vec);
  batch_builder.add_epoch(epoch);
  batch_builder.add_final(final);
  auto batch = batch_builder.Finish();
  wire::FinishMessageBuffer(fbb,
                            wire::CreateMessage(fbb, protocol, wire::Body::Batch, batch.Union()));
  std::vector<uint8_t> out =
      envelope.seal({fbb.GetBufferPointer(), fbb.GetSize()}, static_cast<uint16_t>(protocol));
  if (fbb.GetSize() > kBuilderKeepBytes)
    fbb.Reset();
  else
    fbb.Clear();
  if (planes.capacity() > kBuilderKeepBytes) {
    std::vector<uint8_t>().swap(planes);
    std::vector<uint8_t>().swap(packed_planes);
  }
  return out;
}

BatchEncoder::BatchEncoder(const model::NameTable& names, uint64_t session_id, int64_t pid)
    : impl_(std::make_unique<Impl>(names, session_id, pid)) {}
BatchEncoder::~BatchEncoder() = default;

model::RecordSet& BatchEncoder::pending() {
  return impl_->records;
}

bool BatchEncoder::roomForOne() {
  if (impl_->pending() < kMaxBatchEvents) return true;
  ++impl_->self_dropped;
  return false;
}

void BatchEncoder::countDropped(uint64_t n) {
  impl_->self_dropped += n;
}

void BatchEncoder::addAll(const model::RecordSet& records) {
  records.forEachColumn([&](const auto& column) {
    for (const auto& r : column)
      add(r);
  });
}

size_t BatchEncoder::pendingEvents() const {
  return impl_->pending();
}
void BatchEncoder::setShimCost(const model::ShimCost& cost) {
  impl_->shim_cost = cost;
}
uint32_t BatchEncoder::epoch() const {
  return impl_->epoch;
}
bool BatchEncoder::writeProtocol(uint32_t version) {
  if (version < kMinProtocolVersion || version > kProtocolVersion) return false;
  impl_->protocol = version;
  return true;
}

std::vector<uint8_t> BatchEncoder::encode(uint64_t events_dropped, bool final,
                                          model::TimeNs sent_time) {
  Impl& m = *impl_;
  if (m.awaiting_confirm) confirm(true);
  const uint64_t dropped_before = m.self_dropped;
  std::vector<uint8_t> out;
  try {
    out = m.build(events_dropped, final, sent_time);
  } catch (...) {
    out.clear();
  }
  if (out.empty()) {
    // Out of memory (or a message over kMaxMessageBytes): the events are lost, and counted.
    m.self_dropped = dropped_before + events_dropped + m.pending();
    m.forgetLastMessage();
    m.fbb.Reset();
  } else {
    m.awaiting_confirm = true;
  }
  m.records.clear();
  ++m.sequence;
  return out;
}

void BatchEncoder::confirm(bool delivered) {
  Impl& m = *impl_;
  if (!m.awaiting_confirm) return;
  m.awaiting_confirm = false;
  if (delivered)
    m.events_delivered += m.last_message_events;
  else
    m.forgetLastMessage();
  m.new_names.clear();
}

void BatchEncoder::resetEpoch() {
  confirm(true); // an unconfirmed message counts as delivered, as encode() counts it
  Impl& m = *impl_;
  m.new_names.clear();
  m.startEpoch();
}

} // namespace gpuwise::transport
