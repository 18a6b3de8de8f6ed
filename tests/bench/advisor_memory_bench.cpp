// The two memory curves of a long live run (issue 7): `gpuwise run --simulate` over
// GPUWISE_BENCH_LAUNCHES launches (default 20M, ~40 s on the simulated device) of long_run_app,
// VmRSS of the application (with the shim) and of the advisor sampled every million launches.
// The curve is printed to stderr (kept in bench/results/advisor_memory_bench.log); the counters
// give the points at 25% and at the end.
#include "tests/advisor/memory_curve.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

using namespace gpuwise::advisor::test;

namespace {

uint64_t launchesWanted() {
  const char* v = std::getenv("GPUWISE_BENCH_LAUNCHES");
  return v && *v ? std::strtoull(v, nullptr, 10) : 20'000'000;
}

void BM_LongRunMemory(benchmark::State& state) {
  const uint64_t launches = launchesWanted();
  const std::string build = GPUWISE_BENCH_BUILD_DIR;
  for (auto _ : state) {
    TempDir dir;
    auto curve =
        runMemoryCurve(build + "/bin/gpuwise", build + "/tests/long_run_app", launches,
                       std::max<uint64_t>(launches / 20, 1), dir, std::chrono::seconds(900));
    if (curve.status != 0 || curve.points.empty()) {
      state.SkipWithError(("gpuwise run failed: " + curve.err).c_str());
      return;
    }
    std::fprintf(stderr, "%12s %14s %16s\n", "launches", "shim_rss_MiB", "advisor_rss_MiB");
    for (const auto& p : curve.points)
      std::fprintf(stderr, "%12llu %14.1f %16.1f\n", (unsigned long long)p.launches, p.shim_mib,
                   p.advisor_mib);
    const auto* q = curve.at(0.25, launches);
    const auto& e = curve.points.back();
    state.counters["launches"] = double(e.launches);
    state.counters["shim_MiB_25pct"] = q->shim_mib;
    state.counters["shim_MiB_end"] = e.shim_mib;
    state.counters["advisor_MiB_25pct"] = q->advisor_mib;
    state.counters["advisor_MiB_end"] = e.advisor_mib;
  }
}
BENCHMARK(BM_LongRunMemory)->Iterations(1)->Unit(benchmark::kSecond);

} // namespace

BENCHMARK_MAIN();
