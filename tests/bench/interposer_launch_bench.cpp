// The added cost of one intercepted launch: the hook (mode check, reentrancy guard, two counter
// reads, a 64-byte ring write published with one release store) against calling the real function
// directly. Calls are timed in blocks of kBlock (lfence-fenced rdtsc, the timer's own cost
// subtracted; some CPUs, AMD Zen among them, advance the TSC in steps of ~10 ns, too coarse for
// one call), direct and hooked blocks interleaved so both see the same frequency and cache state;
// p50/p99 are over the per-call time of each block. Between bursts the drain thread empties the
// ring (untimed), so no call is a cheap drop.
//
// Counters: hooked_p50_ns, hooked_p99_ns, direct_p50_ns, direct_p99_ns, added_p50_ns,
// added_p99_ns (hooked minus direct at the same percentile), dropped, recorded_share (launches
// recorded in full, of those hooked: 1 for the recording tier, 0 for the counting one).
//
// The /cold variants ask what a launch costs when the application did other work since the last
// one, as a training step does (and the simulated device's 0.5-2 us of work per launch): before
// every single call, untimed, the thread reads a buffer of the argument's KiB (48: more than L1d;
// 2048: more than L2), so the hook's code, data and TLS lines are no longer in the nearest caches.
// One call per timing, so the TSC's ~10 ns steps matter: the counters are trimmed means (the top
// 1 % dropped) rather than medians: added_mean_ns, hooked_mean_ns, direct_mean_ns.
#include "interposer/cuda_declarations.h"
#include "interposer/recorder.h"
#include "interposer/runtime.h"
#include "profiler/clock/clock.h"
#include "profiler/cupti/fake_cupti_port.h"
#include "tests/bench/hook_timing.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include <dlfcn.h>

using namespace gpuwise;
using gpuwise::bench::fencedTicks;
using gpuwise::bench::percentile;
using namespace gpuwise::interposer;

