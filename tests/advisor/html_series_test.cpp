// The utilisation analyzer behind the report's charts: busy share and memory per time bucket,
// exact in totals, bounded in size, mergeable; and its `timeline_series` JSON.
#include "advisor/analysis/job_analysis.h"
#include "advisor/analysis/utilization_analyzer.h"
#include "advisor/report/report_json.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

#include <numeric>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;

namespace {

model::TimeNs sum(const std::vector<model::TimeNs>& v) {
  return std::accumulate(v.begin(), v.end(), model::TimeNs{0});
}

model::MemorySample sample(model::TimeNs t, int64_t reserved, int64_t allocated = -1) {
  model::MemorySample s;
  s.time = t;
  s.reserved_bytes = reserved;
  s.allocated_bytes = allocated;
  return s;
}

model::Allocation alloc(model::TimeNs t, uint64_t address, uint64_t bytes, bool free = false,
                        model::MemoryKind kind = model::MemoryKind::Device) {
  model::Allocation a;
  a.time = t;
  a.address = address;
  a.bytes = bytes;
  a.is_free = free;
  a.kind = kind;
  return a;
}

} // namespace

TEST_CASE("busy series: union-busy share per bucket, totals equal the timeline's busy time") {
  auto p = process(1);
  // 100 ms span from 1 s: kernels overlap on two streams for 60 ms, then a gap, then a copy.
  p.kernels = {kernel(1000 * kMs, 1040 * kMs, 7), kernel(1020 * kMs, 1060 * kMs, 8),
               kernel(1005 * kMs, 1015 * kMs, 9)};
  p.copies = {copy(1080 * kMs, 1100 * kMs, 1 << 20)};
  auto t = trace(p);
  auto u = analyzeUtilization(t, 10);
  REQUIRE(u.busy.size() == 1);
  const auto& s = u.busy[0];
  CHECK(s.pid == 1);
  CHECK(s.start == 1000 * kMs);
  CHECK(s.end == 1100 * kMs);
  REQUIRE(s.buckets() == 10);
  for (size_t i : {0, 1, 2, 3, 4, 5, 8, 9})
    CHECK(s.busyRatio(i) == Approx(1.0));
  CHECK(s.busyRatio(6) == 0.0);
  CHECK(s.busyRatio(7) == 0.0);
  CHECK(s.kernelRatio(5) == Approx(1.0));
  CHECK(s.kernelRatio(8) == 0.0);
  CHECK(s.copyRatio(9) == Approx(1.0));
  CHECK(s.copyRatio(0) == 0.0);
  CHECK(sum(s.busy_ns) == 80 * kMs);
  CHECK(sum(s.busy_ns) == analyzeTimeline(t).busy_ns);
  CHECK(sum(s.copy_ns) == 20 * kMs);
}

TEST_CASE("busy series: partial buckets and spans that do not divide evenly") {
  auto p = process(1);
  // Span 1000..1010 ns cut in 3 buckets: [1000,1003) [1003,1006) [1006,1010).
  p.kernels = {kernel(1000, 1001), kernel(1002, 1007), kernel(1009, 1010)};
  auto u = analyzeUtilization(trace(p), 3);
  const auto& s = u.busy.at(0);
  REQUIRE(s.buckets() == 3);
  CHECK(s.busy_ns == std::vector<model::TimeNs>{2, 3, 2});
  CHECK(s.bucketLength(2) == 4);
  CHECK(s.busyRatio(2) == Approx(0.5));
  CHECK(bucketEdge(1000, 1010, 3, 3) == 1010);

  // Never more buckets than nanoseconds: a 2 ns span has 2 buckets.
  auto q = process(2);
  q.kernels = {kernel(500, 502)};
  CHECK(analyzeUtilization(trace(q), 200).busy.at(0).buckets() == 2);
}

