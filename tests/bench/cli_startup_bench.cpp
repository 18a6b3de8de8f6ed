// How long `gpuwise` takes from exec to exit (issue 21's target: under 5 ms) for `gpuwise version`
// and for `gpuwise report` on a tiny Kineto trace (a 7 KB ROCm trace under tests/data/traces):
// posix_spawn of bin/gpuwise, waitpid, wall time; the median and p90 over every spawn, and the
// child's CPU time (user + system, RUSAGE_CHILDREN) per spawn. Most of that time is the dynamic
// loader's (the libraries bin/gpuwise links, their relocations) and static initialisers.
//
//   build/bench/cli_startup_bench
//   GPUWISE_BENCH_GPUWISE=../main/build/bin/gpuwise build/bench/cli_startup_bench   # another build
#include "tests/bench/quiet_child.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <spawn.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

// GPUWISE_BENCH_GPUWISE: another build's binary, to compare two in the same run.
const std::string kGpuwise = std::getenv("GPUWISE_BENCH_GPUWISE")
                                 ? std::getenv("GPUWISE_BENCH_GPUWISE")
                                 : GPUWISE_BENCH_BUILD_DIR "/bin/gpuwise";
const std::string kTinyTrace = GPUWISE_BENCH_SOURCE_DIR
    "/tests/data/traces/kineto/hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz";

double childCpuSeconds() {
  struct rusage ru {};
  getrusage(RUSAGE_CHILDREN, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

// Runs argv with stdout and stderr on /dev/null; its exit status, -1 when it could not start.
int spawnAndWait(const std::vector<std::string>& args) {
  return gpuwise::bench::runQuietChild(args, nullptr);
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

void timeCommand(benchmark::State& state, const std::vector<std::string>& args) {
  if (access(kGpuwise.c_str(), X_OK) != 0) {
    state.SkipWithError("bin/gpuwise is not built");
    return;
  }
  std::vector<double> ms;
  const double cpu0 = childCpuSeconds();
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const int status = spawnAndWait(args);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (status != 0) {
      state.SkipWithError("gpuwise failed");
      return;
    }
    state.SetIterationTime(s);
    ms.push_back(s * 1e3);
  }
  state.counters["median_ms"] = percentile(ms, 0.5);
  state.counters["p90_ms"] = percentile(ms, 0.9);
  state.counters["cpu_ms"] = (childCpuSeconds() - cpu0) * 1e3 / double(ms.size());
}

void BM_GpuwiseVersion(benchmark::State& state) {
  timeCommand(state, {kGpuwise, "version"});
}
BENCHMARK(BM_GpuwiseVersion)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(200);

void BM_GpuwiseReportTinyTrace(benchmark::State& state) {
  char dir[] = "/tmp/gpuwise-startup-XXXXXX";
  if (!mkdtemp(dir)) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  const std::string json = std::string(dir) + "/report.json";
  timeCommand(state, {kGpuwise, "report", kTinyTrace, "--json", json});
  std::remove(json.c_str());
  rmdir(dir);
}
BENCHMARK(BM_GpuwiseReportTinyTrace)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(100);

} // namespace

BENCHMARK_MAIN();
