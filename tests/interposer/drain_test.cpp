// The drain thread against a FakeBatchSink (and a FakeCuptiPort for the CUPTI tier): batches
// arrive, drops are counted and carried, Hellos open every connection epoch, the final batch goes
// out at shutdown, and a stuck sink cannot hold the process past its deadline.
#include "fake_batch_sink.h"
#include "interposer/drain.h"
#include "profiler/clock/clock.h"
#include "profiler/cupti/activity_builders.h"
#include "profiler/cupti/fake_cupti_port.h"

#include <catch2/catch.hpp>

#include <cupti_runtime_cbid.h>

using namespace gpuwise;
using namespace gpuwise::interposer;
using gpuwise::interposer::testing::FakeBatchSink;

namespace {

constexpr uint32_t kTid = 4242;

// The device sampler every Harness's drain calls (none: no samples), set by a test before it
// builds its Harness.
std::function<void(int64_t, std::vector<model::DeviceSample>&)> g_sampler;

struct Harness {
  RingPool rings;
  profiler::Clock clock{profiler::TickSource::Monotonic}; // ticks are ns: times are exact
  KernelRegistry kernels;
  std::atomic<uint64_t> unringed{0};
  FakeBatchSink* sink = nullptr;
  std::unique_ptr<Drain> drain;
  RingSlot* slot = nullptr;
  int hellos_made = 0;
  // Event times are offsets from now, so the drain's ageing (which compares with its clock) sees
  // them as recent.
  uint64_t base = uint64_t(clock.nowNs());

  explicit Harness(DrainOptions o = {}, profiler::CuptiCollector* cupti = nullptr,
                   profiler::CuptiPort* port = nullptr, uint32_t ring_events = 1024,
                   std::function<void(FakeBatchSink&)> setup = {}) {
    REQUIRE(rings.init(4, ring_events));
    slot = rings.claim(kTid);
    DrainDeps d;
    d.rings = &rings;
    d.clock = &clock;
    d.kernels = &kernels;
    d.cupti = cupti;
    d.cupti_port = port;
    d.unringed_drops = &unringed;
    d.sample_devices = [](int64_t now, std::vector<model::DeviceSample>& out,
                          std::vector<model::PowerSample>&) {
      if (g_sampler) g_sampler(now, out);
    };
    d.make_sink = [this, setup](const model::NameTable& names) {
      auto s = std::make_unique<FakeBatchSink>(&names);
      if (setup) setup(*s);
      sink = s.get();
      return std::unique_ptr<BatchSink>(std::move(s));
    };
    d.make_hello = [this] {
      transport::Hello h;
      h.session_id = 77;
      h.process.pid = 1;
      h.process.tier = model::CollectionTier::Interposer;
      ++hellos_made;
      return h;
    };
    drain = std::make_unique<Drain>(std::move(d), o);
    REQUIRE(drain->start().has_value());
    REQUIRE(sink);
  }

