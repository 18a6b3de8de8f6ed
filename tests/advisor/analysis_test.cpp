#include "advisor/analysis/activity_index.h"
#include "advisor/analysis/analyzer_registry.h"
#include "advisor/analysis/interval_union.h"
#include "advisor/analysis/job_analysis.h"
#include "advisor/analysis/timeline_analyzer.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string_view>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using model::CopyDirection;
using model::MemoryKind;
using model::SyncKind;

TEST_CASE("interval union merges overlaps and touching intervals") {
  CHECK(unionLength({{10, 20}, {15, 30}, {30, 40}, {50, 55}}) == 35);
  CHECK(unionLength({}) == 0);
  CHECK(unionLength({{10, 100}, {20, 30}}) == 90); // nested
  std::vector<Interval> a{{0, 10}, {20, 30}}, b{{5, 25}};
  CHECK(overlapLength(a, b) == 10);
  CHECK(totalLength(unite(a, b)) == 30);
  auto u = unite({{0, 10}, {20, 30}, {60, 70}}, {{5, 25}, {40, 50}, {70, 80}});
  REQUIRE(u.size() == 3);
  CHECK(u[0].start == 0);
  CHECK(u[0].end == 30);
  CHECK(u[1].start == 40);
  CHECK(u[2].start == 60);
  CHECK(u[2].end == 80);
}

// mergeInPlace returns at once when its list is already its own union: the lists it is given,
// sorted or not, touching or not, come out as a sort and a merge make them.
TEST_CASE("interval union: a list already merged comes back as the full merge makes it") {
  auto reference = [](std::vector<Interval> v) {
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) {
      return a.start != b.start ? a.start < b.start : a.end < b.end;
    });
    std::vector<Interval> out;
    for (const auto& i : v) {
      if (!out.empty() && i.start <= out.back().end) {
        out.back().end = std::max(out.back().end, i.end);
      } else {
        out.push_back(i);
      }
    }
    return out;
  };
  auto same = [](const std::vector<Interval>& a, const std::vector<Interval>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
      return x.start == y.start && x.end == y.end;
    });
  };
  const std::vector<std::vector<Interval>> cases = {
      {{0, 10}, {11, 20}, {30, 40}}, // already merged: kept as is
      {{0, 10}, {10, 20}},           // touching: one interval
      {{0, 10}, {5, 20}},            // overlapping
      {{20, 30}, {0, 10}},           // disjoint but out of order
      {{0, 10}, {0, 5}},             // the same start
      {{10, 5}, {7, 8}},             // an interval ending before it starts, then a later start
      {{5, 5}, {6, 6}, {6, 7}},      // empty intervals
  };
  for (const auto& c : cases) {
    auto v = c;
    mergeInPlace(v);
    CHECK(same(v, reference(c)));
  }
  uint64_t seed = 0x2545f4914f6cdd1dull;
  for (int round = 0; round < 500; ++round) {
    std::vector<Interval> v;
    model::TimeNs t = 0;
    for (int i = 0; i < 40; ++i) {
      seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
      // Mostly in order with gaps (the fast path), sometimes touching, overlapping or earlier.
      t += model::TimeNs(seed % 7) - (round % 5 == 0 ? 3 : 0);
      v.push_back({t, t + model::TimeNs(seed >> 8) % 5});
      t = v.back().end;
    }
    const auto expected = reference(v);
    mergeInPlace(v);
    CHECK(same(v, expected));
  }
}

TEST_CASE("timeline: overlapping kernels on two streams count once, gaps are idle") {
  auto p = process(100);
  p.kernels = {kernel(100, 200, 1), kernel(300, 400, 1), kernel(150, 350, 2), kernel(500, 600, 1)};
  auto r = analyzeTimeline(trace(p));
  REQUIRE(r.devices.size() == 1);
  const auto& d = r.devices[0];
  CHECK(d.pid == 100);
  CHECK(d.span_start == 100);
  CHECK(d.span_end == 600);
  CHECK(d.busy_ns == 400);
  CHECK(d.idleNs() == 100);
  CHECK(*d.idleRatio() == Approx(0.2));
  REQUIRE(d.streams.size() == 2);
  CHECK(d.streams[0].stream == 1);
  CHECK(d.streams[0].busy_ns == 300);
  CHECK(d.streams[0].kernels == 3);
  CHECK(d.streams[1].busy_ns == 200);
  CHECK(r.span_ns == 500);
  CHECK(r.busy_ns == 400);
  CHECK(*r.idleRatio() == Approx(0.2));
}

