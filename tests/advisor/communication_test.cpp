// The communication analyzer: collective kernel names, the overlap of collective kernels with
// compute on planted timelines (fully hidden, not hidden, half hidden), the per-kind sizes from
// joined model::Collective records and nccl-tests' bandwidth formulas, the merge of windows, and
// summary.communication in the JSON report.
#include "advisor/analysis/collective_kernel_name.h"
#include "advisor/analysis/communication_analyzer.h"
#include "advisor/analysis/job_analysis.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using model::CollectiveKind;
using model::ElementType;

namespace {

constexpr model::TimeNs kUs = 1000;
constexpr model::TimeNs kT0 = kMs; // a time of 0 means "unknown"

model::KernelExec named(model::ProcessTrace& p, const char* name, model::TimeNs start,
                        model::TimeNs end, uint32_t stream) {
  auto k = kernel(start, end, stream, 0, p.names.intern(name));
  if (parseCollectiveKernelName(name).collective) k.flags = model::kKernelCommunication;
  return k;
}

// One all-reduce kernel [0, 100) us (after kT0) on stream 9 and one compute kernel on stream 7.
model::Trace allReduceBeside(model::TimeNs compute_start, model::TimeNs compute_end) {
  auto p = process(1);
  p.info.rank = 0;
  p.kernels = {named(p, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                     kT0, kT0 + 100 * kUs, 9),
               named(p, "ampere_sgemm_128x64_nn", kT0 + compute_start, kT0 + compute_end, 7)};
  p.sortByTime();
  return trace(std::move(p));
}

} // namespace

TEST_CASE("collective kernel names: kind, algorithm, protocol and element type") {
  struct Case {
    const char* name;
    CollectiveKind kind;
    const char* algorithm;
    const char* protocol;
    ElementType element;
  };
  const Case cases[] = {
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       CollectiveKind::AllReduce, "ring", "ll", ElementType::Float32},
      {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
       CollectiveKind::AllReduce, "ring", "ll", ElementType::Float32},
      {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       CollectiveKind::AllGather, "ring", "ll", ElementType::Unknown},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", CollectiveKind::Send, "", "",
       ElementType::Unknown},
      {"ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
       CollectiveKind::Send, "ring", "simple", ElementType::Unknown},
      {"ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
       CollectiveKind::Broadcast, "ring", "ll", ElementType::Int8},
      {"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL128", CollectiveKind::ReduceScatter, "ring",
       "ll128", ElementType::BFloat16},
      {"ncclDevKernel_AllReduce_Sum_f16_NVLS_TREE_SIMPLE", CollectiveKind::AllReduce, "nvls_tree",
       "simple", ElementType::Float16},
      {"ncclDevKernel_AllReduce_Sum_u8_TREE_LL", CollectiveKind::AllReduce, "tree", "ll",
       ElementType::Uint8},
      {"ncclDevKernel_AllReduce_Sum_i32_COLLNET_CHAIN_SIMPLE", CollectiveKind::AllReduce,
       "collnet_chain", "simple", ElementType::Int32},
      {"ncclKernel_Reduce_RING_LL_Sum_uint8_t", CollectiveKind::Reduce, "ring", "ll",
       ElementType::Uint8},
      {"ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", CollectiveKind::Unknown, "", "",
       ElementType::Unknown},
      {"rcclGenericKernel<1>", CollectiveKind::Unknown, "", "", ElementType::Unknown},
      {"void ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", CollectiveKind::AllGather,
       "ring", "ll", ElementType::Int8},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    const auto n = parseCollectiveKernelName(c.name);
    CHECK(n.collective);
    CHECK(n.kind == c.kind);
    CHECK(n.algorithm == c.algorithm);
    CHECK(n.protocol == c.protocol);
    CHECK(n.element == c.element);
  }
  CHECK_FALSE(parseCollectiveKernelName("ampere_sgemm_128x64_nn").collective);
  CHECK_FALSE(parseCollectiveKernelName("void at::native::ncclish<float>()").collective);
}

TEST_CASE("overlap: a collective fully hidden by compute is 1, not hidden 0, half hidden 0.5") {
  struct Case {
    model::TimeNs compute_start, compute_end;
    double ratio;
    model::TimeNs exposed_ns;
  };
  for (const auto& c : {Case{0, 100 * kUs, 1.0, 0}, Case{200 * kUs, 300 * kUs, 0.0, 100 * kUs},
                        Case{50 * kUs, 150 * kUs, 0.5, 50 * kUs}}) {
    INFO(c.compute_start);
    const auto t = allReduceBeside(c.compute_start, c.compute_end);
    for (const auto& r : {analyzeCommunication(t), analyzeJob(t).communication}) {
      REQUIRE(r.any());
      CHECK(r.busy_ns == 100 * kUs);
      CHECK(r.exposed_ns == c.exposed_ns);
      REQUIRE(r.overlap_ratio);
      CHECK(*r.overlap_ratio == Approx(c.ratio));
      REQUIRE(r.processes.size() == 1);
      CHECK(r.processes[0].rank == 0);
      REQUIRE(r.by_kind.size() == 1);
      CHECK(r.by_kind[0].kind == CollectiveKind::AllReduce);
      CHECK(r.by_kind[0].algorithm == "ring");
      CHECK(r.by_kind[0].count == 1);
    }
  }
}

