// The input bounds (profiler/model/record_limits.h) and the time arithmetic they protect: bucket
// code given times at the ends of the int64 range terminates with exact results; absurd records
// are dropped and counted; devices beyond the bound are dropped with their records; long names
// are cut, keeping distinct names distinct.
#include "advisor/analysis/job_analysis.h"
#include "advisor/analysis/utilization_analyzer.h"
#include "profiler/model/record_limits.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <numeric>
#include <thread>

using namespace gpuwise;
using namespace gpuwise::advisor;
using model::TimeNs;

namespace {

constexpr TimeNs kMax = std::numeric_limits<TimeNs>::max();
constexpr TimeNs kMin = std::numeric_limits<TimeNs>::min();

// Runs `fn`; a hang (the bug these tests guard against) fails the test run in 60 s instead of
// holding it until CTest's timeout. A thread cannot be stopped, so the watchdog ends the process.
template <typename Fn> auto withinDeadline(Fn fn) {
  auto result = std::async(std::launch::async, fn);
  if (result.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "input_bounds_test: the analysis did not terminate within 60 s\n");
    std::_Exit(1);
  }
  return result.get();
}

model::Trace oneProcess(std::vector<model::KernelExec> kernels) {
  model::Trace t;
  auto p = test::process(1);
  p.kernels = std::move(kernels);
  t.processes.push_back(std::move(p));
  return t;
}

TimeNs sum(const std::vector<TimeNs>& v) {
  return std::accumulate(v.begin(), v.end(), TimeNs{0});
}

} // namespace

TEST_CASE("utilisation buckets of a kernel ending at INT64_MAX terminate with exact totals") {
  const TimeNs start = 1'000'000'000;
  const auto r =
      withinDeadline([&] { return analyzeUtilization(oneProcess({test::kernel(start, kMax)})); });
  REQUIRE(r.busy.size() == 1);
  CHECK(r.busy[0].start == start);
  CHECK(r.busy[0].end == kMax);
  CHECK(r.busy[0].buckets() == kSeriesBuckets);
  CHECK(sum(r.busy[0].busy_ns) == kMax - start);
  REQUIRE(r.recent.size() == 1);
  const RecentBusy& recent = r.recent[0];
  CHECK(recent.busy_ns.size() == kRecentBuckets);
  // Every recent bucket is whole-busy except the last, which ends at INT64_MAX.
  for (size_t i = 0; i + 1 < recent.busy_ns.size(); ++i)
    CHECK(recent.busy_ns[i] == kRecentBucketNs);
  CHECK(recent.busy_ns.back() == kMax % kRecentBucketNs);
  CHECK(recent.busyBetween(kMax - 2 * kRecentBucketNs, kMax) > 0);
}

TEST_CASE("utilisation buckets near INT64_MIN terminate with exact totals") {
  const TimeNs start = kMin + 1, end = kMin + 1000;
  const auto r =
      withinDeadline([&] { return analyzeUtilization(oneProcess({test::kernel(start, end)})); });
  REQUIRE(r.busy.size() == 1);
  CHECK(sum(r.busy[0].busy_ns) == 999);
  REQUIRE(r.recent.size() == 1);
  CHECK(sum(r.recent[0].busy_ns) == 999);
}

TEST_CASE("two series spanning the whole int64 range merge without overflow") {
  auto a = withinDeadline(
      [&] { return analyzeUtilization(oneProcess({test::kernel(kMin + 1, kMin + 11)})); });
  const auto b = withinDeadline(
      [&] { return analyzeUtilization(oneProcess({test::kernel(kMax - 10, kMax)})); });
  a.merge(b);
  REQUIRE(a.busy.size() == 1);
  CHECK(sum(a.busy[0].busy_ns) == 20);
  CHECK(a.busy[0].start == kMin + 1);
  CHECK(a.busy[0].end == kMax);
}

