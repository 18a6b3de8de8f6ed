// What one sender can make a decoder hold: a Hello is cut to its bounds (devices, text), and name
// ids far apart cost their names, not the ids between. Both once took gigabytes from a few KB on
// the wire (a bloated Hello; a batch naming an id a million past the table).
#include "profiler/model/record_limits.h"
#include "transport/codec.h"
#include "transport/envelope.h"
#include "transport/schema/gpuwise_generated.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::transport;

namespace {

// A Hello as a hostile sender writes it: `devices` devices, every text field `text` bytes long.
Hello bloatedHello(size_t devices, size_t text) {
  Hello h;
  h.session_id = 7;
  h.process.pid = 70;
  h.process.host = std::string(text, 'h');
  h.process.command = std::string(text, 'c');
  h.process.pod = std::string(text, 'p');
  for (size_t i = 0; i < devices; ++i) {
    model::DeviceInfo d;
    d.index = uint32_t(i);
    d.name = std::string(text, 'n');
    h.devices.push_back(d);
  }
  return h;
}

// A batch carrying the given (id, text) names and nothing else, forged as a foreign sender would.
std::vector<uint8_t> namesBatch(uint64_t session,
                                const std::vector<std::pair<uint32_t, std::string>>& names) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<wire::NewName>> offsets;
  for (const auto& [id, text] : names)
    offsets.push_back(wire::CreateNewName(
        fbb, id, fbb.CreateVector(reinterpret_cast<const uint8_t*>(text.data()), text.size())));
  auto vec = fbb.CreateVector(offsets);
  wire::BatchBuilder b(fbb);
  b.add_session_id(session);
  b.add_pid(1);
  b.add_names(vec);
  auto batch = b.Finish();
  wire::FinishMessageBuffer(
      fbb, wire::CreateMessage(fbb, kProtocolVersion, wire::Body::Batch, batch.Union()));
  return forgeEnvelope(Codec::None, fbb.GetSize(), {fbb.GetBufferPointer(), fbb.GetSize()});
}

} // namespace

TEST_CASE("a bloated Hello is cut to its bounds at decode, and the cut is counted") {
  // 600 devices with 64 KiB names: 38 MiB decoded, a few hundred bytes of zstd on the wire.
  const auto bytes = encodeHello(bloatedHello(600, kMaxTextBytes));
  CHECK(bytes.size() < 200 * 1024);
  model::NameTable names;
  MessageDecoder decoder(names);
  auto r = decoder.decode(bytes);
  REQUIRE(r.has_value());
  const auto& h = std::get<Hello>(*r);
  CHECK(h.devices.size() == 64);
  CHECK(h.devices.front().index == 0);
  CHECK(h.devices.back().index == 63);
  for (const auto& d : h.devices)
    CHECK(d.name.size() <= 256);
  CHECK(h.process.host.size() <= 256);
  CHECK(h.process.pod.size() <= 256);
  CHECK(h.process.command.size() <= 4096);
  CHECK(h.process.command.size() > 256); // a command line keeps its arguments
  CHECK(h.truncated_fields > 0);
  CHECK(h.process.pid == 70);

  // An honest Hello decodes whole.
  auto honest = decoder.decode(encodeHello(bloatedHello(8, 40)));
  REQUIRE(honest.has_value());
  const auto& honest_hello = std::get<Hello>(*honest);
  CHECK(honest_hello.devices.size() == 8);
  CHECK(honest_hello.truncated_fields == 0);
  CHECK(honest_hello.devices[3].name == std::string(40, 'n'));
}

TEST_CASE("a name id far past the table costs its name, not the ids between") {
  model::NameTable names;
  MessageDecoder decoder(names);
  // Each batch names an id a million past the last, as the attack did 68 times (before: the
  // table grew by a million 32-byte entries per batch).
  for (uint32_t i = 0; i < 8; ++i) {
    const uint32_t id = (i + 1) * 1'000'000;
    auto r = decoder.decode(
        namesBatch(3, {{i + 1, "dense" + std::to_string(i)}, {id, "far" + std::to_string(i)}}));
    REQUIRE(r.has_value());
    REQUIRE(std::holds_alternative<Batch>(*r));
    CHECK(names.get(id) == "far" + std::to_string(i)); // a late record still resolves
  }
  CHECK(names.size() < 10'000);
  CHECK(names.count() == 17);
  CHECK(names.get(1) == "dense0");
  CHECK(names.find("far3") != 0);
  // The ids between, once named, join the dense part again.
  model::NameTable filled;
  for (uint32_t i = 5000; i >= 1; --i)
    filled.assign(i, "n" + std::to_string(i));
  CHECK(filled.size() == 5001);
  CHECK(filled.get(4999) == "n4999");
  CHECK(filled.intern("fresh") == 5001);
}

TEST_CASE("names past the decoder's bound are dropped and counted, never stored") {
  model::NameTable names;
  MessageDecoder decoder(names);
  // Names of the longest length the table stores (a longer one is cut to it on the way in).
  const std::string big(model::kMaxNameBytes, 'x');
  uint32_t id = 1;
  // 32 MiB of names is the bound: 2,400 names of 16 KiB go past it.
  for (int m = 0; m < 60; ++m) {
    std::vector<std::pair<uint32_t, std::string>> batch;
    for (int i = 0; i < 40; ++i)
      batch.emplace_back(id++, big);
    const auto accepted = decoder.decode(namesBatch(3, batch));
    REQUIRE(accepted.has_value());
    REQUIRE(std::holds_alternative<Batch>(*accepted));
  }
  CHECK(names.textBytes() <= size_t{32} << 20);
  CHECK(decoder.namesDropped() == 2400 - (size_t{32} << 20) / model::kMaxNameBytes);
}
