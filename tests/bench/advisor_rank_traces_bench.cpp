// A distributed job at scale: the rank traces of one job analysed together, and the merge of many
// per-rank reports into one job report.
//
// BM_AnalyzeRankTraces/N   import + analyzeJob + rules + JSON report of N rank traces of one
//                          job, in process, as `gpuwise report DIR` does. The traces are written at
//                          setup from one real rank trace (HTA's sampled_rank-0, rank 0 of 128)
//                          with distributedInfo.rank / world_size rewritten to 0..N-1 of N.
// BM_AnalyzeJob/64/W       analyzeJob alone on the 64 imported ranks, W workers (1: serial, 0:
//                          one per core): the speedup of the per-process workers.
// BM_MergeRankReports/1024 `gpuwise report r0.json ... r1023.json` (a subprocess): 1,024 per-rank
//                          gpuwise.report/v1 reports, generated from the report of that rank
//                          trace with ranks[0].rank rewritten, merged into one job report.
//
// Peak memory is measured in a forked child (or the subprocess) doing one more run: its
// ru_maxrss, the peak of that one analysis, not of the benchmark's earlier ones.
//
//   build/bench/advisor_rank_traces_bench
#include "advisor/analysis/job_analysis.h"
#include "advisor/analysis/process_workers.h"
#include "advisor/report/report_json.h"
#include "advisor/rules/rule_set.h"
#include "tests/bench/kineto_corpus.h"
#include "tests/bench/quiet_child.h"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <regex>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

using namespace gpuwise::advisor;
using namespace gpuwise::bench;
namespace fs = std::filesystem;

namespace {

constexpr int kMaxRanks = 64;
constexpr int kReports = 1024;

std::string sourceTrace() {
  return kinetoTracesDir() + "/hta/trace_filter/sampled_rank-0.json.gz";
}

std::string readGzip(const std::string& path) {
  std::string out;
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return out;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;)
    out.append(buf, size_t(n));
  gzclose(f);
  return out;
}

bool writeGzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb1");
  if (!f) return false;
  const bool ok = gzwrite(f, text.data(), unsigned(text.size())) == int(text.size());
  return gzclose(f) == Z_OK && ok;
}

// A temporary folder, removed with everything in it when its owner goes (and not before: a move
// hands it over).
struct TempDir {
  fs::path path;
  TempDir() = default;
  TempDir(TempDir&& o) noexcept : path(std::exchange(o.path, {})) {}
  TempDir& operator=(TempDir&& o) noexcept {
    std::swap(path, o.path);
    return *this;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
  bool make(const char* prefix) {
    std::string tmpl = std::string("/tmp/") + prefix + "-XXXXXX";
    if (!mkdtemp(tmpl.data())) return false;
    path = tmpl;
    return true;
  }
};

// The job's folder of rank traces, written once: rank-0.json.gz ... rank-63.json.gz, each the
// source trace with its distributedInfo saying rank r of kMaxRanks. Empty when the source is
// missing.
struct RankTraces {
  TempDir dir;
  std::vector<std::string> files;
};

const RankTraces& rankTraces() {
  static const RankTraces traces = [] {
    RankTraces t;
    const std::string text = readGzip(sourceTrace());
    if (text.empty()) return t;
    if (!t.dir.make("gpuwise-rank-traces")) return t;
    const std::regex info(R"("distributedInfo"\s*:\s*\{[^}]*\})");
    for (int r = 0; r < kMaxRanks; ++r) {
      const std::string one = std::regex_replace(
          text, info,
          R"("distributedInfo": {"backend": "nccl", "rank": )" + std::to_string(r) +
              R"(, "world_size": )" + std::to_string(kMaxRanks) + "}",
          std::regex_constants::format_first_only);
      const std::string path = (t.dir.path / ("rank-" + std::to_string(r) + ".json.gz")).string();
      if (!writeGzip(path, one)) return RankTraces{};
      t.files.push_back(path);
    }
    return t;
  }();
  return traces;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The whole `gpuwise report` path on the first n ranks; the events imported.
uint64_t reportRanks(size_t n, double* import_s, double* analyse_s, std::string* error = nullptr) {
  const auto& t = rankTraces();
  std::vector<std::string> files(t.files.begin(), t.files.begin() + long(n));
  auto t0 = std::chrono::steady_clock::now();
  auto r = importKineto(files);
  if (import_s) *import_s = since(t0);
  if (!r.ok()) {
    if (error) *error = r.error;
    return 0;
  }
  t0 = std::chrono::steady_clock::now();
  auto a = analyzeJob(r.trace);
  auto recs = recommend(a, &r.trace);
  auto report = buildReportJson({a, recs}).dump();
  if (analyse_s) *analyse_s = since(t0);
  benchmark::DoNotOptimize(report);
  return r.stats.events;
}

// Peak RSS (MiB) of `work` run once in a forked child: that run's own peak.
template <typename F> double childPeakMiB(F work) {
  const pid_t pid = fork();
  if (pid == 0) {
    work();
    _exit(0);
  }
  int status = 0;
  struct rusage ru {};
  if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status)) return -1;
  return double(ru.ru_maxrss) / 1024.0;
}