namespace {

using LaunchFn = cudaError_t (*)(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);

enum class ShimMode { Off, Record, Count };

void setUp(ShimMode mode) {
  resetForTest(std::chrono::seconds(10));
  Config c;
  c.endpoint = "null:"; // record, then discard: the cost of recording, not of a socket
  // Count: the CUPTI tier (a fake CUPTI that covers launches), where the hooks only count launches.
  c.cupti = mode == ShimMode::Count;
  c.disabled = mode == ShimMode::Off;
  c.ring_events = 8192; // the default
  // Never shed: back-to-back launches cost the hooks far more than 1 % of the loop's time, and the
  // governor would turn recording into counting within a few cycles (the recording figures before
  // this line were mostly counted launches). `recorded_share` below says what was measured.
  c.overhead_budget = 0;
  c.log = LogLevel::Quiet;
  ShimDeps d = defaultDeps();
  d.make_cupti_port = [] { return std::make_unique<profiler::FakeCuptiPort>(); };
  configure(c, d);
  if (mode != ShimMode::Off) gpuwise::interposer::startShim();
}

// Of the hooked launches, the share recorded in full rather than counted.
double recordedShare(const ShimStatus& st) {
  double recorded = double(st.drain.events_drained), counted = double(st.drain.launches_counted);
  return recorded + counted > 0 ? recorded / (recorded + counted) : 0;
}

// Reads every cache line of `buffer` once: what sits in the caches afterwards is the buffer.
[[gnu::noinline]] void evictCaches(const std::vector<uint8_t>& buffer) {
  uint64_t sum = 0;
  for (size_t i = 0; i < buffer.size(); i += 64)
    sum += buffer[i];
  benchmark::DoNotOptimize(sum);
}

// Mean of the values below the 99th percentile: one-call timings see the TSC's steps and a rare
// interrupt; the mean of many averages the steps out.
double trimmedMean(std::vector<double>& v) {
  double cut = percentile(v, 0.99), sum = 0;
  size_t n = 0;
  for (double x : v)
    if (x < cut) sum += x, ++n;
  return n ? sum / double(n) : 0;
}

void runColdLaunches(benchmark::State& state, ShimMode mode, LaunchFn direct, LaunchFn hooked,
                     double timer, double ns_per_tick) {
  std::vector<uint8_t> buffer(size_t(state.range(0)) * 1024, 1);
  cudaKernel_t k = reinterpret_cast<cudaKernel_t>(0x1000);
  constexpr int kBurst = 256;
  std::vector<double> d_samples, h_samples;
  for (auto _ : state) {
    double hooked_total = 0;
    for (int i = 0; i < kBurst; ++i) {
      const bool hooked_first = i % 2 == 1; // whichever runs second finds the other's lines warm
      for (int pass = 0; pass < 2; ++pass) {
        const bool is_hooked = (pass == 0) == hooked_first;
        LaunchFn fn = is_hooked ? hooked : direct;
        evictCaches(buffer);
        uint64_t a = fencedTicks();
        fn(k, dim3(4), dim3(256), nullptr, 0, nullptr);
        uint64_t b = fencedTicks();
        double ns = (double(b - a) - timer) * ns_per_tick;
        (is_hooked ? h_samples : d_samples).push_back(ns);
        if (is_hooked) hooked_total += ns;
      }
    }
    state.SetIterationTime(hooked_total * 1e-9);
    if (mode != ShimMode::Off) drainAndWait(std::chrono::seconds(10), 1); // untimed
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * kBurst);
  double h = trimmedMean(h_samples), d = trimmedMean(d_samples);
  state.counters["hooked_mean_ns"] = h;
  state.counters["direct_mean_ns"] = d;
  state.counters["added_mean_ns"] = h - d;
  ShimStatus st = shimStatus();
  state.counters["dropped"] = double(st.drain.dropped_total + st.unringed_drops);
  state.counters["recorded_share"] = recordedShare(st);
}

void runLaunches(benchmark::State& state, ShimMode mode) {
  setUp(mode);
  const bool disabled = mode == ShimMode::Off;
  profiler::Clock& clock = profiler::initProcessClock();
  double ns_per_tick = 1e9 / clock.ticksPerSecond();
  auto direct = reinterpret_cast<LaunchFn>(dlsym(RTLD_NEXT, "__cudaLaunchKernel"));
  if (!direct) {
    state.SkipWithError("stub runtime not found");
    return;
  }
  LaunchFn hooked = &__cudaLaunchKernel;
  cudaKernel_t k = reinterpret_cast<cudaKernel_t>(0x1000);
  // The timer's own cost, to subtract.
  std::vector<double> empty;
  for (int i = 0; i < 20000; ++i) {
    uint64_t a = fencedTicks();
    uint64_t b = fencedTicks();
    empty.push_back(double(b - a));
  }
  double timer = percentile(empty, 0.5);
  if (state.range(0) > 0) return runColdLaunches(state, mode, direct, hooked, timer, ns_per_tick);

  constexpr int kBurst = 2048; // a quarter of the ring: never full, never a drop
  constexpr int kBlock = 16;
  std::vector<double> d_samples, h_samples;
  d_samples.reserve(1 << 22);
  h_samples.reserve(1 << 22);
  for (auto _ : state) {
    double hooked_total = 0;
    for (int i = 0; i < kBurst; i += kBlock) {
      uint64_t a = fencedTicks();
      for (int j = 0; j < kBlock; ++j)
        direct(k, dim3(4), dim3(256), nullptr, 0, nullptr);
      uint64_t b = fencedTicks();
      for (int j = 0; j < kBlock; ++j)
        hooked(k, dim3(4), dim3(256), nullptr, 0, nullptr);
      uint64_t c = fencedTicks();
      double d = (double(b - a) - timer) * ns_per_tick / kBlock;
      double h = (double(c - b) - timer) * ns_per_tick / kBlock;
      if (d_samples.size() < d_samples.capacity()) {
        d_samples.push_back(d);
        h_samples.push_back(h);
      }
      hooked_total += h * kBlock;
    }
    state.SetIterationTime(hooked_total * 1e-9);
    if (!disabled) drainAndWait(std::chrono::seconds(10), 1); // untimed: empty the ring
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * kBurst);
  double hp50 = percentile(h_samples, 0.5), hp99 = percentile(h_samples, 0.99);
  double dp50 = percentile(d_samples, 0.5), dp99 = percentile(d_samples, 0.99);
  state.counters["hooked_p50_ns"] = hp50;
  state.counters["hooked_p99_ns"] = hp99;
  state.counters["direct_p50_ns"] = dp50;
  state.counters["direct_p99_ns"] = dp99;
  state.counters["added_p50_ns"] = hp50 - dp50;
  state.counters["added_p99_ns"] = hp99 - dp99;
  ShimStatus st = shimStatus();
  state.counters["dropped"] = double(st.drain.dropped_total + st.unringed_drops);
  state.counters["recorded_share"] = recordedShare(st);
  if (mode == ShimMode::Count && st.drain.launches_counted == 0)
    state.SkipWithError("launches were not counted: the CUPTI tier did not start");
}

// Interposer tier: every launch recorded in full (two timestamps, a 64-byte event).
void BM_LaunchRecording(benchmark::State& state) {
  runLaunches(state, ShimMode::Record);
}
// CUPTI tier: CUPTI records the launch; the hook counts it.
void BM_LaunchCounted(benchmark::State& state) {
  runLaunches(state, ShimMode::Count);
}
void BM_LaunchOff(benchmark::State& state) {
  runLaunches(state, ShimMode::Off);
}

} // namespace

// Argument: 0 for calls back to back (warm caches); otherwise the KiB read between calls (/cold).
BENCHMARK(BM_LaunchRecording)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0)->Arg(0);
BENCHMARK(BM_LaunchCounted)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0)->Arg(0);
BENCHMARK(BM_LaunchOff)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0)->Arg(0);
BENCHMARK(BM_LaunchRecording)
    ->Name("BM_LaunchRecording/cold")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(400)
    ->Arg(48)
    ->Arg(2048);
BENCHMARK(BM_LaunchCounted)
    ->Name("BM_LaunchCounted/cold")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(400)
    ->Arg(48)
    ->Arg(2048);
BENCHMARK(BM_LaunchOff)
    ->Name("BM_LaunchOff/cold")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(400)
    ->Arg(48)
    ->Arg(2048);

BENCHMARK_MAIN();
