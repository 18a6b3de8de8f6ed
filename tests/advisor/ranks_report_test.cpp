// The report's per-rank surfaces (ranks[], summary.straggler, the terminal's per-rank table) and
// the per-pod report merge, on analyses whose ranks are filled by hand.
#include "advisor/report/html_report.h"
#include "advisor/report/rank_table.h"
#include "advisor/report/ranks_json.h"
#include "advisor/report/report_json.h"
#include "advisor/report/report_merge.h"
#include "advisor/report/terminal_summary.h"
#include "tests/advisor/html_xml_check.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using json = nlohmann::ordered_json;

namespace {

RankSummary rankOf(int32_t rank, double step_p50, double wait = 0.0) {
  RankSummary r;
  r.rank = rank;
  r.host = "node-" + std::to_string(rank / 8);
  r.pid = 1000 + rank;
  r.gpu = "NVIDIA A100-SXM4-80GB";
  r.device = uint32_t(rank % 8);
  r.steps = 10;
  r.step_mean_seconds = step_p50 * 1.01;
  r.step_p50_seconds = step_p50;
  r.gpu_busy_ratio = 0.7;
  r.compute_seconds = 5.0;
  r.communication_seconds = 2.0;
  r.communication_exposed_seconds = 0.5;
  r.communication_overlap_ratio = 0.75;
  r.collective_wait_seconds = wait;
  r.input_stall_ratio = 0.01;
  return r;
}

JobAnalysis analysisWithRanks(std::vector<RankSummary> ranks,
                              std::optional<StragglerFinding> straggler = std::nullopt) {
  auto p = process(4242);
  auto k = p.names.intern("gemm");
  p.kernels = {kernel(kSec, kSec + 100 * kMs, 7, 0, k)};
  JobAnalysis a = analyzeJob(trace(p));
  a.distributed.ranks = std::move(ranks);
  a.distributed.straggler = straggler;
  return a;
}

json reportOf(const JobAnalysis& a, const std::vector<Recommendation>& recs = {}) {
  return buildReportJson({a, recs});
}

StragglerFinding stragglerOf(int32_t rank) {
  return {.rank = rank,
          .cause = StragglerCause::Input,
          .others_wait_seconds = 3.5,
          .step_p50_seconds = 1.5,
          .peers_step_p50_seconds = 1.0};
}

} // namespace

TEST_CASE("ranks[]: one entry per rank with every field, summary.straggler") {
  auto a = analysisWithRanks({rankOf(0, 1.0), rankOf(1, 1.5)}, stragglerOf(1));
  a.distributed.ranks[1].gpu_busy_ratio.reset();
  json r = reportOf(a);
  REQUIRE(r["ranks"].size() == 2);
  const json& r0 = r["ranks"][0];
  std::vector<std::string> keys;
  for (const auto& [k, v] : r0.items())
    keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"rank", "host", "pid", "gpu", "steps", "step_mean_seconds",
                                         "step_p50_seconds", "gpu_busy_ratio", "compute_seconds",
                                         "communication_seconds", "communication_exposed_seconds",
                                         "communication_overlap_ratio", "collective_wait_seconds",
                                         "input_stall_ratio"});
  CHECK(r0["rank"] == 0);
  CHECK(r0["host"] == "node-0");
  CHECK(r0["pid"] == 1000);
  CHECK(r0["gpu"] == "NVIDIA A100-SXM4-80GB");
  CHECK(r0["steps"] == 10);
  CHECK(r0["step_p50_seconds"] == Approx(1.0));
  CHECK(r0["communication_overlap_ratio"] == Approx(0.75));
  CHECK(r["ranks"][1]["gpu_busy_ratio"].is_null());
  const json& s = r["summary"]["straggler"];
  CHECK(s["rank"] == 1);
  CHECK(s["cause"] == "input");
  CHECK(s["others_wait_seconds"] == Approx(3.5));
  CHECK(s["step_p50_seconds"] == Approx(1.5));
  CHECK(s["peers_step_p50_seconds"] == Approx(1.0));

  SECTION("read back as the merge reads it") {
    RankSummary back;
    std::string error;
    REQUIRE(rankFromJson(r0, &back, &error));
    CHECK(back.rank == 0);
    CHECK(back.host == "node-0");
    CHECK(back.steps == 10);
    CHECK(*back.step_p50_seconds == Approx(1.0));
    CHECK(back.communication_exposed_seconds == Approx(0.5));
  }
}

TEST_CASE("ranks[]: a single-rank job has one entry, no straggler is null") {
  json r = reportOf(analysisWithRanks({rankOf(0, 1.0)}));
  CHECK(r["ranks"].size() == 1);
  CHECK(r["summary"]["straggler"].is_null());
}

