// The advisor's own series (issue 18): an advisor no process has reached yet serves its build, its
// start time, its ingest counters and gpuwise_processes 0 for its own pod, from the first scrape,
// and the idle exposition passes promtool; the own pod's 0 stays beside the pods that connect.
#include "advisor/metrics/exposition_builder.h"
#include "advisor/metrics/metrics_input.h"
#include "advisor/report/report_json.h"
#include "tests/advisor/metrics_parse.h"
#include "tests/containers/containers_support.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;

namespace {

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

metrics::AdvisorFigures ownPod() {
  metrics::AdvisorFigures a;
  a.ns = "ml-team";
  a.pod = "trainer-0";
  return a;
}

metrics::ProcessFigures processOf(const std::string& ns, const std::string& pod, int64_t pid) {
  metrics::ProcessFigures p;
  p.info.pid = pid;
  p.info.ns = ns;
  p.info.pod = pod;
  return p;
}

const std::map<std::string, std::string> kOwn{{"namespace", "ml-team"}, {"pod", "trainer-0"}};

} // namespace

TEST_CASE("metrics: an idle advisor serves its own figures and gpuwise_processes 0") {
  const double before = unixNow();
  metrics::ExpositionBuilder b(ownPod());
  const double after = unixNow();
  const std::string text = b.build(metrics::JobFigures{});
  INFO(text);
  REQUIRE_FALSE(text.empty());
  auto m = parseProm(text);

  auto processes = m.find("gpuwise_processes");
  REQUIRE(processes.size() == 1);
  CHECK(processes[0].labels == kOwn);
  CHECK(processes[0].value == 0);

  auto build = m.find("gpuwise_build_info");
  REQUIRE(build.size() == 1);
  CHECK(build[0].value == 1);
  CHECK(build[0].labels["version"] == gpuwiseVersion());
  CHECK(build[0].labels["report_schema"] == kReportSchema);
  CHECK(build[0].labels["pod"] == "trainer-0");

  const double start = m.value("gpuwise_advisor_start_time_seconds", kOwn);
  CHECK(start >= before - 1);
  CHECK(start <= after + 1);
  for (const char* c :
       {"gpuwise_advisor_received_batches_total", "gpuwise_advisor_received_events_total",
        "gpuwise_advisor_received_bytes_total", "gpuwise_advisor_rejected_messages_total"}) {
    INFO(c);
    CHECK(m.value(c, kOwn) == 0);
    CHECK(m.type[c] == "counter");
  }
  // Nothing about processes or GPUs yet: those families are absent, not zero.
  CHECK(m.find("gpuwise_kernels_total").empty());
  CHECK(m.find("gpuwise_info").empty());

  // Every family the idle advisor serves is in the contract, with exactly its labels.
  auto contract = gpuwise::containers::test::metricsContract();
  for (const auto& s : m.series) {
    INFO(s.name);
    REQUIRE(contract.count(s.name) == 1);
    std::set<std::string> got(s.label_order.begin(), s.label_order.end());
    CHECK(got == contract[s.name].labels);
    CHECK(m.help[s.name] == contract[s.name].help);
  }
}

TEST_CASE("metrics: the ingest counters follow the advisor's figures and never go back") {
  metrics::ExpositionBuilder b(ownPod());
  metrics::AdvisorFigures a;
  a.batches = 12;
  a.events = 3400;
  a.bytes = 65536;
  a.rejected = 2;
  auto m = parseProm(b.build(metrics::JobFigures{}, a));
  CHECK(m.value("gpuwise_advisor_received_batches_total", kOwn) == 12);
  CHECK(m.value("gpuwise_advisor_received_events_total", kOwn) == 3400);
  CHECK(m.value("gpuwise_advisor_received_bytes_total", kOwn) == 65536);
  CHECK(m.value("gpuwise_advisor_rejected_messages_total", kOwn) == 2);
  a.events = 10; // a lower figure never shows: counters are floored
  m = parseProm(b.build(metrics::JobFigures{}, a));
  CHECK(m.value("gpuwise_advisor_received_events_total", kOwn) == 3400);
}

TEST_CASE("metrics: the advisor's own pod keeps its series beside the pods that connect") {
  SECTION("a sidecar: its pod's count follows its processes") {
    metrics::ExpositionBuilder b(ownPod());
    metrics::JobFigures job;
    job.processes.push_back(processOf("ml-team", "trainer-0", 11));
    job.processes.push_back(processOf("ml-team", "trainer-0", 12));
    job.processes[1].connected = false;
    auto m = parseProm(b.build(job));
    REQUIRE(m.find("gpuwise_processes").size() == 1);
    CHECK(m.value("gpuwise_processes", kOwn) == 1);
  }
  SECTION("a shared advisor: its own pod says 0 while other pods' processes are connected") {
    metrics::ExpositionBuilder b(ownPod());
    metrics::JobFigures job;
    job.processes.push_back(processOf("ml-team", "other-0", 11));
    auto m = parseProm(b.build(job));
    CHECK(m.value("gpuwise_processes", kOwn) == 0);
    CHECK(m.value("gpuwise_processes", {{"namespace", "ml-team"}, {"pod", "other-0"}}) == 1);
  }
  SECTION("outside a pod: the unlabelled 0 only until a process connects") {
    metrics::ExpositionBuilder b;
    auto idle = parseProm(b.build(metrics::JobFigures{}));
    REQUIRE(idle.find("gpuwise_processes").size() == 1);
    CHECK(idle.value("gpuwise_processes", {{"namespace", ""}, {"pod", ""}}) == 0);
    metrics::JobFigures job;
    job.processes.push_back(processOf("ml-team", "trainer-0", 11));
    auto busy = parseProm(b.build(job));
    REQUIRE(busy.find("gpuwise_processes").size() == 1);
    CHECK(busy.value("gpuwise_processes", kOwn) == 1);
  }
}

TEST_CASE("metrics: promtool accepts the idle advisor's exposition", "[.][promtool]") {
  if (gpuwise::containers::test::which("promtool").empty())
    gpuwise::test::skipTest("promtool is not installed (Debian: scripts/install-deps prometheus)");
  metrics::ExpositionBuilder b(ownPod());
  gpuwise::containers::test::TempDir scratch;
  const std::string file = scratch / "idle.prom";
  std::ofstream(file) << b.build(metrics::JobFigures{});
  auto r = gpuwise::containers::test::run({"bash", "-c", "promtool check metrics < \"$0\"", file},
                                          scratch.path, scratch, "lint");
  INFO(r.out << r.err);
  // No per-GPU series: no allowance for dcgm-exporter's modelName label, no finding at all.
  CHECK(r.rc == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());
}
