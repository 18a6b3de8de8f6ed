// An advisor under a flood: `gpuwise advisor` (the sidecar's mode, with --metrics-addr and a
// memory budget) while 1,000 sessions send valid Hellos and large batches over real ZeroMQ. It
// stays within its budget (VmHWM, with a stated allowance), answers every /metrics scrape within
// 2 s, and reports a well-behaved process that ran during the flood with every one of its kernels.
// Loopback and ipc only; the flood is bounded in rounds and time, so the test stops by itself.
#include "tests/advisor/rss_probe.h"
#include "tests/advisor/subprocess.h"
#include "tests/advisor/wire_client.h"
#include "tests/sanitizer_env.h"

#include <catch2/catch.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <regex>
#include <thread>

using namespace gpuwise;
using namespace gpuwise::advisor::test;
using Clock = std::chrono::steady_clock;

namespace {

constexpr model::TimeNs kMs = 1'000'000;
constexpr int kFloodSessions = 1000;
constexpr int kFloodConnections = 4; // sessions share connections, as forks of a pod do
constexpr int kFloodKernelsPerBatch = 20'000;
constexpr int kFloodRounds = 3; // at most; the flood also stops after kFloodFor
constexpr auto kFloodFor = std::chrono::seconds(15);
constexpr uint64_t kBudgetMiB = 256;
// What the advisor holds beyond its records' budget: the program and its libraries (~40 MiB),
// ZeroMQ's queues (100 messages per connection), one message decoded at a time (up to 64 MiB),
// the aggregates of 1,000 streams and a /metrics exposition of 1,000 processes.
constexpr double kAllowanceMiB = 256;

// One connection's share of the flood: Hellos for its sessions, then rounds of large batches.
void flood(const std::string& endpoint, int connection, const std::atomic<bool>& stop,
           std::atomic<uint64_t>& sent) {
  WireClient sender(endpoint, 1, 1);
  if (!sender.waitConnected()) return;
  struct Session {
    std::unique_ptr<model::NameTable> names = std::make_unique<model::NameTable>();
    std::unique_ptr<transport::BatchEncoder> encoder;
  };
  std::vector<Session> sessions;
  for (int s = connection; s < kFloodSessions; s += kFloodConnections) {
    const int64_t pid = 100'000 + s;
    const uint64_t session = 0xf100d000 + uint64_t(s);
    transport::Hello h = sender.makeHello();
    h.session_id = session;
    h.process.pid = pid;
    h.process.command = "flood " + std::to_string(s);
    if (!sender.sendRaw(transport::encodeHello(h), std::chrono::seconds(5))) return;
    Session& ss = sessions.emplace_back();
    ss.encoder = std::make_unique<transport::BatchEncoder>(*ss.names, session, pid);
  }
  for (int round = 0; round < kFloodRounds && !stop; ++round) {
    for (size_t s = 0; s < sessions.size() && !stop; ++s) {
      auto& ss = sessions[s];
      const auto id = ss.names->intern("flood_kernel_" + std::to_string(s % 50));
      for (int i = 0; i < kFloodKernelsPerBatch; ++i) {
        model::KernelExec k;
        k.name = id;
        k.start = (model::TimeNs(round) * kFloodKernelsPerBatch + i + 1) * 10'000;
        k.end = k.start + 5'000;
        k.grid = {128, 1, 1};
        k.block = {256, 1, 1};
        ss.encoder->add(k);
      }
      auto bytes = ss.encoder->encode(0, false, 0);
      ss.encoder->confirm(true);
      if (sender.sendRaw(bytes, std::chrono::seconds(5))) ++sent;
    }
  }
}

// A well-behaved process: a batch of 100 kernels every 50 ms for 10 s, then its final batch.
// `error` says what could not be sent; `kernels` counts what was.
void sendLikeATrainingProcess(const std::string& endpoint, std::string& error, uint64_t& kernels) {
  WireClient c(endpoint, 4242, 0x4242);
  if (!c.waitConnected() || !c.sendHello(c.makeHello())) {
    error = "hello not sent";
    return;
  }
  const auto id = c.names().intern("real_gemm");
  const auto until = Clock::now() + std::chrono::seconds(10);
  for (int b = 0; Clock::now() < until; ++b) {
    for (int i = 0; i < 100; ++i) {
      model::KernelExec k;
      k.name = id;
      k.start = (model::TimeNs(b) * 100 + i + 1) * kMs;
      k.end = k.start + kMs / 2;
      c.encoder().add(k);
    }
    if (!c.sendBatch(0, false, (model::TimeNs(b) + 1) * 100 * kMs)) {
      error = "batch not sent";
      return;
    }
    kernels += 100;
    std::this_thread::sleep_for(std::chrono::milliseconds(50)); // the shim's batch interval
  }
  if (!c.sendBatch(0, true, 0)) error = "final batch not sent";
}

} // namespace

