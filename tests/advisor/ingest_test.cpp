#include "advisor/analysis/job_analysis.h"
#include "advisor/ingest/gwt_replay.h"
#include "advisor/ingest/ingest_server.h"
#include "advisor/ingest/rate_limited_log.h"
#include "advisor/ingest/stream_router.h"
#include "tests/advisor/wire_client.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <unistd.h>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr model::TimeNs kMs = 1'000'000;

// A fresh directory for ipc sockets and files, removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    const char* build = std::getenv("GPUWISE_BUILD_DIR");
    std::string templ = std::string(build ? "/tmp" : "/tmp") + "/gw-ingest-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    REQUIRE(::mkdtemp(buf.data()));
    path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

void addKernels(model::NameTable& names, transport::BatchEncoder& enc, int n, model::TimeNs t0,
                const char* name = "_Z4gemmPKfS0_Pfi") {
  auto id = names.intern(name);
  for (int i = 0; i < n; ++i) {
    model::KernelExec k;
    k.start = t0 + i * 10 * kMs;
    k.end = k.start + 5 * kMs;
    k.name = id;
    k.stream = 7;
    k.grid = {64, 1, 1};
    k.block = {128, 1, 1};
    enc.add(k);
  }
}

// Lines a RateLimitedLog wrote, for assertions.
struct CapturedLog {
  std::mutex mutex;
  std::vector<std::string> lines;
  RateLimitedLog::Sink sink() {
    return [this](std::string_view l) {
      std::lock_guard lock(mutex);
      lines.emplace_back(l);
    };
  }
  size_t size() {
    std::lock_guard lock(mutex);
    return lines.size();
  }
};

// Encodes messages of one sender without any socket, for the router tests.
struct OfflineSender {
  model::NameTable names;
  transport::BatchEncoder encoder;
  int64_t pid;
  uint64_t session;
  OfflineSender(int64_t p, uint64_t s) : encoder(names, s, p), pid(p), session(s) {}
  std::vector<uint8_t> hello() {
    transport::Hello h;
    h.session_id = session;
    h.process.pid = pid;
    h.process.command = "train";
    h.process.tier = model::CollectionTier::Cupti;
    model::DeviceInfo d;
    d.name = "NVIDIA A100-SXM4-80GB";
    h.devices.push_back(d);
    h.start_time = 5;
    return transport::encodeHello(h);
  }
  std::vector<uint8_t> batch(int kernels, uint64_t dropped = 0, bool final = false) {
    addKernels(names, encoder, kernels, 1000 * kMs);
    auto m = encoder.encode(dropped, final, 7 * kMs);
    encoder.confirm(true);
    return m;
  }
};

bool waitUntil(IngestServer& server, const std::function<bool(const IngestProgress&)>& cond) {
  return server.waitFor(cond, Clock::now() + 10s);
}

} // namespace

TEST_CASE("RateLimitedLog: one line per kind per interval, with the suppressed count") {
  std::vector<std::string> lines;
  RateLimitedLog log([&](std::string_view l) { lines.emplace_back(l); }, 5s);
  auto t0 = Clock::time_point{} + 100s;
  CHECK(log.log("malformed", "bad 1", t0));
  CHECK_FALSE(log.log("malformed", "bad 2", t0 + 1s));
  CHECK_FALSE(log.log("malformed", "bad 3", t0 + 4s));
  CHECK(log.log("bad_envelope", "foreign", t0 + 4s)); // another kind has its own budget
  CHECK(log.suppressed("malformed") == 2);
  CHECK(log.log("malformed", "bad 4", t0 + 5s));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "bad 1");
  CHECK(lines[2] == "bad 4 (2 similar suppressed)");
}

