// What `gpuwise report` costs on the whole real-trace folder: every Chrome trace under
// $GPUWISE_TRACES_DIR/kineto (default ../shared/traces/kineto) imported, analysed (analyzeJob) and
// run through the rules and turned into the JSON report, against Python merely loading the same
// files with json + gzip, in the same run. Issue 3's targets: at least 20x faster than Python, peak
// RSS under 3x the largest uncompressed trace. Files are processed one at a time, as `gpuwise
// report` does per invocation.
//
//   build/bench/advisor_kineto_folder_bench               # both, summary lines at the end
//   GPUWISE_BENCH_SKIP_PYTHON=1 build/bench/advisor_kineto_folder_bench
#include "advisor/analysis/job_analysis.h"
#include "advisor/report/report_json.h"
#include "advisor/rules/rule_set.h"
#include "tests/bench/kineto_corpus.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>

using namespace gpuwise::advisor;
using namespace gpuwise::bench;

namespace {

struct Results {
  double best_s = 0, sum_s = 0, import_s = 0, analyse_s = 0, cpu_s = 0;
  int runs = 0;
  PythonLoad python;
  long peak_rss_kb = 0;
} g;

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void BM_ReportKinetoFolder(benchmark::State& state) {
  const KinetoCorpus& c = kinetoCorpus();
  if (c.files.empty()) {
    state.SkipWithError("no Kineto traces found; set GPUWISE_TRACES_DIR");
    return;
  }
  for (auto _ : state) {
    double import_s = 0, analyse_s = 0;
    const double cpu0 = cpuSeconds(RUSAGE_SELF);
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto& f : c.files) {
      auto t1 = std::chrono::steady_clock::now();
      auto r = importKineto({f});
      import_s += since(t1);
      if (!r.ok()) state.SkipWithError(r.error.c_str());
      t1 = std::chrono::steady_clock::now();
      auto a = analyzeJob(r.trace);
      auto recs = recommend(a, &r.trace);
      auto report = buildReportJson({a, recs});
      analyse_s += since(t1);
      benchmark::DoNotOptimize(report);
    }
    const double s = since(t0);
    const double cpu = cpuSeconds(RUSAGE_SELF) - cpu0;
    state.SetIterationTime(s);
    if (!g.runs || cpu < g.cpu_s) g.cpu_s = cpu;
    if (!g.runs || s < g.best_s) {
      g.best_s = s;
      g.import_s = import_s;
      g.analyse_s = analyse_s;
    }
    g.sum_s += s;
    ++g.runs;
  }
  state.SetBytesProcessed(int64_t(state.iterations() * c.json_bytes));
  state.counters["files"] = double(c.files.size());
  g.peak_rss_kb = peakRssKb();
  state.counters["peak_rss_MB"] = double(g.peak_rss_kb) / 1024.0;
}
// Three passes, the best one reported: this host is shared, and one pass takes seconds.
BENCHMARK(BM_ReportKinetoFolder)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);

// Python's json.load on the same files, in the same run (kineto_corpus.h).
void BM_PythonJsonLoad(benchmark::State& state) {
  g.python = timePythonJsonLoad(state);
}
BENCHMARK(BM_PythonJsonLoad)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const KinetoCorpus& c = kinetoCorpus();
  if (!g.runs) return 0;
  std::printf("\ngpuwise report on %zu Chrome traces under %s (%.1f MB of JSON)\n", c.files.size(),
              kinetoTracesDir().c_str(), c.json_bytes / 1e6);
  std::printf("  import+analyse+report %8.3f s best (import %.3f s, analyse+report %.3f s), "
              "%.3f s mean of %d\n",
              g.best_s, g.import_s, g.analyse_s, g.sum_s / g.runs, g.runs);
  std::printf("  CPU time (all threads) %7.3f s best\n", g.cpu_s);
  if (g.python.wall_s > 0) {
    std::printf("  python json.load      %8.3f s  ->  gpuwise %.1fx faster (target 20x)\n",
                g.python.wall_s, g.python.wall_s / g.best_s);
    std::printf("  python CPU time       %8.3f s  ->  gpuwise %.1fx less CPU\n", g.python.cpu_s,
                g.python.cpu_s / g.cpu_s);
  }
  std::printf("  peak RSS              %8.1f MB, largest trace %.1f MB (%s): %.2fx (budget 3x)\n",
              g.peak_rss_kb / 1024.0, c.largest_json / 1e6, c.largest_name.c_str(),
              g.peak_rss_kb * 1024.0 / double(c.largest_json));
  return 0;
}
