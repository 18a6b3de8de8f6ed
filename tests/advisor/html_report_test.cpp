// The HTML report as a file: every section present, numbers as the JSON says, strings escaped,
// nothing that could reach the network, and graceful "not measured" where a figure is missing.
#include "advisor/report/html_report.h"
#include "advisor/report/html_sections.h"
#include "advisor/report/report_fields.h"
#include "advisor/report/terminal_summary.h"
#include "advisor/rules/rule_set.h"
#include "tests/advisor/html_xml_check.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using json = nlohmann::ordered_json;

namespace {

// Kernel names as compilers write them: templates, references, comparisons.
const char* kEvilKernel = "void reduce<float, std::less<float>&>(float const*, bool&&)";

// A job worth a recommendation: pageable copies, a kernel with a name full of <, > and &.
model::Trace jobTrace(bool simulated = false) {
  auto p = process(4242);
  p.info.rank = 0;
  p.info.command = "python train.py --tag '<script>alert(1)</script>'";
  auto evil = p.names.intern(kEvilKernel);
  auto gemm = p.names.intern("_Z4gemmPKfS0_Pfi");
  p.copies = {copy(900 * kMs, 1000 * kMs, 1'000'000'000)};
  p.kernels = {kernel(1000 * kMs, 1800 * kMs, 7, 0, gemm),
               kernel(1900 * kMs, 2000 * kMs, 7, 0, evil)};
  p.memory_samples = {{.time = kSec, .device = 0, .reserved_bytes = 3'000'000'000}};
  p.events_dropped = 17;
  p.devices[0].simulated = simulated;
  auto t = trace(p);
  t.source.simulated = simulated;
  return t;
}

struct Page {
  json report;
  std::string html;
};

Page render(const model::Trace& t, ReportOptions options = {}) {
  auto a = analyzeJob(t);
  auto recs = recommend(a, &t);
  ReportInput in{a, recs};
  return {buildReportJson(in, options), renderHtmlReport(in, options)};
}

std::string between(const std::string& s, const std::string& open, const std::string& close) {
  auto a = s.find(open);
  if (a == std::string::npos) return "";
  auto b = s.find(close, a + open.size());
  return s.substr(a, b == std::string::npos ? std::string::npos : b + close.size() - a);
}

// The visible page: the body without the embedded JSON data.
std::string visible(const std::string& html) {
  auto open = html.find("<script type=\"application/json\"");
  return html.substr(0, open);
}

} // namespace

TEST_CASE("HTML report: every section, in order, from one self-contained page") {
  auto page = render(jobTrace());
  const auto& html = page.html;
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  size_t last = 0;
  for (const char* heading :
       {">Verdict</h2>", ">GPU utilisation over time</h2>", ">Where the GPU time went</h2>",
        ">Idle time by cause</h3>", ">Training steps</h2>", ">Precision mix</h2>",
        ">Top kernels</h2>", ">Copies</h2>", ">Device memory over time</h2>",
        ">Recommendations</h2>", ">Collection</h2>"}) {
    INFO(heading);
    auto at = html.find(heading);
    REQUIRE(at != std::string::npos);
    CHECK(at > last);
    last = at;
  }
  // Nothing fetched, and a policy that forbids it even by mistake.
  CHECK(html.find("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                  "style-src 'unsafe-inline'; img-src data:;") != std::string::npos);
  for (const char* banned :
       {"src=", "href=", "url(", "@import", "https://", "http://www.w3.org/1999"})
    CHECK(html.find(banned) == std::string::npos);
  CHECK(html.find("<script>") == std::string::npos); // the only script element is JSON data
  // The body (without head and the embedded data) is well-formed, and so is every chart.
  std::string body = between(visible(html), "<main>", "</footer>") + "</main>";
  CHECK(xmlProblem(body, true) == "");
  size_t charts = 0;
  for (auto at = html.find("<svg"); at != std::string::npos;
       at = html.find("<svg", at + 1), ++charts)
    CHECK(xmlProblem(between(html.substr(at), "<svg", "</svg>")) == "");
  // utilisation, span bar, idle causes, kernels, precision, copies, memory
  CHECK(charts == 7);
}

TEST_CASE("HTML report: kernel names and commands are escaped everywhere") {
  auto page = render(jobTrace());
  std::string shown = visible(page.html);
  CHECK(shown.find(kEvilKernel) == std::string::npos);
  CHECK(shown.find(htmlEscape(kEvilKernel)) != std::string::npos); // in the table's tooltip
  CHECK(shown.find("reduce&lt;float, std::less&lt;float&gt;&amp;&gt;") != std::string::npos);
  CHECK(shown.find("<script>alert(1)") == std::string::npos);
  CHECK(shown.find("--tag &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39;") != std::string::npos);
  // The embedded report keeps the exact strings, without a raw '<' that could end the element.
  std::string data =
      between(page.html, "<script type=\"application/json\" id=\"gpuwise-report\">", "</script>");
  std::string inner = data.substr(data.find('>') + 1);
  inner = inner.substr(0, inner.size() - 9);
  CHECK(inner.find('<') == std::string::npos);
  auto embedded = json::parse(inner);
  CHECK(embedded == page.report);
  CHECK(embedded["processes"][0]["command"] == "python train.py --tag '<script>alert(1)</script>'");
}

TEST_CASE("HTML report: the verdict says busy share, idle cost and the top recommendation") {
  ReportOptions options;
  options.cost.gpu_hour_price = 4.0;
  auto page = render(jobTrace(), options);
  std::string verdict = between(page.html, "<section class=\"verdict\"", "</section>");
  // 1.0 s of the 1.1 s span busy: 90.9%, idle 100 ms.
  CHECK(verdict.find("GPU busy 90.9% of a 1.10 s GPU span; idle 100 ms.") != std::string::npos);
  // Idle 100 ms of 1.1 s is 9.09% of a day: 2.18 GPU-hours at $4.00 = $8.73 a day.
  CHECK(page.report["cost"]["per_day"]["wasted_cost"].get<double>() == Approx(24.0 * 4.0 / 11.0));
  CHECK(verdict.find("$8.73 / day") != std::string::npos);
  CHECK(verdict.find("at $4.00 per GPU-hour") != std::string::npos);
  REQUIRE(page.report["recommendations"].size() >= 1);
  std::string title = page.report["recommendations"][0]["title"];
  CHECK(verdict.find(htmlEscape(title)) != std::string::npos);
  CHECK(verdict.find("per day") != std::string::npos);
  CHECK(page.html.find("SIMULATED DEVICE") == std::string::npos);
  // Recommendation cards: evidence, action, cost.
  // The pinned-memory card (other rules may rank above it on this job).
  std::string card;
  for (size_t at = page.html.find("<article class=\"rec\""); at != std::string::npos;
       at = page.html.find("<article class=\"rec\"", at + 1)) {
    std::string c = between(page.html.substr(at), "<article class=\"rec\"", "</article>");
    if (c.find("pageable_bytes") != std::string::npos) card = c;
  }
  REQUIRE_FALSE(card.empty());
  CHECK(card.find("<pre><code>") != std::string::npos);
  CHECK(card.find("<caption>Evidence</caption>") != std::string::npos);
  CHECK(card.find("pageable_bytes") != std::string::npos);
  CHECK(card.find("per day of such work at $4.00 per GPU-hour.") != std::string::npos);
  // The collection line shows the dropped events.
  CHECK(page.html.find("17 dropped") != std::string::npos);
}

TEST_CASE("reports: events lost in transit are said in the JSON, the HTML and the terminal") {
  auto t = jobTrace();
  IngestHealth ingest;
  ingest.streams = {StreamHealth{.session_id = 1, .batches = 3, .events_lost = 23}};
  AnalysisOptions options;
  options.ingest = &ingest;
  auto a = analyzeJob(t, options);
  ReportInput in{a, recommend(a, &t)};
  json report = buildReportJson(in, {});
  CHECK(report["collection"]["events_lost"] == 23);
  CHECK(report["collection"]["events_dropped"] == 17 + 23);
  CHECK(report["processes"][0]["events_lost"] == 23);
  std::string html = renderHtmlReport(in, {});
  CHECK(html.find("40 dropped") != std::string::npos);
  CHECK(html.find("(23 of the dropped events lost in transit)") != std::string::npos);
  CHECK(renderTerminalSummary(in).find("(23 of the dropped events lost in transit)") !=
        std::string::npos);
  // An imported trace has no stream: null per process, and nothing said.
  Page imported = render(jobTrace());
  CHECK(imported.report["processes"][0]["events_lost"].is_null());
  CHECK(imported.report["collection"]["events_lost"] == 0);
  CHECK(imported.html.find("lost in transit") == std::string::npos);
}

TEST_CASE("HTML report: simulated runs say so first") {
  auto page = render(jobTrace(true));
  auto banner = page.html.find("SIMULATED DEVICE");
  REQUIRE(banner != std::string::npos);
  CHECK(banner < page.html.find(">Verdict</h2>"));
  CHECK(page.html.find("<title>[SIMULATED] gpuwise efficiency report</title>") !=
        std::string::npos);
}

TEST_CASE("HTML report: figures the report lacks read 'not measured', never fail") {
  auto page = render(jobTrace());
  // A report from before the analysis engine filled these (or from another producer).
  auto older = page.report;
  older["summary"]["precision_time_ratio"] = nullptr;
  older["summary"].erase("idle_seconds_by_cause");
  older["timeline"].erase("idle_seconds_by_cause");
  older["timeline"].erase("idle_by_cause");
  const std::string older_html = renderHtmlReport(older);
  CHECK(older_html.find("Not measured: kernel precision is not classified") != std::string::npos);
  CHECK(older_html.find("Not measured: this report does not break idle time down") !=
        std::string::npos);

  // Interposer tier: no GPU timestamps at all.
  auto p = process(7, "NVIDIA H100 80GB HBM3", model::CollectionTier::Interposer);
  p.kernels = {kernel(0, 0)};
  auto t = trace(p);
  auto a = analyzeJob(t);
  std::vector<Recommendation> none;
  auto html = renderHtmlReport({a, none});
  CHECK(html.find("GPU busy time unknown: the collection had no GPU timestamps (tier "
                  "interposer).") != std::string::npos);
  CHECK(html.find("Not measured: no GPU activity with GPU timestamps.") != std::string::npos);
  CHECK(xmlProblem(between(visible(html), "<main>", "</footer>") + "</main>", true) == "");

  // Not even a report: an empty JSON object still gives a page.
  auto bare = renderHtmlReport(json::object());
  CHECK(bare.find("</html>") != std::string::npos);
}

TEST_CASE("HTML report: idle causes, precision mix and occupancy when the report has them") {
  auto page = render(jobTrace());
  json r = page.report;
  r["summary"]["idle_seconds_by_cause"] = {
      {"host_bound", 0.02}, {"input", 0.06}, {"sync", 0.01}, {"other", 0.01}};
  r["summary"]["precision_time_ratio"] = {{"fp32", 0.25}, {"bf16", 0.75}};
  r["summary"]["tensor_core_time_ratio"] = 0.75;
  r["top_kernels"][0]["occupancy_theoretical"] = 0.5;
  r["top_kernels"][0]["precision"] = "fp32";
  auto html = renderHtmlReport(r);
  CHECK(html.find("The GPU waited mostly for input (60.0 ms, 60.0% of idle time), then host "
                  "bound (20.0 ms, 20.0% of idle time)") != std::string::npos);
  std::string idle = between(html,
                             "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" "
                             "id=\"idle-bar\"",
                             "</svg>");
  REQUIRE_FALSE(idle.empty());
  CHECK(idle.find("input: 60.0 ms (60.0%)") != std::string::npos);
  CHECK(xmlProblem(idle) == "");
  std::string precision = between(html, "id=\"precision-bar\"", "</svg>");
  // Shares of the 0.9 s of kernel time.
  CHECK(precision.find("bf16: 675 ms (75.0%)") != std::string::npos);
  CHECK(html.find("Tensor cores: 75.0% of kernel time") != std::string::npos);
  std::string kernels = between(html, "<table class=\"kernels\">", "</table>");
  CHECK(kernels.find("<td class=\"num\">50.0%</td>") != std::string::npos);
  CHECK(kernels.find("<td>fp32</td>") != std::string::npos);
  CHECK(idleCauses(r)->front().first == "input");
}

TEST_CASE("HTML report: many devices draw a bounded number of charts") {
  model::Trace t;
  for (int pid = 1; pid <= 12; ++pid) {
    auto p = process(pid);
    p.kernels = {kernel(kSec, 2 * kSec)};
    t.processes.push_back(p);
  }
  auto a = analyzeJob(t);
  std::vector<Recommendation> none;
  auto html = renderHtmlReport({a, none});
  size_t figures = 0;
  const std::string chart = "class=\"chart\" id=\"util-";
  for (auto at = html.find(chart); at != std::string::npos; at = html.find(chart, at + 1))
    ++figures;
  CHECK(figures == 8);
  CHECK(html.find("4 more devices are in the JSON report") != std::string::npos);
}

TEST_CASE("report figures read defensively, and print as people read them") {
  json r = {{"a", {{"b", 2.5}, {"s", "x"}, {"n", nullptr}}}};
  CHECK(jsonNumber(r, {"a", "b"}) == 2.5);
  CHECK_FALSE(jsonNumber(r, {"a", "n"}).has_value());
  CHECK_FALSE(jsonNumber(r, {"a", "s"}).has_value());
  CHECK_FALSE(jsonNumber(r, {"a", "b", "c"}).has_value());
  CHECK(jsonString(r, {"a", "s"}) == "x");
  CHECK(jsonString(r, {"missing"}).empty());
  CHECK(formatMoney(1234567.4) == "$1,234,567");
  CHECK(formatMoney(12.346) == "$12.35");
  CHECK(formatMoney(0.004) == "< $0.01");
  CHECK(formatMoney(0) == "$0");
  CHECK(formatMoney(-2.5) == "-$2.50");
  CHECK(formatGpuHours(2.5) == "2.50 GPU-hours");
  CHECK(formatGpuHours(0.5) == "30.0 GPU-minutes");
  CHECK(formatGpuHours(0.001) == "3.60 s of GPU time");
  CHECK_FALSE(idleCauses(json::object()).has_value());
  CHECK(idleCauses({{"timeline", {{"idle_by_cause", {{"sync", {{"seconds", 1.0}}}}}}}})
            ->at(0)
            .second == 1.0);
}

TEST_CASE("HTML report: training steps show the steady state and the warm-up apart") {
  json r = json::parse(R"({"summary": {"steps": {"count": 60, "source": "inferred",
      "warmup": {"count": 3, "seconds": 0.16, "input_stall_seconds": 0.12, "limiter": "input"},
      "steady": {"count": 57, "p10_seconds": 0.0049, "p50_seconds": 0.0053,
                 "p90_seconds": 0.0061, "iqr_ratio": 0.012}}}})");
  std::ostringstream o;
  htmlStepsSection(o, r);
  const std::string html = o.str();
  INFO(html);
  CHECK(xmlProblem(html) == "");
  CHECK(html.find("60 (inferred)") != std::string::npos);
  CHECK(html.find("57 steps: median 5.30 ms, p10-p90 4.90 ms - 6.10 ms, variation 1.2% "
                  "(IQR/median)") != std::string::npos);
  CHECK(html.find("3 steps, 160 ms, mostly input; waited 120 ms for input. Left out of the step "
                  "figures and the advice.") != std::string::npos);

  // No warm-up: said so; no steps at all: "not measured", never a zero.
  r["summary"]["steps"]["warmup"]["count"] = 0;
  std::ostringstream none;
  htmlStepsSection(none, r);
  CHECK(none.str().find("none: every step counts as steady") != std::string::npos);
  const auto page = render(jobTrace());
  CHECK(between(page.html, ">Training steps</h2>", "</section>").find("Not measured") !=
        std::string::npos);
}
