// The ranks of a distributed job side by side (analysis/distributed_analyzer.h), the collective
// wait and clock alignment (collective_alignment.h), the straggler (straggler.h) and the two
// distributed rules (fix_straggler, overlap_communication), plus prefetch_input on one rank's
// loader, on planted 4-rank traces: every rank computes, then all-reduces; the all-reduce ends on
// every rank when the last rank has arrived plus a transfer.
#include "advisor/analysis/collective_alignment.h"
#include "advisor/analysis/distributed_analyzer.h"
#include "advisor/analysis/job_analysis.h"
#include "advisor/analysis/straggler.h"
#include "advisor/rules/fix_straggler_rule.h"
#include "advisor/rules/overlap_communication_rule.h"
#include "advisor/rules/prefetch_input_rule.h"
#include "advisor/rules/rule_set.h"
#include "tests/advisor/analysis_builders.h"
#include "tests/advisor/number_check.h"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using model::TimeNs;

namespace {

constexpr TimeNs kUs = 1000;
constexpr TimeNs kBase = 1'000'000'000'000; // every rank's clock starts here, plus its offset
constexpr double kTransferMs = 0.3;
constexpr int kSteps = 20;

// What one rank does differently from the others each step.
struct RankPlan {
  double compute_ms = 6;   // its compute kernel
  double loader_ms = 0.1;  // its DataLoader range before it
  double host_ms = 0;      // host time outside the loader before the launch
  TimeNs clock_offset = 0; // added to every timestamp of this rank
  size_t skip_first = 0;   // collectives its trace misses at the start
  double jitter_ms = 0.05; // compute varies by up to 4x this, differently per rank and step
};

TimeNs ms(double v) {
  return TimeNs(v * 1e6);
}

// kSteps lock-step steps of every rank: loader, host, compute, then the all-reduce that ends
// kTransferMs after the last rank's arrival; the next step begins 50 us after.
model::Trace job(const std::vector<RankPlan>& plans, bool flag_calls = false) {
  model::Trace t;
  for (size_t r = 0; r < plans.size(); ++r) {
    auto p = process(100 + TimeNs(r));
    p.info.rank = int32_t(r);
    p.info.world_size = int32_t(plans.size());
    p.info.host = plans[r].clock_offset ? "node2" : "node1";
    t.processes.push_back(std::move(p));
  }
  TimeNs step_start = 0;
  for (int s = 0; s < kSteps; ++s) {
    std::vector<TimeNs> arrival(plans.size());
    for (size_t r = 0; r < plans.size(); ++r) {
      const auto& plan = plans[r];
      const TimeNs launch = step_start + ms(plan.loader_ms + plan.host_ms);
      const double jitter = plan.jitter_ms * double((s * 7 + int(r) * 3) % 5);
      arrival[r] = launch + 10 * kUs + ms(plan.compute_ms + jitter);
    }
    const TimeNs end = *std::max_element(arrival.begin(), arrival.end()) + ms(kTransferMs);
    for (size_t r = 0; r < plans.size(); ++r) {
      auto& p = t.processes[r];
      const auto& plan = plans[r];
      const TimeNs o = kBase + plan.clock_offset;
      const TimeNs launch = step_start + ms(plan.loader_ms + plan.host_ms);
      p.ranges.push_back(range(p, model::RangeKind::DataLoader, "enumerate(DataLoader)#x",
                               o + step_start, o + step_start + ms(plan.loader_ms)));
      p.kernels.push_back(launched(p, "sm90_xmma_gemm_bf16", o + launch, o + launch + 5 * kUs,
                                   o + launch + 10 * kUs, o + arrival[r] - 1));
      if (size_t(s) >= plan.skip_first) {
        auto k = launched(p, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", o + launch + 6 * kUs,
                          o + launch + 8 * kUs, o + arrival[r], o + end, kMainThread, 13);
        k.flags = model::kKernelCommunication;
        k.correlation = uint64_t(s + 1);
        p.kernels.push_back(k);
        if (flag_calls) {
          model::Collective c;
          c.correlation = k.correlation;
          c.communicator = 0xabc0 + r; // a per-process handle, as the shim sees it
          c.sequence = uint64_t(s + 1);
          c.kind = model::CollectiveKind::AllReduce;
          c.element = model::ElementType::Float32;
          c.in_count = c.out_count = 4u << 20;
          c.group_size = int32_t(plans.size());
          p.collectives.push_back(c);
        }
      }
      const TimeNs next = end + 50 * kUs;
      p.ranges.push_back(range(p, model::RangeKind::Step, "ProfilerStep#" + std::to_string(s),
                               o + step_start, o + next, s));
    }
    step_start = end + 50 * kUs;
  }
  return t;
}

const RankSummary& rankOf(const JobAnalysis& a, int32_t rank) {
  for (const auto& r : a.distributed.ranks)
    if (r.rank == rank) return r;
  FAIL("no rank " << rank);
  return a.distributed.ranks.front();
}

std::vector<RankPlan> balanced() {
  return std::vector<RankPlan>(4);
}

std::optional<Recommendation> evaluate(const Rule& rule, const JobAnalysis& a) {
  Thresholds t;
  return rule.evaluate(RuleContext{a, nullptr, t});
}

void checkNumbersInEvidence(const Recommendation& r) {
  INFO(r.title << "\n" << r.action);
  CHECK(numbersMissingFromEvidence(r.title, r.evidence).empty());
  CHECK(numbersMissingFromEvidence(r.action, r.evidence).empty());
}

} // namespace

