// The advice each 4-rank job of distributed_jobs.h gets, live under `gpuwise run --simulate` and
// offline from its recording (`--trace`, then `gpuwise report`):
//   slow_compute -> fix_straggler {rank 2, cause compute}
//   slow_loader  -> fix_straggler {rank 1, cause input} and prefetch_input {rank 1}
//   no_overlap   -> overlap_communication
//   healthy      -> neither
// Each run prints the ranks side by side (replayed from the recording) and the figures the rules
// decide on, so the margins on a loaded machine can be read from the test's output.
#include "advisor/ingest/gwt_replay.h"
#include "advisor/rules/rule_set.h"
#include "tests/advisor/number_check.h"
#include "tests/advisor/subprocess.h"
#include "tests/pytorch/distributed_jobs.h"
#include "tests/sanitizer_env.h"
#include "tests/skip_test.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <set>

using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using gpuwise::test::DistributedJob;
using json = nlohmann::json;

namespace {

const json* find(const json& report, const std::string& id) {
  for (const auto& r : report["recommendations"])
    if (r["id"] == id) return &r;
  return nullptr;
}

std::set<std::string> ids(const json& report, const char* key) {
  std::set<std::string> out;
  if (report.contains(key))
    for (const auto& r : report[key])
      out.insert(r["id"].get<std::string>());
  return out;
}

std::string joined(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s)
    out += x + " ";
  return out;
}

// The ranks as the analysis sees them, from the recording (the report does not carry them here).
void printRanks(const std::string& name, const std::string& gwt) {
  StreamRouter router([](std::string_view) {}, StreamRouter::kMaxStreams, 0);
  std::string error;
  if (!replayGwt(gwt, router, &error)) {
    std::cout << name << ": " << error << "\n";
    return;
  }
  const auto a = router.analysis();
  for (const auto& r : a.distributed.ranks)
    std::cout << name << ": rank " << r.rank << " steps " << r.steps << " p50 "
              << r.step_p50_seconds.value_or(-1) << " compute " << r.compute_seconds << " comm "
              << r.communication_seconds << " exposed " << r.communication_exposed_seconds
              << " wait " << r.collective_wait_seconds << " input "
              << r.input_stall_ratio.value_or(-1) << " host " << r.host_seconds << "\n";
  std::cout << name << ": wait (all collectives) " << a.distributed.collective_wait_all_seconds
            << ", span " << double(a.timeline.span_ns) / 1e9 << ", straggler "
            << (a.distributed.straggler ? std::to_string(a.distributed.straggler->rank) : "none")
            << "\n";
}

void checkAdvice(const DistributedJob& job, const json& report) {
  const auto recs = ids(report, "recommendations"), notes = ids(report, "notes");
  INFO(job.name << ": recommendations " << joined(recs) << "; notes " << joined(notes));
  for (const auto& r : report["recommendations"]) {
    if (r["id"] != "fix_straggler" && r["id"] != "overlap_communication") continue;
    std::cout << job.name << ": " << r["title"].get<std::string>() << "\n  " << r["evidence"].dump()
              << "\n";
    nlohmann::ordered_json evidence = r["evidence"];
    CHECK(numbersMissingFromEvidence(r["title"].get<std::string>(), evidence).empty());
    CHECK(numbersMissingFromEvidence(r["action"].get<std::string>(), evidence).empty());
  }
  if (job.straggler_rank >= 0) {
    const json* s = find(report, "fix_straggler");
    REQUIRE(s);
    CHECK((*s)["parameters"]["rank"] == job.straggler_rank);
    CHECK((*s)["parameters"]["cause"] == job.straggler_cause);
    CHECK((*s)["parameters"]["others_wait_seconds"].get<double>() > 0);
  } else if (gpuwise::test::underSanitizer()) {
    // A sanitizer slows each rank's host several times over, unevenly: a rank can then really be
    // the one the others wait for. That lane checks the planted cases, not the absence of others.
    if (recs.count("fix_straggler")) WARN(job.name << ": fix_straggler under a sanitizer");
  } else {
    CHECK(recs.count("fix_straggler") + notes.count("fix_straggler") == 0);
  }
  if (job.straggler_cause == "input") {
    const json* p = find(report, "prefetch_input");
    REQUIRE(p);
    CHECK((*p)["parameters"]["rank"] == job.straggler_rank);
  }
  if (job.exposed_communication)
    CHECK(recs.count("overlap_communication") == 1);
  else if (!gpuwise::test::underSanitizer())
    CHECK(recs.count("overlap_communication") + notes.count("overlap_communication") == 0);
}

// Under a sanitizer each rank's host work per step doubles, unevenly (a 12 ms step p50 against
// 6 ms), and swamps rank 2's 1.5x compute (2.8 ms a step): alone in the ASan lane, 3 of 5 runs
// named no straggler. There the planted slowdown is 3x (11 ms a step), well above that noise; the
// normal lane keeps 1.5x, the rule's sensitivity.
// The no-overlap job's exposed transfer is device time, 0.33 s in either lane, but under ASan the
// ranks' slow start-up stretches the GPU span from 1.36 s to 3.41 s: the CI lane measured 9.7% of
// the span against the rule's 10%. The step itself still exposes 2.2 ms of 13 ms, so there the job
// runs three times the steps, and the steady state outweighs the start-up.
DistributedJob plantedFor(DistributedJob job) {
  if (!gpuwise::test::underSanitizer()) return job;
  for (size_t i = 0; i + 1 < job.flags.size(); ++i)
    if (job.flags[i] == "--slow-compute") job.flags[i + 1] = "3";
  if (job.exposed_communication) job.flags.insert(job.flags.end(), {"--steps", "120"});
  return job;
}

} // namespace

TEST_CASE("distributed jobs: straggler and exposed-communication advice, live and recorded") {
  if (access((buildDir() + "/simdevice/libnccl.so.2").c_str(), R_OK) != 0)
    gpuwise::test::skipTest("no stand-in libnccl.so.2 (nccl.h was not found at configure time)");
  TempDir dir;
  for (const DistributedJob& listed : gpuwise::test::distributedJobs()) {
    const DistributedJob job = plantedFor(listed);
    DYNAMIC_SECTION(job.name) {
      const std::string gwt = dir / (job.name + ".gwt");
      auto argv = simulatedRunArgv(
          dir, job.name,
          gpuwise::test::distributedJobCommand(job, gpuwise::test::testPython(), sourceDir()),
          {"--trace", gwt});
      std::vector<std::string> env;
      gpuwise::test::withoutLeakChecks(env); // python (tests/sanitizer_env.h)
      Process live(argv, env, dir.path, dir.path, job.name);
      const auto status = live.wait(std::chrono::seconds(300)).value_or(-1);
      INFO(job.name << "\nstdout: " << live.out() << "\nstderr: " << live.err());
      REQUIRE(status == 0);
      printRanks(job.name, gwt);
      const json report = json::parse(readFile(dir / (job.name + ".json")));
      checkAdvice(job, report);

      const std::string offline_json = dir / (job.name + ".offline.json");
      Process offline({buildDir() + "/bin/gpuwise", "report", gwt, "--json", offline_json}, {},
                      dir.path, dir.path, job.name + ".offline");
      INFO(offline.err());
      REQUIRE(offline.wait(std::chrono::seconds(120)) == 0);
      const json recorded = json::parse(readFile(offline_json));
      checkAdvice(job, recorded);
      CHECK(ids(recorded, "recommendations") == ids(report, "recommendations"));
    }
  }
}
