#include "advisor/report/format.h"
#include "advisor/report/html_report.h"
#include "advisor/report/report_json.h"
#include "advisor/report/report_writer.h"
#include "advisor/report/terminal_summary.h"
#include "advisor/rules/rule_set.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using json = nlohmann::ordered_json;
using model::CopyDirection;
using model::MemoryKind;

namespace {

// A job with pageable copies worth pinning: 100 ms copying 1 GB, then 1 s of kernels.
// These tests are about the report, not the rules: keep only the rule the fixture is built for
// (the FP32 GEMM in it also draws the precision rules, tested in rules_each_test).
std::vector<Recommendation> pinnedOnly(std::vector<Recommendation> recs) {
  std::erase_if(recs, [](const Recommendation& r) { return r.id != "use_pinned_memory"; });
  return recs;
}

model::Trace pinnableTrace() {
  auto p = process(4242);
  p.info.rank = 0;
  auto gemm = p.names.intern("_Z4gemmPKfS0_Pfi");
  p.copies = {copy(900 * kMs, 1000 * kMs, 1'000'000'000)};
  p.kernels = {kernel(1000 * kMs, 1800 * kMs, 7, 0, gemm),
               kernel(1900 * kMs, 2000 * kMs, 7, 0, gemm)};
  p.memory_samples = {{.time = 1, .device = 0, .reserved_bytes = 3'000'000'000}};
  p.syncs = {
      {.start = 1500 * kMs, .end = 2000 * kMs, .thread = 3, .kind = model::SyncKind::Device}};
  p.events_dropped = 17;
  return trace(p);
}

enum class Type {
  Number,
  String,
  Bool,
  Object,
  Array,
  NullableNumber,
  NullableObject,
  NullableString,
  NullableBool
};

bool hasType(const json& v, Type t) {
  switch (t) {
  case Type::Number: return v.is_number();
  case Type::String: return v.is_string();
  case Type::Bool: return v.is_boolean();
  case Type::Object: return v.is_object();
  case Type::Array: return v.is_array();
  case Type::NullableNumber: return v.is_null() || v.is_number();
  case Type::NullableObject: return v.is_null() || v.is_object();
  case Type::NullableString: return v.is_null() || v.is_string();
  case Type::NullableBool: return v.is_null() || v.is_boolean();
  }
  return false;
}

void checkFields(const json& obj, const std::vector<std::pair<std::string, Type>>& fields,
                 const std::string& where) {
  for (const auto& [name, type] : fields) {
    INFO(where << "." << name);
    REQUIRE(obj.contains(name));
    CHECK(hasType(obj[name], type));
  }
}

// The summary of pinnableTrace()'s report: every field with its type, and the figures.
void checkSummary(const json& s) {
  checkFields(s,
              {{"wall_seconds", Type::NullableNumber},
               {"gpu_span_seconds", Type::NullableNumber},
               {"gpu_busy_seconds", Type::NullableNumber},
               {"gpu_idle_ratio", Type::NullableNumber},
               {"kernel_count", Type::Number},
               {"kernel_seconds", Type::NullableNumber},
               {"precision_time_ratio", Type::NullableObject},
               {"tensor_core_time_ratio", Type::NullableNumber},
               {"occupancy_theoretical", Type::NullableNumber},
               {"input_stall_ratio", Type::NullableNumber},
               {"host_sync_seconds", Type::NullableNumber},
               {"launch_overhead_ratio", Type::NullableNumber},
               {"memcpy", Type::Object},
               {"memory_peak_bytes", Type::NullableNumber},
               {"steps", Type::Object}},
              "summary");
  checkFields(s["memcpy"],
              {{"h2d_bytes", Type::Number},
               {"d2h_bytes", Type::Number},
               {"d2d_bytes", Type::Number},
               {"pageable_bytes", Type::Number},
               {"pageable_seconds", Type::Number}},
              "summary.memcpy");
  checkFields(s["steps"],
              {{"count", Type::NullableNumber},
               {"mean_seconds", Type::NullableNumber},
               {"source", Type::NullableString}},
              "summary.steps");
  CHECK(s["gpu_span_seconds"].get<double>() == Approx(1.1));
  CHECK(s["gpu_busy_seconds"].get<double>() == Approx(1.0));
  CHECK(s["gpu_idle_ratio"].get<double>() == Approx(0.1 / 1.1));
  CHECK(s["kernel_count"] == 2);
  CHECK(s["kernel_seconds"].get<double>() == Approx(0.9));
  CHECK(s["host_sync_seconds"].get<double>() == Approx(0.5));
  CHECK(s["memcpy"]["h2d_bytes"] == 1'000'000'000);
  CHECK(s["memcpy"]["pageable_bytes"] == 1'000'000'000);
  CHECK(s["memcpy"]["pageable_seconds"].get<double>() == Approx(0.1));
  CHECK(s["memory_peak_bytes"] == 3'000'000'000);
  // gemm(float const*, ...) is FP32 off tensor cores; its 1-thread blocks (the builder's
  // default) fill 32 resident blocks of one warp out of 64 warps on an H100.
  REQUIRE(s["precision_time_ratio"].is_object());
  CHECK(s["precision_time_ratio"]["fp32"].get<double>() == Approx(1.0));
  CHECK(s["tensor_core_time_ratio"].get<double>() == 0.0);
  CHECK(s["occupancy_theoretical"].get<double>() == Approx(0.5));
}

} // namespace

TEST_CASE("JSON report has every field of the gpuwise.report/v1 contract, with the right types") {
  auto t = pinnableTrace();
  t.source.kind = model::SourceKind::Gwt;
  t.source.files = {"run.gwt"};
  auto a = analyzeJob(t);
  auto recs = pinnedOnly(recommend(a, &t));
  REQUIRE(recs.size() == 1);
  auto r = buildReportJson({a, recs});

  checkFields(r,
              {{"schema", Type::String},
               {"source", Type::Object},
               {"gpus", Type::Array},
               {"processes", Type::Array},
               {"summary", Type::Object},
               {"recommendations", Type::Array},
               {"top_kernels", Type::Array}},
              "report");
  CHECK(r["schema"] == "gpuwise.report/v1");
  checkFields(r["source"],
              {{"kind", Type::String}, {"simulated", Type::Bool}, {"files", Type::Array}},
              "source");
  CHECK(r["source"]["kind"] == "gwt");
  CHECK(r["source"]["files"][0] == "run.gwt");

  REQUIRE(r["gpus"].size() == 1);
  checkFields(r["gpus"][0],
              {{"index", Type::Number},
               {"name", Type::String},
               {"sm_count", Type::NullableNumber},
               {"memory_total_bytes", Type::NullableNumber},
               {"compute_capability", Type::NullableString},
               {"mig_profile", Type::NullableString}},
              "gpus[0]");
  CHECK(r["gpus"][0]["compute_capability"] == "9.0");
  CHECK(r["gpus"][0]["mig_profile"].is_null());

  REQUIRE(r["processes"].size() == 1);
  checkFields(r["processes"][0],
              {{"pid", Type::Number},
               {"rank", Type::NullableNumber},
               {"command", Type::String},
               {"events", Type::Number},
               {"events_dropped", Type::Number},
               {"tier", Type::String}},
              "processes[0]");
  CHECK(r["processes"][0]["pid"] == 4242);
  CHECK(r["processes"][0]["events_dropped"] == 17);
  CHECK(r["processes"][0]["events"] == 5);
  CHECK(r["processes"][0]["tier"] == "cupti");

  checkSummary(r["summary"]);

  const auto& rec = r["recommendations"][0];
  checkFields(rec,
              {{"id", Type::String},
               {"title", Type::String},
               {"evidence", Type::Object},
               {"expected_saving_ratio", Type::Number},
               {"confidence", Type::String},
               {"action", Type::String},
               {"parameters", Type::Object}},
              "recommendations[0]");
  CHECK(rec["id"] == "use_pinned_memory");
  CHECK(rec["confidence"] == "medium");

  REQUIRE(r["top_kernels"].size() == 1);
  checkFields(r["top_kernels"][0],
              {{"name", Type::String},
               {"count", Type::Number},
               {"seconds", Type::NullableNumber},
               {"precision", Type::NullableString},
               {"tensor_core", Type::NullableBool},
               {"occupancy_theoretical", Type::NullableNumber}},
              "top_kernels[0]");
}

TEST_CASE("JSON report: nulls where figures are unknown, and the detail sections") {
  auto p = process(5, "NVIDIA A100", model::CollectionTier::Interposer);
  p.kernels = {kernel(0, 0)};
  auto t = trace(p);
  auto a = analyzeJob(t);
  auto r = buildReportJson({a, {}});
  CHECK(r["summary"]["gpu_span_seconds"].is_null());
  CHECK(r["summary"]["gpu_idle_ratio"].is_null());
  CHECK(r["summary"]["kernel_seconds"].is_null());
  CHECK(r["summary"]["memory_peak_bytes"].is_null());
  CHECK(r["summary"]["wall_seconds"].is_null());
  CHECK(r["recommendations"].empty());
  CHECK(r["collection"]["tier"] == "interposer");
  CHECK(r["collection"]["messages"].is_null());
  CHECK(r["generated_by"]["tool"] == "gpuwise");
  CHECK(r["timeline"]["untimed_events"] == 1);
  CHECK(r["processes"][0]["final_received"].is_null());
}

TEST_CASE("terminal summary: the verdict comes first") {
  auto t = pinnableTrace();
  auto a = analyzeJob(t);
  auto recs = pinnedOnly(recommend(a, &t));
  auto text = renderTerminalSummary({a, recs});
  auto first = text.substr(0, text.find('\n'));
  CHECK(first == "gpuwise: GPU busy 90.9% of a 1.10 s GPU span, idle 100 ms; 1 recommendation, "
                 "best saves ~7.3%");
  CHECK(text.find("1. [saves ~7.3%, medium confidence] Pin host memory") != std::string::npos);
  CHECK(text.find("tier cupti; 5 events, 17 dropped") != std::string::npos);
  CHECK(text.find("SIMULATED") == std::string::npos);
  size_t lines = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    ++lines;
    CHECK(line.size() <= 100);
  }
  CHECK(lines <= 25);
}

TEST_CASE("terminal summary: the change under each recommendation, evidence with verbose, notes") {
  auto t = pinnableTrace();
  auto a = analyzeJob(t);
  auto recs = pinnedOnly(recommend(a, &t));
  REQUIRE(recs.size() == 1);
  auto text = renderTerminalSummary({a, recs});
  // The action's line of code, right under the recommendation.
  auto rec = text.find("1. [saves ~7.3%");
  auto change = text.find("\n     -> PyTorch: DataLoader(..., pin_memory=True)");
  REQUIRE(rec != std::string::npos);
  REQUIRE(change != std::string::npos);
  CHECK(change > rec);
  CHECK(text.find("evidence:") == std::string::npos);
  CHECK(text.find("notes") == std::string::npos);

  TerminalOptions verbose;
  verbose.verbose = true;
  text = renderTerminalSummary({a, recs}, verbose);
  CHECK(text.find("     evidence: pageable_share=") != std::string::npos);

  std::vector<Recommendation> notes = recs;
  notes[0].expected_saving_ratio = 0.001;
  const std::vector<Recommendation> none;
  text = renderTerminalSummary({a, none, &notes});
  CHECK(text.find("no recommendations") != std::string::npos);
  CHECK(text.find("  notes (under the 2.0% advice floor): use_pinned_memory saves ~0.1%") !=
        std::string::npos);
  auto j = buildReportJson({a, none, &notes});
  REQUIRE(j["notes"].size() == 1);
  CHECK(j["notes"][0]["id"] == "use_pinned_memory");
  CHECK(j["notes"][0]["explains"]["part"] == "copies.pageable");
  CHECK(j["recommendations"].empty());
}

TEST_CASE("terminal summary: idle causes under the report's names") {
  auto t = pinnableTrace();
  auto a = analyzeJob(t);
  auto text = renderTerminalSummary({a, {}});
  auto line = text.substr(text.find("idle by cause:"));
  line = line.substr(0, line.find('\n'));
  CHECK(line.find('-') == std::string::npos); // host_bound, launch_overhead: as in the JSON
}

TEST_CASE("terminal summary: simulated device, unknown timing, no processes") {
  auto t = pinnableTrace();
  t.source.simulated = true;
  auto a = analyzeJob(t);
  auto text = renderTerminalSummary({a, {}});
  auto first = text.substr(0, text.find('\n'));
  CHECK(first.rfind("gpuwise [SIMULATED DEVICE]: GPU busy 90.9%", 0) == 0);
  CHECK(first.find("no recommendations") != std::string::npos);

  auto p = process(5, "NVIDIA A100", model::CollectionTier::Interposer);
  p.kernels = {kernel(0, 0)};
  auto untimed = analyzeJob(trace(p));
  text = renderTerminalSummary({untimed, {}});
  CHECK(text.rfind("gpuwise: GPU busy unknown (no GPU timestamps; collection tier interposer)",
                   0) == 0);
  CHECK(text.find("0 dropped") != std::string::npos);
  auto q = process(6, "NVIDIA A100", model::CollectionTier::Interposer);
  q.syncs = {{.thread = 1, .kind = model::SyncKind::Device}}; // no host times
  text = renderTerminalSummary({analyzeJob(trace(q)), {}});
  CHECK(text.find("host blocked in syncs: unknown (1 call without host times)") !=
        std::string::npos);

  auto empty = analyzeJob(model::Trace{});
  text = renderTerminalSummary({empty, {}});
  CHECK(text.rfind("gpuwise: no GPU activity recorded (no process reported)", 0) == 0);
}

TEST_CASE("HTML report is self-contained and carries the report") {
  auto t = pinnableTrace();
  t.processes[0].info.command = "python train.py --name '<script>alert(1)</script>'";
  auto a = analyzeJob(t);
  auto recs = pinnedOnly(recommend(a, &t));
  auto html = renderHtmlReport({a, recs});
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  // Nothing fetched from anywhere: no external scripts, stylesheets, images or fonts.
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  CHECK(html.find("<script>alert") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(html.find(htmlEscape(recs[0].title)) != std::string::npos);
  CHECK(html.find("pageable_share") != std::string::npos);
  CHECK(html.find("gemm(float const*, float const*, float*, int)") != std::string::npos);
  // The embedded JSON is the report.
  auto open = html.find("<script type=\"application/json\" id=\"gpuwise-report\">");
  REQUIRE(open != std::string::npos);
  auto body_start = html.find('>', open) + 1;
  auto body = html.substr(body_start, html.find("</script>", body_start) - body_start);
  auto embedded = json::parse(body);
  CHECK(embedded["schema"] == "gpuwise.report/v1");
  CHECK(embedded["processes"][0]["command"] == t.processes[0].info.command);
}

TEST_CASE("report files are written whole, and a failed write names the file") {
  auto t = pinnableTrace();
  auto a = analyzeJob(t);
  std::vector<Recommendation> recs;
  std::string dir =
      std::string(std::getenv("GPUWISE_BUILD_DIR") ? std::getenv("GPUWISE_BUILD_DIR") : ".") +
      "/report_test_out.json";
  std::string error;
  REQUIRE(writeJsonReport(dir, {a, recs}, &error));
  std::ifstream in(dir);
  auto j = json::parse(in);
  CHECK(j["schema"] == "gpuwise.report/v1");
  std::remove(dir.c_str());
  CHECK_FALSE(writeJsonReport("/nonexistent-dir/x.json", {a, recs}, &error));
  CHECK(error.rfind("/nonexistent-dir/x.json: cannot write:", 0) == 0);
}

TEST_CASE("report: a process kept off CUPTI says why, in the JSON and the terminal summary") {
  auto p = process(7, "NVIDIA H100", model::CollectionTier::Interposer);
  p.info.tier_reason = "CUPTI held by another subscriber (torch.profiler, Nsight Systems, ncu or "
                       "another tool): cuptiSubscribe returned "
                       "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
  p.kernels = {kernel(0, 0)};
  auto a = analyzeJob(trace(p));
  json j = buildReportJson({a, {}});
  CHECK(j["collection"]["tier"] == "interposer");
  REQUIRE(j["processes"].size() == 1);
  CHECK(j["processes"][0]["tier_reason"] == p.info.tier_reason);
  auto text = renderTerminalSummary({a, {}});
  CHECK(text.find("no CUPTI: CUPTI held by another subscriber") != std::string::npos);
  CHECK(text.find("MULTIPLE_SUBSCRIBERS") != std::string::npos);
  // A CUPTI-tier process has nothing to explain.
  auto q = process(8, "NVIDIA H100", model::CollectionTier::Cupti);
  q.info.tier_reason = "CUPTI activity: kernels";
  q.kernels = {kernel(0, 10)};
  text = renderTerminalSummary({analyzeJob(trace(q)), {}});
  CHECK(text.find("no CUPTI") == std::string::npos);
}

TEST_CASE("formatting: numbers for people") {
  CHECK(formatSignificant(1234.4) == "1234");
  CHECK(formatSignificant(0.012345) == "0.0123");
  CHECK(formatSignificant(12.0) == "12.0");
  CHECK(formatPercent(0.1234) == "12.3%");
  CHECK(formatDuration(1'230'000'000) == "1.23 s");
  CHECK(formatDuration(45'600'000) == "45.6 ms");
  CHECK(formatBytes(2'150'000'000) == "2.15 GB");
  CHECK(formatBytes(512) == "512 B");
}
