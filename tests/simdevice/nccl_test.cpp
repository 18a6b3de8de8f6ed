// The stand-in NCCL across real processes (tools/nccl_probe.cpp is one rank): a collective ends
// at the same moment on every rank, when the last rank arrived plus its transfer time; a late
// rank makes the others' collective kernels long by its lateness; a rank that never arrives makes
// the others fail with ncclSystemError after the bounded wait, never hang.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/simdevice/test_support.h"

namespace {

using gwsim_test::buildDir;
using gwsim_test::ProcessResult;
using gwsim_test::runProcess;

const std::string kProbe = buildDir() + "/tests/simdevice_nccl_probe";
constexpr long long kCount = 4 << 20; // floats: 16 MiB per rank

struct RankRun {
  ProcessResult process;
  std::map<std::string, std::string> values; // the `probe rank=` line
  long long start = 0, end = 0, issued = 0;
};

std::string idFile() {
  static int n = 0;
  return "/tmp/gwsim-nccl-test-" + std::to_string(getpid()) + "-" + std::to_string(++n);
}

// Runs one probe per mode (rank i gets modes[i] and delays[i]) at once; waits for all of them.
std::vector<RankRun> runJob(const std::vector<std::string>& modes, const std::vector<int>& delays,
                            const std::vector<std::string>& env = {}, int ranks = -1) {
  const std::string id = idFile();
  const int n = ranks > 0 ? ranks : int(modes.size());
  std::vector<std::string> environment = {"GWSIM_NCCL_BUS_GBPS=100", "GWSIM_JITTER_PCT=0"};
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<std::future<ProcessResult>> running;
  for (size_t r = 0; r < modes.size(); ++r) {
    std::vector<std::string> argv = {kProbe,   std::to_string(r),         std::to_string(n),     id,
                                     modes[r], std::to_string(delays[r]), std::to_string(kCount)};
    running.push_back(std::async(std::launch::async, [argv, environment] {
      return runProcess(argv, environment, std::chrono::seconds(120));
    }));
  }
  std::vector<RankRun> out;
  for (auto& f : running) {
    RankRun run;
    run.process = f.get();
    const std::string line = gwsim_test::lastLineStartingWith(run.process.out, "probe rank=");
    if (!line.empty()) {
      run.values = gwsim_test::parseKeyValues(line);
      run.start = std::stoll(run.values.at("start"));
      run.end = std::stoll(run.values.at("end"));
      run.issued = std::stoll(run.values.at("issued"));
    }
    out.push_back(run);
  }
  std::remove(id.c_str());
  return out;
}

// Ring all-reduce on n ranks: 6 us + 2(n-1)/n x bytes at 100 GB/s (tests/simdevice/nccl).
long long allReduceNs(int n) {
  return 6'000 + (long long)(2.0 * (n - 1) / n * double(kCount * 4) / 100.0);
}

void requireClean(const std::vector<RankRun>& runs) {
  for (const RankRun& r : runs) {
    INFO("stdout: " << r.process.out << "\nstderr: " << r.process.err);
    REQUIRE(r.process.exit_code == 0);
    REQUIRE(r.values.at("allreduce") == "0");
    REQUIRE(r.values.at("async") == "0");
    REQUIRE(r.values.at("name") ==
            "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE");
  }
}

} // namespace

TEST_CASE("an all-reduce ends at the same moment on every rank: last arrival plus transfer") {
  const auto runs = runJob({"allreduce", "allreduce", "allreduce"}, {0, 0, 0});
  requireClean(runs);
  long long last_start = 0;
  for (const RankRun& r : runs) {
    last_start = std::max(last_start, r.start);
    CHECK(r.start >= r.issued); // a kernel starts after its launch
  }
  for (const RankRun& r : runs) {
    CHECK(r.end == runs[0].end); // the same formula on the same published arrivals
    CHECK(r.end == last_start + allReduceNs(3));
  }
}

TEST_CASE("a rank 50 ms late makes the other ranks' collective kernels about 50 ms long") {
  const auto runs = runJob({"allreduce", "allreduce"}, {0, 50});
  requireClean(runs);
  const double early_ms = double(runs[0].end - runs[0].start) / 1e6;
  const double late_ms = double(runs[1].end - runs[1].start) / 1e6;
  INFO("early rank's kernel " << early_ms << " ms, late rank's " << late_ms << " ms");
  CHECK(runs[0].end == runs[1].end);
  CHECK(runs[1].end - runs[1].start == allReduceNs(2)); // the late rank waits for nobody
  // The ranks leave ncclCommInitRank together; on a loaded machine one may leave it a little late.
  CHECK(early_ms >= 48.0);
  CHECK(early_ms <= 150.0);
  // The early rank's host waited in cudaStreamSynchronize for the late one, not in ncclAllReduce.
  CHECK(std::stod(runs[0].values.at("sync_ms")) >= 40.0);
}

TEST_CASE("a rank that never reaches the collective: the others fail after the timeout, no hang") {
  const auto began = std::chrono::steady_clock::now();
  const auto runs = runJob({"allreduce", "skip"}, {0, 0}, {"GWSIM_NCCL_TIMEOUT_MS=1000"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  INFO("stdout: " << runs[0].process.out << "\nstderr: " << runs[0].process.err);
  REQUIRE(runs[0].process.exit_code == 0);
  CHECK(runs[0].values.at("allreduce") == "0"); // issuing never blocks
  CHECK(runs[0].values.at("async") == "2");     // ncclSystemError, from ncclCommGetAsyncError
  CHECK(std::stod(runs[0].values.at("sync_ms")) >= 900.0);
  CHECK(runs[0].process.err.find("timed out waiting for rank 1") != std::string::npos);
  CHECK(std::count(runs[0].process.err.begin(), runs[0].process.err.end(), '\n') == 1);
  CHECK(seconds < 30.0);
}

TEST_CASE(
    "a rank that never joins: ncclCommInitRank fails with ncclSystemError after the timeout") {
  const auto runs = runJob({"allreduce"}, {0}, {"GWSIM_NCCL_TIMEOUT_MS=500"}, /*ranks=*/2);
  INFO("stdout: " << runs[0].process.out << "\nstderr: " << runs[0].process.err);
  CHECK(runs[0].process.exit_code == 1);
  CHECK(runs[0].process.out.find("probe init=2") != std::string::npos);
  CHECK(runs[0].process.err.find("ncclCommInitRank timed out") != std::string::npos);
}
