// Hostile and foreign input: every malformed message is an error of the right kind, never a crash,
// a hang or an unbounded allocation. Run under -fsanitize=address,undefined as well.
#include "tests/transport/record_fixtures.h"
#include "tests/transport/steady_loop.h"
#include "transport/codec.h"
#include "transport/envelope.h"
#include "transport/kernel_timing.h"
#include "transport/schema/gpuwise_generated.h"

#include <zstd.h>

#include <map>

using namespace gpuwise;
using namespace gpuwise::transport;
using namespace gpuwise::transport::testing;
using Kind = DecodeError::Kind;

namespace {

// A realistic compressed batch: a steady loop plus one record of every other type.
std::vector<uint8_t> richBatch(size_t kernels, model::NameTable& names) {
  SteadyLoop loop(names, 3, 24);
  Randomizer rnd(9);
  std::vector<model::NameId> ids{names.intern("cudaMalloc"), names.intern("ProfilerStep#3")};
  BatchEncoder enc(names, 11, 12);
  std::vector<model::KernelExec> ks;
  loop.next(kernels, ks);
  for (const auto& k : ks)
    enc.add(k);
  for (int i = 0; i < 3; ++i) {
    enc.add(rnd.copy());
    enc.add(rnd.memset());
    enc.add(rnd.sync());
    enc.add(rnd.apiCall(ids));
    enc.add(rnd.allocation());
    enc.add(rnd.memorySample());
    enc.add(rnd.range(ids));
  }
  return enc.encode(0, false, 1);
}

// The FlatBuffer inside a message.
std::vector<uint8_t> payloadOf(const std::vector<uint8_t>& msg) {
  EnvelopeReader reader;
  REQUIRE(std::holds_alternative<const wire::Message*>(reader.open(msg)));
  const uint32_t decoded =
      uint32_t(msg[8]) | uint32_t(msg[9]) << 8 | uint32_t(msg[10]) << 16 | uint32_t(msg[11]) << 24;
  if (msg[6] == 0) return {msg.begin() + kEnvelopeHeaderBytes, msg.end()};
  std::vector<uint8_t> out(decoded);
  REQUIRE(ZSTD_decompress(out.data(), out.size(), msg.data() + kEnvelopeHeaderBytes,
                          msg.size() - kEnvelopeHeaderBytes) == decoded);
  return out;
}

std::vector<uint8_t> plain(std::span<const uint8_t> flatbuffer) {
  return forgeEnvelope(Codec::None, static_cast<uint32_t>(flatbuffer.size()), flatbuffer);
}

DecodeError decodeError(std::span<const uint8_t> msg) {
  model::NameTable names;
  MessageDecoder dec(names);
  auto r = dec.decode(msg);
  if (r) FAIL("decoded a message that should be rejected");
  return r.error();
}

// Builds a Batch message by hand; `fill` adds fields to the BatchBuilder after vectors are made.
template <class Make>
std::vector<uint8_t> forgedBatch(Make make, uint32_t version = kProtocolVersion) {
  flatbuffers::FlatBufferBuilder fbb;
  auto batch = make(fbb);
  wire::FinishMessageBuffer(fbb,
                            wire::CreateMessage(fbb, version, wire::Body::Batch, batch.Union()));
  return plain({fbb.GetBufferPointer(), fbb.GetSize()});
}

flatbuffers::Offset<wire::KernelColumns> columns(flatbuffers::FlatBufferBuilder& fbb,
                                                 std::vector<uint32_t> key, size_t others,
                                                 std::vector<wire::KernelTimes> escapes = {},
                                                 std::vector<wire::KernelOccupancy> occ = {}) {
  std::vector<uint8_t> planes(kResidualBytesPerRow * others, 0);
  auto k = fbb.CreateVector(key);
  auto r = fbb.CreateVector(planes);
  auto e = escapes.empty() ? 0 : fbb.CreateVectorOfStructs(escapes);
  auto c = occ.empty() ? 0 : fbb.CreateVectorOfStructs(occ);
  return wire::CreateKernelColumns(fbb, 1000, k, r, e, c);
}

flatbuffers::Offset<flatbuffers::Vector<const wire::KernelSignature*>>
oneSignature(flatbuffers::FlatBufferBuilder& fbb, uint32_t id, uint32_t name = 0) {
  std::vector<wire::KernelSignature> s{
      wire::KernelSignature(id, name, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0)};
  return fbb.CreateVectorOfStructs(s);
}

} // namespace

