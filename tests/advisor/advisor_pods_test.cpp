// Two pods through one `gpuwise advisor` (issue 18): the fake shim as pod train-abc-0 (pageable
// copies: use_pinned_memory) and as train-xyz-0 (no copies), both sending to one endpoint. Each
// pod's /metrics recommendations and report are its own; before, the job-level findings were
// written for every pod, so train-xyz-0 carried train-abc-0's use_pinned_memory.
#include "tests/advisor/metrics_parse.h"
#include "tests/advisor/subprocess.h"

#include <catch2/catch.hpp>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <set>

using namespace gpuwise::advisor::test;
using json = nlohmann::json;

namespace {

std::set<std::string> recommendationIds(const json& report) {
  std::set<std::string> ids;
  for (const auto& r : report["recommendations"])
    ids.insert(r["id"].get<std::string>());
  return ids;
}

} // namespace

TEST_CASE("two pods through one advisor keep their own recommendations, in /metrics and reports") {
  TempDir dir;
  const std::string gpuwise = buildDir() + "/bin/gpuwise";
  const std::string fake_shim = buildDir() + "/tests/advisor_fake_shim";
  const std::string endpoint = "ipc://" + (dir / "advisor.sock");
  Process advisor({gpuwise, "advisor", "--listen", endpoint, "--report-dir", dir / "reports",
                   "--metrics-addr", "127.0.0.1:0"},
                  {}, dir.path, dir.path, "advisor");
  const int port = announcedPort(advisor, "\\(port ([0-9]+)\\)");
  REQUIRE(port > 0);

  auto pod = [&](const std::string& name, std::vector<std::string> args) {
    args.insert(args.begin(), fake_shim);
    Process p(args, {"GPUWISE_ENDPOINT=" + endpoint, "GPUWISE_NAMESPACE=ml", "GPUWISE_POD=" + name},
              dir.path, dir.path, name);
    INFO(p.err());
    REQUIRE(p.wait() == 3); // the fake shim's own exit code: it sent everything
  };
  pod("train-abc-0", {"--pageable", "--kernels", "6"});
  pod("train-xyz-0", {"--kernels", "6"});
  REQUIRE(eventually(
      [&] { return advisor.err().find("2 of 2 processes finished") != std::string::npos; }));

  const std::string kSaving = "gpuwise_recommendation_expected_saving_ratio";
  const std::map<std::string, std::string> abc{{"namespace", "ml"}, {"pod", "train-abc-0"}};
  const std::map<std::string, std::string> xyz{{"namespace", "ml"}, {"pod", "train-xyz-0"}};
  auto with = [](std::map<std::string, std::string> l, const std::string& id) {
    l["id"] = id;
    return l;
  };
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5, 0);
  PromText m;
  // Both pods' processes and findings in one refresh (a refresh may predate the second pod).
  REQUIRE(eventually([&] {
    auto r = c.Get("/metrics");
    if (!r || r->status != 200) return false;
    m = parseProm(r->body);
    return !m.find(kSaving, with(abc, "use_pinned_memory")).empty() &&
           !m.find(kSaving, with(xyz, "enable_mixed_precision")).empty();
  }));
  CHECK(m.find(kSaving, with(xyz, "use_pinned_memory")).empty());
  CHECK(m.value(kSaving, with(abc, "use_pinned_memory")) > 0);

  ::kill(advisor.pid(), SIGINT);
  REQUIRE(advisor.wait() == 0);
  INFO(advisor.err());
  // One report per pod, named after it, each with its one process and its own findings.
  const json a = json::parse(readFile(dir / "reports/gpuwise-report-ml.train-abc-0.json"));
  const json x = json::parse(readFile(dir / "reports/gpuwise-report-ml.train-xyz-0.json"));
  CHECK_FALSE(std::filesystem::exists(dir / "reports/gpuwise-report.json"));
  REQUIRE(a["processes"].size() == 1);
  REQUIRE(x["processes"].size() == 1);
  CHECK(recommendationIds(a).count("use_pinned_memory") == 1);
  CHECK(recommendationIds(x).count("use_pinned_memory") == 0);
  CHECK(recommendationIds(x).count("enable_mixed_precision") == 1);
}
