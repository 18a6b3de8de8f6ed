// The two memory curves of issue 7: `gpuwise run --simulate` (the in-process advisor) running
// long_run_app (the application, with the shim preloaded) for N launches; at every progress line
// the app prints, VmRSS of the application process and of the advisor is sampled. Shared by the
// bounded-memory test and the bench (tests/bench/advisor_memory_bench.cpp).
//
// Polls the app's output file for its progress lines (every few ms, with a deadline): no fixed
// sleeps. The caller's thread; blocks until the run ends or the deadline passes.
#pragma once

#include "tests/advisor/rss_probe.h"
#include "tests/advisor/subprocess.h"

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace gpuwise::advisor::test {

struct MemoryPoint {
  uint64_t launches = 0;
  double shim_mib = 0;    // the application process (the shim lives in it)
  double advisor_mib = 0; // gpuwise run: ingest, windows, analysis
};

struct MemoryCurve {
  std::vector<MemoryPoint> points;
  std::optional<int> status; // gpuwise run's exit status; nullopt at the deadline
  std::string err;           // its stderr (the report summary, or why it failed)
  // The point nearest to `fraction` of the run's launches.
  const MemoryPoint* at(double fraction, uint64_t launches) const {
    const MemoryPoint* best = nullptr;
    for (const auto& p : points) {
      double d = std::abs(double(p.launches) - fraction * double(launches));
      if (!best || d < std::abs(double(best->launches) - fraction * double(launches))) best = &p;
    }
    return best;
  }
};

inline MemoryCurve runMemoryCurve(const std::string& gpuwise, const std::string& app,
                                  uint64_t launches, uint64_t every, const TempDir& dir,
                                  std::chrono::seconds deadline) {
  MemoryCurve curve;
  Process run({gpuwise, "run", "--simulate", "--report-json", dir / "long_run.json", "--", app,
               "--launches", std::to_string(launches), "--every", std::to_string(every)},
              {}, dir.path, dir.path, "long_run");
  const std::string out = dir / "long_run.out";
  uint64_t seen = 0;
  std::optional<pid_t> app_pid;
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    if (!app_pid) app_pid = firstChild(run.pid());
    const uint64_t now = progressLaunches(out);
    if (now > seen && app_pid) {
      seen = now;
      auto shim = rssMiB(*app_pid), advisor = rssMiB(run.pid());
      if (shim && advisor) curve.points.push_back({now, *shim, *advisor});
    }
    if (auto st = run.wait(std::chrono::milliseconds(5))) {
      curve.status = st;
      break;
    }
  }
  if (!curve.status) curve.status = run.wait(std::chrono::milliseconds(1));
  curve.err = run.err();
  return curve;
}

} // namespace gpuwise::advisor::test
