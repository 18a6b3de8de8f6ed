#include "advisor/rules/pinned_bandwidth.h"
#include "advisor/rules/rule_set.h"
#include "advisor/rules/use_pinned_memory_rule.h"
#include "tests/advisor/number_check.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using model::CopyDirection;
using model::MemoryKind;

namespace {

std::optional<Recommendation> evaluatePinned(const model::Trace& t, const Thresholds& th = {}) {
  auto a = analyzeJob(t);
  return UsePinnedMemoryRule().evaluate(RuleContext{a, &t, th});
}

// 100 ms of pageable H2D copies moving 1 GB (10 GB/s), then 1 s of kernels: a 1.1 s GPU span.
model::ProcessTrace pageableJob(const std::string& gpu = "NVIDIA H100 80GB HBM3") {
  auto p = process(1, gpu);
  p.copies = {copy(900 * kMs, 1000 * kMs, 1'000'000'000)};
  p.kernels = {kernel(1000 * kMs, 2000 * kMs)};
  return p;
}

} // namespace

TEST_CASE("use_pinned_memory fires on costly pageable copies, with the table bandwidth") {
  auto t = trace(pageableJob());
  auto r = evaluatePinned(t);
  REQUIRE(r);
  CHECK(r->id == "use_pinned_memory");
  CHECK(isKnownRecommendationId(r->id));
  // 1 GB at the H100's PCIe 5.0 table rate (50 GB/s) takes 20 ms instead of 100 ms.
  CHECK(r->evidence["pageable_seconds"].get<double>() == Approx(0.1));
  CHECK(r->evidence["reference_seconds"].get<double>() == Approx(1.1));
  CHECK(r->evidence["reference"] == "gpu_span");
  CHECK(r->evidence["pageable_share"].get<double>() == Approx(0.1 / 1.1));
  CHECK(r->evidence["pinned_seconds_estimate"].get<double>() == Approx(0.02));
  CHECK(r->evidence["saving_seconds"].get<double>() == Approx(0.08));
  CHECK(r->expected_saving_ratio == Approx(0.08 / 1.1));
  CHECK(r->evidence["pinned_bandwidth_source"].get<std::string>().find("PCIe 5.0") !=
        std::string::npos);
  CHECK(r->confidence == Confidence::Medium);
  CHECK(r->action.find("pin_memory=True") != std::string::npos);
  CHECK(r->action.find("non_blocking=True") != std::string::npos);
  CHECK(r->action.find("cudaMallocHost") != std::string::npos);
  CHECK(r->action.find("cudaHostRegister") != std::string::npos);
  CHECK(r->parameters["pin_memory"] == true);
}

TEST_CASE("use_pinned_memory measures pinned bandwidth from the trace's own pinned copies") {
  auto p = pageableJob();
  // Two 64 MB pinned copies at 25 GB/s, hidden under the kernel so the span stays 1.1 s.
  p.copies.push_back(copy(1100 * kMs, 1100 * kMs + 2'560'000, 64'000'000,
                          CopyDirection::HostToDevice, MemoryKind::Pinned));
  p.copies.push_back(copy(1200 * kMs, 1200 * kMs + 2'560'000, 64'000'000,
                          CopyDirection::HostToDevice, MemoryKind::Pinned));
  auto t = trace(p);
  auto r = evaluatePinned(t);
  REQUIRE(r);
  CHECK(r->evidence["pinned_bandwidth_source"] == "measured");
  CHECK(r->evidence["pinned_bandwidth_gbps"].get<double>() == Approx(25.0));
  CHECK(r->evidence["saving_seconds"].get<double>() == Approx(0.1 - 0.04));
  CHECK(r->confidence == Confidence::High);
}

TEST_CASE("use_pinned_memory uses the slowest link for an unknown GPU, with low confidence") {
  auto t = trace(pageableJob("Some Future Accelerator"));
  auto r = evaluatePinned(t);
  REQUIRE(r);
  CHECK(r->evidence["pinned_bandwidth_gbps"].get<double>() == Approx(12.0));
  CHECK(r->confidence == Confidence::Low);
}

TEST_CASE("use_pinned_memory stays quiet on a healthy job") {
  auto p = process(1);
  p.copies = {
      copy(900 * kMs, 940 * kMs, 1'000'000'000, CopyDirection::HostToDevice, MemoryKind::Pinned)};
  p.kernels = {kernel(1000 * kMs, 2000 * kMs)};
  auto t = trace(p);
  CHECK_FALSE(evaluatePinned(t));
  CHECK(recommend(analyzeJob(t), &t).empty());
}

TEST_CASE("use_pinned_memory: the share threshold is inclusive") {
  // 50 ms of pageable copies in a GPU span of exactly 1 s: 5.0%.
  auto p = process(1);
  p.copies = {copy(1000 * kMs, 1050 * kMs, 1'000'000'000)};
  p.kernels = {kernel(1050 * kMs, 2000 * kMs)};
  CHECK(evaluatePinned(trace(p)));
  // One nanosecond less copying (and of span): just under 5%.
  p.copies[0].start += 1;
  auto t = trace(p);
  CHECK(analyzeJob(t).timeline.span_ns == kSec - 1);
  CHECK_FALSE(evaluatePinned(t));
  // A lower threshold from the one place thresholds live.
  Thresholds th;
  th.pinned_memory.min_share = 0.04;
  CHECK(evaluatePinned(t, th));
}

TEST_CASE("use_pinned_memory ignores small byte counts and copies already at pinned speed") {
  auto small = process(1);
  small.copies = {copy(900 * kMs, 1000 * kMs, 8'000'000)}; // 8 MB < 16 MiB minimum
  small.kernels = {kernel(1000 * kMs, 2000 * kMs)};
  CHECK_FALSE(evaluatePinned(trace(small)));
  auto fast = process(1);
  fast.copies = {copy(980 * kMs, 1000 * kMs, 1'200'000'000)}; // 60 GB/s > H100 table 50 GB/s
  fast.kernels = {kernel(1000 * kMs, 1200 * kMs)};
  CHECK_FALSE(evaluatePinned(trace(fast)));
}

TEST_CASE("use_pinned_memory falls back to wall time on the interposer tier") {
  auto p = process(1, "NVIDIA A100-SXM4-80GB", model::CollectionTier::Interposer);
  auto c = copy(0, 0, 2'400'000'000, CopyDirection::HostToDevice, MemoryKind::Pageable, false);
  c.call_start = kSec;
  c.call_end = kSec + 400 * kMs; // 6 GB/s
  p.copies = {c};
  p.wall_start = kSec;
  p.wall_end = 3 * kSec;
  auto t = trace(p);
  auto r = evaluatePinned(t);
  REQUIRE(r);
  CHECK(r->evidence["reference"] == "wall");
  CHECK(r->evidence["pageable_time_source"] == "host_call");
  CHECK(r->evidence["pageable_share"].get<double>() == Approx(0.2));
  // 2.4 GB at the A100's PCIe 4.0 table rate (24 GB/s): 0.1 s instead of 0.4 s.
  CHECK(r->expected_saving_ratio == Approx(0.3 / 2.0));
}

TEST_CASE("use_pinned_memory: every number in the title and action is in the evidence") {
  auto p = pageableJob();
  p.copies.push_back(copy(1500 * kMs, 1520 * kMs, 200'000'000, CopyDirection::DeviceToHost));
  auto t = trace(p);
  auto r = evaluatePinned(t);
  REQUIRE(r);
  for (const auto& text : {r->title, r->action}) {
    auto missing = numbersMissingFromEvidence(text, r->evidence);
    INFO(text);
    CHECK(missing.empty());
  }
  // The check itself fails on a number that is not in the evidence.
  CHECK(numbersMissingFromEvidence("saves 9.87 s", r->evidence) ==
        std::vector<std::string>{"9.87"});
}

TEST_CASE("pinned bandwidth table matches model tokens, not substrings") {
  CHECK(pinnedLinkFor("NVIDIA A100-SXM4-80GB").bytes_per_second == 24e9);
  CHECK(pinnedLinkFor("NVIDIA A10").bytes_per_second == 24e9);
  CHECK(pinnedLinkFor("Tesla V100-DGXS-32GB").bytes_per_second == 12e9);
  CHECK(pinnedLinkFor("NVIDIA H100 80GB HBM3").bytes_per_second == 50e9);
  CHECK(pinnedLinkFor("NVIDIA GH200 480GB").bytes_per_second == 350e9);
  CHECK(pinnedLinkFor("NVIDIA GeForce RTX 4090").bytes_per_second == 24e9);
  CHECK(pinnedLinkFor("NVIDIA GeForce RTX 5090").bytes_per_second == 50e9);
  CHECK(pinnedLinkFor("NVIDIA RTX A6000").bytes_per_second == 24e9);
  CHECK(pinnedLinkFor("NVIDIA L40S").bytes_per_second == 24e9);
  CHECK(pinnedLinkFor("NVIDIA B200").bytes_per_second == 50e9);
  auto unknown = pinnedLinkFor("AMD Instinct MI300X");
  CHECK_FALSE(unknown.known_model);
  CHECK(unknown.bytes_per_second == 12e9);
}

namespace {

class FakeRule final : public Rule {
public:
  FakeRule(std::string id, double saving, Confidence c, bool fires = true)
      : id_(std::move(id)), saving_(saving), confidence_(c), fires_(fires) {}
  std::string_view id() const override { return id_; }
  std::optional<Recommendation> evaluate(const RuleContext&) const override {
    if (!fires_) return std::nullopt;
    Recommendation r;
    r.id = id_;
    r.expected_saving_ratio = saving_;
    r.confidence = confidence_;
    return r;
  }

private:
  std::string id_;
  double saving_;
  Confidence confidence_;
  bool fires_;
};

} // namespace

TEST_CASE("recommendations are ranked by expected saving, then confidence, then id") {
  std::vector<std::unique_ptr<Rule>> rules;
  // Ids no conflict removes (share_gpu would go: a fix for an idle GPU supersedes it).
  rules.push_back(std::make_unique<FakeRule>("enable_mixed_precision", 0.10, Confidence::Low));
  rules.push_back(std::make_unique<FakeRule>("increase_batch_size", 0.30, Confidence::Medium));
  rules.push_back(std::make_unique<FakeRule>("use_cuda_graphs", 0.10, Confidence::High));
  rules.push_back(std::make_unique<FakeRule>("prefetch_input", 0.50, Confidence::Low, false));
  rules.push_back(std::make_unique<FakeRule>("reduce_host_syncs", 0.10, Confidence::High));
  auto a = analyzeJob(trace(process(1)));
  Thresholds th;
  auto out = evaluateRules(rules, RuleContext{a, nullptr, th});
  REQUIRE(out.size() == 4);
  CHECK(out[0].id == "increase_batch_size");
  CHECK(out[1].id == "reduce_host_syncs");
  CHECK(out[2].id == "use_cuda_graphs");
  CHECK(out[3].id == "enable_mixed_precision");
}

TEST_CASE("every default rule has a contract id") {
  for (const auto& rule : defaultRules())
    CHECK(isKnownRecommendationId(rule->id()));
  CHECK_FALSE(isKnownRecommendationId("buy_more_gpus"));
}