TEST_CASE("StreamRouter: Hello, batches, dropped counts, final and wall span") {
  StreamRouter router([](std::string_view) {});
  OfflineSender s(321, 99);
  router.route(s.hello());
  router.route(s.batch(3, 5));
  router.route(s.batch(2, 7, true));
  CHECK(router.progress().messages == 3);
  CHECK(router.progress().hellos == 1);
  CHECK(router.progress().batches == 2);
  CHECK(router.progress().events == 5);
  CHECK(router.progress().allFinal());
  IngestHealth health;
  auto t = router.take(&health);
  REQUIRE(t.processes.size() == 1);
  const auto& p = t.processes[0];
  CHECK(p.info.pid == 321);
  CHECK(p.info.command == "train");
  CHECK(p.info.tier == model::CollectionTier::Cupti);
  REQUIRE(p.devices.size() == 1);
  CHECK(p.devices[0].name == "NVIDIA A100-SXM4-80GB");
  CHECK(p.kernels.size() == 5);
  CHECK(p.names.get(p.kernels[0].name) == "_Z4gemmPKfS0_Pfi");
  CHECK(p.events_dropped == 12);
  CHECK(p.wall_start == 5);
  CHECK(p.wall_end == 7 * kMs);
  REQUIRE(health.streams.size() == 1);
  CHECK(health.streams[0]->hello_received);
  CHECK(health.streams[0]->final_received);
  CHECK(health.streams[0]->batches == 2);
  CHECK(health.streams[0]->lost_batches == 0);
  CHECK(health.messages == 3);
  CHECK(router.progress().streams == 0); // take() leaves the router empty
}

TEST_CASE("StreamRouter: a batch before its Hello opens a stream of unknown identity") {
  StreamRouter router([](std::string_view) {});
  OfflineSender s(77, 1234);
  auto hello = s.hello();
  router.route(s.batch(4));
  auto t = router.snapshot(nullptr);
  REQUIRE(t.processes.size() == 1);
  CHECK(t.processes[0].info.pid == 77);
  CHECK(t.processes[0].info.tier == model::CollectionTier::Unknown);
  CHECK(t.processes[0].info.tier_reason.find("no Hello") != std::string::npos);
  CHECK(t.processes[0].kernels.size() == 4);
  // The Hello arriving late fills in the identity; the events stay.
  router.route(hello);
  IngestHealth health;
  t = router.take(&health);
  REQUIRE(t.processes.size() == 1);
  CHECK(t.processes[0].info.command == "train");
  CHECK(t.processes[0].kernels.size() == 4);
  CHECK(health.streams[0]->hello_received);
}

TEST_CASE("StreamRouter: sequence gaps count as lost batches") {
  StreamRouter router([](std::string_view) {});
  OfflineSender s(5, 6);
  router.route(s.hello());
  auto b0 = s.batch(1);
  auto b1 = s.batch(1);
  auto b2 = s.batch(1);
  auto b3 = s.batch(1);
  auto b4 = s.batch(1);
  router.route(b0);
  router.route(b3); // 1 and 2 lost
  router.route(b4);
  IngestHealth health;
  router.take(&health);
  CHECK(health.streams[0]->batches == 3);
  CHECK(health.streams[0]->lost_batches == 2);
}

TEST_CASE("StreamRouter: events a sender delivered that never arrived count as lost in transit") {
  StreamRouter router([](std::string_view) {});
  OfflineSender s(5, 6);
  router.route(s.hello());
  auto b0 = s.batch(3);
  auto b1 = s.batch(5);
  auto b2 = s.batch(7);
  auto b3 = s.batch(11);
  addKernels(s.names, s.encoder, 13, 1000 * kMs);
  auto never_sent = s.encoder.encode(0, false, 7 * kMs);
  s.encoder.confirm(false); // the sender knows this one never left: counted as its own drop
  auto b5 = s.batch(17);
  router.route(b0);
  router.route(b2); // b1 has not arrived (yet)
  IngestHealth early;
  router.snapshot(&early);
  CHECK(early.streams[0]->events_lost == 5);
  router.route(b1); // a reconnect's leftovers arrive late: received, no longer lost
  router.route(b5); // b3 lost: a dropped connection took it; never_sent is not counted
  IngestHealth health;
  model::Trace t = router.take(&health);
  CHECK(health.streams[0]->events_lost == 11);
  // Sequence numbers never seen: b3's and never_sent's (b1 arrived late, and stopped counting).
  CHECK(early.streams[0]->lost_batches == 1);
  CHECK(health.streams[0]->lost_batches == 2);
  REQUIRE(t.processes.size() == 1);
  CHECK(t.processes[0].kernels.size() == 3 + 5 + 7 + 17);
  // The collection counts them among the dropped events of the process and of the job.
  CollectionResult c = analyzeCollection(t, &health);
  CHECK(c.events_lost == 11);
  REQUIRE(c.processes.size() == 1);
  CHECK(c.processes[0].events_dropped == t.processes[0].events_dropped + 11);
  CHECK(c.events_dropped == c.processes[0].events_dropped);
}