TEST_CASE(
    "an advisor under a flood from 1,000 streams keeps its budget, /metrics and the real process") {
  TempDir dir;
  const std::string gpuwise = buildDir() + "/bin/gpuwise";
  const std::string endpoint = "ipc://" + (dir / "advisor.sock");
  Process advisor({gpuwise, "advisor", "--listen", endpoint, "--report-dir", dir / "reports",
                   "--metrics-addr", "127.0.0.1:0", "--memory-budget-mb",
                   std::to_string(kBudgetMiB)},
                  {}, dir.path, dir.path, "advisor");
  const int port = announcedPort(advisor, "\\(port ([0-9]+)\\)");
  REQUIRE(port > 0);

  // /metrics, scraped all along with a 2 s deadline per scrape.
  std::atomic<bool> done{false};
  std::atomic<uint64_t> scrapes{0}, failed_scrapes{0};
  std::atomic<double> slowest{0};
  std::thread scraper([&] {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(2, 0);
    while (!done) {
      const auto t0 = Clock::now();
      auto r = c.Get("/metrics");
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (s > slowest) slowest = s;
      if (r && r->status == 200 && s <= 2.0)
        ++scrapes;
      else
        ++failed_scrapes;
      std::this_thread::sleep_for(std::chrono::milliseconds(100)); // a scrape interval, not a wait
    }
  });

  // The flood, and a well-behaved process sending a batch of 100 kernels every 50 ms meanwhile.
  std::atomic<bool> stop_flood{false};
  std::atomic<uint64_t> flood_batches{0};
  std::vector<std::thread> flooders;
  for (int c = 0; c < kFloodConnections; ++c)
    flooders.emplace_back([&, c] { flood(endpoint, c, stop_flood, flood_batches); });
  std::string real_error;
  uint64_t real_kernels = 0;
  std::thread real([&] { sendLikeATrainingProcess(endpoint, real_error, real_kernels); });
  const auto flood_until = Clock::now() + kFloodFor;
  real.join();
  while (Clock::now() < flood_until && flood_batches < uint64_t(kFloodRounds) * kFloodSessions)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop_flood = true;
  for (auto& t : flooders)
    t.join();

  // The real process's final batch gets through once the ingest has caught up with the backlog
  // (the advisor says so: "1 of N processes finished").
  const bool real_finished = eventually(
      [&] { return advisor.err().find("1 of ") != std::string::npos; }, std::chrono::seconds(60));
  const auto peak = peakRssMiB(advisor.pid());
  done = true;
  scraper.join();
  ::kill(advisor.pid(), SIGINT);
  const auto status = advisor.wait(std::chrono::seconds(60));
  INFO(advisor.err());
  REQUIRE(status == 0);
  CHECK(real_error == "");
  CHECK(real_finished);
  std::printf("flood: %llu batches of %d kernels from %d sessions; advisor VmHWM %.0f MiB (budget "
              "%llu MiB); %llu scrapes, %llu failed, slowest %.2f s\n",
              (unsigned long long)flood_batches.load(), kFloodKernelsPerBatch, kFloodSessions,
              peak.value_or(-1), (unsigned long long)kBudgetMiB, (unsigned long long)scrapes.load(),
              (unsigned long long)failed_scrapes.load(), slowest.load());
  CHECK(flood_batches > 0);
  CHECK(scrapes >= 5);
  CHECK(failed_scrapes == 0);
  REQUIRE(peak);
  if (gpuwise::test::underSanitizer())
    WARN("memory bound not checked under a sanitizer (its shadow memory counts in RSS)");
  else
    CHECK(*peak <= double(kBudgetMiB) + kAllowanceMiB);

  auto report = nlohmann::json::parse(readFile(dir / "reports/gpuwise-report.json"));
  bool found = false;
  for (const auto& p : report["processes"]) {
    if (p["pid"] != 4242) continue;
    found = true;
    CHECK(p["kernel_count"].get<uint64_t>() == real_kernels);
    CHECK(p["events_dropped"].get<uint64_t>() == 0);
  }
  CHECK(found);
  CHECK(report["processes"].size() >= 2);
  INFO(report["collection"].dump());
  REQUIRE(report["collection"].contains("shed_by_reason"));
  std::printf("shed: %s\n", report["collection"]["shed_by_reason"].dump().c_str());
}
