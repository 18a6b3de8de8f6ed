// Interning across the batches of a connection epoch: what is sent once, what is sent again after a
// failed send or a new epoch, and what a decoder that missed a message can still decode.
#include "profiler/model/record_limits.h"
#include "tests/transport/record_fixtures.h"
#include "tests/transport/steady_loop.h"
#include "transport/codec.h"
#include "transport/envelope.h"
#include "transport/schema/gpuwise_generated.h"

using namespace gpuwise;
using namespace gpuwise::transport;
using namespace gpuwise::transport::testing;

namespace {

struct Carried {
  size_t names = 0, signatures = 0, kernels = 0;
  uint32_t epoch = 0;
};

Carried carried(const std::vector<uint8_t>& msg) {
  EnvelopeReader reader;
  auto r = reader.open(msg);
  REQUIRE(std::holds_alternative<const wire::Message*>(r));
  const wire::Batch* b = std::get<const wire::Message*>(r)->body_as_Batch();
  REQUIRE(b);
  Carried c;
  c.names = b->names() ? b->names()->size() : 0;
  c.signatures = b->signatures() ? b->signatures()->size() : 0;
  c.kernels = b->kernels() && b->kernels()->key() ? b->kernels()->key()->size() : 0;
  c.epoch = b->epoch();
  return c;
}

struct Fixture {
  model::NameTable sender;
  SteadyLoop loop{sender, 7, 24};
  BatchEncoder enc{sender, 5, 6};
  std::vector<model::KernelExec> last;

  std::vector<uint8_t> next(size_t n = 500) {
    last.clear();
    loop.next(n, last);
    for (const auto& k : last)
      enc.add(k);
    model::ApiCall a;
    a.name = sender.intern("cudaMalloc");
    a.start = 1;
    a.end = 2;
    enc.add(a);
    return enc.encode(0, false, 0);
  }
};

} // namespace

TEST_CASE("Names and signatures travel once per epoch") {
  Fixture f;
  const auto m1 = f.next();
  f.enc.confirm(true);
  const auto m2 = f.next();
  f.enc.confirm(true);
  const Carried c1 = carried(m1), c2 = carried(m2);
  CHECK(c1.signatures == 24);
  CHECK(c1.names == 25); // 24 kernel names + cudaMalloc
  CHECK(c2.signatures == 0);
  CHECK(c2.names == 0);
  CHECK(c2.epoch == c1.epoch);

  model::NameTable receiver;
  MessageDecoder dec(receiver);
  expectValue<Batch>(dec.decode(m1));
  Batch b2 = expectValue<Batch>(dec.decode(m2));
  requireSameRecords(f.last, b2.kernels);
  CHECK(b2.sequence == 1);
  CHECK(receiver.get(b2.api_calls.at(0).name) == "cudaMalloc");
}

TEST_CASE("confirm(false) re-sends what the failed message introduced") {
  Fixture f;
  const auto failed = f.next();
  f.enc.confirm(false);
  const auto retry = f.next();
  f.enc.confirm(true);
  CHECK(carried(retry).signatures == 24);
  CHECK(carried(retry).names == 25);

  // A decoder that never saw the failed message decodes the next one completely.
  model::NameTable receiver;
  MessageDecoder dec(receiver);
  Batch b = expectValue<Batch>(dec.decode(retry));
  requireSameRecords(f.last, b.kernels);
  CHECK(dec.undecodableEvents() == 0);
  CHECK(b.sequence == 1); // the lost message still used sequence 0: the gap shows the loss
  for (const auto& k : b.kernels)
    CHECK(receiver.get(k.name) == f.sender.get(k.name));
}

TEST_CASE("confirm(false) forgets only what the failed message introduced") {
  Fixture f;
  const auto m1 = f.next(24); // introduces all 24 sites
  f.enc.confirm(true);
  model::KernelExec fresh;
  fresh.name = f.sender.intern("a_new_kernel");
  fresh.start = 10;
  fresh.end = 20;
  f.enc.add(fresh);
  (void)f.enc.encode(0, false, 0);
  f.enc.confirm(false);
  f.enc.add(fresh);
  const auto m3 = f.next(24);
  const Carried c3 = carried(m3);
  CHECK(c3.signatures == 1);
  CHECK(c3.names == 1);
}

