// gpuwise diff: per-metric deltas, the regression gate and its threshold edges, and the CLI's
// exit statuses (0 no regression, 1 regression, 2 bad input) on real report files.
#include "advisor/analysis/step_analyzer.h"
#include "advisor/cli/cli.h"
#include "advisor/diff/report_diff.h"
#include "advisor/report/report_json.h"
#include "advisor/rules/rule_set.h"
#include "tests/advisor/subprocess.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using json = nlohmann::ordered_json;

namespace {

// A minimal gpuwise.report/v1 document with the figures the gate reads.
json report(std::optional<double> step, std::optional<double> busy) {
  json r;
  r["schema"] = "gpuwise.report/v1";
  json s;
  s["gpu_idle_ratio"] = busy ? json(1.0 - *busy) : json(nullptr);
  s["steps"] = {{"count", step ? json(100) : json(nullptr)},
                {"mean_seconds", step ? json(*step) : json(nullptr)},
                {"source", step ? json("profiler_step") : json(nullptr)}};
  r["summary"] = s;
  r["recommendations"] = json::array();
  return r;
}

const MetricDelta& metric(const ReportDiff& d, const std::string& name) {
  for (const auto& m : d.metrics)
    if (m.name == name) return m;
  FAIL("no metric " << name);
  throw;
}

struct CliResult {
  int status;
  std::string out, err;
};

CliResult cli(const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"gpuwise", "diff"};
  for (const auto& a : args)
    argv.push_back(a.c_str());
  std::ostringstream out, err;
  int status = runCli(static_cast<int>(argv.size()), argv.data(), {out, err});
  return {status, out.str(), err.str()};
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

} // namespace

TEST_CASE("diff: step time growing beyond the threshold is a regression") {
  auto d = diffReports(report(0.100, 0.9), report(0.110, 0.9));
  CHECK(d.verdict == DiffVerdict::Regression);
  CHECK(d.regressions == std::vector<std::string>{"step_seconds"});
  const auto& step = metric(d, "step_seconds");
  CHECK(step.gate);
  CHECK(step.change == Change::Worse);
  CHECK(*step.delta() == Approx(0.010));
  CHECK(*step.relative() == Approx(0.10));
  CHECK(metric(d, "gpu_busy_ratio").change == Change::Same);
  auto text = renderDiffText(d);
  CHECK(text.rfind("gpuwise diff: REGRESSION: step time (mean) 100 ms -> 110 ms (+10.0%), GPU "
                   "busy share 90.0% -> 90.0% (+0.0 pts); threshold 5.0%\n",
                   0) == 0);
  CHECK(text.find("(gate: REGRESSION)") != std::string::npos);
}

TEST_CASE("diff: GPU busy share falling beyond the threshold is a regression") {
  auto d = diffReports(report(std::nullopt, 0.80), report(std::nullopt, 0.70));
  CHECK(d.verdict == DiffVerdict::Regression);
  CHECK(d.regressions == std::vector<std::string>{"gpu_busy_ratio"});
  CHECK(metric(d, "step_seconds").change == Change::Unknown);
  CHECK(*metric(d, "gpu_busy_ratio").relative() == Approx(-0.125));
}

TEST_CASE("diff: improvements and unchanged runs pass the gate") {
  auto better = diffReports(report(0.100, 0.80), report(0.080, 0.95));
  CHECK(better.verdict == DiffVerdict::Improvement);
  CHECK(metric(better, "step_seconds").change == Change::Better);
  CHECK(metric(better, "gpu_busy_ratio").change == Change::Better);
  CHECK(renderDiffText(better).rfind("gpuwise diff: improvement:", 0) == 0);

  auto same = diffReports(report(0.100, 0.80), report(0.102, 0.79));
  CHECK(same.verdict == DiffVerdict::Unchanged);
  CHECK(renderDiffText(same).rfind("gpuwise diff: no regression:", 0) == 0);

  auto unknown = diffReports(report(std::nullopt, std::nullopt), report(0.1, std::nullopt));
  CHECK(unknown.verdict == DiffVerdict::NotComparable);
  CHECK_FALSE(unknown.regressed());
}

