// The training job never pays for the advisor's troubles: an advisor killed and restarted mid-run
// (the shim reconnects, says Hello again, and the gap shows as counted drops), and an advisor that
// stops reading (SIGSTOP: the shim's queue reaches its high-water mark, batches are dropped and
// counted, and the application's launch time stays what it is with no advisor at all).
//
// The fault program runs in phases (--phases, --wait-dir): between phases it prints
// "gwfault phase=N done" and waits for a file the test creates once it has done its part.
#include "tests/e2e/e2e_support.h"
#include "tests/sanitizer_env.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <thread>

using namespace gpuwise::e2e;
using namespace std::chrono_literals;

namespace {

void touch(const std::string& path) {
  std::ofstream(path) << "go\n";
}

bool phaseDone(Process& p, int phase, std::chrono::milliseconds timeout = 60s) {
  return eventually(
      [&] { return contains(p.out(), "gwfault phase=" + std::to_string(phase) + " done"); },
      timeout);
}

// Waits for the program to exit cleanly and the advisor to take its final batch, then stops it.
void finishRun(Process& app, Advisor& advisor) {
  auto status = app.wait(120s);
  REQUIRE(status);
  CHECK(*status == 0);
  REQUIRE(advisor.finished(1));
  REQUIRE(advisor.stop());
}

// The report's entry for the run's one process.
json reportedProcess(const std::string& report_path, int64_t pid) {
  json report = readJson(report_path);
  REQUIRE(report.is_object());
  auto procs = processesWithPid(report, pid);
  REQUIRE(procs.size() == 1);
  return procs[0];
}

} // namespace

TEST_CASE("advisor killed and restarted mid-run: the shim reconnects and the gap is counted") {
  TempDir dir;
  const std::string endpoint = "ipc://" + (dir / "sock/advisor.sock");
  const long kPhase = 3000;
  auto first = std::make_unique<Advisor>(endpoint, dir / "reports1", dir.path, "advisor1");
  REQUIRE(first->listening());

  Process app(
      {faultApp(), "--kernels", std::to_string(kPhase), "--phases", "3", "--wait-dir", dir.path},
      shimEnv(endpoint), dir.path, dir.path, "app");
  REQUIRE(first->connected(1));
  REQUIRE(phaseDone(app, 1));
  // Phase 1 went to the first advisor; kill it (no report) and run phase 2 with nobody listening.
  ::kill(first->process().pid(), SIGKILL);
  REQUIRE(first->process().wait(10s));
  touch(dir / "go2");
  REQUIRE(phaseDone(app, 2));

  // A new advisor on the same endpoint: the shim's socket reconnects by itself and sends a Hello.
  Advisor second(endpoint, dir / "reports2", dir.path, "advisor2");
  REQUIRE(second.listening());
  REQUIRE(second.connected(1));
  touch(dir / "go3");
  auto status = app.wait(60s);
  REQUIRE(status);
  CHECK(*status == 0);
  REQUIRE(second.finished(1));
  auto stopped = second.stop();
  REQUIRE(stopped);
  CHECK(*stopped == 0);

  auto lines = faultLines(app.out());
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].kernels == 3 * kPhase);
  const json p = reportedProcess(dir / "reports2/gpuwise-report.json", lines[0].pid);
  INFO(p.dump());
  CHECK(p["hello_received"] == true); // the reconnection's Hello: identity known
  CHECK(p["command"].get<std::string>().find("e2e_fault_app") != std::string::npos);
  CHECK(p["final_received"] == true);
  // Phase 3 arrives whole; phase 2, sent to nobody, is counted as dropped (with the API calls
  // around the launches, hence at least); the batches the first advisor took are lost batches,
  // and their events, which the shim's socket accepted, are lost in transit and dropped: every
  // launch is accounted for.
  CHECK(p["kernel_count"].get<int64_t>() >= kPhase);
  CHECK(p["kernel_count"].get<int64_t>() < 3 * kPhase);
  CHECK(p["events_dropped"].get<int64_t>() >= kPhase);
  CHECK(p["lost_batches"].get<int64_t>() >= 1);
  CHECK(p["events_lost"].get<int64_t>() > 0);
  CHECK(p["events_lost"].get<int64_t>() <= p["events_dropped"].get<int64_t>());
  CHECK(p["kernel_count"].get<int64_t>() + p["events_dropped"].get<int64_t>() >= 3 * kPhase);
}