TEST_CASE(
    "StreamRouter: malformed and foreign messages are dropped, counted, logged; others carry on") {
  CapturedLog log;
  StreamRouter router(log.sink());
  OfflineSender a(1, 10), b(2, 20);
  router.route(a.hello());
  std::string foreign = "GET / HTTP/1.1\r\n\r\n";
  router.route(std::span(reinterpret_cast<const uint8_t*>(foreign.data()), foreign.size()));
  router.route(std::span(reinterpret_cast<const uint8_t*>(foreign.data()), foreign.size()));
  auto corrupt = a.batch(2);
  for (size_t i = corrupt.size() / 2; i < corrupt.size(); ++i)
    corrupt[i] ^= 0x5a;
  router.route(corrupt);
  router.route(std::span<const uint8_t>{});
  router.route(b.hello());
  router.route(b.batch(3, 0, true));
  router.route(a.batch(1, 0, true));
  CHECK(router.progress().rejected == 4);
  uint64_t rejected = 0;
  for (const auto& [reason, n] : router.rejectedByReason())
    rejected += n;
  CHECK(rejected == 4);
  CHECK(router.rejectedByReason().count("bad_envelope") == 1);
  CHECK(router.rejectedByReason().at("bad_envelope") >= 2);
  // Rate-limited: the two identical foreign messages in a row logged one line.
  CHECK(log.size() < 4);
  CHECK(log.size() >= 1);
  CHECK(log.lines[0].find("gpuwise advisor: dropped a message (bad_envelope)") == 0);
  IngestHealth health;
  auto t = router.take(&health);
  REQUIRE(t.processes.size() == 2);
  CHECK(t.processes[1].kernels.size() == 3);
  CHECK(health.streams[1]->final_received);
  // The corrupted batch is lost (a gap before the final batch) and the stream carries on. It
  // introduced the kernel signature the final batch's kernel refers to, so that one kernel is
  // undecodable: counted, not guessed.
  CHECK(health.streams[0]->final_received);
  CHECK(health.streams[0]->lost_batches == 1);
  CHECK(t.processes[0].kernels.empty());
  CHECK(health.streams[0]->undecodable_events == 1);
  CHECK(health.rejectedMessages() == 4);
}

