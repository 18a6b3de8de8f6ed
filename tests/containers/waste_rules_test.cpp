// Waste by team (issue 22): the recording rules of containers/kubernetes/monitoring/
// waste-rules.yaml read only metrics of the contract (docs/metrics.md), record series named
// `level:gpuwise_...:window` that each rule reads only after the rule recording it, pass
// `promtool check rules`, and their unit tests (waste_rules_test.yaml: two namespaces, by hand)
// pass `promtool test rules`, with figures an independent Python reference recomputes. The
// dashboard's "Waste by team" row reads these series per namespace.
// tests/e2e/prometheus_waste_test.cpp checks them in a real Prometheus against the advisor's
// reports.
#include "tests/containers/containers_support.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace gpuwise::containers::test;
namespace fs = std::filesystem;

namespace {

const char* kRules = "containers/kubernetes/monitoring/waste-rules.yaml";

void requirePromtool() {
  if (which("promtool").empty())
    gpuwise::test::skipTest("promtool is not installed (Debian: scripts/install-deps prometheus)");
}

void requireYaml(const TempDir& scratch) {
  if (!haveYaml(scratch))
    gpuwise::test::skipTest(
        "python3-yaml is not installed (Debian: scripts/install-deps python3-yaml)");
}

} // namespace

TEST_CASE("waste rules: contract metrics in, recorded series named and ordered", "[.yaml]") {
  TempDir scratch;
  requireYaml(scratch);
  auto contract = metricsContract();
  json rule = yamlFileToJson(repoPath(kRules), scratch)[0];
  REQUIRE(rule["kind"] == "PrometheusRule");
  static const std::regex name(
      R"((process_gpu|namespace|namespace_job_name|namespace_pod|)"
      R"(namespace_pod_id|id|cluster):gpuwise_[a-z0-9_]+:[a-z0-9_]*1[dw])");
  std::set<std::string> windows;
  size_t rules = 0;
  for (const auto& group : rule["spec"]["groups"]) {
    INFO(group["name"]);
    // Not less often than Prometheus' lookback: a recorded series older than 5 minutes is gone.
    CHECK(group["interval"] == "5m");
    std::set<std::string> recorded_before;
    for (const auto& r : group["rules"]) {
      const std::string record = r["record"], expr = r["expr"];
      INFO(record << ": " << expr);
      CHECK_FALSE(r.contains("alert"));
      CHECK(std::regex_match(record, name));
      windows.insert(record.substr(record.size() - 2));
      for (const auto& n : gpuwiseNames(expr))
        CHECK_FALSE(contractMetric(n, contract).empty());
      // A recorded series is read in the evaluation that recorded it: its rule comes first, in
      // the same group (Prometheus runs a group's rules in order).
      for (const auto& n : recordedNames(expr))
        CHECK(recorded_before.count(n) == 1);
      CHECK((!gpuwiseNames(expr).empty() || !recordedNames(expr).empty()));
      recorded_before.insert(record);
      ++rules;
    }
  }
  CHECK(rules == 24);
  CHECK(windows == std::set<std::string>{"1d", "1w"});
  // The metrics they turn into hours and dollars.
  const RecordingRules text = recordingRules(repoPath(kRules));
  CHECK(text.recorded.size() == rules);
  CHECK(text.metrics == std::set<std::string>{"gpuwise_gpu_idle_seconds_total",
                                              "gpuwise_gpu_busy_seconds_total",
                                              "gpuwise_gpu_hour_price_dollars",
                                              "gpuwise_recommendation_expected_saving_ratio"});
}

TEST_CASE("waste rules: promtool checks them and their unit tests pass", "[.promtool]") {
  requirePromtool();
  TempDir scratch;
  requireYaml(scratch);
  json rule = yamlFileToJson(repoPath(kRules), scratch)[0];
  // The rule groups as a plain Prometheus rule file (JSON is YAML), next to the unit tests.
  std::ofstream(scratch / "gpuwise-waste.rules.json") << rule["spec"].dump(2);
  fs::copy_file(repoPath("tests/containers/waste_rules_test.yaml"),
                scratch / "waste_rules_test.yaml");
  Run check = run({"promtool", "check", "rules", "gpuwise-waste.rules.json"}, scratch.path, scratch,
                  "rules");
  INFO(check.out << check.err);
  CHECK(check.rc == 0);
  CHECK(check.out.find("SUCCESS: 24 rules found") != std::string::npos);
  Run test =
      run({"promtool", "test", "rules", "waste_rules_test.yaml"}, scratch.path, scratch, "test");
  INFO(test.out << test.err);
  CHECK(test.rc == 0);
  CHECK(test.out.find("SUCCESS") != std::string::npos);
}

// The unit tests' expectations, recomputed from their input series by an independent reference
// (tests/tools/waste_rules_reference.py: the definitions of docs/metrics.md and Prometheus'
// extrapolation, in standard-library Python): the hand-computed figures are what the definitions
// give, so promtool passing them says the rules implement the definitions.
TEST_CASE("waste rules: the unit tests' figures agree with the Python reference", "[.python]") {
  if (which("python3").empty()) gpuwise::test::skipTest("python3 is not installed");
  TempDir scratch;
  Run ref = run({"python3", repoPath("tests/tools/waste_rules_reference.py"),
                 repoPath("tests/containers/waste_rules_test.yaml")},
                scratch.path, scratch, "reference");
  INFO(ref.out << ref.err);
  CHECK(ref.rc == 0);
  CHECK(ref.out.find("19 samples checked, 0 differ") != std::string::npos);
}

TEST_CASE("Grafana dashboard: the waste-by-team row reads the recorded series per namespace") {
  json dash =
      json::parse(readFile(repoPath("containers/kubernetes/monitoring/gpuwise-dashboard.json")));
  const RecordingRules waste = recordingRules(repoPath(kRules));
  bool in_row = false;
  size_t panels = 0;
  std::set<std::string> read;
  for (const auto& panel : dash["panels"]) {
    if (panel["type"] == "row") {
      in_row = panel["title"] == "Waste by team (every namespace)";
      continue;
    }
    if (!in_row) continue;
    INFO(panel["title"]);
    ++panels;
    for (const auto& t : panel["targets"]) {
      const std::string expr = t["expr"];
      INFO(expr);
      // Every namespace, not the dashboard's $namespace: the row compares teams.
      CHECK(expr.find('$') == std::string::npos);
      CHECK(gpuwiseNames(expr).empty());
      auto recorded = recordedNames(expr);
      CHECK(recorded.size() == 1);
      for (const auto& r : recorded) {
        CHECK(waste.recorded.count(r) == 1);
        read.insert(r);
      }
    }
  }
  CHECK(panels == 5);
  // Idle hours and dollars per namespace and per job, both windows, and the top recommendations.
  for (const char* r :
       {"namespace:gpuwise_gpu_idle_hours:1d", "namespace:gpuwise_gpu_idle_hours:1w",
        "namespace:gpuwise_gpu_idle_dollars:1d", "namespace:gpuwise_gpu_idle_dollars:1w",
        "namespace_job_name:gpuwise_gpu_idle_hours:1d",
        "namespace_job_name:gpuwise_gpu_idle_dollars:1w",
        "cluster:gpuwise_recommendation_saving_dollars:top10_1d"}) {
    INFO(r);
    CHECK(read.count(r) == 1);
  }
}
