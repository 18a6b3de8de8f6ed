// Windowed aggregation (advisor/ingest/window_aggregator.h) gives the whole-trace headline: for
// every simulated sample (recorded with `gpuwise run --simulate --trace`, replayed through a
// StreamRouter that keeps every record and through one that cuts tens of windows) and for real
// Kineto traces fed to a WindowAggregator in time order, summary.gpu_busy_ratio and
// gpu_idle_ratio agree within 0.002, input_stall_ratio within 0.005, and the recommendations are
// the same ids in the same order.
#include "advisor/import/kineto_importer.h"
#include "advisor/ingest/gwt_replay.h"
#include "advisor/ingest/stream_router.h"
#include "advisor/ingest/window_aggregator.h"
#include "advisor/rules/rule_set.h"
#include "tests/advisor/subprocess.h"
#include "tests/traces_dir.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
namespace fs = std::filesystem;

namespace {

struct Headline {
  std::optional<double> busy, idle, stall;
  std::vector<std::string> recommendations;
};

Headline headline(const JobAnalysis& a) {
  Headline h;
  if (a.timeline.known() && a.timeline.span_ns > 0)
    h.busy = double(a.timeline.busy_ns) / double(a.timeline.span_ns);
  h.idle = a.timeline.idleRatio();
  h.stall = a.inputStallRatio();
  for (const auto& r : recommend(a, nullptr))
    h.recommendations.push_back(std::string(r.id));
  return h;
}

void checkNear(const char* what, std::optional<double> whole, std::optional<double> windowed,
               double tolerance) {
  INFO(what);
  REQUIRE(whole.has_value() == windowed.has_value());
  if (whole) CHECK(std::abs(*whole - *windowed) <= tolerance);
}

// What the windowed analysis may differ by, beyond rounding, where an approximation that
// window_aggregator.h states applies (real traces cut into small windows; see windowedTolerance).
struct Tolerance {
  double stall_missed = 0;       // input_stall_ratio the windows may miss (never add)
  bool steps_where_none = false; // windows may infer steps where the whole trace has none
};

void checkSame(const JobAnalysis& whole, const JobAnalysis& windowed, Tolerance tolerance = {}) {
  auto a = headline(whole), b = headline(windowed);
  INFO("whole: busy " << a.busy.value_or(-1) << " idle " << a.idle.value_or(-1) << " stall "
                      << a.stall.value_or(-1) << "; windowed: busy " << b.busy.value_or(-1)
                      << " idle " << b.idle.value_or(-1) << " stall " << b.stall.value_or(-1)
                      << "; stall may miss " << tolerance.stall_missed);
  checkNear("gpu_busy_ratio", a.busy, b.busy, 0.002);
  checkNear("gpu_idle_ratio", a.idle, b.idle, 0.002);
  if (tolerance.stall_missed > 0 && a.stall && b.stall) {
    INFO("input_stall_ratio, first step cut short");
    CHECK(*b.stall <= *a.stall + 0.005);
    CHECK(*b.stall >= *a.stall - 0.005 - tolerance.stall_missed);
  } else {
    // Inferred steps are found per window (window_aggregator.h): a window's cut may move a step
    // boundary, and the stall's share of step time with it, the more the less regular the steps
    // (a loaded host: the input_stall sample, 0.599 whole against 0.594 windowed, seen under a
    // CPU hog). Up to 2% of the ratio on top of the rounding.
    const bool inferred = whole.steps.source() == StepSource::Inferred;
    checkNear("input_stall_ratio", a.stall, b.stall,
              0.005 + (inferred && a.stall ? 0.02 * *a.stall : 0.0));
  }
  CHECK(a.recommendations == b.recommendations);
  CHECK(whole.kernels.count == windowed.kernels.count);
  if (tolerance.steps_where_none && whole.steps.source() == StepSource::None) {
    CHECK((windowed.steps.source() == StepSource::None ||
           windowed.steps.source() == StepSource::Inferred));
    return;
  }
  CHECK(whole.steps.source() == windowed.steps.source());
  // Annotated steps are counted exactly; inferred ones are found per window (window_aggregator.h).
  if (whole.steps.source() != StepSource::Inferred)
    CHECK(whole.steps.count() == windowed.steps.count());
}

// The full set, or the subset in tests/data/traces where it is absent (tests/traces_dir.h).
fs::path tracesDir() {
  return gpuwise::test::realTracesDir() / "kineto";
}

// Records of `p` over on the host by `t`.
size_t recordsUntil(const model::ProcessTrace& p, model::TimeNs t) {
  size_t n = 0;
  auto count = [&](const auto& records, auto end) {
    for (const auto& r : records)
      n += end(r) <= t;
  };
  count(p.kernels, [](const auto& k) { return k.launch_end ? k.launch_end : k.end; });
  count(p.copies, [](const auto& c) { return c.call_end ? c.call_end : c.end; });
  count(p.memsets, [](const auto& m) { return m.call_end ? m.call_end : m.end; });
  count(p.syncs, [](const auto& x) { return x.end; });
  count(p.api_calls, [](const auto& x) { return x.end; });
  count(p.ranges, [](const auto& x) { return x.end; });
  return n;
}

// The two approximations of window_aggregator.h that these traces, cut into windows of a few
// hundred events, reach:
// - Before any step is known the aggregator keeps eight windows of context. A first annotated
//   step still open after eight cuts (a window, then about three quarters of one per cut) is
//   analysed without its earliest records: the windowed input stall then falls short by up to
//   the input stall the whole analysis counts in that first step, and never exceeds the whole
//   one. resnet50_profiler_api_num_workers_0 (windows of 523 events, 4104 records by the end of
//   its first ProfilerStep): 0.1906 against 0.2015, short by exactly that step's 10.05 ms of
//   input stall over the 928 ms reference (0.0108).
// - Inferred steps are found per window: where the whole trace has no period (the alexnet trace,
//   508 events), a window of 16 events can infer some. The time figures and the recommendations
//   must still agree; only the step source may then be "inferred" instead of none.
// Where neither applies (both ResNet-50 DataLoader traces) the figures agree within rounding.
Tolerance windowedTolerance(const model::ProcessTrace& p, const JobAnalysis& whole, size_t window) {
  Tolerance t;
  t.steps_where_none = whole.steps.source() == StepSource::None;
  if (whole.steps.processes.empty() || whole.steps.processes[0].steps.empty()) return t;
  const auto& first = whole.steps.processes[0].steps.front();
  const size_t eight_cuts = window + 7 * window * 3 / 4;
  const bool first_step_cut = recordsUntil(p, first.end) > eight_cuts;
  const auto reference = whole.inputStallReferenceNs();
  if (first_step_cut && reference > 0)
    t.stall_missed = double(first.inputStallNs()) / double(reference);
  return t;
}

// Feeds one process's records to a WindowAggregator in time order, a slice at a time (as batches
// arrive), and returns its aggregated analysis.
JobAnalysis windowed(const model::ProcessTrace& p, size_t window_events, uint64_t* windows) {
  WindowAggregator agg(window_events);
  model::ProcessTrace pending;
  pending.info = p.info;
  pending.devices = p.devices;
  pending.names = p.names;
  pending.wall_start = p.wall_start;
  pending.wall_end = p.wall_end;
  model::TimeNs lo = std::numeric_limits<model::TimeNs>::max(), hi = 0;
  auto see = [&](model::TimeNs t) {
    if (t == 0) return;
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  };
  for (const auto& k : p.kernels)
    see(k.launch_start ? k.launch_start : k.start);
  for (const auto& a : p.api_calls)
    see(a.start);
  for (const auto& r : p.ranges)
    see(r.end);
  const int kSlices = int(p.eventCount() / std::max<size_t>(1, window_events / 8)) + 1;
  const model::TimeNs step = std::max<model::TimeNs>(1, (hi - lo) / kSlices + 1);
  // A record arrives when it is over on the host (a range at its end, a GPU record with its
  // launch): the slice of that time.
  auto slice = [&](model::TimeNs t) { return t <= lo ? 0 : int((t - lo) / step); };
  auto feed = [&](auto& to, const auto& from, auto when, int s) {
    for (const auto& r : from)
      if (std::min(kSlices, slice(when(r))) == s) to.push_back(r);
  };
  for (int s = 0; s <= kSlices; ++s) {
    feed(
        pending.kernels, p.kernels,
        [](const auto& k) { return k.launch_end ? k.launch_end : k.end; }, s);
    feed(
        pending.copies, p.copies, [](const auto& c) { return c.call_end ? c.call_end : c.end; }, s);
    feed(
        pending.memsets, p.memsets, [](const auto& m) { return m.call_end ? m.call_end : m.end; },
        s);
    feed(
        pending.syncs, p.syncs, [](const auto& x) { return x.end; }, s);
    feed(
        pending.api_calls, p.api_calls, [](const auto& x) { return x.end; }, s);
    feed(
        pending.allocations, p.allocations, [](const auto& x) { return x.time; }, s);
    feed(
        pending.memory_samples, p.memory_samples, [](const auto& x) { return x.time; }, s);
    feed(
        pending.ranges, p.ranges, [](const auto& x) { return x.end; }, s);
    feed(
        pending.collectives, p.collectives, [](const auto& x) { return x.end; }, s);
    agg.maybeCut(pending);
  }
  *windows = agg.windows();
  auto a = agg.analysis(pending, nullptr);
  a.wall_ns = agg.wallNs(pending);
  return a;
}

} // namespace