  // Writes a launch of `func` on `stream` with host times [t0, t1] ns. False when dropped.
  bool launch(const void* func, uint64_t t0, uint64_t t1, uint64_t stream = 0) {
    RawEvent* e = slot->ring.tryReserve();
    if (!e) return false;
    *e = RawEvent{};
    e->t0 = base + t0;
    e->t1 = base + t1;
    e->kind = EventKind::Launch;
    e->api = ApiId::cudaLaunchKernel;
    e->sub = uint8_t(FuncKind::HostFunction);
    e->u.launch.func = func;
    e->u.launch.stream = stream;
    e->u.launch.grid_x = 4;
    e->u.launch.grid_y = 1;
    e->u.launch.grid_z = 1;
    e->u.launch.block_x = 256;
    e->u.launch.block_y = 1;
    e->u.launch.block_z = 1;
    slot->ring.publish();
    return true;
  }
  void sync(model::SyncKind kind, uint64_t t0, uint64_t t1) {
    RawEvent* e = slot->ring.tryReserve();
    REQUIRE(e);
    *e = RawEvent{};
    e->t0 = base + t0;
    e->t1 = base + t1;
    e->kind = EventKind::Sync;
    e->api = ApiId::cudaStreamSynchronize;
    e->sub = uint8_t(kind);
    slot->ring.publish();
  }
  // Exactly one more drain cycle, completed (with slow(), the drain cycles only when kicked).
  void cycle() {
    uint64_t target = drain->cycles() + 1;
    drain->kick();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (drain->cycles() < target) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  size_t kernelsReceived() {
    return sink->count([](const auto& b) { return b.batch.kernels.size(); });
  }
};

DrainOptions slow() {
  DrainOptions o;
  o.batch_ms = 60000; // cycles only when the test kicks
  return o;
}

void someKernel() {}
void otherKernel() {}

} // namespace

TEST_CASE("Events become named, timed model records in batches") {
  Harness h(slow());
  h.kernels.registerFunction(reinterpret_cast<const void*>(&someKernel), "_Z10someKernelv");
  REQUIRE(h.launch(reinterpret_cast<const void*>(&someKernel), 1000, 1500, 0x7000));
  REQUIRE(h.launch(reinterpret_cast<const void*>(&otherKernel), 2000, 2600, 0x7000));
  REQUIRE(h.launch(reinterpret_cast<const void*>(&someKernel), 3000, 3100, 0x8000));
  h.cycle();
  REQUIRE(h.sink->waitFor([](auto& s) { return !s.batches.empty(); }));
  auto b = h.sink->with([](auto& s) { return s.batches.at(0); });
  REQUIRE(b.batch.kernels.size() == 3);
  const auto& k = b.batch.kernels[0];
  CHECK(b.kernel_names[0] == "_Z10someKernelv");
  CHECK(b.kernel_names[1].rfind("<unnamed kernel", 0) == 0);
  CHECK(k.launch_start == int64_t(h.base) + 1000);
  CHECK(k.launch_end == int64_t(h.base) + 1500);
  CHECK(k.start == 0); // interposer tier: no GPU time
  CHECK(k.thread == kTid);
  CHECK(k.grid == model::Dim3{4, 1, 1});
  CHECK(k.block == model::Dim3{256, 1, 1});
  CHECK(b.batch.kernels[1].stream == k.stream);
  CHECK(b.batch.kernels[2].stream != k.stream);
  CHECK(b.batch.events_dropped == 0);
  CHECK_FALSE(b.batch.final);
  CHECK(h.sink->with([](auto& s) { return s.hellos.size(); }) == 1);
  // A name registered later is picked up for later launches of the same pointer.
  h.kernels.registerFunction(reinterpret_cast<const void*>(&otherKernel), "_Z11otherKernelv");
  REQUIRE(h.launch(reinterpret_cast<const void*>(&otherKernel), 4000, 4100));
  h.cycle();
  REQUIRE(h.sink->waitFor([](auto& s) { return s.batches.size() == 2; }));
  CHECK(h.sink->with([](auto& s) { return s.batches[1].kernel_names[0]; }) == "_Z11otherKernelv");
}

TEST_CASE("Ring drops and failed sends are counted and carried by the next batch through") {
  Harness h(slow(), nullptr, nullptr, 64);
  int kept = 0;
  for (int i = 0; i < 100; ++i)
    kept += h.launch(nullptr, 10 + uint64_t(i), 11 + uint64_t(i));
  CHECK(kept == 64);
  h.sink->with([](auto& s) { return s.refuse_next = 1; });
  h.cycle(); // 64 records refused: lost, counted with the 36 ring drops
  CHECK(h.sink->with([](auto& s) { return s.refused; }) == 1);
  CHECK(h.sink->with([](auto& s) { return s.batches.size(); }) == 0);
  for (int i = 0; i < 10; ++i)
    REQUIRE(h.launch(nullptr, 1000, 1001));
  h.unringed.store(5); // five events no ring could take
  h.cycle();
  REQUIRE(h.sink->waitFor([](auto& s) { return s.batches.size() == 1; }));
  auto b = h.sink->with([](auto& s) { return s.batches[0].batch; });
  CHECK(b.kernels.size() == 10);
  CHECK(b.events_dropped == 36 + 64 + 5);
  auto st = h.drain->stats();
  CHECK(st.dropped_total == 105);
  CHECK(st.dropped_reported == 105);
  CHECK(st.batches_failed == 1);
  // Reported once: the next batch carries no old drops.
  REQUIRE(h.launch(nullptr, 2000, 2001));
  h.cycle();
  REQUIRE(h.sink->waitFor([](auto& s) { return s.batches.size() == 2; }));
  CHECK(h.sink->with([](auto& s) { return s.batches[1].batch.events_dropped; }) == 0);
}

TEST_CASE("Shutdown sends a final batch with the last events and closes the sink") {
  DrainOptions o;
  o.batch_ms = 5; // a running drain, cycling on its own
  Harness h(o);
  REQUIRE(h.sink->waitFor([](auto& s) { return s.hellos.size() == 1; }));
  for (int i = 0; i < 20; ++i)
    REQUIRE(h.launch(nullptr, 100, 200));
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE(h.drain->finish(std::chrono::seconds(5)));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  auto s = h.sink->with([](auto& st) { return st; });
  REQUIRE_FALSE(s.batches.empty());
  CHECK(s.batches.back().batch.final);
  int finals = 0;
  for (const auto& b : s.batches)
    finals += b.batch.final;
  CHECK(finals == 1);
  CHECK(h.kernelsReceived() == 20);
  CHECK(s.closed);
  CHECK(h.drain->stats().final_sent);
  CHECK(h.drain->finish(std::chrono::milliseconds(1))); // idempotent
}

TEST_CASE("A stuck sink cannot hold shutdown past its deadline") {
  Harness h(slow());
  h.sink->with([](auto& s) { return s.stuck = true; });
  REQUIRE(h.launch(nullptr, 1, 2));
  h.drain->kick();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!h.sink->inStuckSend()) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(h.drain->finish(std::chrono::milliseconds(100)));
  auto waited = std::chrono::steady_clock::now() - t0;
  CHECK(waited >= std::chrono::milliseconds(100));
  CHECK(waited < std::chrono::seconds(2));
  // Once the sink lets go, the drain completes its final flush.
  h.sink->release();
  CHECK(h.drain->finish(std::chrono::seconds(10)));
  CHECK(h.sink->with([](auto& s) { return s.closed; }));
}

