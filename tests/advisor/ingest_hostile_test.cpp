// Ingest under hostile senders, over real ZeroMQ where the finding came through it: bloated Hellos
// (bounded at decode, merged in linear time), garbage from invented sessions (never takes a stream
// slot), more sessions than slots (quiet streams retire, their figures kept), and a memory budget
// the streams' records stay under (detail shed and counted).
#include "advisor/analysis/job_analysis.h"
#include "advisor/ingest/ingest_server.h"
#include "advisor/ingest/stream_router.h"
#include "tests/advisor/rss_probe.h"
#include "tests/advisor/subprocess.h"
#include "tests/advisor/wire_client.h"
#include "tests/sanitizer_env.h"
#include "transport/envelope.h"
#include "transport/schema/gpuwise_generated.h"

#include <catch2/catch.hpp>

#include <unistd.h>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr model::TimeNs kMs = 1'000'000;

// The Hello of the finding: 600 devices whose names are 64 KiB, and 64 KiB identity strings.
std::vector<uint8_t> bloatedHello(int64_t pid, uint64_t session) {
  transport::Hello h;
  h.session_id = session;
  h.process.pid = pid;
  h.process.host = std::string(transport::kMaxTextBytes, 'h');
  h.process.command = std::string(transport::kMaxTextBytes, 'c');
  for (uint32_t i = 0; i < 600; ++i) {
    model::DeviceInfo d;
    d.index = i;
    d.name = std::string(transport::kMaxTextBytes, char('a' + i % 26));
    h.devices.push_back(d);
  }
  return transport::encodeHello(h);
}

// A batch that passes the envelope and the FlatBuffers verifier but not the decoder's checks (a
// name with id 0): ~150 bytes, routed to a session nobody opened.
std::vector<uint8_t> malformedBatch(int64_t pid, uint64_t session) {
  flatbuffers::FlatBufferBuilder fbb;
  const uint8_t text[] = {'x'};
  auto name = wire::CreateNewName(fbb, 0, fbb.CreateVector(text, 1));
  auto names = fbb.CreateVector(std::vector{name});
  wire::BatchBuilder b(fbb);
  b.add_session_id(session);
  b.add_pid(pid);
  b.add_names(names);
  auto batch = b.Finish();
  wire::FinishMessageBuffer(
      fbb, wire::CreateMessage(fbb, transport::kProtocolVersion, wire::Body::Batch, batch.Union()));
  return transport::forgeEnvelope(transport::Codec::None, fbb.GetSize(),
                                  {fbb.GetBufferPointer(), fbb.GetSize()});
}

void addKernels(WireClient& c, int n, model::TimeNs t0) {
  auto id = c.names().intern("_Z4gemmPKfS0_Pfi");
  for (int i = 0; i < n; ++i) {
    model::KernelExec k;
    k.start = t0 + i * 10 * kMs;
    k.end = k.start + 5 * kMs;
    k.name = id;
    k.stream = 7;
    k.grid = {64, 1, 1};
    k.block = {128, 1, 1};
    c.encoder().add(k);
  }
}

// A well-behaved process: Hello, `batches` batches of 10 kernels, the last one final.
std::string sendWellBehaved(const std::string& endpoint, int64_t pid, uint64_t session,
                            int batches) {
  WireClient c(endpoint, pid, session);
  if (!c.waitConnected()) return "not connected";
  if (!c.sendHello(c.makeHello())) return "hello not sent";
  for (int i = 0; i < batches; ++i) {
    addKernels(c, 10, (1000 + 200 * i) * kMs);
    if (!c.sendBatch(0, i + 1 == batches, (1000 + 200 * i) * kMs)) return "batch not sent";
  }
  return "";
}

bool hasProcess(const JobAnalysis& a, int64_t pid, uint64_t kernels) {
  for (const auto& p : a.collection.processes)
    if (p.pid == pid && p.kernels == kernels) return true;
  return false;
}

// An ipc endpoint in a folder of its own, removed with it: ZeroMQ leaves the socket file behind.
struct IpcEndpoint {
  gpuwise::advisor::test::TempDir dir;
  std::string uri() const { return "ipc://" + dir.path + "/ingest"; }
};

} // namespace