TEST_CASE(
    "timeline: copies and memsets join the union; copy time hidden under kernels is not exposed") {
  auto p = process(1);
  p.kernels = {kernel(1000, 2000, 1)};
  p.copies = {copy(1500, 2500, 1 << 20, CopyDirection::HostToDevice, MemoryKind::Pinned, true, 2)};
  p.memsets.push_back({.start = 3000, .end = 3100, .stream = 1});
  auto r = analyzeTimeline(trace(p));
  REQUIRE(r.devices.size() == 1);
  const auto& d = r.devices[0];
  CHECK(d.spanNs() == 2100);
  CHECK(d.busy_ns == 1600);
  CHECK(d.kernel_busy_ns == 1000);
  CHECK(d.copy_busy_ns == 1000);
  CHECK(d.copy_exposed_ns == 500);
  CHECK(d.memset_busy_ns == 100);
  CHECK(d.idleNs() == 500);
}

namespace {

// The timeline's per-kind figures the long way: each kind's intervals merged into a list,
// clipped to [lo, hi), summed, and the overlaps walked pairwise (what summarise() computed
// before it counted unions as the activities stream past).
std::vector<Interval> clippedUnion(std::vector<Interval> v, model::TimeNs lo, model::TimeNs hi) {
  mergeInPlace(v);
  std::vector<Interval> out;
  for (const auto& i : v) {
    const auto s = std::max(i.start, lo), e = std::min(i.end, hi);
    if (e > s) out.push_back({s, e});
  }
  return out;
}

} // namespace