TEST_CASE("overlap: no collective kernel, no communication result") {
  auto p = process(1);
  p.kernels = {kernel(kT0, kT0 + 10 * kUs)};
  const auto r = analyzeCommunication(trace(p));
  CHECK_FALSE(r.any());
  CHECK_FALSE(r.overlap_ratio);
}

TEST_CASE("bus bandwidth: nccl-tests' factors") {
  CHECK(*busBandwidthFactor(CollectiveKind::AllReduce, 8) == Approx(2.0 * 7 / 8));
  CHECK(*busBandwidthFactor(CollectiveKind::AllGather, 4) == Approx(3.0 / 4));
  CHECK(*busBandwidthFactor(CollectiveKind::ReduceScatter, 2) == Approx(0.5));
  CHECK(*busBandwidthFactor(CollectiveKind::Broadcast, 8) == Approx(1.0));
  CHECK(*busBandwidthFactor(CollectiveKind::Send, 2) == Approx(1.0));
  CHECK(*busBandwidthFactor(CollectiveKind::AllReduce, 1) == Approx(0.0));
  CHECK_FALSE(busBandwidthFactor(CollectiveKind::AllReduce, -1));
}

TEST_CASE("per kind: a joined Collective record gives bytes, group size and bandwidths") {
  auto t = allReduceBeside(200 * kUs, 300 * kUs);
  auto& p = t.processes[0];
  p.kernels[0].correlation = 42;
  model::Collective c;
  c.correlation = 42;
  c.kind = CollectiveKind::AllReduce;
  c.element = ElementType::BFloat16;
  c.in_count = c.out_count = 50'000'000; // 100 MB in 100 us: 1000 GB/s algorithm bandwidth
  c.group_size = 8;
  p.collectives.push_back(c);
  const auto r = analyzeCommunication(t);
  REQUIRE(r.by_kind.size() == 1);
  const auto& k = r.by_kind[0];
  CHECK(k.bytes == 100'000'000);
  CHECK(k.sized == 1);
  CHECK(k.group_size == 8);
  REQUIRE(k.algorithm_bytes_per_second);
  CHECK(*k.algorithm_bytes_per_second == Approx(1e12));
  REQUIRE(k.bus_bytes_per_second);
  CHECK(*k.bus_bytes_per_second == Approx(1e12 * 2 * 7 / 8));
}

TEST_CASE("per kind: the shim's uncorrelated calls join their kernels in issue order") {
  // Three all-reduces of 1, 2 and 3 MB (FP32), each call issued just before its kernel; a fourth
  // kernel with no call counts by its name, unsized.
  auto p = process(1);
  p.info.rank = 0;
  const char* nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  for (int i = 0; i < 4; ++i) {
    const model::TimeNs at = kT0 + i * 1000 * kUs;
    auto k = named(p, nccl, at + 10 * kUs, at + 110 * kUs, 9);
    k.launch_start = at + 2 * kUs;
    k.launch_end = at + 3 * kUs;
    p.kernels.push_back(k);
    if (i == 3) continue;
    model::Collective c;
    c.start = at;
    c.end = at + 5 * kUs;
    c.kind = CollectiveKind::AllReduce;
    c.element = ElementType::Float32;
    c.in_count = c.out_count = 250'000 * uint64_t(i + 1);
    c.group_size = 4;
    p.collectives.push_back(c);
  }
  // Listed out of order: the join sorts by issue time.
  std::swap(p.collectives[0], p.collectives[2]);
  const auto r = analyzeCommunication(trace(std::move(p)));
  REQUIRE(r.by_kind.size() == 1);
  CHECK(r.by_kind[0].count == 4);
  CHECK(r.by_kind[0].sized == 3);
  CHECK(r.by_kind[0].bytes == 6'000'000);
  CHECK(r.by_kind[0].group_size == 4);
}

TEST_CASE("merge: two windows' results add their kinds and take the merged timeline's times") {
  const auto whole = allReduceBeside(50 * kUs, 150 * kUs);
  auto a = analyzeJob(whole), b = analyzeJob(whole);
  a.merge(b);
  REQUIRE(a.communication.by_kind.size() == 1);
  CHECK(a.communication.by_kind[0].count == 2);
  CHECK(a.communication.busy_ns == a.timeline.communication_busy_ns);
  CHECK(a.communication.exposed_ns == a.timeline.communication_exposed_ns);
  REQUIRE(a.communication.overlap_ratio);
  CHECK(*a.communication.overlap_ratio == Approx(0.5));
}
