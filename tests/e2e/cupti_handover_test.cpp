// The application's own CUPTI client (what torch.profiler does, tests/e2e/cupti_client_app.cu)
// under `gpuwise run --simulate`. CUPTI takes one client: gpuwise hands it over when the
// application starts its own (hooks_cupti.cpp), or leaves it alone when the application was
// first, and in both cases the application's profiler sees every kernel while gpuwise still
// counts every launch, at the interposer tier, and says why.
#include "tests/e2e/e2e_support.h"

#include <catch2/catch.hpp>

using namespace gpuwise::e2e;
using namespace std::chrono_literals;

namespace {

std::string clientApp() {
  return buildDir() + "/tests/e2e_cupti_client_app";
}

struct Run {
  int status = -1;
  std::string out, err;
  json report;
};

Run run(const TempDir& dir, const std::string& mode, const std::string& tag) {
  Process p({gpuwiseExe(), "run", "--simulate", "--report-json", dir / (tag + ".json"), "--",
             clientApp(), mode, "20", "30"},
            {"GPUWISE_LOG=debug"}, dir.path, dir.path, tag);
  auto status = p.wait(60s);
  REQUIRE(status);
  Run r{*status, p.out(), p.err(), json()};
  r.report = readJson(dir / (tag + ".json"));
  return r;
}

} // namespace

TEST_CASE("Without gpuwise the client sees its kernels (the control)") {
  TempDir dir;
  Process p({clientApp(), "late", "20", "30"}, plainEnv(), dir.path, dir.path, "plain");
  auto status = p.wait(60s);
  REQUIRE(status);
  INFO(p.err());
  CHECK(*status == 0);
  CHECK(contains(p.out(), "cupti_client subscribe=0 register=0 enable=0 launched=50 seen=30"));
}

TEST_CASE(
    "A client started mid-run gets CUPTI from gpuwise, which goes on at the interposer tier") {
  TempDir dir;
  Run r = run(dir, "late", "late");
  INFO(r.err);
  // The application's profiler works: its subscribe succeeded and it saw all 30 kernels.
  CHECK(r.status == 0);
  CHECK(contains(r.out, "cupti_client subscribe=0 register=0 enable=0 launched=50 seen=30"));
  REQUIRE(r.report.is_object());
  REQUIRE(r.report["processes"].size() == 1);
  const json& p = r.report["processes"][0];
  CHECK(p["tier"] == "interposer");
  const std::string reason = p["tier_reason"].get<std::string>();
  INFO(reason);
  CHECK(std::regex_match(reason, std::regex(R"(handed to the application's own CUPTI client )"
                                            R"(\d+\.\d\d s into the session \(it called )"
                                            R"(cuptiSubscribe, as torch\.profiler does\); CUPTI's )"
                                            R"(records until then, the hooks' since)")));
  // Every launch once: the first 20 from CUPTI's records, the last 30 from the hooks'.
  CHECK(reportKernels(r.report) == 50);
  CHECK(p["events_dropped"] == 0);
  CHECK(contains(r.err, "interposer tier from now: handed to the application's own CUPTI client "));
  // The terminal summary says it where it says why a run had no CUPTI.
  CHECK(contains(std::regex_replace(r.err, std::regex(R"(\n\s+)"), " "),
                 "no CUPTI: handed to the application's own CUPTI client "));
}

TEST_CASE("A client started before the first CUDA call keeps CUPTI; gpuwise never takes it") {
  TempDir dir;
  Run r = run(dir, "early", "early");
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(contains(r.out, "cupti_client subscribe=0 register=0 enable=0 launched=50 seen=50"));
  REQUIRE(r.report.is_object());
  REQUIRE(r.report["processes"].size() == 1);
  const json& p = r.report["processes"][0];
  CHECK(p["tier"] == "interposer");
  CHECK(p["tier_reason"] == "the application runs its own CUPTI client (it called cuptiSubscribe, "
                            "as torch.profiler does): CUPTI is left to it");
  CHECK(reportKernels(r.report) == 50);
}
