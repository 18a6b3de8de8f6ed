// The wire codec: model records <-> self-describing, versioned, size-limited messages.
//
// A message is an envelope (magic, protocol version, codec, decoded size) followed by a FlatBuffer
// (schema/gpuwise.fbs), compressed with zstd when that makes it smaller. Two message kinds:
//   Hello  - sent first on every connection epoch: process identity and device properties.
//   Batch  - events since the previous batch, the names and kernel signatures they introduce, and
//            the count of events the sender dropped since the previous batch that got through.
//
// Interning: a kernel's unchanging attributes (name, device, stream, launching thread, grid, block,
// registers, shared memory, graph, flags) form a signature that is sent once per connection epoch
// and referenced by id, and timestamps are delta-encoded, so a steady training loop costs a few
// bytes per kernel. Names likewise travel once per epoch.
//
// Threads: a BatchEncoder belongs to one thread (the shim's drain thread); a MessageDecoder to one
// thread (the advisor's ingest thread). Neither blocks; neither throws.
//
// Not carried: KernelExec/Copy/Memset/HostSync/ApiCall::correlation (the shim joins launches to
// GPU records before sending; decoded records have correlation 0). Text longer than
// kMaxTextBytes (names, command line, host ...) is truncated to it. Everything else round-trips
// exactly, including unknown (0) times, achieved_occupancy and arbitrary bytes in names.
// Layout details: schema/gpuwise.fbs, envelope.h, kernel_timing.h.
#pragma once

#include "profiler/model/expected.h"
#include "profiler/model/trace.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace gpuwise::wire {
struct Message;
}

namespace gpuwise::transport {

// What encoders write. Decoders read kMinProtocolVersion .. kProtocolVersion (recorded .gwt
// traces of earlier builds stay readable) and reject any other version as UnsupportedVersion.
// Protocol 2 changed only the kernel columns' residuals (schema/gpuwise.fbs, KernelColumns).
inline constexpr uint32_t kProtocolVersion = 2;
inline constexpr uint32_t kMinProtocolVersion = 1;
// Upper bounds a receiver enforces before it decompresses or reads anything.
inline constexpr size_t kMaxMessageBytes = 16u << 20; // on the wire
inline constexpr size_t kMaxDecodedBytes = 64u << 20; // after decompression
// Events in one batch message. The encoder drops events added beyond it (counting them in the
// next message's events_dropped); the decoder rejects a batch that claims more.
inline constexpr size_t kMaxBatchEvents = 1u << 17;
// Longest text (a name, the command line ...) carried; the encoder truncates longer text.
inline constexpr size_t kMaxTextBytes = 1u << 16;
// New names carried by one message, in bytes; names beyond it wait for the next message (records
// keep their ids, and a name that arrives late resolves them all the same).
inline constexpr size_t kMaxNewNameBytesPerMessage = 2u << 20;

struct Hello {
  uint32_t protocol_version = kProtocolVersion; // decoded: the version the message was written in
  uint64_t session_id = 0; // random per process start and per fork; keys the advisor's stream
  model::ProcessInfo process;
  std::vector<model::DeviceInfo> devices;
  bool simulated = false;       // the process runs on the simulated device
  model::TimeNs start_time = 0; // CLOCK_MONOTONIC ns when the shim started
  // Decoded only: fields the decoder cut to its bounds (devices past 64, identity strings past
  // 256 bytes, the command line past 4 KiB: message_decoder.cpp says why each).
  uint32_t truncated_fields = 0;
};

// The decoded form of a batch: plain model records (RecordSet's columns), names resolved into the
// decoder's table.
struct Batch : model::RecordSet {
  uint64_t session_id = 0;
  int64_t pid = 0;
  uint64_t sequence = 0;       // per session, starting at 0; a gap means batches were lost
  uint64_t events_dropped = 0; // events the sender counted as dropped since its previous batch
  // Decoded only (the encoder writes its own count): the events of this session's earlier batches
  // that the sender's socket accepted; 0 from senders older than the field.
  uint64_t events_delivered = 0;
  bool final = false; // the process is exiting; no more batches follow
  model::TimeNs sent_time = 0;
  // The shim's own cost so far (cumulative: the latest batch that arrives has the figures).
  model::ShimCost shim_cost;
  size_t eventCount() const { return size(); }
};

std::vector<uint8_t> encodeHello(const Hello& hello);

// Accumulates events and turns them into Batch messages. Names are read from `names`, which must
// outlive the encoder; the encoder remembers which names and signatures this connection epoch has
// already carried.
class BatchEncoder {
public:
  BatchEncoder(const model::NameTable& names, uint64_t session_id, int64_t pid);
  ~BatchEncoder();
  BatchEncoder(const BatchEncoder&) = delete;
  BatchEncoder& operator=(const BatchEncoder&) = delete;