// Within the explicit tolerances of windowedTolerance() where its approximations apply.
TEST_CASE("windowed analysis of real Kineto traces gives the whole-trace headline") {
  const char* files[] = {
      "kineto_tb_plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
      "kineto_tb_plugin/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz",
      "kineto_tb_plugin/resnet50_profiler_api_num_workers_0/worker0.pt.trace.json.gz",
      "hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
  };
  for (const char* f : files) {
    auto path = tracesDir() / f;
    if (!gpuwise::test::haveFullTraces() && !fs::exists(path)) continue; // the subset: ResNet-50
    DYNAMIC_SECTION(f) {
      auto imported = importKineto({path.string()});
      REQUIRE(imported.error.empty());
      REQUIRE(imported.trace.processes.size() == 1);
      const auto& p = imported.trace.processes.front();
      auto whole = analyzeJob(imported.trace);
      const size_t window = std::max<size_t>(16, p.eventCount() / 40);
      uint64_t windows = 0;
      auto win = windowed(p, window, &windows);
      INFO(p.eventCount() << " events, window " << window << ", " << windows << " windows");
      CHECK(windows >= 10);
      checkSame(whole, win, windowedTolerance(p, whole, window));
    }
  }
}

TEST_CASE("windowed ingest of every simulated sample gives the whole-trace headline") {
  const char* samples[] = {"healthy",   "input_stall", "launch_bound",   "pageable_copies",
                           "host_sync", "fp32_gemm",   "small_footprint"};
  for (const char* name : samples) {
    if (!fs::exists(buildDir() + "/samples/" + name)) {
      WARN("sample not built: " << name);
      continue;
    }
    DYNAMIC_SECTION(name) {
      TempDir dir;
      const std::string gwt = dir / (std::string(name) + ".gwt");
      Process run({buildDir() + "/bin/gpuwise", "run", "--simulate", "--trace", gwt, "--",
                   buildDir() + "/samples/" + name},
                  {}, dir.path, dir.path, name);
      REQUIRE(run.wait(std::chrono::seconds(300)) == 0);

      std::string error;
      StreamRouter all([](std::string_view) {}, StreamRouter::kMaxStreams, 0);
      REQUIRE(replayGwt(gwt, all, &error));
      const uint64_t events = all.progress().events;
      IngestHealth health;
      auto trace = all.take(&health);
      AnalysisOptions ao;
      ao.ingest = &health;
      auto whole = analyzeJob(trace, ao);

      const size_t window = std::max<uint64_t>(16, events / 40);
      StreamRouter cut([](std::string_view) {}, StreamRouter::kMaxStreams, window);
      REQUIRE(replayGwt(gwt, cut, &error));
      INFO(events << " events, window " << window << ", " << cut.progress().windows << " windows");
      CHECK(cut.progress().windows >= 10);
      auto win = cut.analysis();
      checkSame(whole, win);
      CHECK(win.collection.events == whole.collection.events);
      CHECK(win.collection.events_dropped == whole.collection.events_dropped);
    }
  }
}

