// The rules on the real GPU traces recorded by other projects ($GPUWISE_TRACES_DIR/kineto):
//   - ResNet-50 on a V100 in FP32 (kineto_tb_plugin, all eight files): enable_mixed_precision
//     (FP16 with a scaler: the V100 has no BF16); prefetch_input for the num_workers=0 runs and
//     not for the num_workers=4 runs;
//   - owlv2 on an H100 in BF16 (tracelens/h100): no precision recommendation;
//   - a GPU busy above 95% with BF16 tensor-core kernels gets nothing: the owlv2 trace, imported,
//     with its GPU activity moved back to back (each device's kernels, copies and memsets keep
//     their order and durations; the idle gaps and step ranges are removed);
//   - every recommendation on every one of these traces passes the contract: every number of
//     its title and action is in its evidence;
//   - every real trace's report (Kineto and Nsight, through the importers) keeps each saving
//     within the part of the breakdown it names (advice_invariants.h), and the cases that once
//     broke it: host-bound gaps on MI300X, input stall with a loader that keeps up, an MPI saxpy
//     with no training loop, negligible savings listed as recommendations.
#include "advisor/analysis/job_analysis.h"
#include "advisor/import/kineto_importer.h"
#include "advisor/import/nsys_importer.h"
#include "advisor/report/report_json.h"
#include "advisor/rules/rule_set.h"
#include "tests/advisor/advice_invariants.h"
#include "tests/advisor/number_check.h"
#include "tests/traces_dir.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <tuple>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
namespace fs = std::filesystem;

namespace {

// The full set, or the subset in tests/data/traces where it is absent (tests/traces_dir.h).
fs::path kinetoRoot() {
  return gpuwise::test::realTracesDir() / "kineto";
}

model::Trace import(const fs::path& path) {
  auto r = importKineto({path.string()});
  INFO(path << ": " << r.error);
  REQUIRE(r.ok());
  return std::move(r.trace);
}

bool has(const std::vector<Recommendation>& recs, std::string_view id) {
  return std::any_of(recs.begin(), recs.end(), [&](const auto& r) { return r.id == id; });
}

std::string ids(const std::vector<Recommendation>& recs) {
  std::string s;
  for (const auto& r : recs)
    s += r.id + "(" + std::to_string(r.expected_saving_ratio) + ") ";
  return s;
}

void checkNumbers(const std::vector<Recommendation>& recs) {
  for (const auto& r : recs) {
    INFO(r.id << ": " << r.title << "\n" << r.action);
    CHECK(numbersMissingFromEvidence(r.title, r.evidence).empty());
    CHECK(numbersMissingFromEvidence(r.action, r.evidence).empty());
  }
}

// Every device's GPU activity back to back from its first start, in start order.
void compactGpuTimeline(model::Trace& trace) {
  for (auto& p : trace.processes) {
    struct Item {
      model::TimeNs* start;
      model::TimeNs* end;
      uint32_t device;
    };
    std::vector<Item> items;
    for (auto& k : p.kernels)
      items.push_back({&k.start, &k.end, k.device});
    for (auto& c : p.copies)
      items.push_back({&c.start, &c.end, c.device});
    for (auto& m : p.memsets)
      items.push_back({&m.start, &m.end, m.device});
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return std::tie(a.device, *a.start) < std::tie(b.device, *b.start);
    });
    std::map<uint32_t, model::TimeNs> cursor;
    for (auto& it : items) {
      if (*it.end <= *it.start) continue; // untimed
      auto [at, fresh] = cursor.emplace(it.device, *it.start);
      model::TimeNs length = *it.end - *it.start;
      *it.start = at->second;
      *it.end = at->second + length;
      at->second = *it.end;
    }
    std::erase_if(p.ranges, [](const model::Range& r) { return r.kind == model::RangeKind::Step; });
  }
}

} // namespace

