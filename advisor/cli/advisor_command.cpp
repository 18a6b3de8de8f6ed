// gpuwise advisor: serve one endpoint until SIGINT/SIGTERM, then write the report (one per pod
// when several pods reached it).
//
// SIGINT and SIGTERM are blocked before any thread starts (so every thread inherits the mask and
// none of them is interrupted) and taken synchronously with sigwait() on the main thread.
#include "advisor/cli/commands.h"
#include "advisor/cli/locations.h"
#include "advisor/cli/report_output.h"
#include "advisor/cli/sidecar_report_name.h"
#include "advisor/ingest/ingest_server.h"
#include "advisor/metrics/exposition_builder.h"
#include "advisor/metrics/metrics_server.h"
#include "advisor/net/listen_address.h"
#include "profiler/model/expected.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

namespace gpuwise::advisor {

namespace {

Status checkMetricsAddress(const std::string& metrics_addr) {
  std::string host;
  int port = 0;
  if (!metrics_addr.empty() && !splitListenAddress(metrics_addr, &host, &port))
    return unexpected("--metrics-addr '" + metrics_addr +
                      "' is not HOST:PORT, [IPV6]:PORT or :PORT");
  return {};
}

// The value of environment variable `name`, empty when unset.
std::string environment(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// A sidecar's report directory is often a fresh volume path: create it, and fail now (not at the
// end of the job) when it cannot be created or written.
Status prepareReportDir(const std::string& report_dir) {
  std::error_code ec;
  std::filesystem::create_directories(report_dir, ec);
  if (!directoryExists(report_dir))
    return unexpected(report_dir + ": cannot create the report directory (--report-dir)" +
                      (ec ? ": " + ec.message() : ""));
  if (::access(report_dir.c_str(), W_OK) != 0)
    return unexpected(report_dir + ": the report directory is not writable (--report-dir)");
  return {};
}

// The ingest's memory budget in MiB: the flag, else the environment (a sidecar's manifest sets it
// beside the container's limit), else none (the default).
Expected<std::optional<uint64_t>> memoryBudgetMb(const AdvisorOptions& o) {
  std::optional<uint64_t> budget_mb = o.memory_budget_mb;
  if (!budget_mb) {
    if (const char* env = std::getenv("GPUWISE_MEMORY_BUDGET_MB"); env && *env) {
      char* end = nullptr;
      errno = 0;
      const unsigned long long v = std::strtoull(env, &end, 10);
      if (errno != 0 || *end != '\0' || v < 16 || v > (1ull << 30))
        return unexpected(std::string("GPUWISE_MEMORY_BUDGET_MB='") + env +
                          "' is not a number of MiB between 16 and 1073741824");
      budget_mb = v;
    }
  }
  return budget_mb;
}

// Waits for a stop signal, saying meanwhile when a process connects or finishes (its final batch
// arrived): operators see progress, and scripts know when the report will include a process.
void waitForStopSignal(const sigset_t& stop_signals, IngestServer& server, std::ostream& err) {
  size_t finished = 0, connected = 0;
  const timespec tick{0, 100'000'000};
  while (sigtimedwait(&stop_signals, nullptr, &tick) < 0) {
    auto p = server.progress();
    if (p.streams != connected) {
      connected = p.streams;
      logLine(err, "advisor",
              std::to_string(connected) + (connected == 1 ? " process" : " processes") +
                  " connected");
    }
    if (p.final_streams == finished) continue;
    finished = p.final_streams;
    logLine(err, "advisor",
            std::to_string(finished) + " of " + std::to_string(p.streams) +
                (p.streams == 1 ? " process" : " processes") + " finished, " +
                std::to_string(p.events) + " events");
  }
}

// What the advisor reports on: one analysis per pod, with what its report's name gets appended.
struct PodAnalysis {
  std::string suffix;
  JobAnalysis analysis;
};

// A sidecar serves one pod: one report, named as ever. An advisor several pods reached (a shared
// --endpoint) reports each apart, so no pod's report carries another's findings.
std::vector<PodAnalysis> podAnalyses(const IngestServer& server) {
  const std::vector<StreamRouter::PodKey> pods = server.pods();
  std::vector<PodAnalysis> out;
  if (pods.size() <= 1) {
    out.push_back({"", server.analysis()});
    return out;
  }
  for (const auto& pod : pods)
    out.push_back({podReportSuffix(pod.first, pod.second), server.analysis(pod)});
  return out;
}

// Writes each report (a failure is said and the others still written); false when one failed.
bool writeReports(std::vector<PodAnalysis>& reports, const AdvisorOptions& o, CliIo io) {
  bool ok = true;
  for (auto& [suffix, analysis] : reports) {
    analysis.source.kind = model::SourceKind::Live;
    std::filesystem::path dir(o.report_dir);
    std::vector<int32_t> ranks;
    for (const auto& p : analysis.collection.processes)
      ranks.push_back(p.rank);
    // gpuwise-report.json without a job name (sidecar_report_name.h).
    const std::string base = sidecarReportBaseName(sidecarJob(), ranks, sidecarRank()) + suffix;
    ReportTargets targets{(dir / (base + ".json")).string(),
                          (dir / (base + ".html")).string(),
                          {o.gpu_hour_price, o.energy_price}};
    targets.advice_floor = o.advice.floor;
    targets.gpu_type = o.advice.gpu_type;
    targets.verbose = o.advice.verbose;
    std::string error;
    if (!produceReport(analysis, targets, io.err, &error)) {
      logLine(io.err, "advisor", error);
      ok = false;
    }
  }
  return ok;
}

} // namespace

int advisorCommand(const AdvisorOptions& o, CliIo io) {
  auto fail = [&](const std::string& line) {
    logLine(io.err, "advisor", line);
    return kExitUsage;
  };
  if (o.listen.empty()) return fail("--listen ENDPOINT is required");
  if (Status checked = checkMetricsAddress(o.metrics_addr); !checked)
    return fail(checked.error().message);
  if (Status ready = prepareReportDir(o.report_dir); !ready) return fail(ready.error().message);
  const Expected<std::optional<uint64_t>> budget_mb = memoryBudgetMb(o);
  if (!budget_mb) return fail(budget_mb.error().message);

  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);

