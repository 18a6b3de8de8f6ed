// Steps (advisor/analysis/step_analyzer.h, step_inference.h): annotated and inferred windows, the
// per-step breakdown, step statistics and the input stall ratio.
#include "advisor/analysis/job_analysis.h"
#include "advisor/analysis/step_inference.h"
#include "tests/advisor/analysis_builders.h"

#include <catch2/catch.hpp>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using model::TimeNs;

namespace {

constexpr TimeNs kUs = 1000;
constexpr TimeNs T0 = 1'000'000'000;

TimeNs at(double us) {
  return T0 + TimeNs(us * 1000);
}

// A training loop: per step, the host prepares a batch for `prep_us` (no CUDA call), copies it
// (H2D), launches `names` back to back (each runs `kernel_us`) and synchronises at the end.
struct Loop {
  model::ProcessTrace p = process(1);
  double host = 0; // host clock, us
  double gpu = 0;  // when the GPU is free, us
  std::vector<double> step_starts;
  // The host thread descheduled for `pause_us` after the step's `pause_after`-th launch.
  size_t pause_after = SIZE_MAX;
  double pause_us = 0;

  void step(const std::vector<std::string>& names, double prep_us, double kernel_us,
            bool copy = true) {
    step_starts.push_back(host);
    host += prep_us;
    if (copy) {
      double s = std::max(host + 3, gpu);
      p.copies.push_back(h2d(at(host), at(host + 2), at(s), at(s + 5)));
      gpu = s + 5;
      host += 2;
    }
    for (size_t k = 0; k < names.size(); ++k) {
      double s = std::max(host + 4, gpu);
      p.kernels.push_back(launched(p, names[k], at(host), at(host + 2), at(s), at(s + kernel_us)));
      gpu = s + kernel_us;
      host += 2.5;
      if (k == pause_after) host += pause_us;
    }
    p.syncs.push_back(hostSync(at(host), at(std::max(host, gpu) + 1)));
    host = std::max(host, gpu) + 1;
  }
};

} // namespace

TEST_CASE("steps: ProfilerStep#N ranges, per-step breakdown, busy plus idle fills each window") {
  Loop loop;
  for (int i = 0; i < 4; ++i)
    loop.step({"fwd", "bwd", "opt"}, i == 2 ? 300 : 100, 50);
  auto& p = loop.p;
  for (size_t i = 0; i < loop.step_starts.size(); ++i) {
    double end = i + 1 < loop.step_starts.size() ? loop.step_starts[i + 1] : loop.host;
    p.ranges.push_back(range(p, model::RangeKind::Step, "ProfilerStep#" + std::to_string(i + 10),
                             at(loop.step_starts[i]), at(end), int64_t(i + 10)));
  }
  // A nested range marked as a step is ignored: the outermost wins.
  p.ranges.push_back(range(p, model::RangeKind::Step, "ProfilerStep#99", at(5), at(6), 99));
  p.sortByTime();
  auto a = analyzeJob(trace(p));
  REQUIRE(a.steps.processes.size() == 1);
  const auto& ps = a.steps.processes[0];
  CHECK(ps.source == StepSource::ProfilerStep);
  CHECK(a.steps.source() == StepSource::ProfilerStep);
  REQUIRE(ps.steps.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    const auto& s = ps.steps[i];
    CHECK(s.number == int64_t(i + 10));
    CHECK(s.kernels == 3);
    TimeNs idle = 0;
    for (auto v : s.idle_ns)
      idle += v;
    // The first step starts before the first GPU activity: that time is attributed too.
    CHECK(s.gpu_busy_ns + idle == s.durationNs());
    CHECK(s.host_sync_ns > 0);
  }
  // The slow step is the one whose batch took 300 us to prepare: input, not host-bound.
  CHECK(ps.steps[2].inputStallNs() > ps.steps[1].inputStallNs() + 190 * kUs);
  auto st = a.steps.stats();
  CHECK(st.count == 4);
  CHECK(st.max_ns == ps.steps[2].durationNs());
  CHECK(st.cv() > 0.2);
  REQUIRE(a.inputStallRatio());
  CHECK(*a.inputStallRatio() == Approx(double(a.steps.inputStallNs()) / a.steps.deviceStepNs()));
  CHECK(*a.inputStallRatio() > 0.3);
  CHECK(*a.hostSyncSecondsPerStep() == Approx(double(a.steps.hostSyncNs()) / 1e9 / 4));
}