TEST_CASE("ResNet-50 on V100 in FP32: mixed precision; prefetch only with num_workers=0") {
  auto root = kinetoRoot() / "kineto_tb_plugin";
  int files = 0;
  for (const auto& dir : fs::directory_iterator(root)) {
    std::string name = dir.path().filename().string();
    if (name.find("resnet50") == std::string::npos) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      auto trace = import(f.path());
      auto a = analyzeJob(trace);
      auto recs = recommend(a, &trace);
      INFO(f.path() << ": " << ids(recs) << " input_stall_ratio "
                    << a.inputStallRatio().value_or(-1));
      ++files;
      REQUIRE(has(recs, "enable_mixed_precision"));
      for (const auto& r : recs)
        if (r.id == "enable_mixed_precision") {
          CHECK(r.parameters["autocast_dtype"] == "float16");
          CHECK(r.parameters["grad_scaler"] == true);
          CHECK(r.evidence["throughput_table"].get<std::string>().rfind("V100", 0) == 0);
        }
      CHECK_FALSE(has(recs, "enable_tf32")); // the V100 has no TF32
      bool workers0 = name.find("num_workers_0") != std::string::npos;
      CHECK(has(recs, "prefetch_input") == workers0);
      checkNumbers(recs);
    }
  }
  if (gpuwise::test::haveFullTraces())
    CHECK(files == 8);
  else
    CHECK(files == 2); // the subset: one run with num_workers=0, one with 4
}

TEST_CASE("owlv2 on H100 in BF16: no precision recommendation", "[.full_traces]") {
  auto path = gpuwise::test::requireTrace(
      "kineto/tracelens/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz");
  auto trace = import(path);
  auto a = analyzeJob(trace);
  auto recs = recommend(a, &trace);
  INFO(ids(recs));
  CHECK(a.precision.share(profiler::Precision::Bf16).value_or(0) > 0.99);
  CHECK_FALSE(has(recs, "enable_mixed_precision"));
  CHECK_FALSE(has(recs, "enable_tf32"));
  checkNumbers(recs);

  SECTION("moved back to back (busy > 95%, BF16 on tensor cores): nothing fires") {
    compactGpuTimeline(trace);
    auto c = analyzeJob(trace);
    auto none = recommend(c, &trace);
    INFO(ids(none));
    REQUIRE(c.timeline.known());
    CHECK(double(c.timeline.busy_ns) / double(c.timeline.span_ns) > 0.95);
    CHECK(c.precision.tensorCoreShare().value_or(0) > 0.4);
    CHECK(none.empty());
  }
}

TEST_CASE("every recommendation on the real traces keeps its numbers in evidence") {
  auto root = kinetoRoot() / "tracelens/h100";
  int files = 0;
  for (const auto& f : fs::directory_iterator(root)) {
    ++files;
    auto trace = import(f.path());
    auto a = analyzeJob(trace);
    auto recs = recommend(a, &trace);
    INFO(f.path() << ": " << ids(recs));
    checkNumbers(recs);
    for (const auto& r : recs) {
      CHECK(r.expected_saving_ratio >= 0.0);
      CHECK(r.expected_saving_ratio <= 1.0);
    }
  }
  CHECK(files >= 1);
}

namespace {

fs::path tracesRoot() {
  return kinetoRoot().parent_path();
}

struct Advised {
  JobAnalysis analysis;
  Advice advice;
  nlohmann::ordered_json report;
};

Advised adviseOn(model::Trace trace) {
  Advised out{analyzeJob(trace), {}, {}};
  out.advice = advise(out.analysis, &trace);
  out.report = buildReportJson({out.analysis, out.advice.recommendations, &out.advice.notes});
  return out;
}

Advised adviseOnKineto(const std::string& rel) {
  return adviseOn(import(kinetoRoot() / rel));
}

} // namespace

TEST_CASE("every real trace's report keeps each saving within the part of the breakdown it names") {
  if (!fs::exists(tracesRoot())) gpuwise::test::skipTest("no traces at " + tracesRoot().string());
  size_t reports = 0, findings = 0;
  for (const auto& entry : fs::recursive_directory_iterator(tracesRoot())) {
    if (!entry.is_regular_file()) continue;
    const auto p = entry.path();
    const std::string name = p.filename().string();
    const bool nsys = p.extension() == ".sqlite";
    if (!nsys && name.find(".json") == std::string::npos) continue;
    model::Trace trace;
    if (nsys) {
      auto imported = importNsys({p.string()});
      if (!imported.ok()) continue;
      trace = std::move(imported.trace);
    } else {
      auto imported = importKineto({p.string()});
      if (!imported.ok()) continue; // not a trace (execution traces, configs): the importers' tests
      trace = std::move(imported.trace);
    }
    auto a = adviseOn(std::move(trace));
    INFO(p << ": " << ids(a.advice.recommendations) << " notes " << ids(a.advice.notes));
    for (const auto& problem : adviceInvariantViolations(a.report)) {
      INFO(problem);
      CHECK(false);
    }
    ++reports;
    findings += a.advice.recommendations.size() + a.advice.notes.size();
  }
  // Every trace read: over 30 of the full set's 40, all 7 of the committed subset.
  CHECK(reports >= (gpuwise::test::haveFullTraces() ? 30u : 7u));
  CHECK(findings > 0);
}