TEST_CASE("timeline: per-kind busy, exposed and per-stream figures equal merged, clipped lists") {
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  auto next = [&](uint64_t n) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return static_cast<model::TimeNs>(seed % n);
  };
  for (int round = 0; round < 200; ++round) {
    auto p = process(1);
    std::vector<Interval> kernels, copies, memsets, compute, communication, streams[3];
    for (int i = 0; i < 60; ++i) {
      const model::TimeNs start = 1000 + next(20'000), end = start + next(1'500);
      const auto stream = static_cast<uint32_t>(next(3));
      switch (next(4)) {
      case 0:
        p.copies.push_back(
            copy(start, end, 4096, CopyDirection::HostToDevice, MemoryKind::Pinned, true, stream));
        copies.push_back({start, end});
        break;
      case 1:
        p.memsets.push_back({.start = start, .end = end, .stream = stream});
        memsets.push_back({start, end});
        break;
      default: {
        auto k = kernel(start, end, stream);
        const bool nccl = next(3) == 0;
        if (nccl) k.flags |= model::kKernelCommunication;
        p.kernels.push_back(k);
        kernels.push_back({start, end});
        (nccl ? communication : compute).push_back({start, end});
      }
      }
      streams[stream].push_back({start, end});
    }
    WindowBounds w;
    const bool windowed = round % 2 == 1; // whole trace, then a window's [device_from, until)
    if (windowed) {
      w.owned_from = 1000 + next(10'000);
      w.until = w.owned_from + 1 + next(12'000);
      w.device_from[0] = w.owned_from - next(500);
    }
    const model::TimeNs lo = w.deviceFrom(0), hi = std::min(w.until, w.count_until);
    const auto index = buildActivityIndex(p);
    const auto r = analyzeTimeline(index, {}, nullptr, &w);
    if (r.devices.empty()) continue;
    const auto& d = r.devices[0];
    auto length = [&](const std::vector<Interval>& v) {
      return totalLength(clippedUnion(v, lo, hi));
    };
    INFO("round " << round);
    CHECK(d.kernel_busy_ns == length(kernels));
    CHECK(d.copy_busy_ns == length(copies));
    CHECK(d.memset_busy_ns == length(memsets));
    CHECK(d.compute_busy_ns == length(compute));
    CHECK(d.communication_busy_ns == length(communication));
    auto memory = copies;
    memory.insert(memory.end(), memsets.begin(), memsets.end());
    CHECK(d.memory_busy_ns == length(memory));
    const auto k = clippedUnion(kernels, lo, hi), c = clippedUnion(copies, lo, hi);
    CHECK(d.copy_exposed_ns == length(copies) - overlapLength(c, k));
    const auto comm = clippedUnion(communication, lo, hi), comp = clippedUnion(compute, lo, hi);
    CHECK(d.communication_exposed_ns == length(communication) - overlapLength(comm, comp));
    for (const auto& s : d.streams)
      CHECK(s.busy_ns == length(streams[s.stream]));
  }
}

TEST_CASE("timeline: devices and processes are separate; job totals are their sums") {
  auto p1 = process(1);
  p1.kernels = {kernel(1000, 2000, 1, 0), kernel(1000, 1500, 1, 1), kernel(1800, 2000, 1, 1)};
  auto p2 = process(2);
  p2.kernels = {kernel(5000, 6000, 1, 0)};
  p2.copies = {copy(6000, 7000, 4096, CopyDirection::DeviceToHost, MemoryKind::Pinned)};
  model::Trace t;
  t.processes = {p1, p2};
  auto r = analyzeTimeline(t);
  REQUIRE(r.devices.size() == 3);
  CHECK(r.devices[0].pid == 1);
  CHECK(r.devices[0].device == 0);
  CHECK(r.devices[0].busy_ns == 1000);
  CHECK(r.devices[1].device == 1);
  CHECK(r.devices[1].spanNs() == 1000);
  CHECK(r.devices[1].busy_ns == 700);
  CHECK(r.devices[2].pid == 2);
  CHECK(r.devices[2].busy_ns == 2000);
  CHECK(r.span_ns == 4000);
  CHECK(r.busy_ns == 3700);
  CHECK(*r.idleRatio() == Approx(300.0 / 4000.0));
}

TEST_CASE("timeline: records without GPU times are unknown, not zero") {
  auto p = process(1, "NVIDIA A100", model::CollectionTier::Interposer);
  auto k = kernel(0, 0);
  k.launch_start = 100;
  k.launch_end = 120;
  p.kernels = {k, k};
  auto r = analyzeTimeline(trace(p));
  CHECK_FALSE(r.known());
  CHECK_FALSE(r.idleRatio().has_value());
  CHECK(r.untimed_events == 2);
  auto job = analyzeJob(trace(p));
  CHECK(job.kernels.count == 2);
  CHECK(job.kernels.timed_count == 0);
}

TEST_CASE("timeline: merging windows of one device adds busy time and widens the span") {
  auto w1 = process(9);
  w1.kernels = {kernel(100, 200)};
  auto w2 = process(9);
  w2.kernels = {kernel(1000, 1300)};
  auto r = analyzeTimeline(trace(w1));
  r.merge(analyzeTimeline(trace(w2)));
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].busy_ns == 400);
  CHECK(r.devices[0].spanNs() == 1200);
  CHECK(r.span_ns == 1200);
  CHECK(r.busy_ns == 400);
}

