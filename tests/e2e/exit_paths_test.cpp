// How a profiled process ends must not change how it ends: every exit path (exit, _exit, return
// from main, an uncaught exception), a signal arriving during the shim's final flush, exec, and a
// report destination that cannot be written. The fault program runs on the simulated device under
// `gpuwise run --simulate`; each case compares the exit status with the same program run without
// the shim, and the report's kernels with the kernels the program says it launched.
#include "tests/e2e/e2e_support.h"

#include <catch2/catch.hpp>

using namespace gpuwise::e2e;
using namespace std::chrono_literals;

namespace {

struct Run {
  int status = -1;
  std::string out, err;
  json report;
  double seconds = 0;
};

// `gpuwise run --simulate` around the fault program with `args`; the report goes to
// dir/report.json.
Run profiled(const TempDir& dir, const std::vector<std::string>& args,
             const std::vector<std::string>& env = {}, const std::string& tag = "run") {
  std::vector<std::string> command{faultApp()};
  command.insert(command.end(), args.begin(), args.end());
  const auto argv = gpuwise::advisor::test::simulatedRunArgv(dir, tag, command);
  auto t0 = std::chrono::steady_clock::now();
  Process p(argv, env, dir.path, dir.path, tag);
  auto status = p.wait(60s);
  Run r;
  REQUIRE(status); // no hang
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.status = *status;
  r.out = p.out();
  r.err = p.err();
  r.report = readJson(dir / (tag + ".json"));
  return r;
}

// The fault program on the simulated device without the shim: the exit status to expect.
int unprofiled(const TempDir& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv{faultApp()};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv, plainEnv(), dir.path, dir.path, "plain");
  auto status = p.wait(60s);
  REQUIRE(status);
  return *status;
}

} // namespace

TEST_CASE("exit, return from main: exit code unchanged and every kernel in the report") {
  for (std::string path : {"exit", "return"}) {
    DYNAMIC_SECTION("--exit " << path) {
      TempDir dir;
      std::vector<std::string> args{"--kernels", "3000", "--exit", path, "--exit-code", "3"};
      REQUIRE(unprofiled(dir, args) == 3);
      Run r = profiled(dir, args);
      INFO(r.err);
      CHECK(r.status == 3);
      auto lines = faultLines(r.out);
      REQUIRE(lines.size() == 1);
      REQUIRE(r.report.is_object());
      auto procs = processesWithPid(r.report, lines[0].pid);
      REQUIRE(procs.size() == 1);
      CHECK(procs[0]["kernel_count"] == 3000);
      CHECK(procs[0]["events_dropped"] == 0);
      CHECK(procs[0]["final_received"] == true);
      CHECK(procs[0]["lost_batches"] == 0);
      CHECK(procs[0]["events_lost"] == 0);
    }
  }
}

TEST_CASE("_exit and an uncaught exception: no hang, the status unchanged, the loss explained") {
  // Neither path runs exit handlers, so the shim cannot send its final batch: what the drain
  // thread sent before (every 5 ms here) arrives, the rest is lost, and the report says the final
  // batch never came (final_received false) rather than presenting a complete-looking process.
  for (std::string path : {"_exit", "throw"}) {
    DYNAMIC_SECTION("--exit " << path) {
      TempDir dir;
      std::vector<std::string> args{"--kernels", "20000", "--exit", path, "--exit-code", "5"};
      const int expected = unprofiled(dir, args);
      CHECK(expected == (path == "_exit" ? 5 : 128 + SIGABRT));
      Run r = profiled(dir, args, {"GPUWISE_BATCH_MS=5"});
      INFO(r.err);
      CHECK(r.status == expected);
      CHECK(r.seconds < 30);
      auto lines = faultLines(r.out);
      REQUIRE(lines.size() == 1);
      REQUIRE(r.report.is_object());
      auto procs = processesWithPid(r.report, lines[0].pid);
      REQUIRE(procs.size() <= 1);
      if (!procs.empty()) {
        CHECK(procs[0]["final_received"] == false);
        CHECK(procs[0]["kernel_count"].get<int64_t>() <= 20000);
      }
    }
  }
}

