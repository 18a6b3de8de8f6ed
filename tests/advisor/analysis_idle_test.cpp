// Idle causes (advisor/analysis/idle_attribution.h) and the timeline's compute / communication /
// memory split, on hand-built timelines where each nanosecond's cause can be worked out by hand.
#include "advisor/analysis/job_analysis.h"
#include "tests/advisor/analysis_builders.h"

#include <catch2/catch.hpp>

#include <random>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using model::TimeNs;

namespace {

constexpr TimeNs kUs = 1000;
constexpr TimeNs T0 = 1'000'000'000; // every time is T0 + something: 0 means "unknown"

TimeNs at(double us) {
  return T0 + TimeNs(us * 1000);
}

IdleBreakdown idleOf(const model::ProcessTrace& p) {
  auto t = analyzeTimeline(p);
  REQUIRE(t.devices.size() == 1);
  CHECK(t.idle.total() == t.span_ns - t.busy_ns); // exhaustive: the causes sum to the idle time
  return t.devices[0].idle;
}

TimeNs cause(const IdleBreakdown& b, IdleCause c) {
  return b.at(c);
}

} // namespace

TEST_CASE("idle: back-to-back short kernels already launched wait only for the launch") {
  auto p = process(1);
  // k2 was launched at 2 us, before k1 ended at 5 us; the GPU starts it 1.5 us after.
  p.kernels = {launched(p, "k1", at(0), at(1), at(3), at(5)),
               launched(p, "k2", at(2), at(3), at(6.5), at(8))};
  auto b = idleOf(p);
  CHECK(cause(b, IdleCause::LaunchOverhead) == 1500);
  CHECK(b.launch_overhead_gaps == 1);
  CHECK(b.gaps == 1);

  SECTION("a longer wait with the work queued is a dependency: other") {
    p.kernels[1].start = at(15);
    p.kernels[1].end = at(16);
    auto o = idleOf(p);
    CHECK(cause(o, IdleCause::Other) == 10 * kUs);
    CHECK(cause(o, IdleCause::LaunchOverhead) == 0);
  }
  SECTION("a short gap after a copy is not launch overhead") {
    p.kernels.erase(p.kernels.begin());
    p.copies = {h2d(at(0), at(1), at(3), at(5))};
    auto o = idleOf(p);
    CHECK(cause(o, IdleCause::Other) == 1500);
  }
}

TEST_CASE("idle: the host had not launched the next kernel yet: host-bound, launch latency too") {
  auto p = process(1);
  p.kernels = {launched(p, "k1", at(0), at(1), at(5), at(10)),
               launched(p, "k2", at(140), at(142), at(145), at(150))};
  auto b = idleOf(p);
  CHECK(cause(b, IdleCause::HostBound) == 135 * kUs); // [10, 140) on the host, [140, 145) latency
  CHECK(b.host_bound_gaps == 1);
  CHECK(b.total() == 135 * kUs);
}