TEST_CASE("kernels: totals, top by time across processes, demangled names, launch configs") {
  auto p1 = process(1);
  auto gemm = p1.names.intern("_Z4gemmPKfS0_Pfi");
  auto relu = p1.names.intern("relu_kernel");
  auto k1 = kernel(100, 400, 1, 0, gemm);
  k1.grid = {128, 1, 1};
  k1.block = {256, 1, 1};
  k1.registers_per_thread = 64;
  auto k2 = k1;
  k2.start = 500;
  k2.end = 700;
  auto k3 = kernel(800, 850, 1, 0, relu);
  p1.kernels = {k1, k2, k3};
  auto p2 = process(2);
  p2.names.intern("something_else");
  auto gemm2 = p2.names.intern("_Z4gemmPKfS0_Pfi");
  auto k4 = kernel(100, 200, 1, 0, gemm2);
  k4.grid = {64, 1, 1};
  k4.block = {256, 1, 1};
  auto k5 = k4;
  k5.start = k5.end = 0; // without GPU time
  p2.kernels = {k4, k5};
  model::Trace t;
  t.processes = {p1, p2};
  auto r = analyzeKernels(t);
  CHECK(r.count == 5);
  CHECK(r.timed_count == 4);
  CHECK(r.total_ns == 300 + 200 + 50 + 100);
  REQUIRE(r.by_name.size() == 2);
  const auto& top = r.by_name[0];
  CHECK(top.name == "_Z4gemmPKfS0_Pfi");
  CHECK(top.display_name == "gemm(float const*, float const*, float*, int)");
  CHECK(top.count == 4);
  CHECK(top.timed_count == 3);
  CHECK(top.total_ns == 600);
  CHECK(top.min_ns == 100);
  CHECK(top.max_ns == 300);
  CHECK(*top.meanSeconds() == Approx(200e-9));
  REQUIRE(top.configs.size() == 2);
  CHECK(top.configs[0].grid.x == 128);
  CHECK(top.configs[0].count == 2);
  CHECK(top.configs[0].registers_per_thread == 64);
  CHECK(top.configs[1].grid.x == 64);
  CHECK(top.configs[1].count == 2);
  CHECK(r.by_name[1].display_name == "relu_kernel");
}

TEST_CASE("copies: bytes, counts, time and bandwidth by direction and host memory kind") {
  auto p = process(1);
  p.copies = {
      copy(1 * kMs, 11 * kMs, 100'000'000, CopyDirection::HostToDevice, MemoryKind::Pageable),
      copy(20 * kMs, 24 * kMs, 100'000'000, CopyDirection::HostToDevice, MemoryKind::Pinned),
      copy(30 * kMs, 32 * kMs, 10'000'000, CopyDirection::DeviceToHost, MemoryKind::Pageable,
           false),
      copy(40 * kMs, 41 * kMs, 50'000'000, CopyDirection::DeviceToDevice, MemoryKind::Device),
  };
  // An interposer-tier copy: host call time only.
  auto c = copy(0, 0, 1'000'000, CopyDirection::HostToDevice, MemoryKind::Pageable, false);
  c.call_start = 50 * kMs;
  c.call_end = 51 * kMs;
  p.copies.push_back(c);
  auto r = analyzeCopies(trace(p));
  CHECK(r.total.count == 5);
  CHECK(r.total.bytes == 261'000'000);
  const auto& h2d = r.at(CopyDirection::HostToDevice);
  CHECK(h2d.count == 3);
  CHECK(h2d.bytes == 201'000'000);
  CHECK(h2d.time_ns == 15 * kMs);
  CHECK(h2d.gpu_ns == 14 * kMs);
  const auto& pageable = r.at(CopyDirection::HostToDevice, MemoryKind::Pageable);
  CHECK(pageable.count == 2);
  CHECK(pageable.time_ns == 11 * kMs);
  CHECK(*pageable.gpuBandwidthBytesPerSecond() == Approx(10e9));
  CHECK(*r.at(CopyDirection::HostToDevice, MemoryKind::Pinned).gpuBandwidthBytesPerSecond() ==
        Approx(25e9));
  CHECK(r.at(CopyDirection::DeviceToHost, MemoryKind::Pageable).bytes == 10'000'000);
  CHECK(r.at(CopyDirection::DeviceToDevice, MemoryKind::Device).count == 1);
  auto all_pageable = r.hostTransfers(MemoryKind::Pageable);
  CHECK(all_pageable.bytes == 111'000'000);
  CHECK(all_pageable.time_ns == 13 * kMs);
  CHECK(r.synchronous.count == 2);
  // Host-call-only copies still give a bandwidth.
  model::Trace only_calls;
  auto q = process(2);
  q.copies = {c};
  CHECK(*analyzeCopies(trace(q)).total.bandwidthBytesPerSecond() == Approx(1e9));
}