void BM_AnalyzeRankTraces(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  if (rankTraces().files.size() < n) {
    state.SkipWithError(("no rank trace at " + sourceTrace() + "; set GPUWISE_TRACES_DIR").c_str());
    return;
  }
  uint64_t events = 0;
  double import_s = 0, analyse_s = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string error;
    events = reportRanks(n, &import_s, &analyse_s, &error);
    state.SetIterationTime(since(t0));
    if (events == 0) {
      state.SkipWithError(("the rank traces did not import: " + error).c_str());
      return;
    }
  }
  state.counters["ranks"] = double(n);
  state.counters["events/s"] =
      benchmark::Counter(double(events) * double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["import_ms"] = import_s * 1e3;
  state.counters["analyse_report_ms"] = analyse_s * 1e3;
  state.counters["peak_rss_MiB"] = childPeakMiB([n] { reportRanks(n, nullptr, nullptr); });
}
BENCHMARK(BM_AnalyzeRankTraces)
    ->Arg(1)
    ->Arg(8)
    ->Arg(kMaxRanks)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

void BM_AnalyzeJob(benchmark::State& state) {
  const size_t n = size_t(state.range(0));
  if (rankTraces().files.size() < n) {
    state.SkipWithError(("no rank trace at " + sourceTrace() + "; set GPUWISE_TRACES_DIR").c_str());
    return;
  }
  const auto& files = rankTraces().files;
  const auto r = importKineto({files.begin(), files.begin() + long(n)});
  if (!r.ok()) {
    state.SkipWithError(("the rank traces did not import: " + r.error).c_str());
    return;
  }
  AnalysisOptions options;
  options.workers = unsigned(state.range(1));
  for (auto _ : state)
    benchmark::DoNotOptimize(analyzeJob(r.trace, options));
  state.counters["workers"] = double(analysisWorkers(n, options.workers));
  state.counters["events/s"] = benchmark::Counter(
      double(r.stats.events) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AnalyzeJob)
    ->Args({kMaxRanks, 1})
    ->Args({kMaxRanks, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

std::string gpuwiseBinary() {
  return std::string(GPUWISE_BENCH_BUILD_DIR) + "/bin/gpuwise";
}

// Runs argv, output to /dev/null; its exit code (-1: not run) and peak RSS in MiB.
int runChild(const std::vector<std::string>& args, double* peak_mib) {
  struct rusage ru {};
  const int rc = gpuwise::bench::runQuietChild(args, &ru);
  if (peak_mib) *peak_mib = double(ru.ru_maxrss) / 1024.0;
  return rc;
}

// kReports per-rank reports, written once from `gpuwise report` on the source rank trace: each
// the same report with its rank set (ranks[0].rank, and the processes' rank and world size). Empty
// with a reason when the trace or the binary is missing.
struct RankReports {
  TempDir dir;
  std::vector<std::string> files;
  std::string why_not;
};

const RankReports& rankReports() {
  static const RankReports reports = [] {
    RankReports r;
    if (!fs::exists(sourceTrace()) || !fs::exists(gpuwiseBinary()) ||
        !r.dir.make("gpuwise-rank-reports")) {
      r.why_not = "no rank trace at " + sourceTrace() + " or no " + gpuwiseBinary();
      return r;
    }
    const std::string base = (r.dir.path / "base.json").string();
    if (runChild({gpuwiseBinary(), "report", "--json", base, sourceTrace()}, nullptr) != 0) {
      r.why_not = "gpuwise report failed on " + sourceTrace();
      return r;
    }
    std::ifstream in(base);
    auto report = nlohmann::ordered_json::parse(in, nullptr, false);
    fs::remove(base);
    if (report.is_discarded()) {
      r.why_not = "gpuwise report wrote no JSON";
      return r;
    }
    for (int rank = 0; rank < kReports; ++rank) {
      if (!report.contains("ranks") || !report["ranks"].is_array() || report["ranks"].empty())
        report["ranks"] = nlohmann::ordered_json::array({nlohmann::ordered_json::object()});
      report["ranks"][0]["rank"] = rank;
      if (report.contains("processes") && report["processes"].is_array())
        for (auto& p : report["processes"])
          if (p.is_object()) {
            if (p.contains("rank")) p["rank"] = rank;
            if (p.contains("world_size")) p["world_size"] = kReports;
          }
      const std::string path = (r.dir.path / ("rank-" + std::to_string(rank) + ".json")).string();
      std::ofstream(path) << report.dump(1);
      r.files.push_back(path);
    }
    return r;
  }();
  return reports;
}

void BM_MergeRankReports(benchmark::State& state) {
  const auto& reports = rankReports();
  if (reports.files.empty()) {
    state.SkipWithError(reports.why_not.c_str());
    return;
  }
  const std::string out = (reports.dir.path / "job.json").string();
  std::vector<std::string> args{gpuwiseBinary(), "report", "--json", out};
  args.insert(args.end(), reports.files.begin(), reports.files.end());
  double peak_mib = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const int rc = runChild(args, &peak_mib);
    state.SetIterationTime(since(t0));
    if (rc != 0) {
      state.SkipWithError(("gpuwise report on " + std::to_string(kReports) +
                           " per-rank reports exited " + std::to_string(rc) +
                           ": the report merge is not in this build")
                              .c_str());
      return;
    }
  }
  std::ifstream in(out);
  const auto job = nlohmann::json::parse(in, nullptr, false);
  const size_t ranks = job.is_object() && job.contains("ranks") ? job["ranks"].size() : 0;
  if (ranks != size_t(kReports)) {
    state.SkipWithError(("the merged report has " + std::to_string(ranks) + " ranks, not " +
                         std::to_string(kReports) + ": the report merge is not in this build")
                            .c_str());
    return;
  }
  state.counters["reports"] = double(kReports);
  state.counters["peak_rss_MiB"] = peak_mib;
}
BENCHMARK(BM_MergeRankReports)
    ->Arg(kReports)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(1)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);

} // namespace

BENCHMARK_MAIN();
