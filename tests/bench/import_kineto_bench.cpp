// Imports every Chrome trace under $GPUWISE_TRACES_DIR/kineto (default ../shared/traces/kineto)
// and, in the same run, times Python loading the same files with json + gzip, the baseline the
// importer must beat 20x. Prints MB/s of uncompressed JSON, seconds, peak RSS against the
// largest uncompressed trace (the budget is 3x), and the speedup.
//
//   build/bench/import_kineto_bench                      # both, summary table at the end
//   GPUWISE_BENCH_SKIP_PYTHON=1 build/bench/import_kineto_bench --benchmark_repetitions=5
#include "advisor/import/kineto_importer.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <vector>

namespace fs = std::filesystem;
using gpuwise::advisor::importKineto;

namespace {

struct Corpus {
  std::vector<std::string> files; // the Chrome traces (files the importer refuses are left out)
  uint64_t json_bytes = 0;
  uint64_t input_bytes = 0;
  uint64_t largest_json = 0;
  std::string largest_name;
};

struct Results {
  double import_best_s = 0, import_sum_s = 0;
  int import_runs = 0;
  double python_s = -1;
  long peak_rss_kb = 0;
} g_results;

std::string tracesDir() {
  if (const char* d = std::getenv("GPUWISE_TRACES_DIR")) return std::string(d) + "/kineto";
  return std::string(GPUWISE_DEFAULT_TRACES_DIR) + "/kineto";
}

const Corpus& corpus() {
  static const Corpus c = [] {
    Corpus c;
    std::vector<std::string> all;
    if (fs::exists(tracesDir()))
      for (const auto& e : fs::recursive_directory_iterator(tracesDir()))
        if (e.is_regular_file()) all.push_back(e.path().string());
    std::sort(all.begin(), all.end());
    for (const auto& f : all) {
      const auto r = importKineto({f});
      if (!r.ok()) continue; // the execution trace and the memory timeline
      c.files.push_back(f);
      c.json_bytes += r.stats.json_bytes;
      c.input_bytes += r.stats.input_bytes;
      if (r.stats.json_bytes > c.largest_json) {
        c.largest_json = r.stats.json_bytes;
        c.largest_name = fs::path(f).filename().string();
      }
    }
    return c;
  }();
  return c;
}

long peakRssKb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

void BM_ImportKinetoFolder(benchmark::State& state) {
  const Corpus& c = corpus();
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

// python3 -c 'import json,gzip; [json.load(...) for f in FILES]' on the same files (gzip.open for
// the gzipped ones, open for the two plain ones), timed around the child process.
void BM_PythonJsonLoad(benchmark::State& state) {
  const Corpus& c = corpus();
  if (std::getenv("GPUWISE_BENCH_SKIP_PYTHON") || c.files.empty()) {
    state.SkipWithError("skipped (GPUWISE_BENCH_SKIP_PYTHON or no traces)");
    return;
  }
  const std::string list = fs::temp_directory_path() / "gpuwise_bench_files.txt";
  {
    std::ofstream out(list);
    for (const auto& f : c.files) out << f << "\n";
  }
  const std::string cmd =
      "python3 -c 'import json,gzip,sys\n"
      "files=open(sys.argv[1]).read().split()\n"
      "[json.load(gzip.open(f) if open(f,\"rb\").read(2)==b\"\\x1f\\x8b\" else open(f,\"rb\")) for f in files]' " +
      list;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = std::system(cmd.c_str());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (rc != 0) state.SkipWithError("python3 failed");
    state.SetIterationTime(s);
    g_results.python_s = s;
  }
  state.SetBytesProcessed(int64_t(state.iterations() * c.json_bytes));
  std::remove(list.c_str());
}
BENCHMARK(BM_PythonJsonLoad)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);

} // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  const Corpus& c = corpus();
  if (!g_results.import_runs) return 0;
  const double best = g_results.import_best_s, mean = g_results.import_sum_s / g_results.import_runs;
  std::printf("\nKineto import, %zu Chrome traces under %s\n", c.files.size(), tracesDir().c_str());
  std::printf("  uncompressed JSON   %10.1f MB (%.1f MB as stored)\n", c.json_bytes / 1e6, c.input_bytes / 1e6);
  std::printf("  import              %10.3f s best, %.3f s mean of %d  ->  %.0f MB/s\n", best, mean,
              g_results.import_runs, c.json_bytes / 1e6 / best);
  if (g_results.python_s > 0)
    std::printf("  python json.load    %10.3f s  ->  importer %.1fx faster (target 20x)\n", g_results.python_s,
                g_results.python_s / best);
  std::printf("  peak RSS            %10.1f MB, largest trace %.1f MB (%s): %.2fx (budget 3x)\n",
              g_results.peak_rss_kb / 1024.0, c.largest_json / 1e6, c.largest_name.c_str(),
              g_results.peak_rss_kb * 1024.0 / double(c.largest_json));
  return 0;
}