// Each collective kernel and its joined record are counted by the one window that owns them, so
// the per-kind figures add up exactly; the communication and exposed times are the windowed
// timeline's (whose GPU time is counted up to each window's last complete step, so it may differ
// from the whole trace's where long kernels straddle the cuts).
TEST_CASE("windowed analysis of NCCL traces gives the whole trace's collectives exactly") {
  const char* files[] = {
      "hta/nccl_parser_config/nccl_data.json.gz",
      "hta/trace_diff/test/test.json.gz",
      "hta/trace_filter/sampled_rank-0.json.gz",
  };
  size_t compared = 0;
  for (const char* f : files) {
    auto path = tracesDir() / f;
    if (!fs::exists(path)) continue;
    DYNAMIC_SECTION(f) {
      auto imported = importKineto({path.string()});
      REQUIRE(imported.error.empty());
      const auto& p = imported.trace.processes.front();
      const auto whole = analyzeJob(imported.trace).communication;
      uint64_t windows = 0;
      const auto win_job = windowed(p, std::max<size_t>(16, p.eventCount() / 40), &windows);
      const auto& win = win_job.communication;
      CHECK(windows >= 10);
      REQUIRE(whole.any());
      CHECK(win.busy_ns == win_job.timeline.communication_busy_ns);
      CHECK(win.exposed_ns == win_job.timeline.communication_exposed_ns);
      REQUIRE(win.by_kind.size() == whole.by_kind.size());
      for (size_t i = 0; i < whole.by_kind.size(); ++i) {
        CHECK(win.by_kind[i].kind == whole.by_kind[i].kind);
        CHECK(win.by_kind[i].count == whole.by_kind[i].count);
        CHECK(win.by_kind[i].kernel_ns == whole.by_kind[i].kernel_ns);
        CHECK(win.by_kind[i].bytes == whole.by_kind[i].bytes);
        CHECK(win.by_kind[i].group_size == whole.by_kind[i].group_size);
      }
    }
    ++compared;
  }
  if (compared == 0) gpuwise::test::skipTest("no NCCL trace in " + tracesDir().string());
}