TEST_CASE("idle: a short gap in which the host only launched is launch overhead") {
  auto p = process(1);
  // The launch_bound pattern: the host goes from one launch call to the next, each kernel
  // shorter than the host's per-launch cost; the gap [10, 35) is the launch path's price: 1 us
  // of the loop between two calls, then the launch call and its latency.
  p.kernels = {launched(p, "k1", at(0), at(1), at(5), at(10)),
               launched(p, "k2", at(11), at(30), at(35), at(40))};
  auto b = idleOf(p);
  CHECK(cause(b, IdleCause::LaunchOverhead) == 25 * kUs);
  CHECK(b.launch_overhead_gaps == 1);
  CHECK(cause(b, IdleCause::HostBound) == 0);

  SECTION("another CUDA call in the gap (an allocation, a module load) is host-bound") {
    p.api_calls = {{.start = at(10.2),
                    .end = at(10.8),
                    .name = p.names.intern("hipMalloc"),
                    .thread = kMainThread}};
    auto o = idleOf(p);
    CHECK(cause(o, IdleCause::LaunchOverhead) == 0);
    CHECK(cause(o, IdleCause::HostBound) == 25 * kUs);
  }
  SECTION("host time of its own between the launches (Python, a lock) is host-bound") {
    p.kernels[1] = launched(p, "k2", at(40), at(50), at(55), at(60));
    auto o = idleOf(p);
    CHECK(cause(o, IdleCause::LaunchOverhead) == 0);
    CHECK(cause(o, IdleCause::HostBound) == 45 * kUs);
  }
  SECTION("a host descheduled inside the launch call still kept the GPU waiting for it") {
    p.kernels[1] = launched(p, "k2", at(11), at(3000), at(3005), at(3010));
    auto o = idleOf(p);
    CHECK(cause(o, IdleCause::LaunchOverhead) == 2995 * kUs);
    CHECK(cause(o, IdleCause::HostBound) == 0);
  }
  SECTION("the edge: host time of its own up to the bound") {
    IdleOptions options;
    const double own_us = double(options.host_launch_max_outside_ns) / 1000.0;
    p.kernels[1] =
        launched(p, "k2", at(10 + own_us) - 1, at(30 + own_us), at(35 + own_us), at(40 + own_us));
    CHECK(cause(idleOf(p), IdleCause::LaunchOverhead) > 0);
    p.kernels[1] =
        launched(p, "k2", at(10 + own_us), at(30 + own_us), at(35 + own_us), at(40 + own_us));
    CHECK(cause(idleOf(p), IdleCause::LaunchOverhead) == 0);
  }
}

TEST_CASE("idle: a sync in progress when the GPU drained makes the whole gap a sync gap") {
  auto p = process(1);
  p.kernels = {launched(p, "k1", at(0), at(1), at(5), at(10)),
               launched(p, "k2", at(30), at(32), at(35), at(40))};
  p.syncs = {hostSync(at(2), at(11))}; // cudaDeviceSynchronize returns 1 us after k1 ends
  auto b = idleOf(p);
  CHECK(cause(b, IdleCause::Sync) == 25 * kUs);
  CHECK(cause(b, IdleCause::HostBound) == 0);

  SECTION("a sync that starts inside the gap counts only while it blocks") {
    p.syncs = {hostSync(at(15), at(20))};
    auto o = idleOf(p);
    CHECK(cause(o, IdleCause::Sync) == 5 * kUs);
    CHECK(cause(o, IdleCause::HostBound) == 20 * kUs);
  }
  SECTION("another thread's sync does not explain this thread's gap") {
    p.syncs = {hostSync(at(2), at(11), 99)};
    auto o = idleOf(p);
    CHECK(cause(o, IdleCause::Sync) == 0);
    CHECK(cause(o, IdleCause::HostBound) == 25 * kUs);
  }
}

TEST_CASE("idle: DataLoader ranges are input; the rest of the host window keeps its cause") {
  auto p = process(1);
  p.kernels = {launched(p, "k1", at(0), at(1), at(5), at(10)),
               launched(p, "k2", at(100), at(102), at(105), at(110))};
  p.ranges = {range(p, model::RangeKind::DataLoader,
                    "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", at(20), at(90))};
  auto b = idleOf(p);
  CHECK(cause(b, IdleCause::Input) == 70 * kUs);
  CHECK(b.input_data_loader_ns == 70 * kUs);
  CHECK(cause(b, IdleCause::HostBound) == 25 * kUs); // [10, 20), [90, 100), latency [100, 105)
  CHECK(b.total() == 95 * kUs);

  SECTION("the loader wins over a drained sync") {
    p.syncs = {hostSync(at(2), at(12))};
    auto o = idleOf(p);
    CHECK(cause(o, IdleCause::Input) == 70 * kUs);
    CHECK(cause(o, IdleCause::Sync) == 25 * kUs);
  }
}

