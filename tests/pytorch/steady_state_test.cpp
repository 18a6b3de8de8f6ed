// Repeated runs of samples/pytorch/train.py's healthy variant under `gpuwise run --simulate`, and
// of the same loop with a 20% slower step (--batch-size 154 instead of 128: the simulated kernels'
// work scales with the batch):
//   - the warm-up (data-loader workers starting) is found and reported on its own, and is not
//     taken for an input-bound job: no recommendation at all on any healthy run;
//   - `gpuwise diff` between any two healthy runs exits 0 (within noise), and between a healthy
//     run and a slow one exits 1, every time.
// Runs per variant: GPUWISE_REPEAT_RUNS (default 10; a run takes about 1.5 s).
#include "tests/advisor/subprocess.h"
#include "tests/sanitizer_env.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iostream>

using namespace gpuwise::advisor::test;
using json = nlohmann::json;

namespace {

std::string python() {
  const char* p = std::getenv("GPUWISE_PYTHON");
  return p ? p : "/usr/bin/python3";
}

int repeatRuns() {
  const char* n = std::getenv("GPUWISE_REPEAT_RUNS");
  const int runs = n ? std::atoi(n) : 10;
  return runs >= 2 ? runs : 2;
}

const std::vector<std::string> kHealthy{"--amp", "bf16", "--pin-memory", "--num-workers", "4"};

// One run; returns the report's path (REQUIREs that the run and its report succeeded).
std::string runTrain(const TempDir& dir, const std::string& tag,
                     const std::vector<std::string>& extra) {
  const std::string report = dir / (tag + ".json");
  std::vector<std::string> cmd{buildDir() + "/bin/gpuwise",
                               "run",
                               "--simulate",
                               "--report-json",
                               report,
                               "--",
                               python(),
                               sourceDir() + "/samples/pytorch/train.py",
                               "--steps",
                               "60"};
  cmd.insert(cmd.end(), kHealthy.begin(), kHealthy.end());
  cmd.insert(cmd.end(), extra.begin(), extra.end());
  std::vector<std::string> env;
  gpuwise::test::withoutLeakChecks(env); // python (tests/sanitizer_env.h)
  Process p(cmd, env, dir.path, dir.path, tag);
  const int status = p.wait(std::chrono::seconds(300)).value_or(-1);
  INFO(tag << ": " << p.err());
  REQUIRE(status == 0);
  return report;
}

json load(const std::string& path) {
  return json::parse(readFile(path));
}

std::string ids(const json& report) {
  std::string s;
  for (const auto& r : report["recommendations"])
    s += r["id"].get<std::string>() + " ";
  return s.empty() ? "none" : s;
}

int diffStatus(const TempDir& dir, const std::string& base, const std::string& next,
               std::string* text) {
  Process p({buildDir() + "/bin/gpuwise", "diff", base, next}, {}, dir.path, dir.path, "diff");
  const int status = p.wait(std::chrono::seconds(60)).value_or(-1);
  *text = p.out();
  return status;
}

bool hasAdvice(const json& r) {
  return !r["recommendations"].empty();
}

double steadyMedian(const json& r) {
  return r["summary"]["steps"]["steady"]["p50_seconds"].get<double>();
}

} // namespace

TEST_CASE("repeated healthy train.py runs: warm-up apart, no advice, diff within noise; a "
          "20% slower step regresses every time") {
  TempDir dir;
  // Under a sanitizer the host runs several times slower than the simulated GPU, so the loop is
  // host-bound and its step time follows the host's speed from run to run (5.3 to 9.5 ms seen
  // in the ASan lane): the runs really differ, and that lane checks that each step is split and
  // each diff answers, not which way. Two runs are enough for that.
  const bool sanitized = gpuwise::test::underSanitizer();
  const int runs = sanitized ? 2 : repeatRuns();
  std::vector<std::string> healthy, slow;
  for (int i = 0; i < runs; ++i) {
    std::string path = runTrain(dir, "healthy" + std::to_string(i), {});
    // The simulated GPU's clock does not wait for a host that is descheduled, but the loader's
    // workers run on the host: on a machine loaded far past its cores they can miss their turns
    // often enough to starve a quarter of the steps, when the stall is no longer transient (a
    // few starved steps are a note). Such a run is run once more, with a line saying so; a
    // second run with advice fails the test below. (The simulated device does not model the
    // loader on its own clock.)
    if (const json first = load(path); hasAdvice(first) && !gpuwise::test::underSanitizer()) {
      WARN(path << ": " << ids(first) << "on a healthy run (host starved?); running it again");
      path = runTrain(dir, "healthy" + std::to_string(i) + "-again", {});
    }
    healthy.push_back(path);
    slow.push_back(runTrain(dir, "slow" + std::to_string(i), {"--batch-size", "154"}));
  }
  for (const auto& path : healthy) {
    const json r = load(path);
    const auto& steps = r["summary"]["steps"];
    std::cout << path << ": " << ids(r) << " steps " << steps["count"] << ", warm-up "
              << steps["warmup"]["count"] << " steps " << steps["warmup"]["seconds"]
              << " s (limiter " << steps["warmup"]["limiter"] << "), steady median "
              << steadyMedian(r) << " s, IQR/median " << steps["steady"]["iqr_ratio"]
              << ", input stall " << r["summary"]["input_stall_ratio"] << "\n";
    INFO(path << ": " << ids(r));
    // Under a sanitizer the host runs several times slower while the simulated GPU's clock does
    // not, so the loader can really starve it: that lane checks the warm-up split and the diff,
    // which read the simulated clock, and reports the advice without gating on it.
    // No recommendation at all: the healthy loop has nothing worth changing (a transient stall
    // of a starved host is a note, prefetch_input_rule.cpp).
    if (gpuwise::test::underSanitizer()) {
      if (hasAdvice(r)) WARN(path << ": " << ids(r) << "under a sanitizer (host slowed)");
    } else {
      CHECK(r["recommendations"].empty());
    }
    // At most a tenth of the steps are warm-up (step_analyzer.h), and the workers starting
    // always costs the first step or more.
    CHECK(steps["warmup"]["count"].get<int>() >= 1);
    CHECK(steps["warmup"]["count"].get<int>() <= steps["count"].get<int>() / 10);
    CHECK(steps["steady"]["count"].get<int>() + steps["warmup"]["count"].get<int>() ==
          steps["count"].get<int>());
  }
  std::string text;
  for (size_t i = 0; i < healthy.size(); ++i)
    for (size_t j = 0; j < healthy.size(); ++j) {
      if (i == j) continue;
      const int status = diffStatus(dir, healthy[i], healthy[j], &text);
      INFO("healthy " << i << " -> healthy " << j << "\n" << text);
      if (sanitized)
        CHECK((status == 0 || status == 1));
      else
        CHECK(status == 0);
    }
  for (size_t i = 0; i < healthy.size(); ++i) {
    // The plant itself: the slow loop's steady step is about 20% longer.
    const double ratio = steadyMedian(load(slow[i])) / steadyMedian(load(healthy[i]));
    std::cout << "slow " << i << " / healthy " << i << ": steady median x" << ratio << "\n";
    const int status = diffStatus(dir, healthy[i], slow[i], &text);
    INFO("healthy " << i << " -> slow " << i << " (x" << ratio << ")\n" << text);
    if (sanitized)
      CHECK((status == 0 || status == 1));
    else
      CHECK(status == 1);
  }
}