TEST_CASE("advisor stalled (SIGSTOP): drops are counted and the launch rate is unchanged") {
  // Launch time is compared as medians over one phase of many launches, against the same program
  // with the shim and no advisor, measured in this test. The bound is 2x plus 1 us: on a shared
  // 2-core machine the drain thread and ZeroMQ's I/O thread compete with the launching thread for
  // a core, which can stretch a median by tens of percent without the shim ever blocking; a
  // blocking send would instead cost milliseconds per batch and show as a median far above it.
  //
  // Phases: 1 connected; 2 advisor stopped (the queue fills to the high-water mark); 3 stopped,
  // sends dropped (measured); 4 advisor resumed (the next batch through carries the drop count).
  // The stall must stay inside the shim's ZeroMQ heartbeat timeout (6 s, push_sender.cpp): past
  // it the connection is dropped with the messages ZeroMQ had accepted (held 8 s, 1 of 2 runs
  // lost 14,111 kernels that way), which the report counts as events_lost rather than as drops at
  // the high-water mark, the behaviour this case is about. A sanitizer lane's phases of 100,000
  // launches ran past it on a loaded machine; there the phases are 30,000 launches, still enough to
  // fill the queue in phase 2 and drop in phase 3.
  const long kPhase = gpuwise::test::underSanitizer() ? 30000 : 100000;
  const std::vector<std::string> batches{"GPUWISE_BATCH_MS=2"};
  auto argsFor = [&](const TempDir& d) {
    return std::vector<std::string>{faultApp(), "--kernels",  std::to_string(kPhase),
                                    "--phases", "4",          "--measure-phase",
                                    "3",        "--wait-dir", d.path};
  };

  // Baseline: the shim with nobody listening; every phase starts at once.
  TempDir base_dir;
  for (const char* f : {"go2", "go3", "go4"})
    touch(base_dir / f);
  auto base_env = shimEnv("ipc://" + (base_dir / "nobody/advisor.sock"));
  base_env.insert(base_env.end(), batches.begin(), batches.end());
  Process base(argsFor(base_dir), base_env, base_dir.path, base_dir.path, "baseline");
  auto base_status = base.wait(120s);
  REQUIRE(base_status);
  REQUIRE(*base_status == 0);
  auto base_lines = faultLines(base.out());
  REQUIRE(base_lines.size() == 1);

  TempDir dir;
  const std::string endpoint = "ipc://" + (dir / "sock/advisor.sock");
  Advisor advisor(endpoint, dir / "reports", dir.path, "advisor");
  REQUIRE(advisor.listening());
  auto env = shimEnv(endpoint);
  env.insert(env.end(), batches.begin(), batches.end());
  Process app(argsFor(dir), env, dir.path, dir.path, "app");
  REQUIRE(advisor.connected(1));
  REQUIRE(phaseDone(app, 1));
  ::kill(advisor.process().pid(), SIGSTOP);
  touch(dir / "go2");
  REQUIRE(phaseDone(app, 2, 120s));
  touch(dir / "go3");
  REQUIRE(phaseDone(app, 3, 120s));
  ::kill(advisor.process().pid(), SIGCONT);
  touch(dir / "go4");
  finishRun(app, advisor);

  auto lines = faultLines(app.out());
  REQUIRE(lines.size() == 1);
  const int64_t base_ns = base_lines[0].median_launch_ns, stalled_ns = lines[0].median_launch_ns;
  INFO("median launch: no advisor " << base_ns << " ns, stalled advisor " << stalled_ns << " ns");
  CHECK(stalled_ns < 2 * base_ns + 1000);

  const json p = reportedProcess(dir / "reports/gpuwise-report.json", lines[0].pid);
  INFO(p.dump());
  // What the advisor and the shim said while they ran: the ASan lane once found 6,587 kernels
  // neither reported nor counted (with 115,507 undecodable), and had nothing more to go on; a
  // connection dropped past the heartbeat, which events_lost now counts.
  INFO("the advisor's stderr:\n"
       << advisor.process().err() << "the program's stderr:\n"
       << app.err());
  CHECK(p["final_received"] == true);
  CHECK(p["events_dropped"].get<int64_t>() > 0);
  CHECK(p["lost_batches"].get<int64_t>() > 0);
  CHECK(p["kernel_count"].get<int64_t>() < 4 * kPhase);
  // Every launch is accounted for: kernels that arrived, drops (in transit too), and kernels whose
  // signature went with a lost message (should the stall run past the heartbeat after all).
  CHECK(p["kernel_count"].get<int64_t>() + p["events_dropped"].get<int64_t>() +
            p["undecodable_events"].get<int64_t>() >=
        4 * kPhase);
  CHECK(p["events_lost"].get<int64_t>() <= p["events_dropped"].get<int64_t>());
  WARN("median launch: no advisor " << base_ns << " ns, stalled advisor " << stalled_ns << " ns");
}

