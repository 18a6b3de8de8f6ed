// The Prometheus metrics contract (docs/metrics.md) and everything that reads it: the sample
// exposition passes `promtool check metrics` and matches the contract's names, types, HELP texts
// and labels; the alert rules pass `promtool check rules` and their unit tests
// (alerts_test.yaml); every query of the Grafana dashboard, the alerts, the HPA and the
// prometheus-adapter rule names only metrics of the contract. The advisor's real /metrics output
// will be held to the same checks when it lands.
#include "tests/advisor/metrics_parse.h"
#include "tests/containers/containers_support.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace gpuwise::containers::test;
namespace fs = std::filesystem;

namespace {

// The cases that need promtool or python3-yaml carry [.promtool] or [.yaml] and run as their own
// CTest entries (containers_metrics_contract_promtool_test, ..._yaml_test): skipped without it.
void requirePromtool() {
  if (which("promtool").empty())
    gpuwise::test::skipTest("promtool is not installed (Debian: scripts/install-deps prometheus)");
}

void requireYaml(const TempDir& scratch) {
  if (!haveYaml(scratch))
    gpuwise::test::skipTest(
        "python3-yaml is not installed (Debian: scripts/install-deps python3-yaml)");
}

// Every metric `expr` names is in the contract, and it names at least one.
void checkQuery(const std::string& where, const std::string& expr,
                const std::map<std::string, MetricSpec>& contract) {
  INFO(where << ": " << expr);
  auto names = gpuwiseNames(expr);
  CHECK_FALSE(names.empty());
  for (const auto& n : names) {
    INFO(n);
    CHECK_FALSE(contractMetric(n, contract).empty());
  }
}

struct Series {
  std::string name;
  std::set<std::string> labels;
};

Series parseSeries(const std::string& line) {
  Series s;
  size_t brace = line.find('{');
  size_t space = line.find(' ');
  s.name = line.substr(0, std::min(brace, space));
  if (brace != std::string::npos && brace < space) {
    static const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)=\"(?:[^\"\\]|\\.)*\")");
    std::string inside = line.substr(brace, line.rfind('}') - brace);
    for (std::sregex_iterator it(inside.begin(), inside.end(), label), end; it != end; ++it)
      s.labels.insert((*it)[1]);
  }
  return s;
}

} // namespace

TEST_CASE("metrics contract: docs/metrics.md lists the metrics the brief asks for") {
  auto contract = metricsContract();
  REQUIRE(contract.size() == 30);
  const std::map<std::string, std::string> required = {
      {"gpuwise_gpu_busy_ratio", "gauge"},
      {"gpuwise_gpu_busy_seconds_total", "counter"},
      {"gpuwise_gpu_idle_seconds_total", "counter"},
      {"gpuwise_kernel_seconds_total", "counter"},
      {"gpuwise_kernels_total", "counter"},
      {"gpuwise_copy_bytes_total", "counter"},
      {"gpuwise_copy_seconds_total", "counter"},
      {"gpuwise_input_stall_seconds_total", "counter"},
      {"gpuwise_host_sync_seconds_total", "counter"},
      {"gpuwise_memory_peak_bytes", "gauge"},
      {"gpuwise_device_memory_bytes", "gauge"},
      {"gpuwise_step_duration_seconds", "histogram"},
      {"gpuwise_events_total", "counter"},
      {"gpuwise_events_dropped_total", "counter"},
      {"gpuwise_recommendation_expected_saving_ratio", "gauge"},
      {"gpuwise_info", "gauge"},
      {"gpuwise_rank_step_p50_seconds", "gauge"},
      {"gpuwise_rank_communication_seconds_total", "counter"},
      {"gpuwise_rank_communication_exposed_seconds_total", "counter"}};
  for (const auto& [name, type] : required) {
    INFO(name);
    REQUIRE(contract.count(name) == 1);
    CHECK(contract[name].type == type);
  }
  CHECK(contract["gpuwise_gpu_idle_seconds_total"].labels.count("cause") == 1);
  CHECK(contract["gpuwise_kernel_seconds_total"].labels ==
        std::set<std::string>{"namespace", "pod", "container", "job_name", "rank", "Hostname",
                              "gpu", "cuda_device", "UUID", "precision", "tensor_core"});
  CHECK(contract["gpuwise_copy_bytes_total"].labels.count("direction") == 1);
  CHECK(contract["gpuwise_copy_bytes_total"].labels.count("host_memory") == 1);
  CHECK(contract["gpuwise_recommendation_expected_saving_ratio"].labels.count("id") == 1);
  CHECK(contract["gpuwise_rank_step_p50_seconds"].labels ==
        std::set<std::string>{"namespace", "pod", "container", "rank", "job_name"});
  for (const auto& [name, spec] : contract) {
    INFO(name);
    CHECK(spec.labels.count("namespace") == 1);
    CHECK(spec.labels.count("pod") == 1);
    CHECK((spec.type == "counter") ==
          (name.size() > 6 && name.substr(name.size() - 6) == "_total"));
    CHECK(!spec.help.empty());
  }
}