TEST_CASE("diff: the threshold edge belongs to 'no regression'") {
  // 5% exactly is not beyond 5%; a hair more is.
  CHECK(diffReports(report(0.100, 0.9), report(0.105, 0.9)).verdict != DiffVerdict::Regression);
  CHECK(diffReports(report(0.100, 0.9), report(0.10501, 0.9)).verdict == DiffVerdict::Regression);
  CHECK(diffReports(report(1, 0.80), report(1, 0.76)).verdict != DiffVerdict::Regression);
  CHECK(diffReports(report(1, 0.80), report(1, 0.7599)).verdict == DiffVerdict::Regression);
  // A looser threshold lets a 10% slowdown through; zero catches any slowdown.
  CHECK(diffReports(report(0.1, 0.9), report(0.11, 0.9), {.threshold = 0.2}).verdict ==
        DiffVerdict::Unchanged);
  CHECK(diffReports(report(0.1, 0.9), report(0.1001, 0.9), {.threshold = 0.0}).verdict ==
        DiffVerdict::Regression);
}

TEST_CASE("diff: idle causes, precision, memory, cost and recommendations are compared") {
  auto base = report(0.1, 0.8), next = report(0.1, 0.8);
  base["summary"]["idle_seconds_by_cause"] = {{"input", 2.0}, {"sync", 0.5}};
  next["summary"]["idle_seconds_by_cause"] = {{"input", 0.5}, {"launch_overhead", 0.3}};
  base["summary"]["precision_time_ratio"] = {{"fp32", 0.9}, {"bf16", 0.1}};
  next["summary"]["precision_time_ratio"] = {{"fp32", 0.2}, {"bf16", 0.8}};
  base["summary"]["memory_peak_bytes"] = 10e9;
  next["summary"]["memory_peak_bytes"] = 14e9;
  base["cost"] = {{"per_day", {{"wasted_cost", 100.0}}}};
  next["cost"] = {{"per_day", {{"wasted_cost", 40.0}}}};
  base["recommendations"] = {{{"id", "enable_mixed_precision"}}, {{"id", "prefetch_input"}}};
  next["recommendations"] = {{{"id", "prefetch_input"}}, {{"id", "reduce_memory_pressure"}}};
  auto d = diffReports(base, next);
  CHECK(d.verdict == DiffVerdict::Unchanged); // none of these gate
  CHECK(metric(d, "idle_seconds.input").change == Change::Better);
  CHECK(*metric(d, "idle_seconds.input").delta() == Approx(-1.5));
  CHECK_FALSE(metric(d, "idle_seconds.sync").next.has_value());
  CHECK_FALSE(metric(d, "idle_seconds.launch_overhead").base.has_value());
  CHECK(metric(d, "precision_time_ratio.bf16").change == Change::Changed);
  CHECK(metric(d, "memory_peak_bytes").change == Change::Worse);
  CHECK(metric(d, "idle_cost_per_day").change == Change::Better);
  CHECK(d.appeared == std::vector<std::string>{"reduce_memory_pressure"});
  CHECK(d.disappeared == std::vector<std::string>{"enable_mixed_precision"});
  CHECK(d.kept == std::vector<std::string>{"prefetch_input"});
  auto text = renderDiffText(d);
  CHECK(text.find("recommendations appeared: reduce_memory_pressure\n") != std::string::npos);
  CHECK(text.find("recommendations disappeared: enable_mixed_precision\n") != std::string::npos);
  CHECK(text.find("kernel time in bf16") != std::string::npos);

  auto j = diffToJson(d, "a.json", "b.json");
  CHECK(j["schema"] == "gpuwise.diff/v1");
  CHECK(j["verdict"] == "unchanged");
  CHECK(j["base"] == "a.json");
  CHECK(j["recommendations"]["appeared"][0] == "reduce_memory_pressure");
}