TEST_CASE("Truncated messages at every length are rejected as a bad envelope") {
  model::NameTable names;
  const auto compressed = richBatch(2000, names);
  REQUIRE(compressed[6] == uint8_t(Codec::Zstd));
  const auto uncompressed = plain(payloadOf(richBatch(30, names)));
  for (const auto* msg : {&compressed, &uncompressed}) {
    model::NameTable n;
    MessageDecoder dec(n);
    for (size_t len = 0; len < msg->size(); ++len) {
      auto r = dec.decode({msg->data(), len});
      REQUIRE_FALSE(r.has_value());
      REQUIRE(r.error().kind == Kind::BadEnvelope);
      REQUIRE_FALSE(peekRoute({msg->data(), len}).has_value());
    }
    expectValue<Batch>(dec.decode(*msg)); // the decoder is unharmed
  }
}

TEST_CASE("Every single-bit flip is detected, with the kind its position implies") {
  model::NameTable names;
  const auto compressed = richBatch(300, names);
  const auto uncompressed = plain(payloadOf(richBatch(10, names)));
  for (const auto* original : {&compressed, &uncompressed}) {
    std::map<Kind, size_t> kinds;
    std::vector<uint8_t> msg = *original;
    model::NameTable n;
    MessageDecoder dec(n);
    for (size_t bit = 0; bit < msg.size() * 8; ++bit) {
      const size_t byte = bit / 8;
      msg[byte] ^= uint8_t(1u << (bit % 8));
      auto r = dec.decode(msg);
      msg[byte] ^= uint8_t(1u << (bit % 8));
      INFO("bit " << bit);
      REQUIRE_FALSE(r.has_value());
      const Kind k = r.error().kind;
      ++kinds[k];
      if (byte >= 4 && byte < 6)
        REQUIRE(k == Kind::UnsupportedVersion);
      else if (byte >= 8 && byte < 12)
        REQUIRE((k == Kind::BadEnvelope || k == Kind::TooLarge));
      else
        REQUIRE(k == Kind::BadEnvelope); // magic, codec, sizes, crc, reserved, payload (crc)
    }
    CHECK(kinds[Kind::BadEnvelope] > 0);
    CHECK(kinds[Kind::UnsupportedVersion] == 16);
  }
}

TEST_CASE("Foreign FlatBuffers are rejected") {
  flatbuffers::FlatBufferBuilder fbb;
  auto start = fbb.StartTable();
  fbb.AddElement<uint64_t>(4, 0x1234, 0);
  fbb.AddElement<uint32_t>(6, 7, 0);
  fbb.Finish(flatbuffers::Offset<void>(fbb.EndTable(start)), "ZZZZ");
  std::span<const uint8_t> foreign{fbb.GetBufferPointer(), fbb.GetSize()};
  CHECK(decodeError(foreign).kind == Kind::BadEnvelope);      // no envelope at all
  CHECK(decodeError(plain(foreign)).kind == Kind::Malformed); // our envelope, their schema
  auto route = peekRoute(plain(foreign));
  REQUIRE_FALSE(route.has_value());
  CHECK(route.error().kind == Kind::Malformed);

  // Our schema without the file identifier.
  flatbuffers::FlatBufferBuilder ours;
  ours.Finish(wire::CreateMessage(ours, kProtocolVersion, wire::Body::Batch,
                                  wire::CreateBatch(ours).Union()));
  CHECK(decodeError(plain({ours.GetBufferPointer(), ours.GetSize()})).kind == Kind::Malformed);
}

TEST_CASE("A valid envelope around garbage is rejected") {
  std::mt19937_64 rng(5);
  std::vector<uint8_t> garbage(4096);
  for (auto& b : garbage)
    b = uint8_t(rng());
  CHECK(decodeError(plain(garbage)).kind == Kind::Malformed);
  CHECK(decodeError(forgeEnvelope(Codec::Zstd, 10000, garbage)).kind == Kind::BadCompression);
  CHECK(decodeError(forgeEnvelope(Codec::None, 0, {})).kind == Kind::Malformed);
  CHECK(decodeError(forgeEnvelope(Codec::None, 100, garbage)).kind ==
        Kind::BadEnvelope); // sizes disagree
  auto odd = plain(garbage);
  odd[6] = 7; // unknown codec (the crc is checked after the header fields)
  CHECK(decodeError(odd).kind == Kind::BadEnvelope);
}