TEST_CASE("terminal: per-rank table for several ranks, none for one") {
  auto one = renderTerminalSummary({analysisWithRanks({rankOf(0, 1.0)}), {}});
  CHECK(one.find("step p50") == std::string::npos);

  auto a =
      analysisWithRanks({rankOf(0, 1.0), rankOf(1, 1.5, 0.1), rankOf(2, 1.01)}, stragglerOf(1));
  auto text = renderTerminalSummary({a, {}});
  INFO(text);
  CHECK(text.find("per rank:") != std::string::npos);
  CHECK(text.find("step p50") != std::string::npos);
  CHECK(text.find("exposed") != std::string::npos);
  CHECK(text.find("1*") != std::string::npos); // the straggler marked in its row
  CHECK(text.find("rank 1 is the straggler (input)") != std::string::npos);
  CHECK(text.find("more ranks") == std::string::npos);
  // Rows in rank order.
  CHECK(text.find("\n  0 ") < text.find("\n  1* "));
  CHECK(text.find("\n  1* ") < text.find("\n  2 "));
}

TEST_CASE("terminal: many ranks collapse to the slowest 4 and the fastest 2") {
  std::vector<RankSummary> ranks;
  for (int32_t r = 0; r < 20; ++r)
    ranks.push_back(rankOf(r, 1.0 + 0.01 * r)); // rank 19 slowest, rank 0 fastest
  auto text = renderTerminalSummary({analysisWithRanks(ranks), {}});
  INFO(text);
  CHECK(text.find("\xE2\x80\xA6 14 more ranks (all in the JSON report)") != std::string::npos);
  for (int r : {19, 18, 17, 16, 1, 0})
    CHECK(text.find("\n  " + std::to_string(r) + " ") != std::string::npos);
  CHECK(text.find("\n  10 ") == std::string::npos);
  // Slowest first.
  CHECK(text.find("\n  19 ") < text.find("\n  16 "));
}

TEST_CASE("selectRanks: the straggler is shown even when it is not among the slowest") {
  std::vector<RankSummary> ranks;
  for (int32_t r = 0; r < 100; ++r)
    ranks.push_back(rankOf(r, 1.0 + 0.001 * r));
  auto sel = selectRanks(ranks, stragglerOf(50), 8, 4, 2);
  CHECK(sel.shown.size() == 7);
  CHECK(sel.hidden == 93);
  CHECK(std::count(sel.shown.begin(), sel.shown.end(), size_t{50}) == 1);
  auto few = selectRanks({rankOf(2, 1), rankOf(0, 2), rankOf(1, 3)}, std::nullopt, 8, 4, 2);
  CHECK(few.shown == std::vector<size_t>{1, 2, 0}); // by rank
  CHECK(few.hidden == 0);
}

TEST_CASE("report merge: recognises a report by its first member") {
  CHECK(looksLikeReportJson("{\n  \"schema\": \"gpuwise.report/v1\",\n"));
  CHECK(looksLikeReportJson("{\"schema\":\"gpuwise.report/v1\"}"));
  CHECK_FALSE(looksLikeReportJson("{\"schemaVersion\": 1, \"traceEvents\": []}"));
  CHECK(looksLikeReportJson("{\"gpus\": [], \"schema\" : \"gpuwise.report/v1\"}")); // sorted keys
  CHECK_FALSE(looksLikeReportJson("{\"traceEvents\": [{\"name\": \"schema\"}]}"));
  CHECK_FALSE(looksLikeReportJson("[{\"schema\": \"gpuwise.report/v1\"}]"));
  CHECK_FALSE(looksLikeReportJson(""));
}

namespace {

Recommendation rec(const std::string& id, double saving) {
  Recommendation r;
  r.id = id;
  r.title = id;
  r.expected_saving_ratio = saving;
  return r;
}

PodReport pod(const std::string& path, std::vector<RankSummary> ranks,
              const std::vector<Recommendation>& recs = {}) {
  return {path, reportOf(analysisWithRanks(std::move(ranks)), recs)};
}

} // namespace