TEST_CASE("metrics contract: the sample exposition matches the contract") {
  const std::string sample = repoPath("tests/containers/sample_metrics.prom");
  auto contract = metricsContract();
  std::map<std::string, std::string> helps, types;
  std::set<std::string> seen;
  std::istringstream lines(readFile(sample));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      std::string rest = line.substr(7);
      helps[rest.substr(0, rest.find(' '))] = rest.substr(rest.find(' ') + 1);
    } else if (line.rfind("# TYPE ", 0) == 0) {
      std::string rest = line.substr(7);
      types[rest.substr(0, rest.find(' '))] = rest.substr(rest.find(' ') + 1);
    } else if (!line.empty() && line[0] != '#') {
      Series s = parseSeries(line);
      std::string metric = contractMetric(s.name, contract);
      INFO(line);
      REQUIRE_FALSE(metric.empty());
      seen.insert(metric);
      std::set<std::string> allowed = contract[metric].labels;
      if (s.name == metric + "_bucket") allowed.insert("le");
      for (const auto& l : s.labels)
        CHECK(allowed.count(l) == 1);
      // Every documented label is present (an empty value is how a label is absent).
      for (const auto& l : contract[metric].labels)
        CHECK(s.labels.count(l) == 1);
    }
  }
  for (const auto& [name, spec] : contract) {
    INFO(name);
    CHECK(seen.count(name) == 1);
    CHECK(helps[name] == spec.help);
    CHECK(types[name] == spec.type);
  }
}

TEST_CASE("metrics contract: the sample exposition passes promtool", "[.promtool]") {
  requirePromtool();
  TempDir scratch;
  const std::string sample = repoPath("tests/containers/sample_metrics.prom");
  // promtool reads the exposition on stdin.
  Run lint =
      run({"bash", "-c", "promtool check metrics < \"$0\"", sample}, scratch.path, scratch, "lint");
  INFO(lint.out << lint.err);
  // Exit status 3 is lint findings: the one accepted is the camelCase finding for dcgm-exporter's
  // `modelName` label on the per-GPU series (dcgm-exporter compatibility, issue 18).
  CHECK((lint.rc == 0 || lint.rc == 3));
  CHECK(gpuwise::advisor::test::promtoolFindingsBeyondModelName(readFile(sample),
                                                                lint.out + lint.err) == "");
}

namespace {

json prometheusRule(const TempDir& scratch) {
  return yamlFileToJson(repoPath("containers/kubernetes/monitoring/prometheus-rule.yaml"),
                        scratch)[0];
}

} // namespace

TEST_CASE("alert rules: every metric is in the contract", "[.yaml]") {
  TempDir scratch;
  requireYaml(scratch);
  auto contract = metricsContract();
  json rule = prometheusRule(scratch);
  REQUIRE(rule["kind"] == "PrometheusRule");
  size_t alerts = 0;
  for (const auto& group : rule["spec"]["groups"]) {
    for (const auto& r : group["rules"]) {
      checkQuery(r.value("alert", "?"), r["expr"], contract);
      CHECK(r["labels"].contains("severity"));
      CHECK(r["annotations"].contains("summary"));
      ++alerts;
    }
  }
  CHECK(alerts == 8);
}