TEST_CASE("Version mismatches are their own kind") {
  model::NameTable names;
  const auto fb = payloadOf(richBatch(10, names));
  const uint16_t next = kProtocolVersion + 1, before = kMinProtocolVersion - 1;
  CHECK(decodeError(forgeEnvelope(Codec::None, uint32_t(fb.size()), fb, next)).kind ==
        Kind::UnsupportedVersion);
  CHECK(decodeError(forgeEnvelope(Codec::None, uint32_t(fb.size()), fb, before)).kind ==
        Kind::UnsupportedVersion);
  const auto error = decodeError(forgeEnvelope(Codec::None, uint32_t(fb.size()), fb, next));
  CHECK(error.detail == "protocol version " + std::to_string(next) + ", this build speaks " +
                            std::to_string(kMinProtocolVersion) + " to " +
                            std::to_string(kProtocolVersion));
  CHECK(decodeError(forgedBatch([](auto& fbb) { return wire::CreateBatch(fbb); }, next)).kind ==
        Kind::UnsupportedVersion);
  // A body in another version than its envelope states.
  CHECK(decodeError(
            forgedBatch([](auto& fbb) { return wire::CreateBatch(fbb); }, kMinProtocolVersion))
            .kind == Kind::UnsupportedVersion);
}

TEST_CASE("Oversize messages and oversize claims are rejected before any decompression") {
  std::vector<uint8_t> huge(kMaxMessageBytes + 1, 0);
  CHECK(decodeError(huge).kind == Kind::TooLarge);
  CHECK(peekRoute(huge).error().kind == Kind::TooLarge);
  const std::vector<uint8_t> tiny(64, 1);
  CHECK(decodeError(forgeEnvelope(Codec::Zstd, uint32_t(kMaxDecodedBytes + 1), tiny)).kind ==
        Kind::TooLarge);
  CHECK(decodeError(forgeEnvelope(Codec::Zstd, 0xffffffffu, tiny)).kind == Kind::TooLarge);
}

TEST_CASE("zstd bombs cannot inflate past what the envelope allows") {
  const size_t bomb_size = kMaxDecodedBytes + (6u << 20); // 70 MiB of zeros, a few KiB compressed
  std::vector<uint8_t> zeros(bomb_size, 0);
  std::vector<uint8_t> frame(ZSTD_compressBound(bomb_size));
  frame.resize(ZSTD_compress(frame.data(), frame.size(), zeros.data(), zeros.size(), 1));
  REQUIRE(frame.size() < 64 * 1024);

  SECTION("claiming its real size") {
    CHECK(decodeError(forgeEnvelope(Codec::Zstd, uint32_t(bomb_size), frame)).kind ==
          Kind::TooLarge);
  }
  SECTION("claiming a small size") {
    CHECK(decodeError(forgeEnvelope(Codec::Zstd, 4096, frame)).kind == Kind::BadCompression);
  }
  SECTION("a frame that does not state its size") {
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
    std::vector<uint8_t> unsized(ZSTD_compressBound(bomb_size));
    ZSTD_outBuffer out{unsized.data(), unsized.size(), 0};
    ZSTD_inBuffer in{zeros.data(), zeros.size(), 0};
    REQUIRE(ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_end) == 0);
    ZSTD_freeCCtx(cctx);
    unsized.resize(out.pos);
    CHECK(decodeError(forgeEnvelope(Codec::Zstd, 1u << 20, unsized)).kind == Kind::BadCompression);
  }
  SECTION("a small honest frame followed by the bomb") {
    const std::vector<uint8_t> small(1000, 7);
    std::vector<uint8_t> two(ZSTD_compressBound(small.size()));
    two.resize(ZSTD_compress(two.data(), two.size(), small.data(), small.size(), 1));
    two.insert(two.end(), frame.begin(), frame.end());
    CHECK(decodeError(forgeEnvelope(Codec::Zstd, 1000, two)).kind == Kind::BadCompression);
  }
}