TEST_CASE(
    "advisor stalled past the heartbeat timeout: what the dropped connection took is counted") {
  // ZeroMQ drops the shim's connection once the stopped advisor misses its heartbeats (6 s,
  // push_sender.cpp); the messages the socket had accepted go with it, and the kernels of later
  // messages whose signatures they introduced cannot be decoded. Each is counted: lost in transit
  // (events_lost, in events_dropped) or undecodable. Whether the drop happens within the hold
  // depends on the scheduler (held 9 s: 2 of 3 runs dropped it, losing 16,948 and 11,272 events,
  // which before events_delivered left the sum that far short); the accounting must hold either
  // way. The hold is the fault under test, so it is a sleep: nothing observable marks the
  // heartbeat's expiry in a stopped process.
  const long kPhase = gpuwise::test::underSanitizer() ? 30000 : 100000;
  TempDir dir;
  const std::string endpoint = "ipc://" + (dir / "sock/advisor.sock");
  Advisor advisor(endpoint, dir / "reports", dir.path, "advisor");
  REQUIRE(advisor.listening());
  auto env = shimEnv(endpoint);
  env.push_back("GPUWISE_BATCH_MS=2");
  Process app(
      {faultApp(), "--kernels", std::to_string(kPhase), "--phases", "3", "--wait-dir", dir.path},
      env, dir.path, dir.path, "app");
  REQUIRE(advisor.connected(1));
  REQUIRE(phaseDone(app, 1));
  ::kill(advisor.process().pid(), SIGSTOP);
  touch(dir / "go2");
  REQUIRE(phaseDone(app, 2, 120s));
  std::this_thread::sleep_for(9s);
  ::kill(advisor.process().pid(), SIGCONT);
  touch(dir / "go3");
  finishRun(app, advisor);

  auto lines = faultLines(app.out());
  REQUIRE(lines.size() == 1);
  const json p = reportedProcess(dir / "reports/gpuwise-report.json", lines[0].pid);
  INFO(p.dump());
  CHECK(p["final_received"] == true);
  const int64_t kernels = p["kernel_count"], dropped = p["events_dropped"],
                undecodable = p["undecodable_events"], lost = p["events_lost"];
  CHECK(lost <= dropped);
  CHECK(kernels + dropped + undecodable >= 3 * kPhase);
  WARN("held past the heartbeat: " << kernels << " kernels, " << dropped << " dropped (" << lost
                                   << " lost in transit), " << undecodable << " undecodable");
}
