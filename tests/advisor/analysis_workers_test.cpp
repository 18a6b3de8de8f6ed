// The offline analysis of a job spread over the cores (process_workers.h): the workers really run
// at once, a failing process's error reaches the caller, and the report of a many-process trace is
// byte for byte the serial one, whatever the number of workers.
#include "advisor/analysis/job_analysis.h"
#include "advisor/analysis/process_workers.h"
#include "advisor/import/kineto_importer.h"
#include "advisor/report/report_json.h"
#include "advisor/rules/rule_set.h"
#include "tests/traces_dir.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

using namespace gpuwise;
using namespace gpuwise::advisor;

TEST_CASE("analysis workers: one per core, never more than the processes, at least one") {
  CHECK(analysisWorkers(64, 4) == 4);
  CHECK(analysisWorkers(3, 16) == 3);
  CHECK(analysisWorkers(0, 0) == 1);
  CHECK(analysisWorkers(1, 0) == 1);
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  CHECK(analysisWorkers(1000, 0) == std::min<size_t>(cores, 1000));
}

TEST_CASE("analysis workers: two workers run two processes at the same time") {
  // Each of the first two tasks waits until the other has started: that finishes only when two
  // threads run them at once (a serial loop would wait out the whole budget and fail).
  std::mutex m;
  std::condition_variable cv;
  int started = 0;
  bool together = true;
  std::vector<std::thread::id> ran_on(2);
  runOnWorkers(2, 2, [&](size_t i) {
    std::unique_lock lock(m);
    ran_on[i] = std::this_thread::get_id();
    ++started;
    cv.notify_all();
    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return started == 2; }))
      together = false;
  });
  CHECK(together);
  CHECK(ran_on[0] != ran_on[1]);
}

TEST_CASE("analysis workers: every index runs once; the lowest failing index's error is thrown") {
  std::vector<std::atomic<int>> runs(100);
  runOnWorkers(runs.size(), 4, [&](size_t i) { ++runs[i]; });
  for (const auto& r : runs)
    CHECK(r.load() == 1);

  auto failing = [](size_t i) {
    if (i == 7 || i == 41) throw std::runtime_error("process " + std::to_string(i));
  };
  for (size_t workers : {1, 3, 8}) {
    try {
      runOnWorkers(64, workers, failing);
      FAIL("no exception");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "process 7");
    }
  }
}

TEST_CASE("analyzeJob: the report of a many-process trace is the same with 1, 3 or 8 workers") {
  // The smallest Kineto traces the tests have that import, as the processes of one trace: uneven
  // sizes, with and without GPUs and steps.
  std::vector<std::filesystem::path> files;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(test::realTracesDir() / "kineto"))
    if (e.is_regular_file() && e.path().string().ends_with(".json.gz")) files.push_back(e.path());
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return std::pair(std::filesystem::file_size(a), a) <
           std::pair(std::filesystem::file_size(b), b);
  });
  KinetoImportResult imported;
  for (const auto& f : files) {
    auto one = importKineto({f.string()});
    if (!one.ok()) continue;
    for (auto& p : one.trace.processes)
      imported.trace.processes.push_back(std::move(p));
    if (imported.trace.processes.size() >= 10) break;
  }
  if (imported.trace.processes.size() < 2) test::skipTest("fewer than two Kineto traces import");
  // Each process twice: more processes than workers, so workers take several each.
  const size_t n = imported.trace.processes.size();
  for (size_t i = 0; i < n; ++i)
    imported.trace.processes.push_back(imported.trace.processes[i]);
  const auto& trace = imported.trace;

  auto report = [&](unsigned workers) {
    AnalysisOptions options;
    options.workers = workers;
    const auto a = analyzeJob(trace, options);
    const auto recs = recommend(a, &trace);
    return buildReportJson({a, recs}).dump(1);
  };
  const std::string serial = report(1);
  CHECK(serial.find("\"steps\"") != std::string::npos);
  for (unsigned workers : {3u, 8u, 0u}) {
    INFO("workers " << workers);
    CHECK(report(workers) == serial);
  }
}
