// The rules on the real GPU traces recorded by other projects ($GPUWISE_TRACES_DIR/kineto):
//   - ResNet-50 on a V100 in FP32 (kineto_tb_plugin, all eight files): enable_mixed_precision
//     (FP16 with a scaler: the V100 has no BF16); prefetch_input for the num_workers=0 runs and
//     not for the num_workers=4 runs;
//   - owlv2 on an H100 in BF16 (tracelens/h100): no precision recommendation;
//   - a GPU busy above 95% with BF16 tensor-core kernels gets nothing: the owlv2 trace, imported,
//     with its GPU activity moved back to back (each device's kernels, copies and memsets keep
//     their order and durations; the idle gaps and step ranges are removed);
//   - every recommendation on every one of these traces passes the contract: every number of
//     its title and action is in its evidence.
#include "advisor/analysis/job_analysis.h"
#include "advisor/import/kineto_importer.h"
#include "advisor/rules/rule_set.h"
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
  for (const auto& r : recs) s += r.id + "(" + std::to_string(r.expected_saving_ratio) + ") ";
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
    for (auto& k : p.kernels) items.push_back({&k.start, &k.end, k.device});
    for (auto& c : p.copies) items.push_back({&c.start, &c.end, c.device});
    for (auto& m : p.memsets) items.push_back({&m.start, &m.end, m.device});
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
      INFO(f.path() << ": " << ids(recs) << " input_stall_ratio " << a.inputStallRatio().value_or(-1));
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