TEST_CASE("A decoder that lost a delivered batch counts the kernels it cannot name") {
  Fixture f;
  const auto m1 = f.next(24);
  f.enc.confirm(true); // delivered as far as the sender knows, but the receiver never got it
  const auto m2 = f.next(100);
  model::NameTable receiver;
  MessageDecoder dec(receiver);
  Batch b = expectValue<Batch>(dec.decode(m2));
  CHECK(b.kernels.empty());
  CHECK(dec.undecodableEvents() == 100);
  CHECK(b.api_calls.size() == 1); // everything else still decodes
}

TEST_CASE("resetEpoch sends everything again and decoders follow the new epoch") {
  Fixture f;
  model::NameTable receiver;
  MessageDecoder dec(receiver);
  expectValue<Batch>(dec.decode(f.next()));
  f.enc.confirm(true);
  f.enc.resetEpoch();
  const auto m2 = f.next();
  const Carried c2 = carried(m2);
  CHECK(c2.signatures == 24);
  CHECK(c2.names == 25);
  CHECK(c2.epoch == 1);
  // The old decoder (which holds epoch 0's table) and a fresh one both decode it.
  requireSameRecords(f.last, expectValue<Batch>(dec.decode(m2)).kernels);
  model::NameTable receiver2;
  MessageDecoder fresh(receiver2);
  requireSameRecords(f.last, expectValue<Batch>(fresh.decode(m2)).kernels);
}

TEST_CASE("A new epoch without a Hello makes the decoder drop the old signatures") {
  // Sender epoch 0 defines ids 1..24 for the loop; after a reset, id 1 means another kernel.
  model::NameTable sender;
  BatchEncoder enc(sender, 1, 1);
  model::KernelExec a, b;
  a.name = sender.intern("a");
  a.start = 1;
  a.end = 2;
  b.name = sender.intern("b");
  b.start = 3;
  b.end = 4;
  enc.add(a);
  const auto m1 = enc.encode(0, false, 0);
  enc.confirm(true);
  enc.resetEpoch();
  enc.add(b);
  const auto m2 = enc.encode(0, false, 0);
  enc.confirm(false); // lost: the decoder never learns epoch 1's id 1 = b
  enc.add(b);
  enc.add(a);
  const auto m3 = enc.encode(0, false, 0);

  model::NameTable receiver;
  MessageDecoder dec(receiver);
  expectValue<Batch>(dec.decode(m1));
  Batch got = expectValue<Batch>(dec.decode(m3));
  REQUIRE(got.kernels.size() == 2);
  CHECK(receiver.get(got.kernels[0].name) == "b");
  CHECK(receiver.get(got.kernels[1].name) == "a");
}

TEST_CASE("A Hello starts a new epoch on the decoder") {
  model::NameTable sender;
  BatchEncoder enc(sender, 3, 1);
  model::KernelExec a;
  a.name = sender.intern("a");
  enc.add(a);
  const auto m1 = enc.encode(0, false, 0);
  enc.confirm(true);
  Hello h;
  h.session_id = 3;
  model::NameTable receiver;
  MessageDecoder dec(receiver);
  expectValue<Batch>(dec.decode(m1));
  expectValue<Hello>(dec.decode(encodeHello(h)));
  enc.add(a);
  const auto m2 = enc.encode(0, false, 0); // the sender did not reset: it refers to id 1 only
  Batch b = expectValue<Batch>(dec.decode(m2));
  CHECK(b.kernels.empty());
  CHECK(dec.undecodableEvents() == 1);
}

TEST_CASE("The encoder starts an epoch by itself before its signature table overflows") {
  model::NameTable sender;
  BatchEncoder enc(sender, 1, 1);
  model::NameTable receiver;
  MessageDecoder dec(receiver);
  const auto name = sender.intern("varying_shapes");
  uint32_t grid = 1;
  for (int batch = 0; batch < 3; ++batch) {
    std::vector<model::KernelExec> in;
    for (int i = 0; i < 30000; ++i) { // every kernel a new signature (a new grid)
      model::KernelExec k;
      k.name = name;
      k.grid.x = grid++;
      k.start = 100 + i;
      k.end = 200 + i;
      in.push_back(k);
      enc.add(k);
    }
    const auto msg = enc.encode(0, false, 0);
    enc.confirm(true);
    CHECK(carried(msg).epoch == (batch < 2 ? 0u : 1u));
    Batch b = expectValue<Batch>(dec.decode(msg));
    requireSameRecords(in, b.kernels);
    CHECK(b.events_dropped == 0);
  }
  CHECK(enc.epoch() == 1);
  CHECK(dec.undecodableEvents() == 0);
}

