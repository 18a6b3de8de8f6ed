// Waste by team (issue 22) in a real Prometheus: two namespaces' simulated runs reach one advisor
// (`gpuwise advisor --metrics-addr`, each run labelled as its pod would be by the webhook:
// GPUWISE_NAMESPACE, GPUWISE_POD, GPUWISE_JOB), Prometheus scrapes it and evaluates the shipped
// recording rules (containers/kubernetes/monitoring/waste-rules.yaml, every 500 ms instead of 5
// minutes), and every query of the dashboard's "Waste by team" row, asked through the HTTP API,
// answers for both namespaces with the figures of the reports the advisor writes at SIGTERM.
//
// Two checks for each answer. Exact: it equals the same figure written here from the raw series
// (increase() of the counters, the price gauge, the live saving ratio) at the time the rule ran, so
// the rules aggregate, price and join as they say. Against the reports: the counters' last samples
// are the report's figures, and the answer lies within what increase() can make of them. It sees
// a counter from its first scrape, missing what the counter held then (the first sample: CUPTI
// delivers records in buffers, so on a run of seconds that is much of it), and extrapolates by at
// most 1.1 average scrape intervals at each end:  last - first <= answer <= last x (1 + 2.2 /
// (samples - 1)). On a job of hours both bounds close on the report.
#include "tests/advisor/subprocess.h"
#include "tests/e2e/prometheus_support.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <set>

using namespace gpuwise::advisor::test;
using json = nlohmann::json;

namespace {

constexpr double kSecondsPerHour = 3600.0;

// One namespace's run: its pod's labels, the sample it runs and the recommendation it plants.
struct TeamRun {
  std::string ns, pod, job, sample, steps;
};

const TeamRun kTeams[] = {{"team-a", "llm-0", "llm", "input_stall", "480"},
                          {"team-b", "cv-0", "cv", "host_sync", "2500"}};

// What Prometheus holds of a counter (summed over the series `selector` matches): the sum of each
// series' first and last sample in the last hour, and the fewest samples a series has.
struct CounterSamples {
  double first = 0, last = 0;
  size_t samples = 0;
  // increase() of it is within [lower, upper] (see the file's comment), in the counter's unit.
  double lower() const { return last - first; }
  double upper() const { return last * (1.0 + 2.2 / double(samples - 1)); }
};

CounterSamples counterSamples(httplib::Client& prom, const std::string& selector, double at) {
  CounterSamples c;
  c.samples = SIZE_MAX;
  for (const auto& series : query(prom, selector + "[1h]", at)) {
    const json& values = series["values"];
    c.first += std::stod(values.front()[1].get<std::string>());
    c.last += std::stod(values.back()[1].get<std::string>());
    c.samples = std::min(c.samples, values.size());
  }
  return c;
}

std::string podSelector(const TeamRun& t) {
  return "{namespace=\"" + t.ns + "\",pod=\"" + t.pod + "\"}";
}

// The reports of an advisor several pods reached: one per pod, "<name>-<namespace>.<pod>.json".
json reportOf(const std::string& dir, const TeamRun& t) {
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    const std::string name = f.path().filename();
    if (name.size() > 5 && name.substr(name.size() - 5) == ".json" &&
        name.find("-" + t.ns + "." + t.pod + ".json") != std::string::npos)
      return json::parse(readFile(f.path()));
  }
  FAIL("no report for " << t.ns << "/" << t.pod << " in " << dir);
  return {};
}

// The queries of the dashboard's "Waste by team" row.
std::vector<std::string> wasteRowQueries() {
  json dash = json::parse(
      readFile(sourceDir() + "/containers/kubernetes/monitoring/gpuwise-dashboard.json"));
  std::vector<std::string> exprs;
  bool in_row = false;
  for (const auto& panel : dash["panels"]) {
    if (panel["type"] == "row")
      in_row = panel["title"] == "Waste by team (every namespace)";
    else if (in_row)
      for (const auto& t : panel["targets"])
        exprs.push_back(t["expr"]);
  }
  return exprs;
}

