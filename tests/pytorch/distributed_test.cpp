// The 4-rank data-parallel jobs of distributed_jobs.h under `gpuwise run --simulate`: launch.py
// starts the ranks, train.py's sim backend all-reduces each layer's gradients through the
// stand-in NCCL. Each job exits 0, every rank reports its all-reduces, the report lists the four
// ranks and the NCCL kernels (by NCCL's own kernel name, as communication), and the slow loader's
// rank makes the others' collective kernels wait. (simdevice_nccl_test checks the waits exactly.)
#include "tests/pytorch/distributed_jobs.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "tests/advisor/subprocess.h"
#include "tests/skip_test.h"

using namespace gpuwise::advisor::test;
using gpuwise::test::DistributedJob;
using json = nlohmann::json;

namespace {

struct JobRun {
  int status = -1;
  json report;
  std::string out, err;
  double nccl_seconds = 0;
  long long nccl_count = 0;
};

JobRun runJob(const TempDir& dir, const DistributedJob& job) {
  auto argv = simulatedRunArgv(
      dir, job.name,
      gpuwise::test::distributedJobCommand(job, gpuwise::test::testPython(), sourceDir()));
  std::vector<std::string> env;
  gpuwise::test::withoutLeakChecks(env); // python (tests/sanitizer_env.h)
  Process p(argv, env, dir.path, dir.path, job.name);
  JobRun r;
  r.status = p.wait(std::chrono::seconds(300)).value_or(-1);
  r.out = p.out();
  r.err = p.err();
  const std::string text = readFile(dir / (job.name + ".json"));
  r.report = text.empty() ? json() : json::parse(text, nullptr, false);
  if (r.report.is_object()) {
    for (const auto& k : r.report["top_kernels"]) {
      if (k["name"].get<std::string>().rfind("ncclDevKernel_AllReduce_Sum_f32_RING_LL(", 0) != 0)
        continue;
      CHECK(k["communication"] == true);
      r.nccl_seconds += k["seconds"].get<double>();
      r.nccl_count += k["count"].get<long long>();
    }
  }
  return r;
}

} // namespace

TEST_CASE("4-rank data-parallel jobs on the simulated device: ranks, NCCL kernels, stragglers") {
  if (access((buildDir() + "/simdevice/libnccl.so.2").c_str(), R_OK) != 0)
    gpuwise::test::skipTest("no stand-in libnccl.so.2 (nccl.h was not found at configure time)");
  TempDir dir;
  const int steps = 40, buckets = 8; // distributedCommonFlags(); gwtrain_sim.cu's kBuckets
  std::map<std::string, JobRun> runs;
  for (const DistributedJob& job : gpuwise::test::distributedJobs()) {
    JobRun r = runJob(dir, job);
    INFO(job.name << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.status == 0);
    CHECK(gpuwise::test::allReduceCounts(r.out) == std::vector<long long>(4, steps * buckets));
    REQUIRE(r.report.is_object());
    std::set<int64_t> ranks;
    for (const auto& p : r.report["processes"])
      if (p["rank"].is_number()) ranks.insert(p["rank"].get<int64_t>());
    CHECK(ranks == std::set<int64_t>{0, 1, 2, 3});
    CHECK(r.nccl_count == gpuwise::test::kDistributedRanks * steps * buckets);
    std::cout << job.name << ": NCCL kernels " << r.nccl_count << ", " << r.nccl_seconds << " s\n";
    runs[job.name] = std::move(r);
  }
  // Lower bounds only: the simulated device keeps real time, so a starved shared CPU adds waits
  // to every job.
  // Every kernel lasts at least its transfer: 6 us + 2(n-1)/n x 16 MiB at 100 GB/s = 257.7 us.
  CHECK(runs["healthy"].nccl_seconds >= 1280 * 257.0e-6);
  // Rank 1's loader (25 ms a batch against a ~6 ms step) makes the 3 other ranks wait at least
  // ~18 ms in each of the ~35 steps after the first prefetched batches: well over 1.5 s.
  CHECK(runs["slow_loader"].nccl_seconds > 1.5);
  // Rank 2's kernels 1.5x longer: the 3 others wait for each of its buckets, about 3 ms a step
  // in all (measured: 0.78-0.83 s against the healthy job's 0.38-0.47 s).
  CHECK(runs["slow_compute"].nccl_seconds > 0.6);
}

TEST_CASE("a rank that fails ends the job at once: launch.py ends the others, nobody waits") {
  if (access((buildDir() + "/simdevice/libnccl.so.2").c_str(), R_OK) != 0)
    gpuwise::test::skipTest("no stand-in libnccl.so.2 (nccl.h was not found at configure time)");
  TempDir dir;
  // Rank 2 exits before joining; without launch.py ending the others, ranks 0 and 1 would wait in
  // ncclCommInitRank for GWSIM_NCCL_TIMEOUT_MS (60 s).
  const std::string wrapper = dir / "rank2_fails.py";
  {
    std::ofstream f(wrapper);
    f << "import os, runpy, sys\n"
         "if os.environ.get('RANK') == '2':\n"
         "    sys.exit(3)\n"
         "sys.argv = sys.argv[1:]\n"
         "runpy.run_path(sys.argv[0], run_name='__main__')\n";
  }
  std::vector<std::string> argv{gpuwise::test::testPython(),
                                sourceDir() + "/samples/pytorch/launch.py",
                                "--stand-in",
                                "--nproc-per-node",
                                "3",
                                "--",
                                wrapper,
                                sourceDir() + "/samples/pytorch/train.py",
                                "--backend",
                                "sim",
                                "--steps",
                                "10",
                                "--warmup",
                                "2",
                                "--image-size",
                                "16",
                                "--num-workers",
                                "1"};
  std::vector<std::string> env{"LD_LIBRARY_PATH=" + buildDir() + "/simdevice"};
  gpuwise::test::withoutLeakChecks(env);
  const auto began = std::chrono::steady_clock::now();
  Process p(argv, env, dir.path, dir.path, "fail");
  const auto status = p.wait(std::chrono::seconds(120));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  INFO(p.err());
  CHECK(status == 3);
  CHECK(p.err().find("launch.py: a rank exited with 3; ending the others") != std::string::npos);
  CHECK(seconds < 30.0);
}
