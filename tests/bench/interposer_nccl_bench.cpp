// The added cost of one intercepted NCCL collective: the hook (mode check, nesting flag, the
// communicator's lookup in the lock-free table, its sequence counter, the Recorder's two counter
// reads and one 64-byte ring write) against calling the stub ncclAllReduce directly. Timed as the
// launch benchmark times launches (interposer_launch_bench.cpp): blocks of kBlock calls,
// lfence-fenced rdtsc with the timer's own cost subtracted, direct and hooked blocks interleaved;
// the drain thread empties the ring between bursts (untimed), so no call is a cheap drop.
//
// Counters: hooked_p50_ns, hooked_p99_ns, direct_p50_ns, direct_p99_ns, added_p50_ns,
// added_p99_ns, dropped, recorded (collectives the drain thread converted, of those hooked: 1).
#include "interposer/nccl_comm_table.h"
#include "interposer/nccl_declarations.h"
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

extern "C" {
nccl::Result ncclCommInitRank(nccl::Comm*, int, nccl::UniqueId, int);
nccl::Result ncclAllReduce(const void*, void*, size_t, int, int, nccl::Comm, cudaStream_t);
}

namespace {

using AllReduceFn = nccl::Result (*)(const void*, void*, size_t, int, int, nccl::Comm,
                                     cudaStream_t);

void setUp(bool off) {
  resetForTest(std::chrono::seconds(10));
  Config c;
  c.endpoint = "null:"; // record, then discard: the cost of recording, not of a socket
  c.cupti = false;
  c.disabled = off;
  c.ring_events = 8192;
  c.overhead_budget = 0; // never shed (see interposer_launch_bench.cpp)
  c.log = LogLevel::Quiet;
  ShimDeps d = defaultDeps();
  d.make_cupti_port = [] { return std::make_unique<profiler::FakeCuptiPort>(); };
  configure(c, d);
  if (!off) startShim();
}

void runCollectives(benchmark::State& state, bool off) {
  setUp(off);
  profiler::Clock& clock = profiler::initProcessClock();
  const double ns_per_tick = 1e9 / clock.ticksPerSecond();
  auto direct = reinterpret_cast<AllReduceFn>(dlsym(RTLD_NEXT, "ncclAllReduce"));
  if (!direct) {
    state.SkipWithError("stub NCCL not found");
    return;
  }
  AllReduceFn hooked = &ncclAllReduce;
  nccl::Comm comm = nullptr;
  nccl::UniqueId id{};
  if (ncclCommInitRank(&comm, 8, id, 3) != nccl::kSuccess || !comm) {
    state.SkipWithError("ncclCommInitRank failed");
    return;
  }
  if (!off && ncclComms().find(comm) == NcclCommTable::kNoSlot) {
    state.SkipWithError("the hooks did not learn the communicator");
    return;
  }
  auto stream = reinterpret_cast<cudaStream_t>(0x5000);
  std::vector<double> empty;
  for (int i = 0; i < 20000; ++i) {
    uint64_t a = fencedTicks(), b = fencedTicks();
    empty.push_back(double(b - a));
  }
  const double timer = percentile(empty, 0.5);
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
        direct(nullptr, nullptr, 1 << 22, 7, 0, comm, stream);
      uint64_t b = fencedTicks();
      for (int j = 0; j < kBlock; ++j)
        hooked(nullptr, nullptr, 1 << 22, 7, 0, comm, stream);
      uint64_t c = fencedTicks();
      const double d = (double(b - a) - timer) * ns_per_tick / kBlock;
      const double h = (double(c - b) - timer) * ns_per_tick / kBlock;
      if (d_samples.size() < d_samples.capacity()) {
        d_samples.push_back(d);
        h_samples.push_back(h);
      }
      hooked_total += h * kBlock;
    }
    state.SetIterationTime(hooked_total * 1e-9);
    if (!off) drainAndWait(std::chrono::seconds(10), 1); // untimed: empty the ring
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * kBurst);
  const double hp50 = percentile(h_samples, 0.5), hp99 = percentile(h_samples, 0.99);
  const double dp50 = percentile(d_samples, 0.5), dp99 = percentile(d_samples, 0.99);
  state.counters["hooked_p50_ns"] = hp50;
  state.counters["hooked_p99_ns"] = hp99;
  state.counters["direct_p50_ns"] = dp50;
  state.counters["direct_p99_ns"] = dp99;
  state.counters["added_p50_ns"] = hp50 - dp50;
  state.counters["added_p99_ns"] = hp99 - dp99;
  const ShimStatus st = shimStatus();
  state.counters["dropped"] = double(st.drain.dropped_total + st.unringed_drops);
  const double hooked_calls = double(state.iterations()) * kBurst;
  state.counters["recorded"] = off ? 0 : double(st.drain.events_drained) / hooked_calls;
}

// Every collective recorded in full (the interposer and CUPTI tiers alike: NCCL calls are never
// only counted).
void BM_NcclHookRecorded(benchmark::State& state) {
  runCollectives(state, false);
}
void BM_NcclHookOff(benchmark::State& state) {
  runCollectives(state, true);
}

} // namespace

BENCHMARK(BM_NcclHookRecorded)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_NcclHookOff)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);

BENCHMARK_MAIN();