TEST_CASE("steps: other Step ranges are NVTX steps; none at all leaves the source null") {
  auto p = process(1);
  p.kernels = {kernel(at(0), at(10))};
  p.ranges = {range(p, model::RangeKind::Step, "train_step", at(0), at(20))};
  auto a = analyzeJob(trace(p));
  CHECK(a.steps.source() == StepSource::Nvtx);
  CHECK(std::string(toString(StepSource::Nvtx)) == "nvtx");

  auto q = process(2);
  q.kernels = {kernel(at(0), at(10)), kernel(at(20), at(30))};
  auto b = analyzeJob(trace(q));
  CHECK(b.steps.source() == StepSource::None);
  CHECK(toString(StepSource::None) == nullptr);
  CHECK(b.steps.count() == 0);
  // Without steps the GPU span is the reference of the input stall ratio.
  CHECK(b.inputStallReferenceNs() == 30 * kUs);
}

TEST_CASE("steps inferred from the launch sequence, cut where the GPU waits for the batch") {
  Loop loop;
  // A warm-up iteration that runs other kernels (autotuning), then 8 identical steps whose 12
  // kernels repeat a 3-kernel layer: the step, not the layer, is the period.
  loop.step({"tune_a", "tune_b", "fwd", "fwd", "fwd", "bwd"}, 50, 20);
  for (int i = 0; i < 8; ++i)
    loop.step({"l1", "l2", "l3", "l1", "l2", "l3", "l1", "l2", "l3", "loss", "bwd", "opt"}, 200,
              20);
  auto index = buildActivityIndex(loop.p);
  auto inferred = inferSteps(index);
  REQUIRE(inferred);
  CHECK(std::string(inferred->anchor) == "h2d_copy");
  CHECK(inferred->period == 14); // copy + 12 kernels + the sync
  CHECK(inferred->match_rate == Approx(1.0));
  REQUIRE(inferred->windows.size() == 8);
  // Each window starts where the GPU went idle before the step's copy.
  for (size_t i = 0; i < 8; ++i) {
    const auto& w = inferred->windows[i];
    const auto& copy = loop.p.copies[i + 1];
    CHECK(w.start < copy.start);
    CHECK(coveredLength(index.devices[0].busy, w.start, copy.start) == 0);
    if (i + 1 < 8) CHECK(w.end == inferred->windows[i + 1].start);
  }
  auto a = analyzeJob(trace(loop.p));
  CHECK(a.steps.source() == StepSource::Inferred);
  CHECK(a.steps.count() == 8);
  CHECK(*a.inputStallRatio() ==
        Approx(203.0 / 449.0).margin(0.01)); // 203 us waiting per 449 us step
}

TEST_CASE("steps inferred: a step with an extra launch does not shift the later cuts") {
  Loop loop;
  for (int i = 0; i < 10; ++i) {
    std::vector<std::string> names{"a", "b", "c", "d", "e", "f"};
    if (i == 4) names.insert(names.begin() + 3, "extra");
    loop.step(names, 100, 10);
  }
  auto inferred = inferSteps(buildActivityIndex(loop.p));
  REQUIRE(inferred);
  CHECK(inferred->period == 8);
  REQUIRE(inferred->windows.size() == 10);
  CHECK(inferred->windows[0].start == loop.p.copies[0].start); // nothing ran before it
  for (size_t i = 1; i < 10; ++i)
    CHECK(inferred->windows[i].start < loop.p.copies[i].start);
  CHECK(inferred->windows[5].start > loop.p.copies[4].end);
}