TEST_CASE("Events beyond kMaxBatchEvents are dropped and counted") {
  model::NameTable sender;
  BatchEncoder enc(sender, 1, 1);
  model::MemorySample s;
  for (size_t i = 0; i < kMaxBatchEvents + 5; ++i) {
    s.time = int64_t(i) + 1;
    enc.add(s);
  }
  CHECK(enc.pendingEvents() == kMaxBatchEvents);
  model::NameTable receiver;
  MessageDecoder dec(receiver);
  Batch b = expectValue<Batch>(dec.decode(enc.encode(10, false, 0)));
  CHECK(b.memory_samples.size() == kMaxBatchEvents);
  CHECK(b.events_dropped == 15);
  Batch next = expectValue<Batch>(dec.decode(enc.encode(0, false, 0)));
  CHECK(next.events_dropped == 0);
}

TEST_CASE("New names beyond the per-message budget follow in the next message") {
  model::NameTable sender;
  BatchEncoder enc(sender, 1, 1);
  std::vector<model::ApiCall> calls;
  // Names of the longest length the name table keeps (longer ones are cut to it).
  for (int i = 0; i < 160; ++i) { // 160 x 16 KiB = 2.5 MiB of new names
    model::ApiCall a;
    const std::string suffix = (i < 10 ? "00" : i < 100 ? "0" : "") + std::to_string(i);
    a.name = sender.intern(std::string(model::kMaxNameBytes - 3, char('a' + i % 26)) + suffix);
    a.start = i + 1;
    calls.push_back(a);
    enc.add(a);
  }
  const auto m1 = enc.encode(0, false, 0);
  enc.confirm(true);
  const auto m2 = enc.encode(0, false, 0);
  CHECK(carried(m1).names == kMaxNewNameBytesPerMessage / model::kMaxNameBytes);
  CHECK(carried(m1).names + carried(m2).names == 160);
  model::NameTable receiver;
  MessageDecoder dec(receiver);
  Batch b = expectValue<Batch>(dec.decode(m1));
  requireSameRecords(calls, b.api_calls);
  expectValue<Batch>(dec.decode(m2));
  for (const auto& a : calls)
    CHECK(receiver.get(a.name) == sender.get(a.name)); // late names resolve
}

TEST_CASE("A decoder serves one session") {
  model::NameTable sender;
  BatchEncoder one(sender, 1, 10), two(sender, 2, 20);
  model::NameTable receiver;
  MessageDecoder dec(receiver);
  expectValue<Batch>(dec.decode(one.encode(0, false, 0)));
  DecodeError e = expectError(dec.decode(two.encode(0, false, 0)));
  CHECK(e.kind == DecodeError::Kind::UnknownSession);
  Hello h;
  h.session_id = 2;
  CHECK(expectError(dec.decode(encodeHello(h))).kind == DecodeError::Kind::UnknownSession);
  expectValue<Batch>(dec.decode(one.encode(0, false, 0)));
}

TEST_CASE("events_delivered counts the events of the messages confirmed sent, nothing else") {
  Fixture f;
  model::NameTable receiver;
  MessageDecoder dec(receiver);
  const auto m1 = f.next(300); // 300 kernels and one API call
  f.enc.confirm(true);
  const auto m2 = f.next(200);
  f.enc.confirm(false); // never sent: not delivered, however many it held
  const auto m3 = f.next(100);
  const auto m4 = f.next(50); // encode() without confirm() counts m3 as delivered
  f.enc.resetEpoch();         // ... and so does a new epoch for m4
  const auto m5 = f.next(10);
  CHECK(expectValue<Batch>(dec.decode(m1)).events_delivered == 0);
  CHECK(expectValue<Batch>(dec.decode(m2)).events_delivered == 301);
  Batch b3 = expectValue<Batch>(dec.decode(m3));
  CHECK(b3.events_delivered == 301);
  CHECK(b3.eventCount() == 101);
  CHECK(expectValue<Batch>(dec.decode(m4)).events_delivered == 301 + 101);
  MessageDecoder fresh(receiver); // the new epoch's first message decodes on its own
  CHECK(expectValue<Batch>(fresh.decode(m5)).events_delivered == 301 + 101 + 51);
}