TEST_CASE("a signal during the final flush: default action ends the process at once; a handler "
          "that returns lets the flush finish") {
  SECTION("SIGTERM, default action") {
    TempDir dir;
    std::vector<std::string> args{"--kernels", "2000", "--flush-signal", "TERM"};
    REQUIRE(unprofiled(dir, args) == 128 + SIGTERM);
    Run r = profiled(dir, args);
    INFO(r.err);
    CHECK(r.status == 128 + SIGTERM);
    CHECK(r.seconds < 30);
    REQUIRE(r.report.is_object());
    CHECK(reportKernels(r.report) <= 2000);
  }
  SECTION("SIGINT with a handler that returns (as Python's does)") {
    TempDir dir;
    std::vector<std::string> args{"--kernels", "2000", "--flush-signal", "INT", "--ignore-signal"};
    REQUIRE(unprofiled(dir, args) == 0);
    Run r = profiled(dir, args);
    INFO(r.err);
    CHECK(r.status == 0);
    auto lines = faultLines(r.out);
    REQUIRE(lines.size() == 1);
    auto procs = processesWithPid(r.report, lines[0].pid);
    REQUIRE(procs.size() == 1);
    CHECK(procs[0]["kernel_count"] == 2000);
    CHECK(procs[0]["final_received"] == true);
  }
}

TEST_CASE("exec from a profiled process: both images are reported, each complete") {
  // exec runs no exit handler; the shim's exec hooks run the final flush first, so the old
  // image's session ends with its last batch (final_received) and the new image, which loads the
  // shim again, starts its own session under the same pid.
  TempDir dir;
  std::vector<std::string> args{"--kernels", "1500", "--exec"};
  REQUIRE(unprofiled(dir, args) == 0);
  Run r = profiled(dir, args);
  INFO(r.err);
  CHECK(r.status == 0);
  auto lines = faultLines(r.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].pid == lines[1].pid); // exec keeps the pid
  auto procs = processesWithPid(r.report, lines[0].pid);
  REQUIRE(procs.size() == 2); // one session per image
  CHECK(procs[0]["session_id"] != procs[1]["session_id"]);
  for (const auto& p : procs) {
    INFO(p.dump());
    CHECK(p["kernel_count"] == 1500);
    CHECK(p["events_dropped"] == 0);
    CHECK(p["final_received"] == true);
  }
}

TEST_CASE("the report cannot be written: one clear line, the job's exit code unchanged") {
  SECTION("an unwritable place") {
    TempDir dir;
    // /proc takes no new files, not even from root (tests may run as root, so no chmod).
    std::vector<std::string> argv{gpuwiseExe(),
                                  "run",
                                  "--simulate",
                                  "--report-json",
                                  "/proc/gpuwise-test/report.json",
                                  "--report-html",
                                  dir / "r.html",
                                  "--",
                                  faultApp(),
                                  "--kernels",
                                  "500",
                                  "--exit-code",
                                  "3"};
    Process p(argv, {}, dir.path, dir.path, "run");
    auto status = p.wait(60s);
    REQUIRE(status);
    CHECK(*status == 3);
    CHECK(faultLines(p.out()).size() == 1);
    std::string err = p.err();
    INFO(err);
    CHECK(contains(err, "/proc/gpuwise-test/report.json"));
  }
  SECTION("a full disk (a file size limit: writes fail as on a full volume)") {
    TempDir dir;
    std::string cmd = "ulimit -f 2; trap '' XFSZ; exec '" + gpuwiseExe() +
                      "' run --simulate --report-json '" + (dir / "r.json") + "' --report-html '" +
                      (dir / "r.html") + "' -- '" + faultApp() + "' --kernels 500 --exit-code 4";
    Process p({"/bin/bash", "-c", cmd}, {}, dir.path, dir.path, "run");
    auto status = p.wait(60s);
    REQUIRE(status);
    CHECK(*status == 4);
    CHECK(faultLines(p.out()).size() == 1);
    std::string err = p.err();
    INFO(err);
    CHECK(contains(err, dir / "r.json"));
    CHECK(readFile(dir / "r.json").size() <= 2048);
  }
  SECTION("the advisor's report directory cannot be created: refused at start") {
    TempDir dir;
    Process a({gpuwiseExe(), "advisor", "--listen", "ipc://" + (dir / "a.sock"), "--report-dir",
               "/proc/gpuwise-test/reports"},
              {}, dir.path, dir.path, "advisor");
    auto status = a.wait(20s);
    REQUIRE(status);
    CHECK(*status == 2);
    CHECK(contains(a.err(), "/proc/gpuwise-test/reports"));
  }
}