TEST_CASE("busy series: bounded whatever the trace length, one per (process, device)") {
  auto p = process(1);
  for (int i = 0; i < 20000; ++i)
    p.kernels.push_back(kernel(kSec + i * 10'000, kSec + i * 10'000 + 6'000, 7, i % 2));
  auto t = trace(p);
  auto u = analyzeUtilization(t);
  REQUIRE(u.busy.size() == 2);
  for (const auto& s : u.busy) {
    CHECK(s.buckets() == kSeriesBuckets);
    CHECK(sum(s.busy_ns) == 10000 * 6'000);
  }
  CHECK(u.busy[1].device == 1);
}

TEST_CASE("memory series: highest level per bucket, carried through empty buckets") {
  auto p = process(1);
  p.memory_samples = {sample(1 * kSec, 1'000'000'000, 500'000'000),
                      sample(1500 * kMs, 3'000'000'000, 2'500'000'000),
                      sample(2 * kSec, 2'000'000'000, 1'000'000'000)};
  auto u = analyzeUtilization(trace(p), 4);
  REQUIRE(u.memory.size() == 1);
  const auto& m = u.memory[0];
  CHECK(m.source == MemorySource::Reserved);
  CHECK(m.start == kSec);
  CHECK(m.end == 2 * kSec);
  CHECK(m.reserved ==
        std::vector<int64_t>{1'000'000'000, 1'000'000'000, 3'000'000'000, 3'000'000'000});
  CHECK(m.allocated ==
        std::vector<int64_t>{500'000'000, 500'000'000, 2'500'000'000, 2'500'000'000});
  CHECK(m.peak() == 3'000'000'000u);
  CHECK(m.memory_total_bytes == 80ull << 30);
}

TEST_CASE("memory series: running sum of device allocations when there are no samples") {
  auto p = process(1);
  p.allocations = {alloc(1 * kSec, 0xa, 100), alloc(2 * kSec, 0xb, 50),
                   alloc(3 * kSec, 0xa, 0, true), // a free without a size: matched by address
                   alloc(4 * kSec, 0xc, 1000, false, model::MemoryKind::Pinned)};
  auto u = analyzeUtilization(trace(p), 3);
  REQUIRE(u.memory.size() == 1);
  const auto& m = u.memory[0];
  CHECK(m.source == MemorySource::Allocations);
  CHECK(m.reserved.empty());
  CHECK(m.end == 3 * kSec); // pinned host memory is not device memory
  // Buckets [1, 1.67) [1.67, 2.33) [2.33, 3]: 100, then 150, then 150 before the free at 3 s.
  CHECK(m.allocated == std::vector<int64_t>{100, 150, 150});
}

TEST_CASE("series merge: windows of one device re-bucket onto the widened span, totals exact") {
  auto a = process(1), b = process(1);
  a.kernels = {kernel(1000 * kMs, 1050 * kMs)};
  b.kernels = {kernel(1100 * kMs, 1125 * kMs), kernel(1150 * kMs, 1200 * kMs)};
  a.memory_samples = {sample(1000 * kMs, 10), sample(1050 * kMs, 20)};
  b.memory_samples = {sample(1150 * kMs, 5), sample(1200 * kMs, 7)};
  auto ua = analyzeUtilization(trace(a), 10);
  auto ub = analyzeUtilization(trace(b), 10);
  ua.merge(ub);
  REQUIRE(ua.busy.size() == 1);
  const auto& s = ua.busy[0];
  CHECK(s.start == 1000 * kMs);
  CHECK(s.end == 1200 * kMs);
  CHECK(s.buckets() == 10);
  CHECK(sum(s.busy_ns) == 125 * kMs);
  CHECK(s.busyRatio(0) == Approx(1.0));
  CHECK(s.busyRatio(3) == 0.0);
  CHECK(s.busyRatio(9) == Approx(1.0));
  REQUIRE(ua.memory.size() == 1);
  const auto& m = ua.memory[0];
  CHECK(m.start == 1000 * kMs);
  CHECK(m.end == 1200 * kMs);
  CHECK(m.reserved.front() == 10);
  CHECK(m.reserved[4] == 20); // the gap between the windows keeps the earlier level
  CHECK(m.reserved.back() == 7);

  // Another device stays its own series, sorted by (pid, rank, device).
  auto c = process(0);
  c.kernels = {kernel(kSec, 2 * kSec)};
  ua.merge(analyzeUtilization(trace(c)));
  REQUIRE(ua.busy.size() == 2);
  CHECK(ua.busy[0].pid == 0);
}

TEST_CASE("timeline_series in the JSON report: ratios per bucket, memory levels, null unknowns") {
  auto p = process(4242);
  p.info.rank = 3;
  p.kernels = {kernel(1000 * kMs, 1500 * kMs), kernel(1750 * kMs, 2000 * kMs)};
  p.memory_samples = {sample(1200 * kMs, -1, 1000), sample(1900 * kMs, -1, 3000)};
  auto t = trace(p);
  auto a = analyzeJob(t);
  std::vector<Recommendation> none;
  auto j = buildReportJson({a, none});
  const auto& ts = j["timeline_series"];
  CHECK(ts["buckets"] == kSeriesBuckets);
  REQUIRE(ts["busy"].size() == 1);
  const auto& b = ts["busy"][0];
  CHECK(b["pid"] == 4242);
  CHECK(b["rank"] == 3);
  CHECK(b["start_ns"] == 1000 * kMs);
  CHECK(b["end_ns"] == 2000 * kMs);
  CHECK(b["bucket_seconds"].get<double>() == Approx(0.005));
  REQUIRE(b["busy_ratio"].size() == kSeriesBuckets);
  CHECK(b["busy_ratio"][0] == 1.0);
  CHECK(b["busy_ratio"][120] == 0.0);
  CHECK(b["kernel_ratio"][199] == 1.0);
  CHECK(b["copy_ratio"][0] == 0.0);
  REQUIRE(ts["memory"].size() == 1);
  const auto& m = ts["memory"][0];
  CHECK(m["source"] == "allocated");
  CHECK(m["reserved_bytes"].is_null());
  CHECK(m["allocated_bytes"][0] == 1000);
  CHECK(m["allocated_bytes"][199] == 3000);
  CHECK(m["memory_total_bytes"] == 80ull << 30);
}