TEST_CASE("report merge: ranks concatenated by rank, figures combined") {
  std::vector<PodReport> pods = {
      pod("b.json", {rankOf(2, 1.0), rankOf(3, 1.1)},
          {rec("prefetch_input", 0.2), rec("enable_tf32", 0.1)}),
      pod("a.json", {rankOf(0, 1.0), rankOf(1, 1.2)}, {rec("prefetch_input", 0.4)})};
  pods[0].report["summary"]["communication"] = {
      {"seconds", 2.0},
      {"exposed_seconds", 1.0},
      {"overlap_ratio", 0.5},
      {"by_kind", {{{"kind", "all_reduce"}, {"count", 10}, {"seconds", 2.0}}}}};
  pods[1].report["summary"]["communication"] = {
      {"seconds", 6.0},
      {"exposed_seconds", 1.0},
      {"overlap_ratio", 5.0 / 6},
      {"by_kind",
       {{{"kind", "all_reduce"}, {"count", 30}, {"seconds", 5.0}},
        {{"kind", "all_gather"}, {"count", 4}, {"seconds", 1.0}}}}};
  json m;
  std::string error;
  REQUIRE(mergeReports(pods, &m, &error));
  CHECK(m["schema"] == kReportSchema);
  REQUIRE(m["ranks"].size() == 4);
  for (int r = 0; r < 4; ++r)
    CHECK(m["ranks"][r]["rank"] == r);
  const double one_span = pods[0].report["summary"]["gpu_span_seconds"].get<double>();
  CHECK(m["summary"]["gpu_span_seconds"] == Approx(2 * one_span));
  CHECK(m["summary"]["kernel_count"] == 2);
  CHECK(m["timeline"]["span_seconds"].get<double>() ==
        Approx(2 * pods[0].report["timeline"]["span_seconds"].get<double>()));
  CHECK_FALSE(m["timeline"].contains("devices"));
  const json& idle = pods[0].report["summary"]["idle_seconds_by_cause"];
  for (const auto& [cause, seconds] : idle.items())
    CHECK(m["summary"]["idle_seconds_by_cause"][cause].get<double>() ==
          Approx(2 * seconds.get<double>()));
  const json& c = m["summary"]["communication"];
  CHECK(c["seconds"] == Approx(8.0));
  CHECK(c["exposed_seconds"] == Approx(2.0));
  CHECK(c["overlap_ratio"] == Approx(0.75));
  REQUIRE(c["by_kind"].size() == 2);
  CHECK(c["by_kind"][0]["kind"] == "all_reduce");
  CHECK(c["by_kind"][0]["count"] == 40);
  CHECK(c["by_kind"][0]["seconds"] == Approx(7.0));
  // prefetch_input in both pods of two ranks each: (0.2 + 0.4) / 2 of the job.
  REQUIRE(m["recommendations"].size() == 2);
  CHECK(m["recommendations"][0]["id"] == "prefetch_input");
  CHECK(m["recommendations"][0]["expected_saving_ratio"] == Approx(0.3));
  CHECK(m["recommendations"][0]["ranks"] == json::array({2, 3, 0, 1}));
  CHECK(m["recommendations"][1]["id"] == "enable_tf32");
  CHECK(m["recommendations"][1]["expected_saving_ratio"] == Approx(0.05));
  CHECK(m["merged_from"][0]["file"] == "b.json");
  CHECK(m["merged_from"][0]["ranks"] == json::array({2, 3}));
}

TEST_CASE("report merge: the same rank twice, or two world sizes, is one line naming both") {
  std::string error;
  json m;
  CHECK_FALSE(mergeReports(
      {pod("a.json", {rankOf(0, 1.0), rankOf(1, 1.0)}), pod("b.json", {rankOf(1, 1.0)})}, &m,
      &error));
  CHECK(error == "a.json and b.json both have rank 1");
  auto a = pod("a.json", {rankOf(0, 1.0)}), b = pod("b.json", {rankOf(1, 1.0)});
  a.report["processes"][0]["world_size"] = 8;
  b.report["processes"][0]["world_size"] = 16;
  CHECK_FALSE(mergeReports({a, b}, &m, &error));
  CHECK(error == "a.json and b.json cannot be one job: world size 8 against 16");
  auto c = pod("c.json", {rankOf(2, 1.0)});
  c.report.erase("ranks");
  CHECK_FALSE(mergeReports({a, c}, &m, &error));
  CHECK(error.rfind("c.json: a report without ranks[]", 0) == 0);
}

namespace {

// The <svg> element whose id is `id`, or "" when there is none.
std::string svgById(const std::string& html, const std::string& id) {
  const auto start =
      html.find("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" id=\"" + id + "\"");
  if (start == std::string::npos) return {};
  return html.substr(start, html.find("</svg>", start) + 6 - start);
}

} // namespace