// Prometheus's clock now, in seconds.
double prometheusNow(httplib::Client& prom) {
  auto r = query(prom, "vector(time())");
  return r.empty() ? 0 : valueOf(r[0]);
}

// Every query of the row answers with samples recorded after `since` (the rules ran on the final
// counters), one per namespace at least.
bool recordedSince(httplib::Client& prom, const std::vector<std::string>& exprs, double since) {
  for (const auto& e : exprs) {
    auto r = query(prom, "timestamp(" + e + ")");
    std::set<std::string> namespaces;
    for (const auto& s : r) {
      if (valueOf(s) < since) return false;
      namespaces.insert(s["metric"].value("namespace", ""));
    }
    if (namespaces.size() < std::size(kTeams)) return false;
  }
  return true;
}

// The figures the report has for one namespace's pod, and what Prometheus held of its counters.
struct TeamFigures {
  json report;
  CounterSamples idle, span; // seconds; span = busy + idle, the report's gpu_hours
  double price = 0;
};

// The window of a recorded series ("1d", "1w"): the end of its name.
std::string windowOf(const std::string& recorded) {
  return recorded.substr(recorded.size() - 2);
}

// What one answer of a row query should be, from the raw series of its namespace at `at` (the time
// the rule ran). One pod and one GPU a namespace: the dollars are its hours at the GPU's price.
double rawFigure(httplib::Client& prom, const std::string& expr, const json& metric, double at) {
  const std::string ns = metric["namespace"], w = windowOf(expr);
  const std::string sel = "{namespace=\"" + ns + "\"}";
  auto scalar = [&](const std::string& promql) {
    auto r = query(prom, promql, at);
    REQUIRE(r.size() == 1);
    return valueOf(r[0]);
  };
  const double price =
      scalar("last_over_time(gpuwise_gpu_hour_price_dollars" + sel + "[" + w + "])");
  const double idle_hours =
      scalar("sum(increase(gpuwise_gpu_idle_seconds_total" + sel + "[" + w + "])) / 3600");
  if (expr.find("gpu_idle_hours") != std::string::npos) return idle_hours;
  if (expr.find("gpu_idle_dollars") != std::string::npos) return idle_hours * price;
  const std::string rec = "{namespace=\"" + ns + "\",pod=\"" + metric["pod"].get<std::string>() +
                          "\",id=\"" + metric["id"].get<std::string>() + "\"}";
  const double ratio = scalar("max(last_over_time(gpuwise_recommendation_expected_saving_ratio" +
                              rec + "[" + w + "]))");
  const double busy_hours =
      scalar("sum(increase(gpuwise_gpu_busy_seconds_total" + sel + "[" + w + "])) / 3600");
  return ratio * (idle_hours + busy_hours) * price;
}

// One answer of a row query against the report of its namespace's pod (see the file's comment).
void checkAgainstReport(const std::string& expr, const json& sample, const TeamFigures& f) {
  const double value = valueOf(sample);
  INFO(expr << " " << sample.dump() << "\nreport cost: " << f.report["cost"].dump());
  if (expr.find("gpu_idle_hours") != std::string::npos) {
    CHECK(value * kSecondsPerHour >= f.idle.lower() * (1 - 1e-9));
    CHECK(value * kSecondsPerHour <= f.idle.upper());
  } else if (expr.find("gpu_idle_dollars") != std::string::npos) {
    CHECK(value * kSecondsPerHour / f.price >= f.idle.lower() * (1 - 1e-9));
    CHECK(value * kSecondsPerHour / f.price <= f.idle.upper());
  } else {
    REQUIRE(expr.find("recommendation_saving_dollars") != std::string::npos);
    const std::string id = sample["metric"]["id"];
    double ratio = -1;
    for (const auto& r : f.report["recommendations"])
      if (r["id"] == id) ratio = r["expected_saving_ratio"];
    // The live rules run on the windows analysed so far; the report, on the whole run, may drop a
    // marginal finding. Those the report keeps are priced alike.
    if (ratio < 0) {
      WARN(id << " of " << sample["metric"]["pod"] << " is live but not in the final report");
      return;
    }
    const double span_seconds = value * kSecondsPerHour / f.price / ratio;
    CHECK(span_seconds >= f.span.lower() * (1 - 1e-4));
    CHECK(span_seconds <= f.span.upper() * (1 + 1e-4));
  }
}