TEST_CASE("steps inferred from host syncs when no batch is copied; none from a flat sequence") {
  Loop loop;
  for (int i = 0; i < 6; ++i)
    loop.step({"bias", "relu", "scale", "bias", "relu", "scale", "bias", "relu", "scale"}, 30, 2,
              false);
  auto inferred = inferSteps(buildActivityIndex(loop.p));
  REQUIRE(inferred);
  CHECK(std::string(inferred->anchor) == "sync");
  CHECK(inferred->period == 10);
  CHECK(inferred->windows.size() == 6);

  auto flat = process(1);
  for (int i = 0; i < 50; ++i)
    flat.kernels.push_back(
        kernel(at(i * 10), at(i * 10 + 5), 7, 0, flat.names.intern("k" + std::to_string(i))));
  CHECK_FALSE(inferSteps(buildActivityIndex(flat)));
}

TEST_CASE("steps inferred from host syncs are cut after the sync, not at a descheduled host") {
  // Launch-bound: kernels shorter than a launch, so every gap looks alike; in two steps the host
  // thread is descheduled mid-step, which makes the longest idle of those periods.
  Loop loop;
  const std::vector<std::string> names{"bias", "relu", "scale", "bias", "relu", "scale"};
  for (int i = 0; i < 8; ++i) {
    loop.pause_after = (i == 2 || i == 5) ? 3 : SIZE_MAX;
    loop.pause_us = 500;
    loop.step(names, 1, 1, false);
  }
  auto inferred = inferSteps(buildActivityIndex(loop.p));
  REQUIRE(inferred);
  CHECK(std::string(inferred->anchor) == "sync");
  CHECK(inferred->period == 7);
  REQUIRE(inferred->windows.size() == 8);
  for (size_t i = 0; i < 8; ++i) {
    INFO("step " << i);
    size_t kernels = 0;
    for (const auto& k : loop.p.kernels)
      kernels += k.start >= inferred->windows[i].start && k.start < inferred->windows[i].end;
    CHECK(kernels == names.size());
  }
}

TEST_CASE("step statistics: interpolated percentiles and variation") {
  auto s = stepStats({40, 10, 30, 20});
  CHECK(s.count == 4);
  CHECK(s.total_ns == 100);
  CHECK(s.mean_ns == 25);
  CHECK(s.p50_ns == 25);
  CHECK(s.p90_ns == 37); // 30 + 0.7 x 10
  CHECK(s.min_ns == 10);
  CHECK(s.max_ns == 40);
  CHECK(s.stddev_ns == Approx(11.1803));
  CHECK(s.cv() == Approx(0.44721));
  CHECK(stepStats({}).count == 0);
  CHECK(stepStats({5}).cv() == 0.0);
}

TEST_CASE("steps merge across windows of a live job") {
  Loop loop;
  for (int i = 0; i < 6; ++i)
    loop.step({"a", "b", "c"}, 100, 10);
  auto a = analyzeJob(trace(loop.p));
  auto b = a;
  a.merge(b);
  CHECK(a.steps.count() == 2 * b.steps.count());
  CHECK(a.steps.processes.size() == 1);
}

namespace {

std::vector<StepRecord> stepsOfMs(const std::vector<double>& ms) {
  std::vector<StepRecord> steps;
  TimeNs t = T0;
  for (double d : ms) {
    StepRecord s;
    s.start = t;
    s.end = t + TimeNs(d * 1e6);
    t = s.end;
    steps.push_back(s);
  }
  return steps;
}

} // namespace

TEST_CASE("warm-up: the slow leading steps before the step time settles, at most a tenth") {
  std::vector<double> ms{22, 9.5, 10.7};
  ms.resize(60, 5.3);
  CHECK(countWarmupSteps(stepsOfMs(ms)) == 3); // the healthy train.py loop, workers starting
  CHECK(countWarmupSteps(stepsOfMs(std::vector<double>(60, 5.3))) == 0);
  // A step 1.4x the median is within the band; 1.6x is not.
  std::vector<double> edge(60, 5.0);
  edge[0] = 7.0;
  CHECK(countWarmupSteps(stepsOfMs(edge)) == 0);
  edge[0] = 8.0;
  CHECK(countWarmupSteps(stepsOfMs(edge)) == 1);
  // One settled step among slow ones has not settled: three in a row are needed.
  std::vector<double> ragged{30, 5, 30, 5, 5, 5};
  ragged.resize(60, 5.0);
  CHECK(countWarmupSteps(stepsOfMs(ragged)) == 3);
  // A slow step now and then later on (a checkpoint, a host hiccup) is not warm-up.
  std::vector<double> periodic(60, 5.0);
  for (size_t i = 0; i < periodic.size(); i += 5)
    periodic[i] = 20.0;
  CHECK(countWarmupSteps(stepsOfMs(periodic)) == 1);
  // Bounded: a long slow phase is the job's, not warm-up; under 10 steps there is none.
  std::vector<double> long_slow(20, 30.0);
  long_slow.resize(60, 5.0);
  CHECK(countWarmupSteps(stepsOfMs(long_slow)) == 6);
  CHECK(countWarmupSteps(stepsOfMs({30, 5, 5, 5, 5, 5, 5, 5, 5})) == 0);
  CHECK(countWarmupSteps(stepsOfMs({30, 5, 5, 5, 5, 5, 5, 5, 5, 5})) == 1);
}