TEST_CASE(
    "twelve bloated Hellos over ZeroMQ take little memory and time; a real process is reported") {
  IngestServer::Options o;
  const IpcEndpoint endpoint;
  o.endpoint = endpoint.uri();
  o.log = [](std::string_view) {};
  std::string error;
  auto server = IngestServer::start(o, &error);
  REQUIRE(server);
  const double peak_before = peakRssMiB(::getpid()).value_or(0);
  const auto t0 = Clock::now();
  {
    WireClient flood(server->endpoint(), 1, 1);
    REQUIRE(flood.waitConnected());
    for (uint64_t i = 0; i < 12; ++i) {
      auto hello = bloatedHello(int64_t(5000 + i), 0xb10a7 + i);
      CHECK(hello.size() < 64 * 1024); // 164 KB for all twelve in the finding
      REQUIRE(flood.sendRaw(hello));
    }
  }
  CHECK(sendWellBehaved(server->endpoint(), 4242, 0x4242, 3) == "");
  REQUIRE(server->waitFor(
      [](const IngestProgress& p) { return p.hellos == 13 && p.final_streams == 1; },
      Clock::now() + 60s));
  JobAnalysis a = server->analysis();
  server->stop();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const double peak_after = peakRssMiB(::getpid()).value_or(0);
  INFO("took " << seconds << " s; peak RSS " << peak_before << " -> " << peak_after << " MiB");
  CHECK(hasProcess(a, 4242, 30));
  CHECK(a.collection.processes.size() == 13);
  // Each Hello's 600 devices are cut to 64, its names to 256 bytes: 12 x 64 GPUs of one host.
  CHECK(a.collection.gpus.size() == 64 + 1); // the same 64 (host, index, name) in each
  for (const auto& g : a.collection.gpus)
    CHECK(g.info.name.size() <= 256);
  CHECK(a.collection.shed_by_reason["hello_fields_truncated"] >= 12);
  // Before: 4.6 GB and minutes (every device's 64 KiB name kept and compared with every other).
  CHECK(seconds < 30);
  if (!gpuwise::test::underSanitizer()) CHECK(peak_after - peak_before < 400);
}

TEST_CASE(
    "garbage from 5,000 invented sessions takes no stream slot; the real process is reported") {
  IngestServer::Options o;
  const IpcEndpoint endpoint;
  o.endpoint = endpoint.uri();
  o.log = [](std::string_view) {};
  std::string error;
  auto server = IngestServer::start(o, &error);
  REQUIRE(server);
  {
    WireClient flood(server->endpoint(), 1, 1);
    REQUIRE(flood.waitConnected());
    for (uint64_t i = 0; i < 5000; ++i)
      REQUIRE(flood.sendRaw(malformedBatch(int64_t(10000 + i), 0x5e55 + i)));
  }
  REQUIRE(server->waitFor([](const IngestProgress& p) { return p.rejected == 5000; },
                          Clock::now() + 60s));
  CHECK(sendWellBehaved(server->endpoint(), 4343, 0x4343, 2) == "");
  REQUIRE(server->waitFor([](const IngestProgress& p) { return p.final_streams == 1; },
                          Clock::now() + 30s));
  auto p = server->progress();
  CHECK(p.streams == 1);
  JobAnalysis a = server->analysis();
  CHECK(hasProcess(a, 4343, 20));
  CHECK(a.collection.rejected_by_reason["malformed"] == 5000);
  CHECK(a.collection.rejected_by_reason.count("too_many_streams") == 0);
}

