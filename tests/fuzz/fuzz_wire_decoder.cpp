// libFuzzer target: the advisor's side of the wire (transport/codec.h), everything a hostile or
// broken sender can reach: the envelope checks, zstd, the FlatBuffers Verifier, the semantic
// checks, decoding into model records, name and signature interning across messages, and peekRoute.
//
// Input: one or more messages separated by kSeparator, decoded in order by ONE MessageDecoder (the
// decoder keeps state between messages: names, kernel signatures, epochs). Each message starts with
// a mode byte saying how the rest becomes a wire message:
//   mode % 4 == 0  the rest is the whole message, envelope included (mutations hit the header and
//                  the crc, so this mostly exercises the envelope checks)
//   mode % 4 == 1  the rest is a FlatBuffer; wrapped in a valid uncompressed envelope, so
//                  mutations reach the Verifier and the decoder past the crc
//   mode % 4 == 2  the rest is a FlatBuffer; zstd-compressed, then wrapped (the zstd path)
//   mode % 4 == 3  the rest is a zstd frame (or garbage) wrapped as zstd, claiming a decoded size
//                  taken from the mode's upper bits (bombs, lies about the size)
// Seeds (corpus/wire_decoder/) are real encoder output: `fuzz_seeds DIR` (make_seeds.cpp) writes
// them.
//
// Oracles beyond "no crash, no sanitizer finding": peekRoute and decode agree on the kind, session
// and pid of every message both accept; an accepted batch stays within kMaxBatchEvents; and an
// accepted batch, encoded again by BatchEncoder and decoded by a fresh decoder, gives back the same
// records (what the decoder accepts, the encoder must be able to carry).
#include "transport/codec.h"
#include "transport/envelope.h"

#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace {

using namespace gpuwise;
using transport::Batch;
using transport::DecodeError;
using transport::Hello;
using transport::MessageDecoder;
using transport::Route;

constexpr std::string_view kSeparator = "\xF7GWFZ\x7F";
// A run of mutated messages must not make one input take seconds: the decoder is linear in the
// message, but zstd can be asked for up to kMaxDecodedBytes.
constexpr size_t kMaxMessagesPerInput = 16;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_wire_decoder: oracle failed: %s\n", what);
  std::abort();
}

std::vector<uint8_t> toMessage(uint8_t mode, std::span<const uint8_t> rest) {
  switch (mode % 4) {
  case 0: return {rest.begin(), rest.end()};
  case 1:
    return transport::forgeEnvelope(transport::Codec::None, static_cast<uint32_t>(rest.size()),
                                    rest);
  case 2: {
    std::vector<uint8_t> frame(ZSTD_compressBound(rest.size()));
    const size_t n = ZSTD_compress(frame.data(), frame.size(), rest.data(), rest.size(), 1);
    if (ZSTD_isError(n)) return {};
    frame.resize(n);
    return transport::forgeEnvelope(transport::Codec::Zstd, static_cast<uint32_t>(rest.size()),
                                    frame);
  }
  default: {
    // Upper six bits pick a claimed size on a log scale, up to past kMaxDecodedBytes.
    const uint32_t claimed =
        (mode >> 2) == 63 ? 0xffffffffu : (1u << ((mode >> 2) % 28)) + rest.size();
    return transport::forgeEnvelope(transport::Codec::Zstd, claimed, rest);
  }
  }
}

template <class T, class F> bool same(const std::vector<T>& a, const std::vector<T>& b, F key) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (key(a[i]) != key(b[i])) return false;
  return true;
}

