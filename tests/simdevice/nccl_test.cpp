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
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/sanitizer_env.h"
#include "tests/simdevice/test_support.h"

namespace {

using gwsim_test::buildDir;
using gwsim_test::ProcessResult;
using gwsim_test::runProcess;

const std::string kProbe = buildDir() + "/tests/simdevice_nccl_probe";
constexpr long long kCount = 4 << 20; // floats: 16 MiB per rank

struct Kernel {
  std::string name;
  long long start = 0, end = 0;
};

struct RankRun {
  ProcessResult process;
  std::map<std::string, std::string> values; // the `probe rank=` line
  long long start = 0, end = 0, issued = 0;  // of the last NCCL kernel
  std::vector<Kernel> kernels;               // every NCCL kernel, in CUPTI's order
};

std::vector<Kernel> kernelLines(const std::string& out) {
  std::vector<Kernel> kernels;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("probe kernel=", 0) != 0) continue;
    auto v = gwsim_test::parseKeyValues(line);
    kernels.push_back({v.at("name"), std::stoll(v.at("start")), std::stoll(v.at("end"))});
  }
  return kernels;
}

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
    run.kernels = kernelLines(run.process.out);
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

std::string readelf(const std::string& args) {
  std::string out;
  FILE* pipe = popen(("readelf " + args + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    out.append(buffer, n);
  REQUIRE(pclose(pipe) == 0);
  return out;
}

} // namespace

TEST_CASE(
    "libnccl.so.2: the real SONAME, unversioned nccl* exports as the real one, the API used") {
  // popen() forks this multithreaded process, and gcc 12's sanitizer runtimes do not survive
  // that in the child (tests/sanitizer_env.h): the normal lane checks the exports.
  if (!gpuwise::test::forkChildrenCheckable()) {
    WARN("exports not checked under a sanitizer (fork of a multithreaded process)");
    return;
  }
  const std::string lib = gwsim_test::simdeviceDir() + "/libnccl.so.2";
  CHECK(readelf("-d " + lib).find("Library soname: [libnccl.so.2]") != std::string::npos);
  std::set<std::string> exported;
  std::istringstream lines(readelf("--dyn-syms -W " + lib));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string num, value, size, type, bind, vis, ndx, name;
    if (!(fields >> num >> value >> size >> type >> bind >> vis >> ndx >> name)) continue;
    if (ndx == "UND" || type != "FUNC") continue;
    INFO(name);
    CHECK(name.rfind("nccl", 0) == 0);
    CHECK(name.find('@') == std::string::npos);
    exported.insert(name);
  }
  for (const char* name :
       {"ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclCommInitAll",
        "ncclCommDestroy", "ncclCommCount", "ncclCommUserRank", "ncclCommCuDevice",
        "ncclCommGetAsyncError", "ncclAllReduce", "ncclAllGather", "ncclReduceScatter",
        "ncclBroadcast", "ncclReduce", "ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd",
        "ncclGetErrorString"}) {
    INFO(name);
    CHECK(exported.count(name) == 1);
  }
}

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
  // The ranks leave ncclCommInitRank together; on a loaded machine one may leave it several ms
  // late (47.9 ms seen beside a CPU hog), which shortens the early rank's wait by as much.
  CHECK(early_ms >= 40.0);
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

TEST_CASE(
    "collectives issued back to back chain: each starts when the one before ends everywhere") {
  const auto runs = runJob({"chain", "chain", "chain"}, {0, 20, 0});
  const bool slow_host = gpuwise::test::underSanitizer();
  const std::vector<std::string> names{
      "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
      "_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE",
      "_Z46ncclDevKernel_ReduceScatter_MinMax_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
      "_Z31ncclDevKernel_Broadcast_RING_LL24ncclDevKernelArgsStorageILm4096EE"};
  // A collective starts once every rank has issued it. A host slowed (a sanitizer) or descheduled
  // (a loaded machine: once 0.74 ms late under a CPU hog) can issue the next collective after the
  // previous one ended, and it then starts at that issue: the chain's order always holds, its
  // contact wherever every rank issued in time. The issue times are known for the last collective.
  long long last_issued = 0;
  for (const RankRun& r : runs)
    last_issued = std::max(last_issued, r.issued);
  for (const RankRun& r : runs) {
    INFO("stdout: " << r.process.out << "\nstderr: " << r.process.err);
    REQUIRE(r.process.exit_code == 0);
    CHECK(r.values.at("allreduce") == "0");
    REQUIRE(r.kernels.size() == names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      CHECK(r.kernels[i].name == names[i]);
      CHECK(r.kernels[i].end == runs[0].kernels[i].end);
      if (i > 0) CHECK(r.kernels[i].start >= r.kernels[i - 1].end);
    }
    const size_t last = names.size() - 1;
    if (!slow_host && last_issued < r.kernels[last - 1].end)
      CHECK(r.kernels[last].start == r.kernels[last - 1].end);
  }
  // All-gather of 3 x 1,398,101 bf16: 6 us + 2/3 x 8,388,606 B at 100 GB/s (more when a slowed
  // host made a rank arrive late).
  if (slow_host)
    CHECK(runs[0].kernels[1].end - runs[0].kernels[1].start >= 6'000 + 55'924);
  else
    CHECK(runs[0].kernels[1].end - runs[0].kernels[1].start == 6'000 + 55'924);
  // Rank 0's all-reduce waited for rank 1, which issued it 20 ms later; how much of those 20 ms the
  // kernel shows depends on when each process started (a loaded host staggers them by
  // milliseconds), and a kernel that did not wait would take microseconds.
  CHECK(runs[0].kernels[0].end - runs[0].kernels[0].start >= 5'000'000);
}

TEST_CASE("a grouped ring of sends and receives: each send ends with its peer's receive") {
  const auto runs = runJob({"sendrecv", "sendrecv", "sendrecv"}, {0, 20, 0});
  for (const RankRun& r : runs) {
    INFO("stdout: " << r.process.out << "\nstderr: " << r.process.err);
    REQUIRE(r.process.exit_code == 0);
    CHECK(r.values.at("allreduce") == "0");
    CHECK(r.values.at("async") == "0");
    REQUIRE(r.kernels.size() == 2); // the send, then the receive
  }
  // The send to the next rank and the receive from it end together. CUPTI delivers the two
  // overlapping kernels of a rank in the order they complete, so they are matched by their ends.
  for (size_t r = 0; r < runs.size(); ++r) {
    const RankRun& next = runs[(r + 1) % runs.size()];
    int shared = 0;
    for (const Kernel& mine : runs[r].kernels) {
      CHECK(mine.name == "_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorageILm4096EE");
      CHECK(mine.end - mine.start >= 6'000 + 167'772); // 6 us + 16 MiB at 100 GB/s at least
      for (const Kernel& theirs : next.kernels) {
        if (theirs.end == mine.end) {
          ++shared;
          CHECK(mine.end == std::max(mine.start, theirs.start) + 6'000 + 167'772);
        }
      }
    }
    CHECK(shared >= 1);
  }
}

TEST_CASE("ncclCommInitAll: one process, a rank per device, the all-reduce ends together") {
  const auto run =
      runProcess({kProbe, "initall", "2"}, {"GWSIM_DEVICE_COUNT=2"}, std::chrono::seconds(60));
  INFO("stdout: " << run.out << "\nstderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("probe initall=0 allreduce=0 ranks=0@0,1@1") != std::string::npos);
  const auto kernels = kernelLines(run.out);
  REQUIRE(kernels.size() == 2);
  CHECK(kernels[0].end == kernels[1].end);
}