TEST_CASE("Nothing is sent before a Hello; every reconnection gets a new Hello") {
  Harness h(slow(), nullptr, nullptr, 1024,
            [](FakeBatchSink& s) { s.with([](auto& st) { return st.connected = false; }); });
  for (int i = 0; i < 5; ++i)
    REQUIRE(h.launch(nullptr, 1, 2));
  h.cycle();
  h.cycle();
  CHECK(h.sink->with([](auto& s) { return s.batches.size() + s.hellos.size(); }) == 0);
  h.sink->with([](auto& s) { return s.connected = true; });
  h.cycle();
  REQUIRE(h.sink->waitFor([](auto& s) { return s.batches.size() == 1; }));
  CHECK(h.sink->with([](auto& s) { return s.hellos.size(); }) == 1);
  CHECK(h.kernelsReceived() == 5); // held while unconnected, delivered after the Hello
  CHECK(h.sink->with([](auto& s) { return s.hellos[0].session_id; }) == 77);

  h.sink->with([](auto& s) { return s.reconnects_pending = 1; });
  REQUIRE(h.launch(nullptr, 3, 4));
  h.cycle();
  REQUIRE(h.sink->waitFor([](auto& s) { return s.batches.size() == 2; }));
  CHECK(h.sink->with([](auto& s) { return s.hellos.size(); }) == 2);
}

TEST_CASE("Events waiting for a first connection are bounded; the overflow is counted") {
  DrainOptions o = slow();
  o.max_pending_events = 10;
  Harness h(o, nullptr, nullptr, 1024,
            [](FakeBatchSink& s) { s.with([](auto& st) { return st.connected = false; }); });
  for (int i = 0; i < 8; ++i)
    REQUIRE(h.launch(nullptr, 1, 2));
  h.cycle(); // 8 pending: kept
  for (int i = 0; i < 8; ++i)
    REQUIRE(h.launch(nullptr, 1, 2));
  h.cycle(); // 16 pending > 10: dropped and counted
  CHECK(h.drain->stats().dropped_total == 16);
  h.sink->with([](auto& s) { return s.connected = true; });
  REQUIRE(h.launch(nullptr, 1, 2));
  h.cycle();
  REQUIRE(h.sink->waitFor([](auto& s) { return s.batches.size() == 1; }));
  auto b = h.sink->with([](auto& s) { return s.batches[0].batch; });
  CHECK(b.kernels.size() == 1);
  CHECK(b.events_dropped == 16);
}

TEST_CASE("Large sends are split into several batches; only the last one is final") {
  DrainOptions o = slow();
  o.max_batch_events = 10;
  Harness h(o);
  for (int i = 0; i < 25; ++i)
    REQUIRE(h.launch(nullptr, 1, 2));
  REQUIRE(h.drain->finish(std::chrono::seconds(5)));
  auto s = h.sink->with([](auto& st) { return st; });
  REQUIRE(s.batches.size() == 3);
  CHECK(s.batches[0].batch.kernels.size() == 10);
  CHECK(s.batches[2].batch.kernels.size() == 5);
  CHECK_FALSE(s.batches[0].batch.final);
  CHECK(s.batches[2].batch.final);
}