  // One record of any kind a RecordSet holds; beyond kMaxBatchEvents pending it is dropped (and
  // counted).
  template <model::RecordKind Record> void add(const Record& record) {
    if (!roomForOne()) return;
    try {
      pending().column<Record>().push_back(record);
    } catch (...) {
      countDropped(1);
    }
  }
  // Every record of `records`, kind by kind in RecordSet order.
  void addAll(const model::RecordSet& records);

  size_t pendingEvents() const;
  // The shim's cost figures every following batch carries (cumulative; zero: not sent).
  void setShimCost(const model::ShimCost& cost);
  // Serialises the pending events into one message and clears them. `events_dropped` is carried
  // as is, plus the events this encoder itself had to drop (more than kMaxBatchEvents pending,
  // more than kMaxSignatures distinct kernels in one batch). The sequence number advances on every
  // call. Empty only when memory ran out: the pending events are then lost and counted in the
  // next message's events_dropped.
  std::vector<uint8_t> encode(uint64_t events_dropped, bool final, model::TimeNs sent_time);
  // After a send attempt of the last encode(): when `delivered` is false, the names and signatures
  // that message introduced are forgotten so the next message carries them again; when true, its
  // events count in the events_delivered of every later batch. An encode() with no confirm() of
  // the previous message counts that message as delivered.
  void confirm(bool delivered);
  // A new connection epoch (the peer reconnected or restarted): every name and signature is sent
  // again as it is next used. The encoder also starts an epoch by itself when its signature table
  // would overflow; the batch says so and decoders follow.
  void resetEpoch();
  uint32_t epoch() const;
  // Writes protocol `version` (kMinProtocolVersion .. kProtocolVersion) from the next encode(), as
  // a build of that protocol would: for tests of the decoder's compatibility and for benchmarks.
  // False (nothing changes) for a version outside that range.
  bool writeProtocol(uint32_t version);

private:
  model::RecordSet& pending();
  bool roomForOne();
  void countDropped(uint64_t n);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct DecodeError {
  enum class Kind {
    TooLarge,
    BadEnvelope,
    UnsupportedVersion,
    BadCompression,
    Malformed,
    UnknownSession
  };
  Kind kind;
  std::string detail; // one line
};

// Reads only the routing header of a message (session id and pid, message kind) so the receiver
// can pick the per-process decoder. Verifies the envelope and the FlatBuffer first.
struct Route {
  bool is_hello = false;
  uint64_t session_id = 0;
  int64_t pid = 0;
};

// Opens a message once (envelope checks, decompression, FlatBuffers verifier) for both routing and
// decoding: a receiver routes every message to a per-process MessageDecoder, and opening it once
// for each halves the cost of a batch. One per thread (the advisor's ingest thread); never blocks
// or throws. The opened message lives in the opener (or in the caller's bytes, which must stay
// untouched) until the next open().
class MessageOpener {
public:
  MessageOpener();
  ~MessageOpener();
  MessageOpener(const MessageOpener&) = delete;
  MessageOpener& operator=(const MessageOpener&) = delete;

  // The message's route, or why it cannot be read.
  Expected<Route, DecodeError> open(std::span<const uint8_t> message);

private:
  friend class MessageDecoder;
  const wire::Message* current() const; // the message the last open() opened, or nullptr
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One decoder per sending process (session). Holds the mirror of that sender's interned names and
// kernel signatures; `names` receives the names (usually the ProcessTrace's own table).
class MessageDecoder {
public:
  explicit MessageDecoder(model::NameTable& names);
  ~MessageDecoder();
  MessageDecoder(const MessageDecoder&) = delete;
  MessageDecoder& operator=(const MessageDecoder&) = delete;

  // A Hello or a Batch, or why the message was rejected.
  using Result = Expected<std::variant<Hello, Batch>, DecodeError>;
  Result decode(std::span<const uint8_t> message);
  // Decodes the message `opened` opened last (after an open() that succeeded). With `append_to`,
  // a Batch's events are appended to its columns (a receiver's own, e.g. its ProcessTrace, so each
  // event is written once, where it stays) and the returned Batch carries only the header fields;
  // on an error nothing is appended. Without, as decode(bytes).
  Result decode(const MessageOpener& opened, model::RecordSet* append_to = nullptr);
  // Kernel events that referenced a signature this decoder never saw (lost with a dropped batch).
  uint64_t undecodableEvents() const;
  // New names not stored: past the bound on what one sender's names may hold (the records that
  // use them resolve to the empty name).
  uint64_t namesDropped() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

Expected<Route, DecodeError> peekRoute(std::span<const uint8_t> message);

const char* toString(DecodeError::Kind);

} // namespace gpuwise::transport
