// Imports every Chrome trace under $GPUWISE_TRACES_DIR/kineto (default ../shared/traces/kineto)
// and, in the same run, times Python loading the same files with json + gzip, the baseline the
// importer must beat 20x. Prints MB/s of uncompressed JSON, seconds, peak RSS against the
// largest uncompressed trace (the budget is 3x), and the speedup.
//
//   build/bench/import_kineto_bench                      # both, summary table at the end
//   GPUWISE_BENCH_SKIP_PYTHON=1 build/bench/import_kineto_bench --benchmark_repetitions=5
#include "tests/bench/kineto_corpus.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using gpuwise::advisor::importKineto;
using namespace gpuwise::bench;

namespace {

struct Results {
  double import_best_s = 0, import_sum_s = 0;
  double cpu_best_s = 0; // CPU time (all threads) of the pass with the least
  std::vector<double> walls, cpus;
  int import_runs = 0;
  PythonLoad python;
  long peak_rss_kb = 0;
} g_results;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void BM_ImportKinetoFolder(benchmark::State& state) {
  const KinetoCorpus& c = kinetoCorpus();
  if (c.files.empty()) {
    state.SkipWithError("no Kineto traces found; set GPUWISE_TRACES_DIR");
    return;
  }
  uint64_t events = 0;
  for (auto _ : state) {
    const double cpu0 = cpuSeconds(RUSAGE_SELF);
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& f : c.files) {
      auto r = importKineto({f});
      if (!r.ok()) state.SkipWithError(r.error.c_str());
      events += r.stats.events;
      benchmark::DoNotOptimize(r.trace.processes.data());
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpuSeconds(RUSAGE_SELF) - cpu0;
    state.SetIterationTime(s);
    g_results.cpu_best_s = g_results.import_runs ? std::min(g_results.cpu_best_s, cpu) : cpu;
    g_results.walls.push_back(s);
    g_results.cpus.push_back(cpu);
    g_results.import_best_s = g_results.import_runs ? std::min(g_results.import_best_s, s) : s;
    g_results.import_sum_s += s;
    ++g_results.import_runs;
  }
  state.SetBytesProcessed(int64_t(state.iterations() * c.json_bytes));
  state.counters["files"] = double(c.files.size());
  state.counters["json_MB"] = double(c.json_bytes) / 1e6;
  state.counters["events"] = benchmark::Counter(double(events), benchmark::Counter::kAvgIterations);
  state.counters["GB_per_cpu_s"] = double(c.json_bytes) / 1e9 / median(g_results.cpus);
  g_results.peak_rss_kb = peakRssKb();
  state.counters["peak_rss_MB"] = double(g_results.peak_rss_kb) / 1024.0;
}
BENCHMARK(BM_ImportKinetoFolder)->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(2.0);

// Python's json.load on the same files, in the same run (kineto_corpus.h).
void BM_PythonJsonLoad(benchmark::State& state) {
  g_results.python = timePythonJsonLoad(state);
}
BENCHMARK(BM_PythonJsonLoad)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  const KinetoCorpus& c = kinetoCorpus();
  if (!g_results.import_runs) return 0;
  const double best = g_results.import_best_s,
               mean = g_results.import_sum_s / g_results.import_runs;
  std::printf("\nKineto import, %zu Chrome traces under %s\n", c.files.size(),
              kinetoTracesDir().c_str());
  std::printf("  uncompressed JSON   %10.1f MB (%.1f MB as stored)\n", c.json_bytes / 1e6,
              c.input_bytes / 1e6);
  std::printf("  import              %10.3f s best, %.3f s mean of %d  ->  %.0f MB/s\n", best, mean,
              g_results.import_runs, c.json_bytes / 1e6 / best);
  const double wall_med = median(g_results.walls), cpu_med = median(g_results.cpus);
  std::printf("  import              %10.3f s median wall, %.3f s median CPU (all threads; best "
              "%.3f)  ->  %.2f GB/s, %.2f GB per CPU-second (target 1.2)\n",
              wall_med, cpu_med, g_results.cpu_best_s, c.json_bytes / 1e9 / wall_med,
              c.json_bytes / 1e9 / cpu_med);
  if (g_results.python.wall_s > 0)
    std::printf("  python json.load    %10.3f s  ->  importer %.1fx faster (target 20x)\n",
                g_results.python.wall_s, g_results.python.wall_s / best);
  std::printf("  peak RSS            %10.1f MB, largest trace %.1f MB (%s): %.2fx (budget 3x)\n",
              g_results.peak_rss_kb / 1024.0, c.largest_json / 1e6, c.largest_name.c_str(),
              g_results.peak_rss_kb * 1024.0 / double(c.largest_json));
  return 0;
}
