// The added cost of one intercepted launch: the hook (mode check, reentrancy guard, two counter
// reads, a 64-byte ring write published with one release store) against calling the real function
// directly. Calls are timed in blocks of kBlock (lfence-fenced rdtsc, the timer's own cost
// subtracted; some CPUs, AMD Zen among them, advance the TSC in steps of ~10 ns, too coarse for
// one call), direct and hooked blocks interleaved so both see the same frequency and cache state;
// p50/p99 are over the per-call time of each block. Between bursts the drain thread empties the
// ring (untimed), so no call is a cheap drop.
//
// Counters: hooked_p50_ns, hooked_p99_ns, direct_p50_ns, direct_p99_ns, added_p50_ns,
// added_p99_ns (hooked minus direct at the same percentile), dropped.
#include "interposer/cuda_declarations.h"
#include "interposer/recorder.h"
#include "interposer/runtime.h"
#include "profiler/cupti/fake_cupti_port.h"
#include "profiler/clock/clock.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include <dlfcn.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

using namespace gpuwise;
using namespace gpuwise::interposer;

namespace {

inline uint64_t fencedTicks() {
#if defined(__x86_64__)
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
#else
  return profiler::readTicks(profiler::TickSource::Counter);
#endif
}

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
  c.log = LogLevel::Quiet;
  ShimDeps d = defaultDeps();
  d.make_cupti_port = [] { return std::make_unique<profiler::FakeCuptiPort>(); };
  configure(c, d);
  if (mode != ShimMode::Off) gpuwise::interposer::startShim();
}

double percentile(std::vector<double>& v, double p) {
  size_t i = size_t(p * double(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + long(i), v.end());
  return v[i];
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

  constexpr int kBurst = 2048; // a quarter of the ring: never full, never a drop
  constexpr int kBlock = 16;
  std::vector<double> d_samples, h_samples;
  d_samples.reserve(1 << 22);
  h_samples.reserve(1 << 22);
  for (auto _ : state) {
    double hooked_total = 0;
    for (int i = 0; i < kBurst; i += kBlock) {
      uint64_t a = fencedTicks();
      for (int j = 0; j < kBlock; ++j) direct(k, dim3(4), dim3(256), nullptr, 0, nullptr);
      uint64_t b = fencedTicks();
      for (int j = 0; j < kBlock; ++j) hooked(k, dim3(4), dim3(256), nullptr, 0, nullptr);
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
  if (mode == ShimMode::Count && st.drain.launches_counted == 0)
    state.SkipWithError("launches were not counted: the CUPTI tier did not start");
}

// Interposer tier: every launch recorded in full (two timestamps, a 64-byte event).
void BM_LaunchRecording(benchmark::State& state) { runLaunches(state, ShimMode::Record); }
// CUPTI tier: CUPTI records the launch; the hook counts it.
void BM_LaunchCounted(benchmark::State& state) { runLaunches(state, ShimMode::Count); }
void BM_LaunchOff(benchmark::State& state) { runLaunches(state, ShimMode::Off); }

} // namespace

BENCHMARK(BM_LaunchRecording)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_LaunchCounted)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_LaunchOff)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);

BENCHMARK_MAIN();