TEST_CASE("alert rules: promtool checks them and their unit tests pass", "[.promtool]") {
  requirePromtool();
  TempDir scratch;
  requireYaml(scratch);
  json rule = prometheusRule(scratch);
  // The rule groups as a plain Prometheus rule file (JSON is YAML), next to the unit tests.
  std::ofstream(scratch / "gpuwise-alerts.rules.json") << rule["spec"].dump(2);
  fs::copy_file(repoPath("tests/containers/alerts_test.yaml"), scratch / "alerts_test.yaml");
  Run check = run({"promtool", "check", "rules", "gpuwise-alerts.rules.json"}, scratch.path,
                  scratch, "rules");
  INFO(check.out << check.err);
  CHECK(check.rc == 0);
  CHECK(check.out.find("SUCCESS: 8 rules found") != std::string::npos);
  Run test = run({"promtool", "test", "rules", "alerts_test.yaml"}, scratch.path, scratch, "test");
  INFO(test.out << test.err);
  CHECK(test.rc == 0);
}

TEST_CASE("Grafana dashboard: valid, and every query names metrics of the contract") {
  auto contract = metricsContract();
  json dash =
      json::parse(readFile(repoPath("containers/kubernetes/monitoring/gpuwise-dashboard.json")));
  CHECK(dash["uid"] == "gpuwise-efficiency");
  const RecordingRules waste =
      recordingRules(repoPath("containers/kubernetes/monitoring/waste-rules.yaml"));
  REQUIRE(waste.recorded.size() == 24);
  std::set<int> ids;
  std::set<std::pair<int, int>> cells; // grid cells taken: panels must not overlap
  std::set<std::string> used;
  size_t queries = 0;
  for (const auto& panel : dash["panels"]) {
    INFO(panel["title"]);
    CHECK(ids.insert(panel["id"].get<int>()).second);
    const json& g = panel["gridPos"];
    for (int x = g["x"]; x < g["x"].get<int>() + g["w"].get<int>(); ++x)
      for (int y = g["y"]; y < g["y"].get<int>() + g["h"].get<int>(); ++y)
        CHECK(cells.insert({x, y}).second);
    CHECK(g["x"].get<int>() + g["w"].get<int>() <= 24);
    if (panel["type"] == "row") continue;
    REQUIRE(panel.contains("targets"));
    CHECK(!panel["targets"].empty());
    for (const auto& t : panel["targets"]) {
      // The "Waste by team" row reads recorded series (waste-rules.yaml): each one recorded there,
      // and the metrics their rules read count as shown.
      auto recorded = recordedNames(t["expr"]);
      for (const auto& r : recorded) {
        INFO(r);
        CHECK(waste.recorded.count(r) == 1);
        used.insert(waste.metrics.begin(), waste.metrics.end());
      }
      if (recorded.empty()) checkQuery(panel["title"], t["expr"], contract);
      for (const auto& n : gpuwiseNames(t["expr"]))
        used.insert(contractMetric(n, contract));
      ++queries;
    }
  }
  bool datasource = false;
  for (const auto& v : dash["templating"]["list"]) {
    if (v["type"] == "datasource") datasource = v["query"] == "prometheus";
    if (v["type"] == "query")
      checkQuery("variable " + v["name"].get<std::string>(), v["query"]["query"], contract);
  }
  CHECK(datasource);
  CHECK(queries >= 18);
  // The dashboard shows every figure the contract has, except the bookkeeping gauges.
  for (const auto& [name, spec] : contract) {
    if (name == "gpuwise_info") continue;
    INFO(name);
    CHECK(used.count(name) == 1);
  }
}

TEST_CASE("HPA and prometheus-adapter: the custom metric is a gpuwise metric", "[.yaml]") {
  TempDir scratch;
  requireYaml(scratch);
  auto contract = metricsContract();
  json adapter = yamlFileToJson(
      repoPath("containers/kubernetes/examples/prometheus-adapter-rules.yaml"), scratch)[0];
  const json& rule = adapter["rules"]["custom"][0];
  checkQuery("seriesQuery", rule["seriesQuery"], contract);
  json hpa =
      yamlFileToJson(repoPath("containers/kubernetes/examples/inference-hpa.yaml"), scratch)[0];
  std::string metric = hpa["spec"]["metrics"][0]["pods"]["metric"]["name"];
  CHECK(contract.count(metric) == 1);
  CHECK(rule["name"]["as"] == metric);
  CHECK(rule["resources"]["overrides"]["pod"]["resource"] == "pod");
  CHECK(contract[metric].labels.count("pod") == 1);
}