TEST_CASE(
    "IngestServer over ipc: two processes at once, junk in between, the server keeps serving") {
  TempDir dir;
  CapturedLog log;
  IngestServer::Options o;
  o.endpoint = "ipc://" + dir.path + "/ingest";
  o.tee_path = dir.path + "/run.gwt";
  o.log = log.sink();
  std::string error;
  auto server = IngestServer::start(o, &error);
  REQUIRE(server);
  CHECK(server->endpoint() == o.endpoint);

  // Catch2's assertions are not thread-safe (ThreadSanitizer reports them): each sender thread
  // returns what went wrong, and the test thread checks it.
  auto sendProcess = [&](int64_t pid, uint64_t session, int batches) -> std::string {
    WireClient c(server->endpoint(), pid, session);
    if (!c.waitConnected()) return "not connected";
    if (!c.sendHello(c.makeHello())) return "hello not sent";
    for (int i = 0; i < batches; ++i) {
      addKernels(c.names(), c.encoder(), 5, (1000 + 100 * i) * kMs);
      if (i == 1) {
        // A foreign message, then a real one damaged in transit.
        std::vector<uint8_t> junk{'n', 'o', 't', ' ', 'o', 'u', 'r', 's'};
        if (!c.sendRaw(junk)) return "junk not sent";
        auto damaged = transport::encodeHello(c.makeHello());
        for (size_t b = damaged.size() / 2; b < damaged.size(); ++b)
          damaged[b] = 0xff;
        if (!c.sendRaw(damaged)) return "damaged hello not sent";
      }
      if (!c.sendBatch(2, i + 1 == batches, (1000 + 100 * i) * kMs))
        return "batch " + std::to_string(i) + " not sent";
    }
    return "";
  };
  std::string first_error, second_error;
  std::thread first([&] { first_error = sendProcess(1001, 0xaaa, 4); });
  std::thread second([&] { second_error = sendProcess(1002, 0xbbb, 3); });
  first.join();
  second.join();
  CHECK(first_error == "");
  CHECK(second_error == "");

  REQUIRE(
      waitUntil(*server, [](const IngestProgress& p) { return p.streams == 2 && p.allFinal(); }));
  auto p = server->progress();
  CHECK(p.rejected == 4);
  CHECK(p.events == 35);
  IngestHealth health;
  auto trace = server->take(&health);
  REQUIRE(trace.processes.size() == 2);
  size_t kernels = 0;
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    const auto& proc = trace.processes[i];
    kernels += proc.kernels.size();
    CHECK(proc.info.command == "fake_training --epochs 1");
    CHECK(proc.events_dropped == (proc.info.pid == 1001 ? 8u : 6u));
    CHECK(health.streams[i]->final_received);
    CHECK(health.streams[i]->lost_batches == 0);
  }
  CHECK(kernels == 35);
  CHECK(health.rejected_by_reason.at("bad_envelope") >= 2);
  CHECK(health.rejectedMessages() == 4);
  CHECK(log.size() >= 1);

  // The tee recorded every message, the junk included; replaying it gives the same trace.
  StreamRouter replay([](std::string_view) {});
  REQUIRE(replayGwt(o.tee_path, replay, &error));
  CHECK(replay.progress().messages == p.messages);
  CHECK(replay.progress().events == 35);
  CHECK(replay.progress().rejected == 4);
}

TEST_CASE("IngestServer over tcp loopback with an OS-chosen port; batch before Hello; gaps") {
  IngestServer::Options o;
  o.endpoint = "tcp://127.0.0.1:*";
  o.log = [](std::string_view) {};
  std::string error;
  auto server = IngestServer::start(o, &error);
  REQUIRE(server);
  CHECK(server->endpoint().rfind("tcp://127.0.0.1:", 0) == 0);
  CHECK(server->endpoint() != o.endpoint);

  WireClient c(server->endpoint(), 4040, 0xcafe);
  REQUIRE(c.waitConnected());
  // The advisor "restarted": this sender's Hello went to the previous one. Batches 0 and 2 get
  // through, 1 and 3 are lost.
  addKernels(c.names(), c.encoder(), 2, 1000 * kMs);
  auto b0 = c.encodeBatch(0, false, 1);
  addKernels(c.names(), c.encoder(), 2, 2000 * kMs);
  auto b1 = c.encodeBatch();
  addKernels(c.names(), c.encoder(), 2, 3000 * kMs);
  auto b2 = c.encodeBatch();
  auto b3 = c.encodeBatch();
  addKernels(c.names(), c.encoder(), 1, 4000 * kMs);
  auto b4 = c.encodeBatch(0, true, 2);
  (void)b1;
  (void)b3;
  REQUIRE(c.sendRaw(b0));
  REQUIRE(c.sendRaw(b2));
  REQUIRE(c.sendRaw(b4));
  REQUIRE(waitUntil(*server, [](const IngestProgress& p) { return p.allFinal(); }));
  IngestHealth health;
  auto trace = server->take(&health);
  REQUIRE(trace.processes.size() == 1);
  CHECK(trace.processes[0].info.pid == 4040);
  CHECK(trace.processes[0].info.tier == model::CollectionTier::Unknown);
  CHECK_FALSE(health.streams[0]->hello_received);
  CHECK(health.streams[0]->lost_batches == 2);
  CHECK(health.streams[0]->batches == 3);
  // Kernels of batches 0, 2 and 4 (names and signatures travel with the first use, and batch 1
  // carried none that batch 2 needed, since all share one signature introduced by batch 0).
  CHECK(trace.processes[0].kernels.size() == 5);
  auto analysis = analyzeJob(trace, {.wall_ns = std::nullopt, .ingest = &health});
  CHECK(analysis.collection.lost_batches == 2);
  CHECK_FALSE(analysis.collection.processes[0].stream->hello_received);
}

