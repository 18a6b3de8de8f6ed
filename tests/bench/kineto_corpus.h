// What the two Kineto benchmarks share (import_kineto_bench: the importer alone;
// advisor_kineto_folder_bench: import + analysis + report): the folder of real traces, and the
// baseline both must beat 20x, Python's json.load on the same files, timed in the same run.
// Header-only; each benchmark is one executable.
#pragma once

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
#include <vector>

namespace gpuwise::bench {

struct KinetoCorpus {
  std::vector<std::string> files; // the Chrome traces (files the importer refuses are left out)
  uint64_t json_bytes = 0, input_bytes = 0, largest_json = 0;
  std::string largest_name;
};

// $GPUWISE_TRACES_DIR/kineto, default ../shared/traces/kineto (GPUWISE_DEFAULT_TRACES_DIR).
inline std::string kinetoTracesDir() {
  if (const char* d = std::getenv("GPUWISE_TRACES_DIR")) return std::string(d) + "/kineto";
  return std::string(GPUWISE_DEFAULT_TRACES_DIR) + "/kineto";
}

// Every file under the folder that imports (not the execution trace, the memory timeline or the
// README), sorted; imported once to measure it.
inline const KinetoCorpus& kinetoCorpus() {
  static const KinetoCorpus c = [] {
    namespace fs = std::filesystem;
    KinetoCorpus c;
    std::vector<std::string> all;
    if (fs::exists(kinetoTracesDir()))
      for (const auto& e : fs::recursive_directory_iterator(kinetoTracesDir()))
        if (e.is_regular_file() && e.path().filename() != "README.md") all.push_back(e.path());
    std::sort(all.begin(), all.end());
    for (const auto& f : all) {
      const auto r = advisor::importKineto({f});
      if (!r.ok()) continue;
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

// User + system CPU seconds of this process (RUSAGE_SELF, all threads) or of its waited-for
// children (RUSAGE_CHILDREN): on a shared, loaded host the wall clock also counts other users'
// work, the CPU time does not.
inline double cpuSeconds(int who) {
  struct rusage ru {};
  getrusage(who, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

inline long peakRssKb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

struct PythonLoad {
  double wall_s = -1, cpu_s = -1; // the last iteration's; -1 when skipped
};

// The body of a BM_PythonJsonLoad benchmark: python3 loading every corpus file with json
// (gzip.open for gzipped files), timed around the child process. Skipped with
// GPUWISE_BENCH_SKIP_PYTHON or without traces.
inline PythonLoad timePythonJsonLoad(benchmark::State& state) {
  PythonLoad out;
  const KinetoCorpus& c = kinetoCorpus();
  if (std::getenv("GPUWISE_BENCH_SKIP_PYTHON") || c.files.empty()) {
    state.SkipWithError("skipped (GPUWISE_BENCH_SKIP_PYTHON or no traces)");
    return out;
  }
  const std::string list =
      std::filesystem::temp_directory_path() / ("gpuwise_bench_files_" + std::to_string(getpid()));
  {
    std::ofstream f(list);
    for (const auto& file : c.files)
      f << file << "\n";
  }
  const std::string cmd =
      "python3 -c 'import json,gzip,sys\n"
      "files=open(sys.argv[1]).read().split()\n"
      "[json.load(gzip.open(f) if open(f,\"rb\").read(2)==b\"\\x1f\\x8b\" else open(f,\"rb\")) "
      "for f in files]' " +
      list;
  for (auto _ : state) {
    const double cpu0 = cpuSeconds(RUSAGE_CHILDREN);
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = std::system(cmd.c_str());
    out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.cpu_s = cpuSeconds(RUSAGE_CHILDREN) - cpu0;
    if (rc != 0) state.SkipWithError("python3 failed");
    state.SetIterationTime(out.wall_s);
  }
  state.SetBytesProcessed(int64_t(state.iterations() * c.json_bytes));
  std::remove(list.c_str());
  return out;
}

} // namespace gpuwise::bench