TEST_CASE("MI300X normalization test: host-bound gaps get no graph advice", "[.full_traces]") {
  const std::string rel = "tracelens/perf_model/normalization/normalization_layer_test.json.gz";
  gpuwise::test::requireTrace("kineto/" + rel);
  auto a = adviseOnKineto(rel);
  const auto& idle = a.analysis.timeline.idle;
  // 172 gaps averaging 6 ms in Python, hipModuleLoadData and hipMalloc: host-bound, and the
  // launch overhead between kernels is microseconds.
  CHECK(idle.at(IdleCause::HostBound) > 100 * idle.at(IdleCause::LaunchOverhead));
  CHECK_FALSE(has(a.advice.recommendations, "use_cuda_graphs"));
  CHECK_FALSE(has(a.advice.notes, "use_cuda_graphs"));
  CHECK(platformOf(a.analysis) == Platform::Rocm);
}

TEST_CASE("ResNet-50 with 4 workers: input stall within the idle the DataLoader spans overlap") {
  const fs::path dir = kinetoRoot() / "kineto_tb_plugin/resnet50_num_workers_4";
  if (!fs::exists(dir)) gpuwise::test::skipTest("no traces at " + dir.string());
  size_t n = 0;
  for (const auto& f : fs::directory_iterator(dir)) {
    auto a = adviseOn(import(f.path()));
    const auto& idle = a.analysis.timeline.idle;
    INFO(f.path());
    // The DataLoader's __next__ spans are 1.0% of step time; input is what they overlap.
    CHECK(idle.input_inferred_ns == 0);
    CHECK(idle.at(IdleCause::Input) == idle.input_data_loader_ns);
    REQUIRE(a.analysis.inputStallRatio());
    CHECK(*a.analysis.inputStallRatio() < 0.015);
    CHECK_FALSE(has(a.advice.recommendations, "prefetch_input"));
    ++n;
  }
  CHECK(n == (gpuwise::test::haveFullTraces() ? 2u : 1u)); // the subset keeps one of the two
}

TEST_CASE("MPI saxpy: no DataLoader advice; the under-filled launch with a filling grid") {
  const fs::path file = gpuwise::test::requireTrace("nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite");
  auto imported = importNsys({file.string()});
  REQUIRE(imported.ok());
  auto a = adviseOn(std::move(imported.trace));
  INFO(ids(a.advice.recommendations) << " notes " << ids(a.advice.notes));
  CHECK_FALSE(has(a.advice.recommendations, "prefetch_input"));
  CHECK_FALSE(has(a.advice.notes, "prefetch_input"));
  std::vector<Recommendation> all = a.advice.recommendations;
  all.insert(all.end(), a.advice.notes.begin(), a.advice.notes.end());
  auto it = std::find_if(all.begin(), all.end(),
                         [](const auto& r) { return r.id == "increase_batch_size"; });
  REQUIRE(it != all.end());
  const auto& lc = it->parameters["launch_config"];
  REQUIRE(lc.is_object());
  CHECK(lc["grid"][0].get<uint64_t>() * lc["grid"][1].get<uint64_t>() == 2);
  CHECK(lc["suggested_grid_blocks"].get<uint64_t>() >= 108);
  CHECK(it->title.find("108-SM") != std::string::npos);
  checkNumbers({*it});
}

TEST_CASE("negligible findings are notes, not recommendations") {
  // The first is in the committed subset; the second only in the full set.
  for (const char* rel :
       {"hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
        "kineto_tb_plugin/test/gpu_metrics_input.json"}) {
    if (!fs::exists(kinetoRoot() / rel)) {
      REQUIRE_FALSE(gpuwise::test::haveFullTraces()); // the full set has both
      continue;
    }
    auto a = adviseOnKineto(rel);
    INFO(rel << ": " << ids(a.advice.recommendations) << " notes " << ids(a.advice.notes));
    CHECK_FALSE(has(a.advice.recommendations, "enable_mixed_precision"));
    CHECK(has(a.advice.notes, "enable_mixed_precision"));
    CHECK(a.report.at("notes").size() == a.advice.notes.size());
    for (const auto& r : a.advice.recommendations)
      CHECK(r.expected_saving_ratio >= 0.02);
  }
}
