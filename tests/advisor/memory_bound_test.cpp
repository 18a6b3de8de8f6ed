// Bounded memory on a long live run (issue 7): `gpuwise run --simulate` over a few million
// launches of long_run_app. The advisor analyses the run window by window and keeps aggregates,
// so its RSS at the end is within a fixed margin of its RSS a quarter into the run; the
// application (with the shim) stays flat the same way. The whole curve is printed.
#include "tests/advisor/memory_curve.h"
#include "tests/sanitizer_env.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>

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
  REQUIRE(end.launches == kLaunches);
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