TEST_CASE("IngestServer reports a bad endpoint or tee path in one line") {
  std::string error;
  IngestServer::Options o;
  o.endpoint = "bogus://nowhere";
  CHECK_FALSE(IngestServer::start(o, &error));
  CHECK(error.find("bogus://nowhere") != std::string::npos);
  CHECK(error.find('\n') == std::string::npos);
  o.endpoint = "tcp://127.0.0.1:*";
  o.tee_path = "/nonexistent-dir/run.gwt";
  CHECK_FALSE(IngestServer::start(o, &error));
  CHECK(error.find("/nonexistent-dir/run.gwt") != std::string::npos);
}

TEST_CASE("IngestServer snapshot while running, waitFor gives up at its deadline") {
  IngestServer::Options o;
  o.endpoint = "tcp://127.0.0.1:*";
  std::string error;
  auto server = IngestServer::start(o, &error);
  REQUIRE(server);
  auto start = Clock::now();
  CHECK_FALSE(
      server->waitFor([](const IngestProgress& p) { return p.messages > 0; }, start + 50ms));
  CHECK(Clock::now() - start >= 50ms);
  WireClient c(server->endpoint(), 9, 9);
  REQUIRE(c.waitConnected());
  REQUIRE(c.sendHello(c.makeHello()));
  addKernels(c.names(), c.encoder(), 3, 1000 * kMs);
  REQUIRE(c.sendBatch());
  REQUIRE(waitUntil(*server, [](const IngestProgress& p) { return p.events == 3; }));
  auto snap = server->snapshot(nullptr);
  REQUIRE(snap.processes.size() == 1);
  CHECK(snap.processes[0].kernels.size() == 3);
  server->stop();
  server->stop(); // idempotent
}

TEST_CASE("StreamRouter: windows bound the records held and add up to the whole-trace analysis") {
  // Two routers fed the same messages: one keeps every record, one cuts a window every 64.
  StreamRouter whole([](std::string_view) {}, StreamRouter::kMaxStreams, 0);
  StreamRouter windowed([](std::string_view) {}, StreamRouter::kMaxStreams, 64);
  OfflineSender s(321, 99);
  auto both = [&](const std::vector<uint8_t>& m) {
    whole.route(m);
    windowed.route(m);
  };
  both(s.hello());
  constexpr int kBatches = 40, kPerBatch = 20;
  size_t most_held = 0;
  for (int b = 0; b < kBatches; ++b) {
    addKernels(s.names, s.encoder, kPerBatch, 1000 * kMs + b * kPerBatch * 10 * kMs);
    auto m = s.encoder.encode(b == 3 ? 4 : 0, b == kBatches - 1, (b + 8) * kMs);
    s.encoder.confirm(true);
    both(m);
    auto held = windowed.snapshot(nullptr);
    REQUIRE(held.processes.size() == 1);
    most_held = std::max(most_held, held.processes[0].eventCount());
  }
  CHECK(windowed.progress().windows >= 10);
  CHECK(most_held < 64 + kPerBatch);
  CHECK(windowed.progress().events == kBatches * kPerBatch);

  IngestHealth health;
  auto trace = whole.take(&health);
  AnalysisOptions ao;
  ao.ingest = &health;
  auto a = analyzeJob(trace, ao);
  auto w = windowed.analysis();
  CHECK(w.kernels.count == a.kernels.count);
  CHECK(w.kernels.total_ns == a.kernels.total_ns);
  REQUIRE(w.timeline.devices.size() == 1);
  CHECK(w.timeline.span_ns == a.timeline.span_ns);
  CHECK(w.timeline.busy_ns == a.timeline.busy_ns);
  CHECK(w.timeline.idle.ns == a.timeline.idle.ns);
  CHECK(w.timeline.idle.gaps == a.timeline.idle.gaps);
  CHECK(w.timeline.timed_kernels == a.timeline.timed_kernels);
  CHECK(w.collection.events == a.collection.events);
  CHECK(w.collection.events_dropped == 4);
  CHECK(w.collection.messages == a.collection.messages);
  REQUIRE(w.collection.processes.size() == 1);
  CHECK(w.collection.processes[0].stream->final_received);
  CHECK(w.collection.processes[0].stream->batches == kBatches);
  CHECK(w.wall_ns == a.wall_ns);
}