TEST_CASE("CUPTI tier: GPU records replace the hooks' records of the same calls") {
  profiler::FakeCuptiPort port;
  profiler::CuptiCollector::Options co;
  co.buffer_bytes = 1 << 16;
  co.buffer_count = 4;
  profiler::CuptiCollector cupti(port, co);
  REQUIRE(cupti.start(+[]() -> uint64_t { return 0; }).has_value());
  DrainOptions o = slow();
  Harness h(o, &cupti, &port);

  // Call 1: hooks saw it [1000, 2000]; CUPTI saw it too (API record inside, kernel with GPU time).
  REQUIRE(h.launch(nullptr, 1000, 2000));
  // Call 2: hooks saw it [3000, 4000]; CUPTI did not (a dropped record, say).
  REQUIRE(h.launch(nullptr, 3000, 4000));
  // A stream sync both saw; CUPTI's copy of it must not double the host's blocked time.
  h.sync(model::SyncKind::Stream, 5000, 9000);
  const uint64_t b = h.base;
  port.add(profiler::build::api(true, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, 11, kTid,
                                b + 1100, b + 1900));
  profiler::build::KernelArgs k;
  k.correlation = 11;
  k.start = b + 2500;
  k.end = b + 7000;
  k.name = "_Z4gemmv";
  port.add(profiler::build::kernel(k));
  port.add(profiler::build::api(true, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 12,
                                kTid, b + 5100, b + 8900));
  port.add(profiler::build::sync(12, b + 5100, b + 8900,
                                 CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE));
  h.cycle();
  REQUIRE(h.drain->finish(std::chrono::seconds(5)));

  auto s = h.sink->with([](auto& st) { return st; });
  std::vector<model::KernelExec> kernels;
  std::vector<std::string> names;
  std::vector<model::HostSync> syncs;
  for (const auto& b : s.batches) {
    kernels.insert(kernels.end(), b.batch.kernels.begin(), b.batch.kernels.end());
    names.insert(names.end(), b.kernel_names.begin(), b.kernel_names.end());
    syncs.insert(syncs.end(), b.batch.syncs.begin(), b.batch.syncs.end());
  }
  REQUIRE(kernels.size() == 2);
  // CUPTI's record of call 1, joined to its launch.
  auto cupti_k = std::find_if(kernels.begin(), kernels.end(), [](auto& x) { return x.start != 0; });
  REQUIRE(cupti_k != kernels.end());
  CHECK(cupti_k->start == int64_t(b) + 2500);
  CHECK(cupti_k->launch_start == int64_t(b) + 1100);
  CHECK(cupti_k->thread == kTid);
  CHECK(names[size_t(cupti_k - kernels.begin())] == "_Z4gemmv");
  // The hooks' record of call 2, the one CUPTI missed.
  auto hook_k = std::find_if(kernels.begin(), kernels.end(), [](auto& x) { return x.start == 0; });
  REQUIRE(hook_k != kernels.end());
  CHECK(hook_k->launch_start == int64_t(b) + 3000);
  REQUIRE(syncs.size() == 1);
  CHECK(syncs[0].start == int64_t(b) + 5000); // the hook's: the host's whole blocked time
  CHECK(h.drain->stats().cupti_records > 0);
  cupti.stop();
}

TEST_CASE("CUPTI tier: NVTX ranges, CUPTI's overhead and its dropped records reach the batches") {
  profiler::FakeCuptiPort port;
  profiler::CuptiCollector::Options co;
  co.buffer_bytes = 1 << 16;
  co.buffer_count = 4;
  profiler::CuptiCollector cupti(port, co);
  REQUIRE(cupti.start(+[]() -> uint64_t { return 0; }).has_value());
  Harness h(slow(), &cupti, &port);
  const uint64_t b = h.base;
  port.add(profiler::build::marker(1, CUPTI_ACTIVITY_FLAG_MARKER_START, b + 100, "step 7", kTid));
  port.add(
      profiler::build::marker(2, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, b + 150, "mark", kTid));
  port.add(profiler::build::marker(1, CUPTI_ACTIVITY_FLAG_MARKER_END, b + 900, nullptr, kTid));
  port.add(profiler::build::overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, b + 10, b + 260));
  port.dropped_ = 5; // CUPTI found no buffer for five records
  h.cycle();
  REQUIRE(h.drain->finish(std::chrono::seconds(5)));

  auto s = h.sink->with([](auto& st) { return st; });
  std::vector<model::Range> ranges;
  uint64_t dropped = 0, cupti_overhead = 0;
  for (const auto& sent : s.batches) {
    ranges.insert(ranges.end(), sent.batch.ranges.begin(), sent.batch.ranges.end());
    dropped += sent.batch.events_dropped;
    cupti_overhead = sent.batch.shim_cost.cupti_overhead_ns; // cumulative: the latest counts
  }
  REQUIRE(ranges.size() == 2);
  std::sort(ranges.begin(), ranges.end(), [](auto& x, auto& y) { return x.start < y.start; });
  CHECK(ranges[0].kind == model::RangeKind::Step);
  CHECK(ranges[0].step == 7);
  CHECK(ranges[0].start == int64_t(b) + 100);
  CHECK(ranges[0].end == int64_t(b) + 900);
  CHECK(ranges[0].thread == kTid);
  CHECK(ranges[1].kind == model::RangeKind::Annotation);
  CHECK(ranges[1].start == ranges[1].end);
  CHECK(dropped == 5);
  CHECK(cupti_overhead == 250);
  cupti.stop();
}