  std::string error;
  IngestServer::Options so;
  so.endpoint = o.listen;
  if (*budget_mb) so.memory_budget_bytes = size_t(**budget_mb) << 20;
  auto server = IngestServer::start(so, &error);
  if (!server) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return fail(error);
  }
  logLine(io.err, "advisor", "listening on " + server->endpoint());

  // The Prometheus endpoint: its refresh thread reads each stream's aggregates (each stream's open
  // window, at most a window of records, is copied under the ingest lock and analysed after it; the
  // ingest keeps windowing, so a days-long sidecar's memory stays bounded); scrapes only read the
  // latest text.
  std::unique_ptr<metrics::MetricsServer> metrics_server;
  if (!o.metrics_addr.empty()) {
    metrics::MetricsServer::Options mo;
    mo.address = o.metrics_addr;
    // A scrape waits for a fresher text at most a second (then gets the previous one): a busy
    // ingest (a flood of streams) makes refreshes slow, and scrapes must still answer promptly.
    mo.scrape_wait = std::chrono::milliseconds(1000);
    // The advisor's own pod (the webhook sets the sidecar's GPUWISE_POD and GPUWISE_NAMESPACE
    // from the downward API) labels its own series, and gpuwise_processes 0 before any process.
    metrics::AdvisorFigures own;
    own.ns = environment("GPUWISE_NAMESPACE");
    own.pod = environment("GPUWISE_POD");
    own.gpu_hour_price = o.gpu_hour_price; // the price the reports put on idle time, for the rules
    own.gpu_class_prices = o.advice.gpu_type.prices.by_class; // and --gpu-price, as the reports
    auto builder = std::make_shared<metrics::ExpositionBuilder>(own);
    IngestServer* ingest = server.get();
    // A process that did not say its job (its container lacks GPUWISE_JOB) is in the sidecar's.
    const std::string pod_job = sidecarJob();
    mo.produce = [ingest, builder, pod_job] {
      const IngestProgress progress = ingest->progress();
      metrics::JobFigures figures = metrics::buildMetricsInput(ingest->streamAnalyses(nullptr));
      for (auto& p : figures.processes)
        if (p.info.job.empty()) p.info.job = pod_job;
      metrics::AdvisorFigures a;
      a.batches = progress.batches;
      a.events = progress.events;
      a.bytes = progress.bytes;
      a.rejected = progress.rejected;
      return builder->build(figures, a);
    };
    std::ostream* log = &io.err;
    mo.log = [log](const std::string& line) { logLine(*log, "advisor", line); };
    metrics_server = metrics::MetricsServer::start(std::move(mo), &error);
    if (!metrics_server) {
      server.reset();
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      return fail(error);
    }
    logLine(io.err, "advisor",
            "metrics on http://" + o.metrics_addr + "/metrics (port " +
                std::to_string(metrics_server->port()) + ")");
  }

  waitForStopSignal(stop_signals, *server, io.err);

  // Scrapes keep working until the ingest stops, so Prometheus's last scrape sees the totals.
  if (metrics_server) metrics_server->stop();
  server->stop();
  std::vector<PodAnalysis> reports = podAnalyses(*server);
  server.reset();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return writeReports(reports, o, io) ? 0 : kExitUsage;
}

} // namespace gpuwise::advisor