TEST_CASE("idle: host time outside CUDA calls before the next batch's H2D copy is input") {
  auto p = process(1);
  p.kernels = {launched(p, "step", at(0), at(1), at(5), at(10)),
               launched(p, "step", at(96), at(97), at(98), at(120))};
  // The host prepares the batch [10, 90) (no CUDA call), copies it: the call [90, 95], the copy
  // itself [96, 97]. A cudaMalloc-like call [40, 50] in the middle is host work, not input.
  p.copies = {h2d(at(90), at(95), at(96), at(97))};
  p.api_calls = {{.start = at(40),
                  .end = at(50),
                  .name = p.names.intern("cudaMalloc"),
                  .thread = kMainThread}};
  auto b = idleOf(p);
  CHECK(cause(b, IdleCause::Input) == 76 * kUs); // [10, 40) + [50, 90) + the copy call's [90, 96)
  CHECK(b.input_inferred_ns == 76 * kUs);
  CHECK(cause(b, IdleCause::HostBound) == 10 * kUs); // the malloc
  CHECK(cause(b, IdleCause::Other) == 1 * kUs);      // [97, 98): queued behind the copy
  CHECK(b.total() == 87 * kUs);

  SECTION("where the trace has DataLoader ranges, they alone are input") {
    // The loader's __next__ ran [60, 70): the GPU waited on it 10 us; the rest of the host's
    // time before the copy is its own work, not the loader's.
    p.ranges = {range(p, model::RangeKind::DataLoader, "enumerate(DataLoader)#x", at(60), at(70))};
    auto o = idleOf(p);
    CHECK(cause(o, IdleCause::Input) == 10 * kUs);
    CHECK(o.input_data_loader_ns == 10 * kUs);
    CHECK(o.input_inferred_ns == 0);
    CHECK(cause(o, IdleCause::HostBound) == 76 * kUs);
  }
}

TEST_CASE("idle: without launch information only DataLoader ranges and short kernel gaps tell") {
  auto p = process(1);
  p.kernels = {kernel(at(0), at(10)), kernel(at(12), at(20)), kernel(at(100), at(110))};
  p.ranges = {range(p, model::RangeKind::DataLoader, "enumerate(DataLoader)#x", at(30), at(60))};
  auto b = idleOf(p);
  CHECK(cause(b, IdleCause::LaunchOverhead) == 2 * kUs);
  CHECK(cause(b, IdleCause::Input) == 30 * kUs);
  CHECK(cause(b, IdleCause::Other) == 50 * kUs);
}

TEST_CASE("idle: live records (launch on the record) and Kineto records (plus ApiCalls) agree") {
  auto p = process(1);
  p.kernels = {launched(p, "a", at(0), at(2), at(4), at(6)),
               launched(p, "b", at(3), at(5), at(7), at(9)),
               launched(p, "c", at(30), at(33), at(36), at(50))};
  p.copies = {h2d(at(60), at(62), at(65), at(70))};
  p.syncs = {hostSync(at(34), at(51))};
  auto live = idleOf(p);
  auto kineto_shape = p;
  addApiCalls(kineto_shape);
  auto kin = idleOf(kineto_shape);
  CHECK(live.ns == kin.ns);
  CHECK(cause(live, IdleCause::LaunchOverhead) == 1 * kUs);
  CHECK(cause(live, IdleCause::HostBound) == 27 * kUs);
  // [50, 65): the sync drained the GPU at 50 and held the host until 51 (sync); then the host
  // was outside every call until the H2D copy's call at 60, and the copy started at 65 (input).
  CHECK(cause(live, IdleCause::Sync) == 1 * kUs);
  CHECK(cause(live, IdleCause::Input) == 14 * kUs);
}