TEST_CASE("distributed: one summary per rank from the per-process figures") {
  auto a = analyzeJob(job(balanced()));
  REQUIRE(a.distributed.ranks.size() == 4);
  for (int32_t r = 0; r < 4; ++r) {
    const auto& s = a.distributed.ranks[size_t(r)];
    CHECK(s.rank == r);
    CHECK(s.pid == 100 + r);
    CHECK(s.host == "node1");
    CHECK(s.gpu == "NVIDIA H100 80GB HBM3");
    CHECK(s.steps >= kSteps - 2); // at most 10% warm-up
    REQUIRE(s.step_p50_seconds);
    CHECK(*s.step_p50_seconds == Approx(0.0066).margin(0.0003));
    CHECK(s.compute_seconds > 0.11);
    CHECK(s.communication_seconds >= kSteps * kTransferMs / 1e3 - 1e-6);
    // Compute and communication never overlap here: all of it is exposed.
    CHECK(s.communication_exposed_seconds == Approx(s.communication_seconds));
    REQUIRE(s.communication_overlap_ratio);
    CHECK(*s.communication_overlap_ratio == Approx(0).margin(1e-9));
    REQUIRE(s.gpu_busy_ratio);
    CHECK(*s.gpu_busy_ratio > 0.9);
  }
  CHECK(a.distributed.world_size == 4);
  CHECK(a.distributed.missing_ranks.empty());
  // Every rank is sometimes the last to arrive: nobody is the one the others wait for.
  CHECK_FALSE(a.distributed.straggler);
}

TEST_CASE("distributed: a single-process job has one entry and no measurable wait") {
  auto t = job(balanced());
  t.processes.resize(1);
  auto a = analyzeJob(t);
  REQUIRE(a.distributed.ranks.size() == 1);
  CHECK(a.distributed.ranks[0].collective_wait_seconds == 0);
  CHECK(a.distributed.missing_ranks == std::vector<int32_t>{1, 2, 3});
  CHECK_FALSE(a.distributed.straggler);
}