TEST_CASE("diff: what is not a report is said in a few words") {
  CHECK(validateReport(report(0.1, 0.9)) == "");
  CHECK(validateReport(json::array()) == "not a JSON object");
  CHECK(validateReport({{"summary", json::object()}}).find("no \"schema\" field") == 0);
  CHECK(validateReport({{"schema", "gpuwise.report/v2"}, {"summary", json::object()}}) ==
        "schema is \"gpuwise.report/v2\", not gpuwise.report/v1");
  CHECK(validateReport({{"schema", "gpuwise.report/v1"}}) == "no \"summary\" object");
}

TEST_CASE("gpuwise diff: exit 0, 1 and 2, with --json and --threshold") {
  TempDir dir;
  write(dir / "base.json", report(0.100, 0.9).dump());
  write(dir / "slow.json", report(0.120, 0.9).dump());
  write(dir / "same.json", report(0.101, 0.9).dump());

  auto ok = cli({dir / "base.json", dir / "same.json"});
  CHECK(ok.status == 0);
  CHECK(ok.out.rfind("gpuwise diff: no regression:", 0) == 0);
  CHECK(ok.err.empty());

  auto bad = cli({dir / "base.json", dir / "slow.json", "--json", dir / "diff.json"});
  CHECK(bad.status == 1);
  CHECK(bad.out.rfind("gpuwise diff: REGRESSION:", 0) == 0);
  auto j = json::parse(readFile(dir / "diff.json"));
  CHECK(j["verdict"] == "regression");
  CHECK(j["regressions"][0] == "step_seconds");
  CHECK(j["threshold"] == 0.05);

  CHECK(cli({dir / "base.json", dir / "slow.json", "--threshold", "0.25"}).status == 0);

  // Bad input: one line on stderr naming the file and the problem, exit 2.
  write(dir / "garbage.json", "{not json");
  write(dir / "v2.json", R"({"schema": "gpuwise.report/v2", "summary": {}})");
  for (const auto& [args, expect] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{dir / "missing.json", dir / "base.json"}, dir / "missing.json: cannot read: "},
           {{dir / "base.json", dir / "garbage.json"}, dir / "garbage.json: not valid JSON"},
           {{dir / "v2.json", dir / "base.json"},
            dir / "v2.json: schema is \"gpuwise.report/v2\", not gpuwise.report/v1"},
           {{dir / "base.json", dir / "same.json", "--threshold", "-0.1"}, "--threshold"},
           {{dir / "base.json", dir / "same.json", "--json", dir / "no/such/dir/d.json"},
            dir / "no/such/dir/d.json: cannot write"},
           {{dir / "base.json"}, "NEW"}}) {
    auto r = cli(args);
    INFO(r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(expect) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("gpuwise diff on reports written by gpuwise: pinning the copies removes the finding") {
  auto build = [](model::MemoryKind host) {
    auto p = process(1);
    p.copies = {
        copy(900 * kMs, 1000 * kMs, 1'000'000'000, model::CopyDirection::HostToDevice, host)};
    p.kernels = {kernel(1000 * kMs, 1800 * kMs)};
    if (host == model::MemoryKind::Pinned) p.copies[0].end = 920 * kMs; // pinned: 5x faster
    auto t = trace(p);
    auto a = analyzeJob(t);
    auto recs = recommend(a, &t);
    return buildReportJson({a, recs});
  };
  auto pageable = build(model::MemoryKind::Pageable), pinned = build(model::MemoryKind::Pinned);
  REQUIRE(validateReport(pageable) == "");
  auto d = diffReports(pageable, pinned);
  CHECK(d.disappeared == std::vector<std::string>{"use_pinned_memory"});
  CHECK(metric(d, "pageable_copy_seconds").change == Change::Better);
  // The pinned run's span has a gap before the kernels: busy share falls from 100% to 90%.
  CHECK(d.verdict == DiffVerdict::Regression);
  CHECK(d.regressions == std::vector<std::string>{"gpu_busy_ratio"});
}

namespace {

// A report with the steady-state figures: the steady median step, its spread (IQR / median),
// the median step's busy share, and a mean that includes a warm-up.
json steadyReport(double mean, double p50, double iqr_ratio, double busy = 0.95, int count = 56) {
  json r = report(mean, 0.8);
  r["summary"]["steps"]["steady"] = {{"count", count},
                                     {"p50_seconds", p50},
                                     {"iqr_ratio", iqr_ratio},
                                     {"gpu_busy_ratio_p50", busy}};
  return r;
}

} // namespace

TEST_CASE(
    "diff: steady-state medians with a noise band; the warm-up in the mean is not a regression") {
  // Two identical runs whose warm-up took longer in one: the mean grew 25%, the steady median not.
  auto same =
      diffReports(steadyReport(0.00712, 0.0053, 0.005), steadyReport(0.0089, 0.0053, 0.005));
  CHECK(same.verdict == DiffVerdict::Unchanged);
  CHECK(same.steady);
  CHECK(metric(same, "step_seconds").label == "step time (median, steady)");
  CHECK(same.noise_band == Approx(0.05)); // the threshold: the runs vary less than it
  // A 20% slower step regresses.
  auto slow = diffReports(steadyReport(0.007, 0.0053, 0.005), steadyReport(0.009, 0.00636, 0.005));
  CHECK(slow.verdict == DiffVerdict::Regression);
  CHECK(slow.regressions == std::vector<std::string>{"step_seconds"});
  // Nine steady steps that vary by 12% and 8% between p25 and p75: their medians are uncertain
  // by 3 x sqrt(se1^2 + se2^2), se = 0.93 x IQR/median / sqrt(9): a 10% change is within noise,
  // 15% is not. With 56 steps each the same spread leaves the 5% threshold nearly alone.
  auto noisy =
      diffReports(steadyReport(0.1, 0.1, 0.12, 0.95, 9), steadyReport(0.11, 0.11, 0.08, 0.95, 9));
  const double se1 = 1.2533 / 1.349 * 0.12 / 3, se2 = 1.2533 / 1.349 * 0.08 / 3;
  CHECK(noisy.noise_band == Approx(3 * std::sqrt(se1 * se1 + se2 * se2))); // ~13.4%
  CHECK(noisy.verdict == DiffVerdict::Unchanged);
  CHECK(renderDiffText(noisy).find("noise band 13.4%") != std::string::npos);
  CHECK(
      diffReports(steadyReport(0.1, 0.1, 0.12, 0.95, 9), steadyReport(0.115, 0.115, 0.08, 0.95, 9))
          .verdict == DiffVerdict::Regression);
  CHECK(diffReports(steadyReport(0.1, 0.1, 0.12), steadyReport(0.11, 0.11, 0.08)).noise_band ==
        Approx(0.0537).margin(0.001));
  // A host-starved run (half its steps slow: IQR/median 0.5) still shows a 20% slowdown.
  CHECK(diffReports(steadyReport(0.1, 0.1, 0.02), steadyReport(0.12, 0.12, 0.5)).verdict ==
        DiffVerdict::Regression);
  // The median step's busy share gates too.
  CHECK(diffReports(steadyReport(0.1, 0.1, 0.01, 0.95), steadyReport(0.1, 0.1, 0.01, 0.80))
            .regressions == std::vector<std::string>{"gpu_busy_ratio"});
  // Without the steady figures in both, the mean and the threshold, as before.
  auto old = diffReports(report(0.1, 0.9), steadyReport(0.125, 0.1, 0.01));
  CHECK_FALSE(old.steady);
  CHECK(old.verdict == DiffVerdict::Regression);
}

namespace {

// A report whose steady figures come from these step durations (ms), as report_json writes them.
json reportOfSteps(const std::vector<double>& ms) {
  std::vector<model::TimeNs> ns;
  for (double m : ms)
    ns.push_back(model::TimeNs(m * 1e6));
  const StepStats st = stepStats(ns);
  json r = report(double(st.mean_ns) / 1e9, 0.8);
  r["summary"]["steps"]["steady"] = {
      {"count", st.count},
      {"p50_seconds", double(st.p50_ns) / 1e9},
      {"iqr_ratio", st.iqrRatio()},
      {"p50_ci95_seconds", {double(st.p50_ci_low_ns) / 1e9, double(st.p50_ci_high_ns) / 1e9}},
      {"gpu_busy_ratio_p50", 1.0}};
  return r;
}

// n steps at `ms` (+-0.5% in a fixed pattern), `starved` of them stretched to 4x by a busy host.
std::vector<double> steps(double ms, int n, int starved) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i)
    v.push_back(ms * (1.0 + 0.005 * ((i * 7) % 5 - 2) / 2.0));
  for (int k = 0; k < starved; ++k) // spread over the run
    v[size_t(k * n / starved)] = 4 * ms;
  return v;
}

} // namespace

TEST_CASE("stepStats: the median's 95% interval from order statistics") {
  std::vector<model::TimeNs> ns;
  for (int i = 1; i <= 100; ++i)
    ns.push_back(i);
  const auto st = stepStats(ns);
  // n = 100: ranks floor(50 - 9.8) = 40 and ceil(50 + 9.8 + 1) = 61 (1-based).
  CHECK(st.p50_ci_low_ns == 40);
  CHECK(st.p50_ci_high_ns == 61);
  const auto few = stepStats({5, 7, 9});
  CHECK(few.p50_ci_low_ns == 5); // clamped to the sample
  CHECK(few.p50_ci_high_ns == 9);
}

TEST_CASE("diff: steps a busy host stretched do not hide a 20% slower step") {
  // 55 steady steps, 16 of them (29%) stretched 4x: the IQR spans both modes (IQR/median ~3),
  // and the IQR's standard error alone would put the noise band past 100%. The median's interval
  // stays in the dense mode, so the 20% slowdown is a regression and the rerun is not.
  const json healthy = reportOfSteps(steps(5.3, 55, 0));
  const json starved = reportOfSteps(steps(5.3, 55, 16));
  const json slow = reportOfSteps(steps(5.3 * 1.2, 55, 16));
  REQUIRE(starved["summary"]["steps"]["steady"]["iqr_ratio"].get<double>() > 1.0);
  const auto same = diffReports(healthy, starved);
  INFO(renderDiffText(same));
  CHECK(same.verdict == DiffVerdict::Unchanged);
  const auto regressed = diffReports(healthy, slow);
  INFO(renderDiffText(regressed));
  CHECK(regressed.noise_band < 0.1);
  CHECK(regressed.verdict == DiffVerdict::Regression);
  // Without the interval (a report written before it), the IQR stands in: too wide to tell.
  json old_slow = slow;
  old_slow["summary"]["steps"]["steady"].erase("p50_ci95_seconds");
  CHECK(diffReports(healthy, old_slow).noise_band > 0.2);
}

TEST_CASE("diff: intervals that lie apart regress whatever a wide band says; overlapping ones "
          "keep the band's answer") {
  // A base run with a tight median and a slow run a busy host stretched: its interval is wide
  // (a 73% band was seen) yet lies wholly above the base's, 19% higher at its low end.
  auto withInterval = [](double p50, double low, double high) {
    json r = steadyReport(p50, p50, 0.005);
    r["summary"]["steps"]["steady"]["p50_ci95_seconds"] = {low, high};
    return r;
  };
  const json base = withInterval(0.0053, 0.00529, 0.00531);
  const auto slow = diffReports(base, withInterval(0.00756, 0.0063, 0.0112));
  INFO(renderDiffText(slow));
  CHECK(slow.noise_band > 0.4);
  CHECK(slow.verdict == DiffVerdict::Regression);
  // The same wide run reaching down to within the threshold of the base: the band decides.
  CHECK(diffReports(base, withInterval(0.00756, 0.0055, 0.0112)).verdict == DiffVerdict::Unchanged);
  // And a run wholly below the base's interval is better, not a regression.
  const auto faster = diffReports(withInterval(0.00756, 0.0063, 0.0112), base);
  CHECK(faster.verdict == DiffVerdict::Improvement);
  CHECK(metric(faster, "step_seconds").change == Change::Better);
}