// Encodes an accepted batch again and decodes it with a fresh decoder: the records must survive.
void checkReencode(const Batch& batch, const model::NameTable& names) {
  transport::BatchEncoder encoder(names, batch.session_id, batch.pid);
  encoder.addAll(batch);
  const std::vector<uint8_t> message =
      encoder.encode(batch.events_dropped, batch.final, batch.sent_time);
  if (message.empty()) return; // out of memory: allowed by the contract, counted by the encoder

  model::NameTable names2;
  MessageDecoder decoder(names2);
  auto result = decoder.decode(message);
  const auto* again = result ? std::get_if<Batch>(&*result) : nullptr;
  if (!again) {
    std::fprintf(stderr, "re-encoded batch rejected: %s\n",
                 result ? "(hello)" : result.error().detail.c_str());
    fail("the decoder rejects what the encoder made of an accepted batch");
  }
  if (again->events_dropped != batch.events_dropped) return; // the encoder itself dropped events
  if (again->session_id != batch.session_id || again->pid != batch.pid ||
      again->final != batch.final || again->sent_time != batch.sent_time)
    fail("batch header changed through encode/decode");
  const auto name = [&](const model::NameTable& t, model::NameId id) {
    return std::string(t.get(id));
  };
  if (!same(batch.kernels, again->kernels, [](const auto& k) {
        return std::tuple(k.start, k.end, k.launch_start, k.launch_end, k.device, k.stream,
                          k.thread, k.grid.x, k.grid.y, k.grid.z, k.block.x, k.block.y, k.block.z,
                          k.registers_per_thread, k.static_shared_bytes, k.dynamic_shared_bytes,
                          k.graph_id, int(k.flags));
      }))
    fail("kernels changed through encode/decode");
  for (size_t i = 0; i < batch.kernels.size(); ++i)
    if (name(names, batch.kernels[i].name) != name(names2, again->kernels[i].name))
      fail("kernel name changed through encode/decode");
  if (!same(batch.copies, again->copies, [](const auto& c) {
        return std::tuple(c.start, c.end, c.call_start, c.call_end, c.bytes, c.device, c.stream,
                          c.thread, int(c.direction), int(c.src), int(c.dst), c.async);
      }))
    fail("copies changed through encode/decode");
  if (!same(batch.memsets, again->memsets, [](const auto& m) {
        return std::tuple(m.start, m.end, m.call_start, m.call_end, m.bytes, m.device, m.stream,
                          m.thread, int(m.dst), m.async);
      }))
    fail("memsets changed through encode/decode");
  if (!same(batch.syncs, again->syncs, [](const auto& s) {
        return std::tuple(s.start, s.end, s.device, s.stream, s.thread, int(s.kind));
      }))
    fail("syncs changed through encode/decode");
  if (!same(batch.api_calls, again->api_calls,
            [](const auto& a) { return std::tuple(a.start, a.end, a.thread); }))
    fail("api calls changed through encode/decode");
  if (!same(batch.allocations, again->allocations, [](const auto& a) {
        return std::tuple(a.time, a.address, a.bytes, a.device, int(a.kind), a.is_free);
      }))
    fail("allocations changed through encode/decode");
  if (!same(batch.memory_samples, again->memory_samples, [](const auto& m) {
        return std::tuple(m.time, m.device, m.allocated_bytes, m.reserved_bytes);
      }))
    fail("memory samples changed through encode/decode");
  if (!same(batch.ranges, again->ranges, [](const auto& r) {
        return std::tuple(r.start, r.end, r.thread, r.device, r.stream, int(r.kind), r.step);
      }))
    fail("ranges changed through encode/decode");
}

void checkOne(MessageDecoder& decoder, const model::NameTable& names,
              std::span<const uint8_t> message) {
  const auto route = transport::peekRoute(message);
  const auto result = decoder.decode(message);
  const Route* r = route ? &*route : nullptr;
  if (!result) {
    if (result.error().detail.find('\n') != std::string::npos)
      fail("an error detail is more than one line");
  } else if (const auto* hello = std::get_if<Hello>(&*result)) {
    if (!r) fail("decode accepts a Hello that peekRoute rejects");
    if (!r->is_hello || r->session_id != hello->session_id || r->pid != hello->process.pid)
      fail("peekRoute and decode disagree on a Hello");
  } else if (const auto* batch = std::get_if<Batch>(&*result)) {
    if (!r) fail("decode accepts a Batch that peekRoute rejects");
    if (r->is_hello || r->session_id != batch->session_id || r->pid != batch->pid)
      fail("peekRoute and decode disagree on a Batch");
    if (batch->eventCount() > transport::kMaxBatchEvents)
      fail("an accepted batch exceeds kMaxBatchEvents");
    checkReencode(*batch, names);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  model::NameTable names;
  MessageDecoder decoder(names);
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t pos = 0;
  for (size_t n = 0; n < kMaxMessagesPerInput && pos < input.size(); ++n) {
    size_t end = input.find(kSeparator, pos);
    if (end == std::string_view::npos) end = input.size();
    if (end > pos) {
      const auto piece = std::span<const uint8_t>(data + pos, end - pos);
      const std::vector<uint8_t> message = toMessage(piece[0], piece.subspan(1));
      checkOne(decoder, names, message);
    }
    pos = end + kSeparator.size();
  }
  return 0;
}
