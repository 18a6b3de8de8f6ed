// Bounded memory on a long live run (issue 7): `gpuwise run --simulate` over a few million
// launches of long_run_app. The advisor analyses the run window by window and keeps aggregates,
// so its RSS at the end is within a fixed margin of its RSS a quarter into the run; the
// application (with the shim) stays flat the same way. The whole curve is printed. The same run
// into the Kubernetes sidecar's mode, `gpuwise advisor --metrics-addr`, scraped all along: the
// exposition is built from the windows' aggregates, so the sidecar stays bounded too.
#include "tests/advisor/memory_curve.h"
#include "tests/advisor/metrics_parse.h"
#include "tests/sanitizer_env.h"

#include <catch2/catch.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <regex>
#include <thread>

using namespace gpuwise::advisor::test;

TEST_CASE("a long live run keeps the advisor's memory bounded and the shim's flat") {
  // Under a sanitizer lane RSS is mostly the sanitizer's own (shadow, quarantine): a shorter run
  // that still cuts several windows checks the windowed path for memory errors, not the curve.
  const bool sanitized = gpuwise::test::underSanitizer();
  const uint64_t kLaunches = sanitized ? 200'000 : 2'000'000, kEvery = sanitized ? 10'000 : 100'000;
  // What either process may grow by from 25% to the end of the run. Keeping every event would
  // grow the advisor by ~150 MiB over a million and a half launches.
  constexpr double kAdvisorMarginMiB = 96, kShimMarginMiB = 24;
  TempDir dir;
  auto curve = runMemoryCurve(buildDir() + "/bin/gpuwise", buildDir() + "/tests/long_run_app",
                              kLaunches, kEvery, dir, std::chrono::seconds(400));
  INFO(curve.err);
  REQUIRE(curve.status == 0);
  std::printf("%12s %14s %16s\n", "launches", "shim_rss_MiB", "advisor_rss_MiB");
  for (const auto& p : curve.points)
    std::printf("%12llu %14.1f %16.1f\n", (unsigned long long)p.launches, p.shim_mib,
                p.advisor_mib);
  REQUIRE(curve.points.size() >= 8);
  const auto* quarter = curve.at(0.25, kLaunches);
  const auto& end = curve.points.back();
  // The last sample is the last progress line the application printed while it still had an RSS
  // to read: the final line is often followed at once by its exit (seen under load: 1.9 M of
  // 2 M). That the run finished is what the exit status and the report's count say.
  REQUIRE(end.launches + kEvery >= kLaunches);
  if (sanitized) {
    WARN("memory bounds not checked under a sanitizer (its shadow memory counts in RSS)");
  } else {
    CHECK(end.advisor_mib <= quarter->advisor_mib + kAdvisorMarginMiB);
    CHECK(end.shim_mib <= quarter->shim_mib + kShimMarginMiB);
  }

  // The report still counts every launch.
  auto report = nlohmann::json::parse(readFile(dir / "long_run.json"));
  CHECK(report["summary"]["kernel_count"].get<uint64_t>() >= kLaunches);
}

TEST_CASE("the sidecar advisor scraped on /metrics during a long run keeps its memory bounded") {
  const bool sanitized = gpuwise::test::underSanitizer(); // as above: a shorter run, no RSS bound
  const uint64_t kLaunches = sanitized ? 200'000 : 2'000'000, kEvery = sanitized ? 10'000 : 100'000;
  // Measured: the sidecar at ~100-125 MiB a quarter in, ~155 MiB at the end (allocator arenas of
  // the ingest and refresh threads step up, then stay); when it kept every record (windowing off
  // with --metrics-addr), 365-560 MiB at the end.
  constexpr double kAdvisorMarginMiB = 96;
  TempDir dir;
  const std::string gpuwise = buildDir() + "/bin/gpuwise";
  const std::string endpoint = "ipc://" + (dir / "advisor.sock");
  Process advisor({gpuwise, "advisor", "--listen", endpoint, "--report-dir", dir / "reports",
                   "--metrics-addr", "127.0.0.1:0"},
                  {}, dir.path, dir.path, "advisor");
  const int port = announcedPort(advisor, "\\(port ([0-9]+)\\)");
  REQUIRE(port > 0);

  std::atomic<bool> done{false};
  std::atomic<uint64_t> scrapes{0};
  std::atomic<double> last_kernels{0};
  std::thread scraper([&] {
    httplib::Client c("127.0.0.1", port);
    while (!done.load()) {
      auto r = c.Get("/metrics");
      if (!r || r->status != 200) continue;
      ++scrapes;
      auto k = parseProm(r->body).find("gpuwise_kernels_total");
      if (k.size() == 1) last_kernels = k[0].value;
    }
  });

  Process run({gpuwise, "run", "--simulate", "--endpoint", endpoint, "--",
               buildDir() + "/tests/long_run_app", "--launches", std::to_string(kLaunches),
               "--every", std::to_string(kEvery)},
              {}, dir.path, dir.path, "long_run");
  std::vector<std::pair<uint64_t, double>> curve; // launches, advisor MiB
  uint64_t seen = 0;
  std::optional<int> status;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(400);
  while (!status && std::chrono::steady_clock::now() < until) {
    const uint64_t now = progressLaunches(dir / "long_run.out");
    if (now > seen) {
      seen = now;
      if (auto mib = rssMiB(advisor.pid())) curve.emplace_back(now, *mib);
    }
    status = run.wait(std::chrono::milliseconds(5));
  }
  // The last scrapes count every launch (the final batch has arrived).
  const bool counted = eventually([&] { return last_kernels.load() >= double(kLaunches); },
                                  std::chrono::seconds(60));
  const auto end_mib = rssMiB(advisor.pid());
  done = true;
  scraper.join();
  ::kill(advisor.pid(), SIGTERM);
  auto advisor_status = advisor.wait(std::chrono::seconds(60));

  INFO(run.err());
  INFO(advisor.err());
  REQUIRE(status == 0);
  REQUIRE(advisor_status == 0);
  std::printf("%12s %16s  (sidecar, %llu scrapes)\n", "launches", "advisor_rss_MiB",
              (unsigned long long)scrapes.load());
  for (const auto& [launches, mib] : curve)
    std::printf("%12llu %16.1f\n", (unsigned long long)launches, mib);
  CHECK(counted);
  CHECK(scrapes > 10);
  REQUIRE(curve.size() >= 8);
  REQUIRE(end_mib);
  // Against the highest sample of the first half, not one sample a quarter in: the sidecar's arenas
  // step up at moments of their own, and a single early sample taken before a step failed this
  // check about once in 15 runs. Growth without bound still fails it: keeping every record, the
  // sidecar ended at 365-560 MiB; growing evenly from ~100 MiB, that is 130-230 MiB in the second
  // half alone.
  double first_half = curve.front().second;
  for (const auto& [launches, mib] : curve)
    if (launches <= kLaunches / 2) first_half = std::max(first_half, mib);
  INFO("end " << *end_mib << " MiB, first half's highest " << first_half << " MiB");
  if (sanitized)
    WARN("memory bound not checked under a sanitizer (its shadow memory counts in RSS)");
  else
    CHECK(*end_mib <= first_half + kAdvisorMarginMiB);
  auto report = nlohmann::json::parse(readFile(dir / "reports/gpuwise-report.json"));
  CHECK(report["summary"]["kernel_count"].get<uint64_t>() >= kLaunches);
}