TEST_CASE("warm-up: ratios that drive advice are the steady state's; the warm-up is on its own") {
  StepResult r;
  ProcessSteps p;
  p.devices = 1;
  std::vector<double> ms{40, 40};
  ms.resize(20, 10.0);
  p.steps = stepsOfMs(ms);
  for (size_t i = 0; i < p.steps.size(); ++i) {
    auto& s = p.steps[i];
    const TimeNs stall = i < 2 ? 30 * 1'000'000 : 1'000'000; // 30 ms, then 1 ms, waiting for input
    s.idle_ns[size_t(IdleCause::Input)] = stall;
    s.gpu_busy_ns = s.durationNs() - stall;
  }
  markWarmup(p);
  REQUIRE(p.warmup == 2);
  r.processes.push_back(p);
  CHECK(r.count() == 20);
  CHECK(r.steadyCount() == 18);
  CHECK(r.warmupCount() == 2);
  CHECK(r.warmupNs() == 80 * 1'000'000);
  CHECK(std::string(r.warmupLimiter()) == "input");
  CHECK(*r.inputStallRatio() == Approx(0.1)); // 1 ms of 10 ms; with the warm-up it would be 0.23
  CHECK(r.steadyStats().p50_ns == 10'000'000);
  CHECK(*r.busyRatioP50() == Approx(0.9));
  // A later window's steps appended: the warm-up is marked again over all of them.
  StepResult more;
  ProcessSteps q = p;
  q.steps = stepsOfMs(std::vector<double>(20, 10.0));
  more.processes.push_back(q);
  r.merge(more);
  CHECK(r.count() == 40);
  CHECK(r.warmupCount() == 2);
}

TEST_CASE("steps: folding windows and marking the warm-up once equals merging each window") {
  // Process 1 warms up over its first window's steps; process 2 appears in the second window
  // only and is absent from the last, which still changes process 1's step count and so its
  // warm-up cap (10 % of its steps).
  auto window = [](int64_t pid, std::vector<double> ms) {
    ProcessSteps p;
    p.pid = pid;
    p.source = StepSource::Inferred;
    p.devices = 1;
    p.steps = stepsOfMs(ms);
    markWarmup(p);
    StepResult r;
    r.processes.push_back(p);
    return r;
  };
  std::vector<double> slow_start{40, 35, 30, 30, 25};
  slow_start.resize(12, 10.0);
  const std::vector<StepResult> windows{window(1, slow_start),
                                        window(2, std::vector<double>(30, 5.0)),
                                        window(1, std::vector<double>(40, 10.0))};
  StepResult merged = windows.front(), folded = windows.front();
  for (size_t i = 1; i < windows.size(); ++i) {
    merged.merge(windows[i]);
    folded.fold(windows[i]);
  }
  // Unmarked, process 1 keeps the warm-up its first window's 12 steps allowed (1): stale.
  REQUIRE(folded.processes.size() == 2);
  CHECK(folded.processes[0].warmup == 1);
  folded.markWarmup();
  REQUIRE(merged.processes.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(folded.processes[i].pid == merged.processes[i].pid);
    CHECK(folded.processes[i].steps.size() == merged.processes[i].steps.size());
    CHECK(folded.processes[i].warmup == merged.processes[i].warmup);
  }
  CHECK(merged.processes[0].warmup == 5); // 52 steps: up to 5 of warm-up, all five slow ones
  CHECK(merged.warmupCount() == 5);
}