TEST_CASE("alignment: offsets and waits recovered, a +5 s clock and a late-starting trace too") {
  auto plans = balanced();
  for (auto& p : plans)
    p.jitter_ms = 0;
  plans[2].compute_ms = 9; // the others arrive 3 ms before it
  auto same_clock = collectCollectiveTimings(job(plans));
  plans[3].clock_offset = 5'000'000'000;
  plans[1].skip_first = 2;
  auto shifted = collectCollectiveTimings(job(plans));
  REQUIRE(shifted.size() == 4);

  const auto a = alignCollectives(same_clock, {});
  const auto b = alignCollectives(shifted, {});
  for (size_t r = 0; r < 4; ++r) {
    INFO("rank " << r);
    REQUIRE(b[r].offset_ns);
    CHECK(*b[r].offset_ns == (r == 3 ? 5'000'000'000 : 0));
    const TimeNs expected = r == 2 ? 0 : ms(3) * TimeNs(r == 1 ? kSteps - 2 : kSteps);
    CHECK(b[r].wait_ns == expected);
    CHECK(a[r].wait_ns == (r == 2 ? 0 : ms(3) * kSteps));
  }
  CHECK(b[1].matched == kSteps - 2);
}

TEST_CASE("alignment: Collective records (communicator, sequence) match the calls") {
  auto plans = balanced();
  plans[0].compute_ms = 8;
  auto timings = collectCollectiveTimings(job(plans, true));
  REQUIRE(timings.size() == 4);
  CHECK(timings[0].kernels[0].sequence == 1);
  CHECK(timings[0].kernels[0].bytes == (16u << 20));
  CHECK(timings[0].kernels[0].kind == model::CollectiveKind::AllReduce);
  const auto w = alignCollectives(timings, {});
  CHECK(w[0].wait_ns == 0);
  for (size_t r = 1; r < 4; ++r)
    CHECK(w[r].wait_ns > ms(1.8) * kSteps);
}

TEST_CASE("straggler: each cause, the rank named, the others' wait as its saving") {
  struct Case {
    const char* name;
    size_t rank;
    RankPlan plan;
    StragglerCause cause;
  };
  const Case cases[] = {
      {"slow kernels", 2, {.compute_ms = 9}, StragglerCause::Compute},
      {"slow loader", 1, {.loader_ms = 3}, StragglerCause::Input},
      {"slow host", 3, {.host_ms = 3}, StragglerCause::Host},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      auto plans = balanced();
      plans[c.rank] = c.plan;
      plans[0].clock_offset = -7'000'000'000; // another host's clock
      auto a = analyzeJob(job(plans));
      REQUIRE(a.distributed.straggler);
      const auto& s = *a.distributed.straggler;
      CHECK(s.rank == int32_t(c.rank));
      CHECK(s.cause == c.cause);
      double others = 0;
      for (const auto& r : a.distributed.ranks)
        if (r.rank != s.rank) {
          CHECK(r.collective_wait_seconds > 0.0025 * double(r.steps));
          others += r.collective_wait_seconds;
        }
      CHECK(s.others_wait_seconds == Approx(others));
      CHECK(rankOf(a, int32_t(c.rank)).collective_wait_seconds < 0.001 * kSteps);
      CHECK(s.step_p50_seconds == Approx(s.peers_step_p50_seconds).epsilon(0.01));

      auto rec = evaluate(FixStragglerRule{}, a);
      REQUIRE(rec);
      CHECK(rec->parameters["rank"] == int32_t(c.rank));
      CHECK(rec->parameters["cause"] == toString(c.cause));
      CHECK(rec->parameters["others_wait_seconds"].get<double>() == Approx(others));
      CHECK(rec->expected_saving_ratio > 0.2);
      checkNumbersInEvidence(*rec);

      // The slow loader's rank also gets prefetch_input, for its rank alone.
      auto prefetch = evaluate(PrefetchInputRule{}, a);
      CHECK(prefetch.has_value() == (c.cause == StragglerCause::Input));
      if (prefetch) {
        CHECK(prefetch->parameters["rank"] == 1);
        CHECK(prefetch->evidence["input_stall_ratio"].get<double>() > 0.25);
        checkNumbersInEvidence(*prefetch);
      }
    }
  }
}

TEST_CASE("straggler: from RankSummary alone, as the report merge reads them back") {
  std::vector<RankSummary> ranks(4);
  for (int32_t r = 0; r < 4; ++r) {
    ranks[size_t(r)].rank = r;
    ranks[size_t(r)].steps = 100;
    ranks[size_t(r)].step_mean_seconds = ranks[size_t(r)].step_p50_seconds = 0.1;
    ranks[size_t(r)].compute_seconds = 6;
    ranks[size_t(r)].host_seconds = 0.5;
    ranks[size_t(r)].input_stall_ratio = 0.01;
  }
  SECTION("without collectives, by step time") {
    CHECK_FALSE(findStraggler(ranks));
    ranks[3].step_p50_seconds = 0.125; // 1.25x the others'
    ranks[3].input_stall_ratio = 0.2;
    auto s = findStraggler(ranks);
    REQUIRE(s);
    CHECK(s->rank == 3);
    CHECK(s->cause == StragglerCause::Input);
    CHECK(s->others_wait_seconds == Approx(3 * 0.025 * 100));
    ranks[3].step_p50_seconds = 0.115; // under 1.2x
    CHECK_FALSE(findStraggler(ranks));
  }
  SECTION("with waits: the one that waits least while the others wait") {
    for (auto& r : ranks)
      r.collective_wait_seconds = 2; // 20 ms a step each: balanced
    CHECK_FALSE(findStraggler(ranks));
    ranks[1].collective_wait_seconds = 0.1;
    ranks[1].compute_seconds = 8;
    auto s = findStraggler(ranks);
    REQUIRE(s);
    CHECK(s->rank == 1);
    CHECK(s->cause == StragglerCause::Compute);
    CHECK(s->others_wait_seconds == Approx(6));
    for (auto& r : ranks)
      r.collective_wait_seconds = r.rank == 1 ? 0.0 : 0.5; // 5 ms of a 100 ms step: jitter
    CHECK_FALSE(findStraggler(ranks));
  }
  CHECK_FALSE(findStraggler({ranks[0]}));
}

TEST_CASE("distributed: per-process analyses merged give the whole job's ranks and waits") {
  auto plans = balanced();
  plans[2].compute_ms = 9;
  const auto t = job(plans);
  const auto whole = analyzeJob(t);
  JobAnalysis merged;
  for (const auto& p : t.processes) {
    model::Trace one;
    one.processes.push_back(p);
    merged.merge(analyzeJob(one));
  }
  REQUIRE(merged.distributed.ranks.size() == 4);
  for (size_t r = 0; r < 4; ++r) {
    const auto &x = whole.distributed.ranks[r], &y = merged.distributed.ranks[r];
    CHECK(x.rank == y.rank);
    CHECK(x.steps == y.steps);
    CHECK(x.step_p50_seconds == y.step_p50_seconds);
    CHECK(x.compute_seconds == y.compute_seconds);
    CHECK(x.collective_wait_seconds == y.collective_wait_seconds);
    CHECK(x.host_seconds == y.host_seconds);
  }
  REQUIRE(merged.distributed.straggler);
  CHECK(merged.distributed.straggler->rank == 2);
}

TEST_CASE("overlap_communication: exposed transfer, the change for what the trace shows") {
  JobAnalysis a;
  a.timeline.devices.resize(1);
  a.timeline.span_ns = 10 * kMs;
  a.timeline.communication_busy_ns = 3 * kMs;
  a.timeline.communication_exposed_ns = 3 * kMs;
  auto kernelOf = [](const char* name, TimeNs ns) {
    KernelStats k;
    k.name = name;
    k.total_ns = ns;
    k.flags = model::kKernelCommunication;
    return k;
  };
  SECTION("DDP: all-reduce after the backward pass") {
    a.kernels.by_name = {kernelOf("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 3 * kMs)};
    auto rec = evaluate(OverlapCommunicationRule{}, a);
    REQUIRE(rec);
    CHECK(rec->parameters["variant"] == "ddp");
    CHECK(rec->parameters["gradient_as_bucket_view"] == true);
    CHECK(rec->parameters["static_graph"] == true);
    CHECK(rec->parameters.contains("bucket_cap_mb"));
    CHECK(rec->expected_saving_ratio == Approx(0.3));
    CHECK(rec->evidence["overlap_ratio"].get<double>() == Approx(0));
    checkNumbersInEvidence(*rec);
  }
  SECTION("FSDP: all-gathers and reduce-scatters") {
    a.kernels.by_name = {kernelOf("ncclDevKernel_AllGather_RING_LL", 2 * kMs),
                         kernelOf("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", 1 * kMs)};
    auto rec = evaluate(OverlapCommunicationRule{}, a);
    REQUIRE(rec);
    CHECK(rec->parameters["variant"] == "fsdp");
    CHECK(rec->parameters["forward_prefetch"] == true);
    CHECK(rec->parameters["backward_prefetch"] == "BACKWARD_PRE");
    CHECK(rec->parameters["limit_all_gathers"] == true);
    checkNumbersInEvidence(*rec);
  }
  SECTION("overlap already good but communication dominates: fewer synchronisations") {
    a.kernels.by_name = {kernelOf("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 7 * kMs)};
    a.timeline.communication_busy_ns = 7 * kMs;
    a.timeline.communication_exposed_ns = 1 * kMs;
    auto rec = evaluate(OverlapCommunicationRule{}, a);
    REQUIRE(rec);
    CHECK(rec->parameters["variant"] == "fewer_syncs");
    CHECK(rec->parameters["no_sync"] == true);
    CHECK(rec->expected_saving_ratio == Approx(0.075));
    checkNumbersInEvidence(*rec);
  }
  SECTION("well hidden, or waiting for a late rank: quiet") {
    a.timeline.communication_exposed_ns = kMs / 2; // 5% of the span
    CHECK_FALSE(evaluate(OverlapCommunicationRule{}, a));
    a.timeline.communication_exposed_ns = 3 * kMs;
    a.distributed.collective_wait_all_seconds = 0.0025; // most of it a wait: fix_straggler's
    CHECK_FALSE(evaluate(OverlapCommunicationRule{}, a));
  }
}

TEST_CASE("overlap_communication: bus bandwidth against the GPU's nominal link") {
  JobAnalysis a;
  a.timeline.devices.resize(1);
  a.timeline.span_ns = 10 * kMs;
  a.timeline.communication_busy_ns = a.timeline.communication_exposed_ns = 3 * kMs;
  GpuEntry gpu;
  gpu.info.name = "NVIDIA H100 80GB HBM3";
  a.collection.gpus = {gpu};
  CollectiveKindStats k;
  k.kind = model::CollectiveKind::AllReduce;
  k.kernel_ns = 3 * kMs;
  k.bus_bytes_per_second = 90e9;
  a.communication.by_kind = {k};
  auto rec = evaluate(OverlapCommunicationRule{}, a);
  REQUIRE(rec);
  CHECK(rec->parameters["variant"] == "ddp");
  CHECK(rec->evidence["nominal_link"] == "nvlink");
  CHECK(rec->evidence["nominal_link_gb_per_s"].get<double>() == 450);
  CHECK(rec->evidence["bus_bandwidth_share_of_nominal"].get<double>() == Approx(0.2));
  gpu.info.name = "NVIDIA H100 PCIe";
  a.collection.gpus = {gpu};
  rec = evaluate(OverlapCommunicationRule{}, a);
  REQUIRE(rec);
  CHECK(rec->evidence["nominal_link"] == "pcie");
  CHECK(rec->evidence["nominal_link_gb_per_s"].get<double>() == 64);
}