// Both teams' runs at once, as two pods of the cluster would run them; each exits 0.
void runTeams(const std::string& endpoint, const TempDir& dir) {
  std::vector<std::unique_ptr<Process>> runs;
  for (const auto& t : kTeams)
    runs.push_back(std::make_unique<Process>(
        std::vector<std::string>{buildDir() + "/bin/gpuwise", "run", "--simulate", "--endpoint",
                                 endpoint, "--", buildDir() + "/samples/" + t.sample, "--steps",
                                 t.steps},
        std::vector<std::string>{"RANK=0", "GPUWISE_NAMESPACE=" + t.ns, "GPUWISE_POD=" + t.pod,
                                 "GPUWISE_CONTAINER=train", "GPUWISE_JOB=" + t.job},
        dir.path, dir.path, t.sample));
  for (auto& r : runs) {
    auto status = r->wait(std::chrono::seconds(90));
    INFO(r->err());
    REQUIRE(status == 0);
  }
}

// What Prometheus holds of a team's pod at `at`, and its report.
TeamFigures teamFigures(httplib::Client& prom, const TeamRun& t, double at,
                        const std::string& reports) {
  TeamFigures f;
  f.idle = counterSamples(prom, "gpuwise_gpu_idle_seconds_total" + podSelector(t), at);
  CounterSamples busy = counterSamples(prom, "gpuwise_gpu_busy_seconds_total" + podSelector(t), at);
  f.span = {f.idle.first + busy.first, f.idle.last + busy.last,
            std::min(f.idle.samples, busy.samples)};
  auto price =
      query(prom, "last_over_time(gpuwise_gpu_hour_price_dollars" + podSelector(t) + "[1h])", at);
  REQUIRE(price.size() == 1);
  f.price = valueOf(price[0]);
  f.report = reportOf(reports, t);
  const json& cost = f.report["cost"];
  INFO(t.ns << ": idle first " << f.idle.first << " s, last " << f.idle.last << " s, "
            << f.idle.samples << " samples; report " << cost.dump());
  CHECK(f.idle.samples >= 4);
  // Prometheus's last samples are the report's figures, and its price the report's.
  CHECK(f.idle.last ==
        Approx(cost["wasted_gpu_hours"].get<double>() * kSecondsPerHour).epsilon(1e-6));
  CHECK(f.span.last == Approx(cost["gpu_hours"].get<double>() * kSecondsPerHour).epsilon(1e-6));
  CHECK(f.price == cost["gpu_hour_price"].get<double>());
  return f;
}