TEST_CASE("StreamRouter: aggregates kept for a /metrics refresh stand until the stream changes") {
  StreamRouter router([](std::string_view) {});
  OfflineSender a(11, 1), b(12, 2);
  router.route(a.hello());
  router.route(a.batch(5));
  router.route(b.hello());
  router.route(b.batch(3));
  // A refresh as IngestServer::streamAnalyses() makes one: copy, analyse, keep.
  auto refresh = [&] {
    std::vector<StreamAnalysis> out;
    std::vector<bool> analysed;
    std::optional<uint64_t> at;
    while (auto copy = router.copyStreamAfter(at, nullptr)) {
      at = copy->position;
      analysed.push_back(copy->live.has_value());
      const bool live = copy->live.has_value();
      const uint64_t version = copy->version;
      auto s = std::make_shared<const StreamAnalysis>(std::move(*copy).aggregates());
      out.push_back(*s);
      if (live) router.keepAggregates(*at, version, std::move(s));
    }
    return std::pair{out, analysed};
  };
  auto [first, first_analysed] = refresh();
  REQUIRE(first.size() == 2);
  CHECK(first_analysed == std::vector<bool>{true, true});
  CHECK(first[0].analysis.kernels.count == 5);
  CHECK(first[1].analysis.kernels.count == 3);

  // Nothing new: both come as kept, equal to what was computed.
  auto [second, second_analysed] = refresh();
  CHECK(second_analysed == std::vector<bool>{false, false});
  REQUIRE(second.size() == 2);
  CHECK(second[0].analysis.kernels.count == 5);
  CHECK(second[1].analysis.kernels.count == 3);
  CHECK(second[1].analysis.timeline.busy_ns == first[1].analysis.timeline.busy_ns);

  // A batch for the second stream: it alone is analysed again, with its new kernels.
  router.route(b.batch(4));
  auto [third, third_analysed] = refresh();
  CHECK(third_analysed == std::vector<bool>{false, true});
  REQUIRE(third.size() == 2);
  CHECK(third[0].analysis.kernels.count == 5);
  CHECK(third[1].analysis.kernels.count == 7);
  REQUIRE(third[1].analysis.collection.processes.size() == 1);
  CHECK(third[1].analysis.collection.processes[0].stream->batches == 2);

  // Aggregates computed from a copy the stream has moved on from are not kept.
  auto stale = router.copyStreamAfter(std::nullopt, nullptr);
  REQUIRE(stale);
  router.route(a.batch(2));
  router.keepAggregates(stale->position, stale->version,
                        std::make_shared<const StreamAnalysis>(std::move(*stale).aggregates()));
  auto [fourth, fourth_analysed] = refresh();
  CHECK(fourth_analysed == std::vector<bool>{true, false});
  CHECK(fourth[0].analysis.kernels.count == 7);
}