TEST_CASE("cuBLAS events become BlasCall records with their types, shape and stream") {
  Harness h(slow());
  RawEvent* e = h.slot->ring.tryReserve();
  REQUIRE(e);
  *e = RawEvent{};
  e->t0 = h.base + 1000;
  e->t1 = h.base + 4000;
  e->kind = EventKind::Blas;
  e->api = ApiId::cublasLtMatmul;
  e->sub = uint8_t(model::BlasApi::LtMatmul);
  e->u.blas.stream = 0x5000;
  e->u.blas.m = 1024;
  e->u.blas.n = 512;
  e->u.blas.k = 768;
  e->u.blas.batch = 4;
  e->u.blas.a_type = 14; // CUDA_R_16BF
  e->u.blas.b_type = 14;
  e->u.blas.c_type = 0;
  e->u.blas.scale_type = 0;
  e->u.blas.compute_type = 68; // CUBLAS_COMPUTE_32F
  e->u.blas.math_mode = 0xff;  // never set
  h.slot->ring.publish();
  // A failed call is an API call, not a BlasCall.
  e = h.slot->ring.tryReserve();
  REQUIRE(e);
  *e = RawEvent{};
  e->t0 = h.base + 5000;
  e->t1 = h.base + 6000;
  e->kind = EventKind::Blas;
  e->api = ApiId::cublasGemmEx;
  e->sub = uint8_t(model::BlasApi::GemmEx);
  e->result = 7; // CUBLAS_STATUS_INVALID_VALUE
  h.slot->ring.publish();
  h.cycle();
  std::vector<model::BlasCall> calls;
  std::vector<std::string> apis;
  h.sink->with([&](FakeBatchSink::State& st) {
    for (const auto& b : st.batches) {
      calls.insert(calls.end(), b.batch.blas_calls.begin(), b.batch.blas_calls.end());
      apis.insert(apis.end(), b.api_names.begin(), b.api_names.end());
    }
    return 0;
  });
  REQUIRE(calls.size() == 1);
  const auto& c = calls[0];
  CHECK(c.api == model::BlasApi::LtMatmul);
  CHECK(c.end - c.start == 3000);
  CHECK(c.thread == kTid);
  CHECK(c.stream != 0);
  CHECK(std::tie(c.m, c.n, c.k, c.batch) ==
        std::make_tuple(int64_t{1024}, int64_t{512}, int64_t{768}, int64_t{4}));
  CHECK(std::tie(c.a_type, c.b_type, c.c_type, c.scale_type, c.compute_type, c.math_mode) ==
        std::make_tuple(14, 14, 0, 0, 68, -1));
  CHECK(apis == std::vector<std::string>{"cublasGemmEx"});
}

TEST_CASE("Device samples are taken on the first cycle, then once per interval and at the end") {
  std::atomic<int> calls{0};
  g_sampler = [&](int64_t now, std::vector<model::DeviceSample>& out) {
    ++calls;
    model::DeviceSample s;
    s.time = now;
    s.process_used_bytes = 1 << 20;
    out.push_back(s);
  };
  {
    DrainOptions o = slow();
    o.device_sample_ms = 60000; // only the first and the final cycle sample
    Harness h(o);
    h.cycle();
    h.cycle();
    h.cycle();
    CHECK(calls.load() == 1);
    REQUIRE(h.drain->finish(std::chrono::seconds(10)));
    CHECK(calls.load() == 2);
    size_t samples = h.sink->count([](const auto& b) { return b.batch.device_samples.size(); });
    CHECK(samples == 2);
  }
  g_sampler = nullptr;
}