TEST_CASE("absurd times are dropped and counted; plausible records are kept in order") {
  auto p = test::process(1);
  const TimeNs t0 = 1'700'000'000'000'000'000; // ns since the epoch, as Kineto's clock
  p.kernels = {test::kernel(t0, t0 + 1000), test::kernel(t0 + 10, kMax),
               test::kernel(t0 + 20, t0 + 10), // ends before it starts
               test::kernel(t0 + 30, t0 + 2000)};
  p.copies = {test::copy(t0 + 5, t0 + 50, 64), test::copy(kMin, t0, 64)};
  // Three years long, in a trace whose records start within 2 microseconds: beyond its span by
  // orders of magnitude.
  p.memsets.push_back({.start = t0 + 40, .end = t0 + TimeNs{3} * 365 * 24 * 3600 * 1'000'000'000});
  p.allocations.push_back({.time = kMax, .bytes = 1});
  p.allocations.push_back({.time = t0 + 60, .bytes = 1});
  model::Range long_range{.start = t0, .end = t0 + TimeNs{6} * 24 * 3600 * 1'000'000'000};
  p.ranges.push_back(long_range); // six days: under the floor, kept whatever the other records

  CHECK(model::dropAbsurdTimes(p) == 5);
  CHECK(p.events_dropped == 5);
  CHECK(p.limits.absurd_times == 5);
  REQUIRE(p.kernels.size() == 2);
  CHECK(p.kernels[0].end == t0 + 1000);
  CHECK(p.kernels[1].end == t0 + 2000);
  CHECK(p.copies.size() == 1);
  CHECK(p.memsets.empty());
  REQUIRE(p.allocations.size() == 1);
  CHECK(p.allocations[0].time == t0 + 60);
  CHECK(p.ranges.size() == 1);
}

TEST_CASE("only records from the marks on are judged (the live path checks each batch)") {
  auto p = test::process(1);
  p.kernels = {test::kernel(100, 200), test::kernel(300, 400)};
  const auto marks = model::RecordMarks::of(p);
  p.kernels.push_back(test::kernel(500, kMax));
  p.kernels.push_back(test::kernel(600, 700));
  CHECK(model::dropAbsurdTimes(p, marks) == 1);
  REQUIRE(p.kernels.size() == 3);
  CHECK(p.kernels[2].start == 600);
  // Unknown times (0) are never absurd.
  p.kernels.push_back(test::kernel(0, 0));
  CHECK(model::dropAbsurdTimes(p, model::RecordMarks::of(p)) == 0);
  CHECK(model::dropAbsurdTimes(p) == 0);
}

TEST_CASE("a live batch with a copy ending at INT64_MAX still leaves an analysable stream") {
  auto p = test::process(1);
  p.copies = {test::copy(1'000, kMax, 64)};
  model::dropAbsurdTimes(p);
  model::Trace t;
  t.processes.push_back(std::move(p));
  const auto a = withinDeadline([&] { return analyzeJob(t); });
  CHECK(a.collection.events_dropped == 1);
  CHECK(a.collection.limits.absurd_times == 1);
}

TEST_CASE("devices beyond the bound are dropped with their records, the lowest kept") {
  std::vector<model::ProcessTrace> ps(2);
  for (uint32_t d = 0; d < 100; ++d)
    ps[d % 2].kernels.push_back(test::kernel(1000 + d, 2000 + d, 7, 1000 - d));
  ps[0].syncs.push_back({.start = 10, .end = 20, .device = 0});
  ps[1].ranges.push_back(
      {.start = 10, .end = 20, .device = 5000, .kind = model::RangeKind::GpuAnnotation});
  ps[1].ranges.push_back(
      {.start = 10, .end = 20, .device = 5000, .kind = model::RangeKind::Annotation});

  // 100 kernel devices (901..1000), device 0 (sync), 5000 (annotation): 102, of which 64 stay.
  CHECK(model::boundDevices(ps) == 102 - model::kMaxDevicesPerTrace);
  CHECK(ps[0].limits.devices_dropped == 102 - model::kMaxDevicesPerTrace);
  CHECK(ps[1].limits.devices_dropped == 0);
  std::set<uint32_t> kept;
  for (const auto& p : ps)
    for (const auto& d : p.activeDevices())
      kept.insert(d);
  kept.insert(0);
  CHECK(kept.size() == model::kMaxDevicesPerTrace);
  CHECK(*kept.rbegin() == 901 + model::kMaxDevicesPerTrace - 2);
  CHECK(ps[0].syncs.size() == 1);
  REQUIRE(ps[1].ranges.size() == 1); // the host annotation stays: it is on no device
  CHECK(ps[1].ranges[0].kind == model::RangeKind::Annotation);
  CHECK(ps[0].events_dropped + ps[1].events_dropped == 100 - (model::kMaxDevicesPerTrace - 1) + 1);

  std::vector<model::ProcessTrace> few(1);
  few[0].kernels.push_back(test::kernel(1, 2, 7, 3));
  CHECK(model::boundDevices(few) == 0);
  CHECK(few[0].kernels.size() == 1);
}

TEST_CASE("names longer than the bound are cut, with a hash keeping them distinct") {
  const std::string shortName(model::kMaxNameBytes, 'k');
  std::string storage;
  CHECK(model::boundedName(shortName, storage) == shortName);

  const std::string a = std::string(1 << 20, 'x') + "a", b = std::string(1 << 20, 'x') + "b";
  std::string sa, sb;
  const auto ca = model::boundedName(a, sa), cb = model::boundedName(b, sb);
  CHECK(ca.size() <= model::kMaxNameBytes);
  CHECK(ca != cb);
  CHECK(ca.substr(0, 100) == a.substr(0, 100));
  std::string again;
  CHECK(model::boundedName(a, again) == ca);

  // A cut never splits a UTF-8 character.
  std::string utf8;
  while (utf8.size() < 2 * model::kMaxNameBytes)
    utf8 += "\xC3\xA9"; // é
  std::string su;
  const auto cu = model::boundedName(utf8, su);
  const size_t hash_at = cu.rfind("...#");
  REQUIRE(hash_at != std::string_view::npos);
  CHECK(hash_at % 2 == 0);

  model::NameTable names;
  const auto ia = names.intern(a), ib = names.intern(b);
  CHECK(ia != ib);
  CHECK(names.intern(a) == ia);
  CHECK(names.find(a) == ia);
  CHECK(names.get(ia).size() <= model::kMaxNameBytes);
  CHECK(names.truncated() == 2);
  CHECK(names.intern(shortName) != 0);
  CHECK(names.truncated() == 2);

  auto p = test::process(1);
  p.info.command = a;
  p.devices[0].name = b;
  p.names.intern(a);
  CHECK(model::boundIdentity(p) == 2);
  CHECK(p.info.command.size() <= model::kMaxNameBytes);
  CHECK(p.limits.names_truncated == 3); // and the name table's one
}
