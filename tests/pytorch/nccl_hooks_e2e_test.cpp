// The shim's NCCL hooks in a live 4-rank job: the healthy job of distributed_jobs.h, shortened,
// under `gpuwise run --simulate --trace`, with train.py's sim backend calling the stand-in
// libnccl.so.2 through the LD_PRELOADed shim. The recording holds, for every rank, one Collective
// record per all-reduce the rank reported: kind all_reduce, FP32, one bucket's 16 MiB, a
// communicator of 4 ranks with this process's rank, numbered 1..N on that communicator, and one
// communicator id shared by the four ranks.
#include "tests/pytorch/distributed_jobs.h"

#include "advisor/ingest/gwt_replay.h"
#include "advisor/ingest/stream_router.h"
#include "tests/advisor/subprocess.h"
#include "tests/skip_test.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;

TEST_CASE("A live 4-rank job records every all-reduce with its size, communicator and sequence") {
  if (access((buildDir() + "/simdevice/libnccl.so.2").c_str(), R_OK) != 0)
    gpuwise::test::skipTest("no stand-in libnccl.so.2 (nccl.h was not found at configure time)");
  TempDir dir;
  const int steps = 12, buckets = 8; // gwtrain_sim.cu's kBuckets
  const uint64_t bucket_floats = 2048ull * 2048;
  const gpuwise::test::DistributedJob& job = gpuwise::test::distributedJobs().front();
  REQUIRE(job.name == "healthy");
  auto command =
      gpuwise::test::distributedJobCommand(job, gpuwise::test::testPython(), sourceDir());
  command.insert(command.end(), {"--steps", std::to_string(steps), "--warmup", "2"});
  const std::string gwt = dir / "healthy.gwt";
  std::vector<std::string> env;
  gpuwise::test::withoutLeakChecks(env); // python (tests/sanitizer_env.h)
  Process p(simulatedRunArgv(dir, job.name, command, {"--trace", gwt}), env, dir.path, dir.path,
            job.name);
  const int status = p.wait(std::chrono::seconds(300)).value_or(-1);
  INFO("stdout: " << p.out() << "\nstderr: " << p.err());
  REQUIRE(status == 0);
  REQUIRE(gpuwise::test::allReduceCounts(p.out()) == std::vector<long long>(4, steps * buckets));

  std::string error;
  StreamRouter router([](std::string_view) {}, StreamRouter::kMaxStreams, 0);
  REQUIRE(replayGwt(gwt, router, &error));
  const model::Trace trace = router.take(nullptr);
  std::set<uint64_t> communicators;
  std::set<int32_t> ranks;
  for (const auto& process : trace.processes) {
    if (process.info.rank < 0) continue; // launch.py itself
    INFO("rank " << process.info.rank << ", pid " << process.info.pid);
    ranks.insert(process.info.rank);
    const auto& c = process.collectives;
    REQUIRE(c.size() == size_t(steps * buckets));
    for (size_t i = 0; i < c.size(); ++i) {
      INFO("collective " << i);
      CHECK(c[i].kind == model::CollectiveKind::AllReduce);
      CHECK(c[i].element == model::ElementType::Float32);
      CHECK(c[i].in_count == bucket_floats);
      CHECK(c[i].out_count == bucket_floats);
      CHECK(c[i].bytes() == bucket_floats * 4);
      CHECK(c[i].group_size == gpuwise::test::kDistributedRanks);
      CHECK(c[i].group_rank == process.info.rank);
      CHECK(c[i].sequence == i + 1);
      CHECK(c[i].peer == -1);
      CHECK(c[i].stream != 0); // the communication stream, not the default one
      CHECK(c[i].start <= c[i].end);
      communicators.insert(c[i].communicator);
    }
  }
  CHECK(ranks == std::set<int32_t>{0, 1, 2, 3});
  CHECK(communicators.size() == 1);
  CHECK(*communicators.begin() != 0);
}