TEST_CASE("HTML: a Ranks section charts step p50 per rank and each rank's communication") {
  auto a = analysisWithRanks({rankOf(0, 1.0, 0.4), rankOf(1, 1.5), rankOf(2, 1.02, 0.4)},
                             stragglerOf(1));
  const std::string html = renderHtmlReport(reportOf(a));
  INFO(xmlProblem(html, true));
  REQUIRE(html.find("<h2 id=\"ranks-h\">Ranks</h2>") != std::string::npos);
  CHECK(html.find("rank 1 is the straggler (input)") != std::string::npos);
  const std::string steps = svgById(html, "rank-steps");
  REQUIRE_FALSE(steps.empty());
  CHECK(xmlProblem(steps).empty());
  CHECK(steps.find("rank 1 (straggler)") != std::string::npos);
  CHECK(steps.find("#c8413b") != std::string::npos); // the straggler's bar in red
  CHECK(steps.find("job median 1.02 s") != std::string::npos);
  CHECK(steps.find("stroke-dasharray") != std::string::npos);
  const std::string time = svgById(html, "rank-time");
  REQUIRE_FALSE(time.empty());
  CHECK(xmlProblem(time).empty());
  // Rank 0: 5 s compute, 1.5 s overlapped, 0.1 s exposed beyond its 0.4 s wait.
  CHECK(time.find("rank 0: compute 5.00 s, communication overlapped 1.50 s, communication "
                  "exposed 0.100 s, collective wait 0.400 s.") != std::string::npos);

  SECTION("one rank: no section") {
    const std::string one = renderHtmlReport(reportOf(analysisWithRanks({rankOf(0, 1.0)})));
    CHECK(one.find("ranks-h") == std::string::npos);
  }
}

TEST_CASE("HTML: many ranks collapse to at most 64 bars with a note") {
  std::vector<RankSummary> ranks;
  for (int32_t r = 0; r < 300; ++r)
    ranks.push_back(rankOf(r, 1.0 + 0.001 * r));
  const std::string html = renderHtmlReport(reportOf(analysisWithRanks(ranks)));
  const std::string steps = svgById(html, "rank-steps");
  size_t bars = 0;
  for (size_t at = 0; (at = steps.find("<rect ", at)) != std::string::npos; ++at)
    ++bars;
  CHECK(bars == 64);
  CHECK(html.find("236 more ranks are in the JSON report (ranks[])") != std::string::npos);
  CHECK(steps.find("rank 299") != std::string::npos); // the slowest
  CHECK(steps.find("rank 0") != std::string::npos);   // the fastest
  CHECK(steps.find("rank 150") == std::string::npos);
}

TEST_CASE("report merge: pods without ranks weigh one each; pods' stragglers give way") {
  auto a = pod("a.json", {}, {rec("prefetch_input", 0.2), rec("fix_straggler", 0.3)});
  auto b = pod("b.json", {}, {rec("prefetch_input", 0.1)});
  json m;
  std::string error;
  REQUIRE(mergeReports({a, b}, &m, &error));
  REQUIRE(m["recommendations"].size() == 1);
  CHECK(m["recommendations"][0]["id"] == "prefetch_input");
  CHECK(m["recommendations"][0]["expected_saving_ratio"] == Approx(0.15));
  // One pod's report alone is its own job: its straggler finding stands.
  REQUIRE(mergeReports({a}, &m, &error));
  CHECK(m["recommendations"].size() == 2);
}

TEST_CASE("report merge: the pods' energies add up and each finding gets the job's share") {
  std::vector<PodReport> pods = {pod("b.json", {rankOf(2, 1.0)}, {rec("prefetch_input", 0.2)}),
                                 pod("a.json", {rankOf(0, 1.0)}, {rec("prefetch_input", 0.4)})};
  const char* sources[] = {"nvml", "estimate"};
  for (size_t i = 0; i < pods.size(); ++i) {
    json& s = pods[i].report["summary"];
    s["energy_joules"] = 100.0 * double(i + 1);
    s["energy_joules_per_step"] = 1.0 * double(i + 1);
    s["energy_cost"] = 0.01 * double(i + 1);
    s["energy_source"] = sources[i];
    pods[i].report["recommendations"][0]["energy_saving_joules"] =
        12345.0; // a pod's, not the job's
  }
  json m;
  std::string error;
  REQUIRE(mergeReports(pods, &m, &error));
  CHECK(m["summary"]["energy_joules"] == Approx(300.0));
  CHECK(m["summary"]["energy_joules_per_step"] == Approx(3.0));
  CHECK(m["summary"]["energy_cost"] == Approx(0.03));
  CHECK(m["summary"]["energy_source"] == "estimate"); // any pod's estimate makes the job's one
  REQUIRE(m["recommendations"].size() == 1);
  const double saving = m["recommendations"][0]["expected_saving_ratio"].get<double>();
  CHECK(m["recommendations"][0]["energy_saving_joules"] == Approx(saving * 300.0));
  CHECK(m["recommendations"][0]["energy_saving_cost"] == Approx(saving * 0.03));
}