TEST_CASE("Semantic checks reject what the verifier lets through") {
  using Fbb = flatbuffers::FlatBufferBuilder;
  auto kernels = [](std::vector<uint32_t> key, size_t others,
                    std::vector<wire::KernelTimes> esc = {},
                    std::vector<wire::KernelOccupancy> occ = {}) {
    return forgedBatch([&](Fbb& fbb) {
      auto sigs = oneSignature(fbb, 1);
      auto cols = columns(fbb, key, others, esc, occ);
      wire::BatchBuilder b(fbb);
      b.add_signatures(sigs);
      b.add_kernels(cols);
      return b.Finish();
    });
  };
  const uint32_t escape = uint32_t(TimingForm::Escape) << kSignatureIdBits;
  CHECK(decodeError(kernels({0}, 1)).kind == Kind::Malformed);              // signature id 0
  CHECK(decodeError(kernels({kMaxSignatures}, 1)).kind == Kind::Malformed); // id out of range
  CHECK(decodeError(kernels({1u | 5u << kSignatureIdBits}, 1)).kind ==
        Kind::Malformed);                                               // unknown form
  CHECK(decodeError(kernels({1, 1}, 1)).kind == Kind::Malformed);       // column lengths
  CHECK(decodeError(kernels({1 | escape}, 1)).kind == Kind::Malformed); // escape missing
  CHECK(decodeError(kernels({1}, 1, {wire::KernelTimes(1, 2, 3, 4)})).kind ==
        Kind::Malformed); // extra
  CHECK(decodeError(
            kernels({1, 1}, 2, {}, {wire::KernelOccupancy(1, .5f), wire::KernelOccupancy(0, .5f)}))
            .kind == Kind::Malformed); // occupancy order
  CHECK(decodeError(kernels({1}, 1, {}, {wire::KernelOccupancy(1, .5f)})).kind == Kind::Malformed);

  auto withName = [](uint32_t id, size_t len) {
    return forgedBatch([&](Fbb& fbb) {
      std::vector<uint8_t> text(len, 'n');
      auto n = wire::CreateNewName(fbb, id, fbb.CreateVector(text));
      auto names = fbb.CreateVector(std::vector{n});
      wire::BatchBuilder b(fbb);
      b.add_names(names);
      return b.Finish();
    });
  };
  CHECK(decodeError(withName(0, 3)).kind == Kind::Malformed);
  CHECK(decodeError(withName(model::NameTable::kMaxNames + 1, 3)).kind == Kind::Malformed);
  CHECK(decodeError(withName(5, kMaxTextBytes + 1)).kind == Kind::Malformed);
  CHECK(decodeError(forgedBatch([](Fbb& fbb) {
          auto sigs = oneSignature(fbb, 1, model::NameTable::kMaxNames + 1);
          wire::BatchBuilder b(fbb);
          b.add_signatures(sigs);
          return b.Finish();
        })).kind == Kind::Malformed);

  auto one = [](auto makeVector) {
    return forgedBatch([&](Fbb& fbb) {
      auto v = makeVector(fbb);
      wire::BatchBuilder b(fbb);
      v.second(b, v.first);
      return b.Finish();
    });
  };
  using B = wire::BatchBuilder;
  CHECK(decodeError(one([](Fbb& f) {
          std::vector<wire::CopyEvent> v{wire::CopyEvent(1, 2, 3, 4, 5, 0, 0, 0, 9, 0, 0, false)};
          return std::pair(f.CreateVectorOfStructs(v), [](B& b, auto o) { b.add_copies(o); });
        })).kind == Kind::Malformed);
  CHECK(decodeError(one([](Fbb& f) {
          std::vector<wire::MemsetEvent> v{wire::MemsetEvent(1, 2, 3, 4, 5, 0, 0, 0, 6, false)};
          return std::pair(f.CreateVectorOfStructs(v), [](B& b, auto o) { b.add_memsets(o); });
        })).kind == Kind::Malformed);
  CHECK(decodeError(one([](Fbb& f) {
          std::vector<wire::SyncEvent> v{wire::SyncEvent(1, 2, 0, 0, 0, 6)};
          return std::pair(f.CreateVectorOfStructs(v), [](B& b, auto o) { b.add_syncs(o); });
        })).kind == Kind::Malformed);
  CHECK(decodeError(one([](Fbb& f) {
          std::vector<wire::ApiCallEvent> v{
              wire::ApiCallEvent(1, 2, model::NameTable::kMaxNames + 1, 0)};
          return std::pair(f.CreateVectorOfStructs(v), [](B& b, auto o) { b.add_api_calls(o); });
        })).kind == Kind::Malformed);
  CHECK(decodeError(one([](Fbb& f) {
          std::vector<wire::AllocationEvent> v{wire::AllocationEvent(1, 2, 3, 0, 200, false)};
          return std::pair(f.CreateVectorOfStructs(v), [](B& b, auto o) { b.add_allocations(o); });
        })).kind == Kind::Malformed);
  CHECK(decodeError(one([](Fbb& f) {
          std::vector<wire::RangeEvent> v{wire::RangeEvent(1, 2, 3, 0, 0, 0, 0, 6)};
          return std::pair(f.CreateVectorOfStructs(v), [](B& b, auto o) { b.add_ranges(o); });
        })).kind == Kind::Malformed);
  CHECK(decodeError(one([](Fbb& f) {
          std::vector<wire::MemorySampleEvent> v(kMaxBatchEvents + 1,
                                                 wire::MemorySampleEvent(1, 2, 3, 0));
          return std::pair(f.CreateVectorOfStructs(v),
                           [](B& b, auto o) { b.add_memory_samples(o); });
        })).kind == Kind::Malformed);

  // A message with no body, and a Hello with an unknown tier.
  Fbb empty;
  wire::FinishMessageBuffer(empty, wire::CreateMessage(empty, kProtocolVersion));
  CHECK(decodeError(plain({empty.GetBufferPointer(), empty.GetSize()})).kind == Kind::Malformed);
  Fbb hello;
  auto h = wire::CreateHello(hello, 1, 2, 3, 0, 0, -1, -1, -1, 0, 0, 0, /*tier=*/9);
  wire::FinishMessageBuffer(
      hello, wire::CreateMessage(hello, kProtocolVersion, wire::Body::Hello, h.Union()));
  CHECK(decodeError(plain({hello.GetBufferPointer(), hello.GetSize()})).kind == Kind::Malformed);
}