TEST_CASE("idle: causes are exhaustive and exclusive on random timelines") {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    auto p = process(1);
    TimeNs host = at(0);
    for (int i = 0; i < 200; ++i) {
      host += TimeNs(rng() % 20'000 + 100);
      TimeNs ls = host, le = ls + TimeNs(rng() % 3000 + 100);
      TimeNs s = le + TimeNs(rng() % 8000), e = s + TimeNs(rng() % 15'000 + 500);
      uint32_t stream = 7 + rng() % 3;
      if (rng() % 7 == 0) {
        auto c = h2d(ls, le, s, e);
        c.stream = stream;
        p.copies.push_back(c);
      } else {
        p.kernels.push_back(
            launched(p, "k" + std::to_string(rng() % 5), ls, le, s, e, kMainThread, stream));
      }
      if (rng() % 9 == 0) p.syncs.push_back(hostSync(le, e + TimeNs(rng() % 2000)));
      if (rng() % 13 == 0)
        p.ranges.push_back(range(p, model::RangeKind::DataLoader, "enumerate(DataLoader)#x", host,
                                 host + TimeNs(rng() % 30'000)));
      if (rng() % 11 == 0) p.kernels.back().launch_start = p.kernels.back().launch_end = 0;
      host = le;
    }
    auto index = buildActivityIndex(p);
    REQUIRE(index.devices.size() == 1);
    auto idle = attributeIdle(index, index.devices[0]);
    const auto& busy = index.devices[0].busy;
    TimeNs span = busy.back().end - busy.front().start;
    CHECK(idle.breakdown.total() == span - totalLength(busy));
    // Segments: ordered, disjoint, never inside busy time, summing to the breakdown.
    TimeNs sum = 0;
    for (size_t i = 0; i < idle.segments.size(); ++i) {
      const auto& s = idle.segments[i];
      CHECK(s.end > s.start);
      if (i) CHECK(s.start >= idle.segments[i - 1].end);
      CHECK(coveredLength(busy, s.start, s.end) == 0);
      sum += s.end - s.start;
    }
    CHECK(sum == idle.breakdown.total());
  }
}

TEST_CASE("timeline: compute, communication and memory time; exposed communication") {
  auto p = process(1);
  p.kernels = {kernel(at(0), at(10)), kernel(at(5), at(30), 8), kernel(at(40), at(49))};
  p.kernels[1].flags = model::kKernelCommunication; // ncclAllReduce overlapping compute [5, 10)
  p.copies = {copy(at(45), at(60), 4096)};
  p.memsets = {{.start = at(70), .end = at(72), .stream = 7}};
  auto t = analyzeTimeline(p);
  REQUIRE(t.devices.size() == 1);
  CHECK(t.compute_busy_ns == 19 * kUs);
  CHECK(t.communication_busy_ns == 25 * kUs);
  CHECK(t.communication_exposed_ns == 20 * kUs);
  CHECK(t.memory_busy_ns == 17 * kUs);
  CHECK(t.timed_kernels == 3);
  CHECK(t.short_kernels == 1); // the 9 us one: 10 us and more is not short
}

TEST_CASE("job: launch overhead ratio is the share of idle time; zero idle gives zero") {
  auto p = process(1);
  p.kernels = {launched(p, "k", at(0), at(1), at(3), at(4)),
               launched(p, "k", at(1), at(2), at(5), at(6)),
               launched(p, "k", at(40), at(41), at(43), at(44))};
  auto a = analyzeJob(trace(p));
  // Gaps: [4, 5) launch overhead (1 us), [6, 43) host-bound (37 us: 34 us on the host's own).
  REQUIRE(a.launchOverheadRatio());
  CHECK(*a.launchOverheadRatio() == Approx(1.0 / 38.0));
  auto busy = process(2);
  busy.kernels = {kernel(at(0), at(10))};
  CHECK(*analyzeJob(trace(busy)).launchOverheadRatio() == 0.0);
  CHECK_FALSE(analyzeJob(trace(process(3))).launchOverheadRatio());
}