TEST_CASE("StreamRouter: a full router retires its quietest stream for a Hello; figures are kept") {
  StreamRouter router([](std::string_view) {}, 4);
  router.setLiveLimits({});
  auto t = Clock::time_point{} + 100s;
  auto helloOf = [](int64_t pid) {
    transport::Hello h;
    h.session_id = uint64_t(pid);
    h.process.pid = pid;
    h.process.command = "p" + std::to_string(pid);
    return transport::encodeHello(h);
  };
  auto batchOf = [](int64_t pid, int kernels, bool final) {
    model::NameTable names;
    transport::BatchEncoder enc(names, uint64_t(pid), pid);
    auto id = names.intern("k");
    for (int i = 0; i < kernels; ++i) {
      model::KernelExec k;
      k.name = id;
      k.start = (i + 1) * kMs;
      k.end = k.start + kMs / 2;
      enc.add(k);
    }
    return enc.encode(0, final, 100 * kMs);
  };
  for (int64_t pid = 1; pid <= 4; ++pid) {
    router.route(helloOf(pid), t + std::chrono::milliseconds(pid));
    router.route(batchOf(pid, int(pid), false), t + std::chrono::milliseconds(pid));
  }
  CHECK(router.progress().live_streams == 4);
  // A headless batch of a new session finds no slot; a Hello retires pid 1 (quiet for longest).
  router.route(batchOf(9, 1, false), t + 10ms);
  CHECK(router.rejectedByReason().at("too_many_streams") == 1);
  router.route(helloOf(5), t + 11ms);
  CHECK(router.progress().live_streams == 4);
  CHECK(router.progress().streams == 5);
  // A finished stream quiet for 5 s retires by itself.
  router.route(batchOf(3, 0, true), t + 12ms);
  router.route(helloOf(6), t + 12ms + 6s);
  CHECK(router.progress().live_streams == 4); // 3 retired, 6 opened
  auto a = router.analysis();
  REQUIRE(a.collection.processes.size() == 6);
  for (int64_t pid = 1; pid <= 6; ++pid)
    CHECK(a.collection.processes[size_t(pid - 1)].pid == pid);
  CHECK(a.collection.processes[0].kernels == 1);
  CHECK(a.collection.processes[0].command == "p1");
  CHECK(a.collection.processes[2].kernels == 3);
  CHECK(a.kernels.count == 1 + 2 + 3 + 4);
  CHECK(router.streamAnalyses(nullptr).size() == 6);
}

TEST_CASE(
    "StreamRouter: streams' records stay within the memory budget; what was shed is counted") {
  constexpr size_t kBudget = 8u << 20;
  StreamRouter router([](std::string_view) {});
  StreamRouter::LiveLimits limits;
  limits.memory_budget_bytes = kBudget;
  router.setLiveLimits(limits);
  const auto t = Clock::time_point{} + 100s;
  std::vector<std::unique_ptr<model::NameTable>> names;
  std::vector<std::unique_ptr<transport::BatchEncoder>> encoders;
  for (int64_t pid = 1; pid <= 100; ++pid) {
    transport::Hello h;
    h.session_id = uint64_t(pid);
    h.process.pid = pid;
    router.route(transport::encodeHello(h), t);
    names.push_back(std::make_unique<model::NameTable>());
    encoders.push_back(
        std::make_unique<transport::BatchEncoder>(*names.back(), uint64_t(pid), pid));
  }
  size_t most_held = 0;
  for (int round = 0; round < 20; ++round) {
    for (size_t s = 0; s < encoders.size(); ++s) {
      auto id = names[s]->intern("kernel" + std::to_string(s));
      for (int i = 0; i < 2000; ++i) {
        model::KernelExec k;
        k.name = id;
        k.start = (round * 2000 + i + 1) * kMs;
        k.end = k.start + kMs / 2;
        encoders[s]->add(k);
      }
      router.route(encoders[s]->encode(0, round == 19, (round + 1) * 2000 * kMs), t);
      encoders[s]->confirm(true);
      most_held = std::max(most_held, router.progress().held_bytes);
    }
  }
  INFO("most held " << most_held << " bytes");
  // Within the budget, and one batch of slack (2,000 kernels) on top.
  CHECK(most_held <= kBudget + 2000 * sizeof(model::KernelExec));
  auto a = router.analysis();
  CHECK(a.collection.processes.size() == 100);
  const uint64_t shed = a.collection.shed_by_reason["events_over_memory_budget"];
  CHECK(a.kernels.count + shed == 100 * 20 * 2000);
  CHECK(a.collection.events_dropped == shed); // the report's dropped events include them
  CHECK(a.collection.shed_by_reason["windows_shrunk_for_memory_budget"] > 0);
}