TEST_CASE("A rejected batch leaves the decoder as it was") {
  using Fbb = flatbuffers::FlatBufferBuilder;
  const auto bad = forgedBatch([](Fbb& fbb) {
    std::vector<uint8_t> text{'x'};
    auto names = fbb.CreateVector(std::vector{wire::CreateNewName(fbb, 3, fbb.CreateVector(text))});
    auto sigs = oneSignature(fbb, 1);
    std::vector<wire::SyncEvent> v{wire::SyncEvent(1, 2, 0, 0, 0, 99)}; // the bad part
    auto syncs = fbb.CreateVectorOfStructs(v);
    wire::BatchBuilder b(fbb);
    b.add_session_id(4);
    b.add_names(names);
    b.add_signatures(sigs);
    b.add_syncs(syncs);
    return b.Finish();
  });
  model::NameTable names;
  MessageDecoder dec(names);
  CHECK(expectError(dec.decode(bad)).kind == Kind::Malformed);
  CHECK(names.size() == 1);
  // Not bound to session 4 either: another session is still welcome.
  const auto good = forgedBatch([](Fbb& fbb) {
    wire::BatchBuilder b(fbb);
    b.add_session_id(5);
    return b.Finish();
  });
  CHECK(expectValue<Batch>(dec.decode(good)).session_id == 5);
}

TEST_CASE("Random mutations of valid FlatBuffers never crash the decoder") {
  model::NameTable names;
  const auto fb = payloadOf(richBatch(200, names));
  Hello hi;
  hi.session_id = 11;
  hi.process = sampleProcess();
  hi.devices = {sampleDevice(0), sampleDevice(1)};
  const auto hello_fb = payloadOf(encodeHello(hi));
  std::mt19937_64 rng(1234);
  std::map<Kind, size_t> outcomes;
  size_t decoded = 0;
  model::NameTable persistent_names;
  MessageDecoder persistent(persistent_names);
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> m = (iter % 4 == 0) ? hello_fb : fb;
    const int edits = 1 + int(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % m.size();
      switch (rng() % 4) {
      case 0: m[at] ^= uint8_t(1u << (rng() % 8)); break;
      case 1: m[at] = uint8_t(rng()); break;
      case 2: m[at] = 0xff; break;
      default: m.resize(std::max<size_t>(1, at)); break; // truncated FlatBuffer, valid envelope
      }
    }
    const auto msg = plain(m);
    model::NameTable fresh_names;
    MessageDecoder fresh(fresh_names);
    auto r = fresh.decode(msg);
    if (!r)
      ++outcomes[r.error().kind];
    else
      ++decoded;
    (void)persistent.decode(msg);
    (void)peekRoute(msg);
  }
  INFO("decoded " << decoded << ", malformed " << outcomes[Kind::Malformed]);
  CHECK(outcomes[Kind::Malformed] > 1000);
  for (const auto& [kind, n] : outcomes)
    CHECK((kind == Kind::Malformed || kind == Kind::UnsupportedVersion ||
           kind == Kind::UnknownSession));
}

TEST_CASE("Random bytes never crash the decoder") {
  std::mt19937_64 rng(99);
  model::NameTable names;
  MessageDecoder dec(names);
  for (int iter = 0; iter < 5000; ++iter) {
    std::vector<uint8_t> m(rng() % 300);
    for (auto& b : m)
      b = uint8_t(rng());
    if (iter % 2 && m.size() >= 4) std::memcpy(m.data(), kEnvelopeMagic, 4);
    REQUIRE_FALSE(dec.decode(m).has_value());
  }
}