TEST_CASE("syncs: blocked time is the union per thread; device-side waits do not count") {
  auto p = process(1);
  p.syncs = {
      {.start = 100, .end = 1000, .thread = 11, .kind = SyncKind::Device},
      {.start = 200, .end = 500, .thread = 11, .kind = SyncKind::Stream}, // nested
      {.start = 100, .end = 400, .thread = 12, .kind = SyncKind::Event},
      {.start = 0, .end = 5000, .thread = 12, .kind = SyncKind::StreamWaitEvent},
      {.start = 2000, .end = 2500, .correlation = 77, .thread = 11, .kind = SyncKind::SyncCopy},
  };
  auto c = copy(2100, 2400, 4096, CopyDirection::DeviceToHost, MemoryKind::Pageable, false);
  c.call_start = 2000;
  c.call_end = 2500;
  c.thread = 11;
  c.correlation = 77; // the same call as the SyncCopy record above
  auto c2 = c;
  c2.correlation = 78;
  c2.call_start = 3000;
  c2.call_end = 3200;
  p.copies = {c, c2};
  auto r = analyzeSyncs(trace(p));
  CHECK(r.blocked_ns == 900 + 300 + 500 + 200);
  CHECK(r.calls == 5);
  CHECK(r.threads == 2);
  CHECK(r.at(SyncKind::Device).blocked_ns == 900);
  CHECK(r.at(SyncKind::Stream).blocked_ns == 300);
  CHECK(r.at(SyncKind::Event).blocked_ns == 300);
  CHECK(r.at(SyncKind::SyncCopy).calls == 2);
  CHECK(r.at(SyncKind::SyncCopy).blocked_ns == 700);
  CHECK(r.at(SyncKind::StreamWaitEvent).calls == 0);
}

TEST_CASE("memory: reserved samples first, else the running sum of allocations, else unknown") {
  auto sampled = process(1);
  sampled.memory_samples = {
      {.time = 10, .device = 0, .allocated_bytes = 100, .reserved_bytes = 4000},
      {.time = 20, .device = 0, .allocated_bytes = 900, .reserved_bytes = 8000},
      {.time = 30, .device = 0, .allocated_bytes = 50, .reserved_bytes = 2000}};
  sampled.allocations = {{.time = 5, .bytes = 1 << 30, .device = 0, .kind = MemoryKind::Device}};
  auto r = analyzeMemory(trace(sampled));
  REQUIRE(r.devices.size() == 1);
  CHECK(r.devices[0].peak_bytes == 8000);
  CHECK(r.devices[0].source == MemorySource::Reserved);
  CHECK(r.devices[0].memory_total_bytes == 80ull << 30);

  auto allocs = process(2);
  allocs.allocations = {
      {.time = 30, .address = 0xb, .bytes = 300, .device = 0, .kind = MemoryKind::Device},
      {.time = 10, .address = 0xa, .bytes = 1000, .device = 0, .kind = MemoryKind::Device},
      {.time = 40,
       .address = 0xa,
       .bytes = 0,
       .device = 0,
       .kind = MemoryKind::Device,
       .is_free = true},
      {.time = 50, .address = 0xc, .bytes = 500, .device = 0, .kind = MemoryKind::Managed},
      {.time = 60, .address = 0xd, .bytes = 1 << 30, .device = 0, .kind = MemoryKind::Pinned},
      {.time = 20, .address = 0xe, .bytes = 200, .device = 1, .kind = MemoryKind::Device},
  };
  r = analyzeMemory(trace(allocs));
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[0].peak_bytes == 1300); // 1000 + 300, then the free of 0xa, then +500 = 800
  CHECK(r.devices[0].source == MemorySource::Allocations);
  CHECK(r.devices[1].peak_bytes == 200);
  CHECK(*r.peakBytes() == 1300);

  CHECK_FALSE(analyzeMemory(trace(process(3))).peakBytes().has_value());
}

