// Every kind of record model::RecordSet lists, walked by the same visitor the codec uses: encoded
// by BatchEncoder, decoded by MessageDecoder straight into a ProcessTrace, field by field. A kind
// added to the record set is covered here without a change (but for its fixture overloads).
#include "profiler/model/record_set.h"
#include "profiler/model/trace.h"
#include "tests/transport/record_fixtures.h"
#include "transport/codec.h"

#include <type_traits>

using namespace gpuwise;
using namespace gpuwise::transport;
using namespace gpuwise::transport::testing;

namespace {

template <class Column> using ColumnRecord = typename std::decay_t<Column>::value_type;

// A few records of every kind, correlation cleared where a kind has one (it is not carried).
model::RecordSet everyKind(Randomizer& rnd, const std::vector<model::NameId>& names, int per_kind) {
  model::RecordSet set;
  set.forEachColumn([&](auto& column) {
    for (int i = 0; i < per_kind; ++i) {
      auto r = rnd.record(std::type_identity<ColumnRecord<decltype(column)>>{}, names);
      if constexpr (requires { r.correlation; }) r.correlation = 0;
      column.push_back(r);
    }
  });
  return set;
}

} // namespace

TEST_CASE("every record kind round-trips through the encoder and the decoder into a ProcessTrace") {
  Randomizer rnd(0x19);
  model::NameTable sender_names;
  std::vector<model::NameId> names;
  for (int i = 0; i < 20; ++i)
    names.push_back(sender_names.intern(rnd.oddName(i)));
  constexpr int kPerKind = 40;
  const model::RecordSet sent = everyKind(rnd, names, kPerKind);
  REQUIRE(sent.size() == model::kRecordKinds * kPerKind);

  BatchEncoder encoder(sender_names, 0x5e55, 4242);
  encoder.addAll(sent);
  CHECK(encoder.pendingEvents() == sent.size());
  const auto message = encoder.encode(3, true, 1'000);
  REQUIRE(!message.empty());
  CHECK(encoder.pendingEvents() == 0);

  // The receiver's path: open, route, decode into the process's own trace.
  model::ProcessTrace trace;
  trace.kernels.push_back({}); // what the trace held before stays, and comes first
  MessageOpener opener;
  auto route = opener.open(message);
  REQUIRE(route.has_value());
  CHECK(route->session_id == 0x5e55);
  MessageDecoder decoder(trace.names);
  const Batch header = expectValue<Batch>(decoder.decode(opener, &trace));
  CHECK(header.eventCount() == 0); // the records went to the trace
  CHECK(header.events_dropped == 3);
  CHECK(header.final);
  CHECK(decoder.undecodableEvents() == 0);
  trace.kernels.erase(trace.kernels.begin());

  CHECK(trace.eventCount() == sent.size());
  size_t kind = 0;
  model::RecordSet::forEachColumnPair(sent, trace, [&](const auto& want, const auto& got) {
    INFO("record kind " << kind++ << " of " << model::kRecordKinds);
    requireSameRecords(want, got);
  });
  for (model::NameId id : names)
    CHECK(trace.names.get(id) == sender_names.get(id));
}

TEST_CASE("RecordSet's size, clear and append cover every kind") {
  Randomizer rnd(7);
  const std::vector<model::NameId> names{1};
  model::RecordSet a = everyKind(rnd, names, 2);
  model::RecordSet b = everyKind(rnd, names, 3);
  a.append(b);
  size_t kinds = 0;
  a.forEachColumn([&](const auto& column) {
    CHECK(column.size() == 5);
    ++kinds;
  });
  CHECK(kinds == model::kRecordKinds);
  CHECK(a.size() == 5 * model::kRecordKinds);
  a.clear();
  CHECK(a.empty());
}
