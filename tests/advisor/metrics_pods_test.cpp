// Two pods through one advisor (issue 18): each pod's recommendations come from its own processes
// only, so gpuwise_recommendation_expected_saving_ratio{pod=...} never carries another pod's
// finding.
#include "advisor/analysis/job_analysis.h"
#include "advisor/metrics/exposition_builder.h"
#include "advisor/metrics/metrics_input.h"
#include "advisor/rules/rule_set.h"
#include "tests/advisor/metrics_parse.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

#include <set>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;

namespace {

constexpr model::TimeNs kT0 = 1 * kSec;
constexpr const char* kSgemm = "ampere_sgemm_128x64_nn";
constexpr const char* kBf16Gemm = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn";

model::ProcessTrace podProcess(int64_t pid, const std::string& ns, const std::string& pod) {
  model::ProcessTrace p = process(pid);
  p.info.ns = ns;
  p.info.pod = pod;
  p.info.container = "pytorch";
  p.info.rank = 0;
  return p;
}

// FP32 GEMMs back to back for 2 s: mixed precision is this pod's finding.
model::ProcessTrace fp32Pod() {
  model::ProcessTrace p = podProcess(100, "ml", "train-xyz-0");
  auto name = p.names.intern(kSgemm);
  for (int i = 0; i < 200; ++i)
    p.kernels.push_back(kernel(kT0 + i * 10 * kMs, kT0 + (i + 1) * 10 * kMs, 7, 0, name));
  return p;
}

// BF16 tensor-core GEMMs, each after a 64 MiB pageable host-to-device copy: pinned memory is this
// pod's finding, mixed precision is not.
model::ProcessTrace pageablePod() {
  model::ProcessTrace p = podProcess(200, "ml", "train-abc-0");
  auto name = p.names.intern(kBf16Gemm);
  for (int i = 0; i < 200; ++i) {
    model::TimeNs s = kT0 + i * 10 * kMs;
    p.copies.push_back(copy(s, s + 4 * kMs, 64ull << 20, model::CopyDirection::HostToDevice,
                            model::MemoryKind::Pageable, false));
    p.kernels.push_back(kernel(s + 4 * kMs, s + 10 * kMs, 7, 0, name));
  }
  return p;
}

std::set<std::string> ids(const std::vector<Recommendation>& recs) {
  std::set<std::string> out;
  for (const auto& r : recs)
    out.insert(r.id);
  return out;
}

std::vector<Recommendation> alone(model::ProcessTrace p) {
  return recommend(analyzeJob(trace(std::move(p)), {}), nullptr);
}

double savingOf(const std::vector<Recommendation>& recs, const std::string& id) {
  for (const auto& r : recs)
    if (r.id == id) return r.expected_saving_ratio;
  return -1;
}

} // namespace

TEST_CASE("metrics: two pods through one advisor keep their own recommendations") {
  const auto fp32 = alone(fp32Pod());
  const auto pageable = alone(pageablePod());
  INFO("fp32 pod alone: " << fp32.size() << ", pageable pod alone: " << pageable.size());
  // The premise: each pod alone has its own finding and not the other's, and the job as a whole
  // (what the advisor used to write for every pod) has both.
  REQUIRE(ids(fp32).count("enable_mixed_precision") == 1);
  REQUIRE(ids(fp32).count("use_pinned_memory") == 0);
  REQUIRE(ids(pageable).count("use_pinned_memory") == 1);
  REQUIRE(ids(pageable).count("enable_mixed_precision") == 0);
  model::Trace both;
  both.processes.push_back(pageablePod());
  both.processes.push_back(fp32Pod());
  const auto merged = ids(recommend(analyzeJob(both, {}), nullptr));
  REQUIRE(merged.count("enable_mixed_precision") == 1);
  REQUIRE(merged.count("use_pinned_memory") == 1);

  auto job = metrics::buildMetricsInput(std::move(both), nullptr);
  REQUIRE(job.pods.size() == 2);
  CHECK(job.pods[0].pod == "train-abc-0"); // in order of first contact
  CHECK(job.pods[1].pod == "train-xyz-0");
  CHECK(ids(job.recommendationsOf("ml", "train-abc-0")) == ids(pageable));
  CHECK(ids(job.recommendationsOf("ml", "train-xyz-0")) == ids(fp32));
  CHECK(job.recommendationsOf("ml", "no-such-pod").empty());
  CHECK(job.recommendationsOf("other-namespace", "train-abc-0").empty());

  metrics::ExpositionBuilder b;
  auto m = parseProm(b.build(job));
  const std::string kSaving = "gpuwise_recommendation_expected_saving_ratio";
  const std::map<std::string, std::string> abc{{"namespace", "ml"}, {"pod", "train-abc-0"}};
  const std::map<std::string, std::string> xyz{{"namespace", "ml"}, {"pod", "train-xyz-0"}};
  auto with = [](std::map<std::string, std::string> l, const std::string& id) {
    l["id"] = id;
    return l;
  };
  CHECK(m.find(kSaving, with(abc, "enable_mixed_precision")).empty());
  CHECK(m.find(kSaving, with(xyz, "use_pinned_memory")).empty());
  CHECK(m.value(kSaving, with(abc, "use_pinned_memory")) ==
        Approx(savingOf(pageable, "use_pinned_memory")));
  CHECK(m.value(kSaving, with(xyz, "enable_mixed_precision")) ==
        Approx(savingOf(fp32, "enable_mixed_precision")));
  CHECK(m.find(kSaving, abc).size() == pageable.size());
  CHECK(m.find(kSaving, xyz).size() == fp32.size());
}

TEST_CASE("metrics: the same pod name in two namespaces is two pods") {
  model::Trace t;
  t.processes.push_back(fp32Pod());
  auto other = pageablePod();
  other.info.ns = "team-b";
  other.info.pod = "train-xyz-0";
  t.processes.push_back(std::move(other));
  auto job = metrics::buildMetricsInput(std::move(t), nullptr);
  REQUIRE(job.pods.size() == 2);
  CHECK(ids(job.recommendationsOf("ml", "train-xyz-0")).count("use_pinned_memory") == 0);
  CHECK(ids(job.recommendationsOf("team-b", "train-xyz-0")).count("use_pinned_memory") == 1);
  CHECK(ids(job.recommendationsOf("team-b", "train-xyz-0")).count("enable_mixed_precision") == 0);
}