TEST_CASE("collection: per-process events, drops, tier and the ingest's stream health") {
  auto a = process(10);
  a.kernels = {kernel(1, 2), kernel(3, 4)};
  a.events_dropped = 5;
  a.info.tier_reason = "CUPTI held by another subscriber";
  auto b = process(11, "NVIDIA H100 80GB HBM3", model::CollectionTier::Interposer);
  b.copies = {copy(1, 2, 10)};
  model::Trace t;
  t.processes = {a, b};
  IngestHealth ingest;
  ingest.streams = {
      StreamHealth{.session_id = 1, .hello_received = true, .final_received = true, .batches = 3},
      StreamHealth{.session_id = 2,
                   .hello_received = false,
                   .batches = 4,
                   .lost_batches = 2,
                   .undecodable_events = 7,
                   .events_lost = 40}};
  ingest.messages = 9;
  ingest.rejected_by_reason = {{"malformed", 1}, {"bad_envelope", 1}};
  auto r = analyzeCollection(t, &ingest);
  REQUIRE(r.processes.size() == 2);
  CHECK(r.processes[0].events == 2);
  CHECK(r.processes[0].events_dropped == 5);
  CHECK(r.processes[0].tier_reason == "CUPTI held by another subscriber");
  CHECK(r.processes[1].tier == model::CollectionTier::Interposer);
  CHECK(r.processes[1].stream->lost_batches == 2);
  CHECK(r.processes[1].events_dropped == 40); // lost in transit: dropped like the shim's drops
  CHECK(r.events == 3);
  CHECK(r.events_dropped == 45);
  CHECK(r.events_lost == 40);
  CHECK(r.undecodable_events == 7);
  CHECK(r.lost_batches == 2);
  CHECK(r.rejectedMessages() == 2);
  CHECK(*r.messages == 9);
  // Both processes use "device 0" of the same host and model: one GPU, two pids.
  REQUIRE(r.gpus.size() == 1);
  CHECK(r.gpus[0].pids == std::vector<int64_t>{10, 11});
}

TEST_CASE("wall time: the producer's wall span, else the span of all records") {
  auto p = process(1);
  p.kernels = {kernel(2 * kSec, 3 * kSec)};
  p.api_calls.push_back({.start = kSec, .end = kSec + 10});
  CHECK(*wallTime(trace(p)) == 2 * kSec);
  p.wall_start = 500;
  p.wall_end = 10 * kSec;
  CHECK(*wallTime(trace(p)) == 10 * kSec - 500);
  CHECK_FALSE(wallTime(trace(process(2))).has_value());
  AnalysisOptions o;
  o.wall_ns = 42;
  CHECK(*analyzeJob(trace(p), o).wall_ns == 42);
}

TEST_CASE("job analysis merges windows") {
  auto w1 = process(1);
  w1.kernels = {kernel(100, 200)};
  w1.copies = {copy(300, 400, 1000)};
  auto w2 = process(1);
  w2.kernels = {kernel(1000, 1100)};
  auto a = analyzeJob(trace(w1));
  a.merge(analyzeJob(trace(w2)));
  CHECK(a.kernels.count == 2);
  CHECK(a.kernels.total_ns == 200);
  CHECK(a.copies.total.bytes == 1000);
  CHECK(a.timeline.busy_ns == 300);
  CHECK(a.collection.processes.size() == 1);
  CHECK(a.collection.events == 3);
}

TEST_CASE("analyzer registry: each analyzer once, each stage's entries run, every entry merges") {
  std::set<std::string_view> names;
  for (const auto& analyzer : analyzers()) {
    CHECK(names.insert(analyzer.name).second);
    CHECK((analyzer.merge != nullptr || analyzer.finish != nullptr));
    CHECK((analyzer.run == nullptr) == (analyzer.stage == AnalyzerStage::Timeline));
  }
  CHECK(names.size() == 14);
  // Precision is computed from the kernels, so it comes after them in run and merge order.
  auto at = [](std::string_view name) {
    auto list = analyzers();
    return std::find_if(list.begin(), list.end(),
                        [&](const Analyzer& a) { return a.name == name; }) -
           list.begin();
  };
  CHECK(at("kernels") < at("precision"));
  // The ranks side by side are recomputed from the merged fields, so they merge last.
  for (const char* before :
       {"timeline", "steps", "collection", "communication", "collective_timings"})
    CHECK(at(before) < at("distributed"));
  CHECK(size_t(at("distributed")) == analyzers().size() - 1);
}
