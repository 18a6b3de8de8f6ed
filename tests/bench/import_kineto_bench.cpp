// Imports every Chrome trace under $GPUWISE_TRACES_DIR/kineto (default ../shared/traces/kineto)
// and, in the same run, times Python loading the same files with json + gzip, the baseline the
// importer must beat 20x. Prints MB/s of uncompressed JSON, seconds, peak RSS against the
// largest uncompressed trace (the budget is 3x), and the speedup.
//
//   build/bench/import_kineto_bench                      # both, summary table at the end
//   GPUWISE_BENCH_SKIP_PYTHON=1 build/bench/import_kineto_bench --benchmark_repetitions=5
#include "tests/bench/kineto_corpus.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>

using gpuwise::advisor::importKineto;
using namespace gpuwise::bench;

namespace {

struct Results {
  double import_best_s = 0, import_sum_s = 0;
  int import_runs = 0;
  PythonLoad python;
  long peak_rss_kb = 0;
} g_results;

void BM_ImportKinetoFolder(benchmark::State& state) {
  const KinetoCorpus& c = kinetoCorpus();
  if (c.files.empty()) {
    state.SkipWithError("no Kineto traces found; set GPUWISE_TRACES_DIR");
    return;
  }
  uint64_t events = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& f : c.files) {
      auto r = importKineto({f});
      if (!r.ok()) state.SkipWithError(r.error.c_str());
      events += r.stats.events;
      benchmark::DoNotOptimize(r.trace.processes.data());
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(s);
    g_results.import_best_s = g_results.import_runs ? std::min(g_results.import_best_s, s) : s;
    g_results.import_sum_s += s;
    ++g_results.import_runs;
  }
  state.SetBytesProcessed(int64_t(state.iterations() * c.json_bytes));
  state.counters["files"] = double(c.files.size());
  state.counters["json_MB"] = double(c.json_bytes) / 1e6;
  state.counters["events"] = benchmark::Counter(double(events), benchmark::Counter::kAvgIterations);
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
  if (g_results.python.wall_s > 0)
    std::printf("  python json.load    %10.3f s  ->  importer %.1fx faster (target 20x)\n",
                g_results.python.wall_s, g_results.python.wall_s / best);
  std::printf("  peak RSS            %10.1f MB, largest trace %.1f MB (%s): %.2fx (budget 3x)\n",
              g_results.peak_rss_kb / 1024.0, c.largest_json / 1e6, c.largest_name.c_str(),
              g_results.peak_rss_kb * 1024.0 / double(c.largest_json));
  return 0;
}