// Every query of the row at `at`: both namespaces (and both jobs), each answer equal to its figure
// from the raw series and within the bounds of its pod's report; the top recommendations by money
// hold each pod's planted finding.
void checkRow(httplib::Client& prom, const std::vector<std::string>& exprs, double at,
              std::map<std::string, TeamFigures>& figures) {
  for (const auto& e : exprs) {
    const json answers = query(prom, e, at), stamps = query(prom, "timestamp(" + e + ")", at);
    INFO(e << " -> " << answers.dump());
    REQUIRE(stamps.size() == answers.size());
    std::set<std::string> namespaces, jobs;
    for (const auto& sample : answers) {
      json labels = sample["metric"];
      labels.erase("__name__");
      const std::string ns = labels["namespace"];
      namespaces.insert(ns);
      if (labels.contains("job_name")) jobs.insert(labels["job_name"]);
      double ran_at = 0;
      for (const auto& st : stamps)
        if (st["metric"] == labels) ran_at = valueOf(st);
      REQUIRE(ran_at > 0);
      CHECK(valueOf(sample) == Approx(rawFigure(prom, e, labels, ran_at)).epsilon(1e-9));
      REQUIRE(figures.count(ns) == 1);
      checkAgainstReport(e, sample, figures[ns]);
    }
    CHECK(namespaces == std::set<std::string>{"team-a", "team-b"});
    if (e.rfind("namespace_job_name:", 0) == 0) CHECK(jobs == std::set<std::string>{"llm", "cv"});
  }
  // input_stall plants prefetch_input, host_sync reduce_host_syncs, as their reports recommend.
  std::set<std::string> top;
  for (const auto& s : query(prom, "cluster:gpuwise_recommendation_saving_dollars:top10_1d", at))
    top.insert(s["metric"]["pod"].get<std::string>() + "/" + s["metric"]["id"].get<std::string>());
  CHECK(top.count("llm-0/prefetch_input") == 1);
  CHECK(top.count("cv-0/reduce_host_syncs") == 1);
}

} // namespace

TEST_CASE("prometheus records waste by team for two namespaces; the dashboard row agrees with "
          "the reports",
          "[e2e][prometheus]") {
  if (which("prometheus").empty())
    gpuwise::test::skipTest(
        "prometheus is not installed (Debian: scripts/install-deps installs it)");
  TempDir dir;
  const int metrics_port = freePort(), prom_port = freePort();
  const std::string endpoint = "ipc://" + (dir / "advisor.sock");
  const std::string reports = dir / "reports";
  Process advisor = startAdvisor(dir, metrics_port);
  httplib::Client adv("127.0.0.1", metrics_port);
  adv.set_connection_timeout(1, 0);
  REQUIRE(answersHealthz(adv));
  const std::string rules = shippedRulesFile(dir, "0s", "waste-rules.yaml", "500ms");
  Process prometheus =
      startPrometheus(dir, writePrometheusConfig(dir, metrics_port, rules, 0, "500ms"), prom_port);
  httplib::Client prom("127.0.0.1", prom_port);
  prom.set_connection_timeout(1, 0);
  waitUntilScraping(prom, dir);

  runTeams(endpoint, dir);
  // Each run's final batch is in Prometheus: its pod has no process connected.
  for (const auto& t : kTeams)
    REQUIRE(eventually(
        [&] {
          auto p = query(prom, "gpuwise_processes" + podSelector(t));
          return p.size() == 1 && valueOf(p[0]) == 0;
        },
        std::chrono::seconds(20)));
  // The advisor writes the reports and goes: Prometheus's samples stop changing (its next scrape
  // fails), so a rule's answer and the raw series it read can be compared at the time it ran.
  ::kill(advisor.pid(), SIGTERM);
  REQUIRE(advisor.wait(std::chrono::seconds(30)) == 0);
  REQUIRE(eventually([&] {
    auto up = query(prom, "up{job=\"gpuwise\"}");
    return up.size() == 1 && valueOf(up[0]) == 0;
  }));
  const double gone = prometheusNow(prom);
  REQUIRE(gone > 0);
  const std::vector<std::string> exprs = wasteRowQueries();
  REQUIRE(exprs.size() == 11);
  bool recorded =
      eventually([&] { return recordedSince(prom, exprs, gone); }, std::chrono::seconds(30));
  INFO("prometheus: " << readFile(dir / "prometheus.err"));
  REQUIRE(recorded);

  const double at = prometheusNow(prom);
  std::map<std::string, TeamFigures> figures;
  for (const auto& t : kTeams)
    figures[t.ns] = teamFigures(prom, t, at, reports);
  checkRow(prom, exprs, at, figures);
}
