// The hooks, linked into this test and forwarding into FakeCudart: results pass through unchanged,
// calls are recorded with the right fields, nested and internal calls are not, rings follow thread
// lifetimes, cuGetProcAddress hands out wrappers, and the shim starts lazily with the right tier.
#include "fake_batch_sink.h"
#include "fake_cudart/fake_cudart.h"
#include "interposer/cuda_declarations.h"
#include "interposer/recorder.h"
#include "interposer/runtime.h"
#include "profiler/cupti/fake_cupti_port.h"
#include "profiler/nvml/fake_nvml_port.h"

#include <catch2/catch.hpp>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

#include <dlfcn.h>

using namespace gpuwise;
using namespace gpuwise::interposer;
using gpuwise::interposer::testing::FakeBatchSink;
using model::MemoryKind;

#undef cuGetProcAddress

namespace {

FakeBatchSink* g_sink = nullptr;
profiler::FakeCuptiPort* g_port = nullptr;
// The threads the port factories ran on (they dlopen in production: see doStart).
std::vector<std::thread::id> g_port_factory_threads;

struct Options {
  bool cupti = false;
  CUptiResult subscribe = CUPTI_SUCCESS;
  CUptiResult kernels_enable = CUPTI_SUCCESS; // cuptiActivityEnable(CONCURRENT_KERNEL)'s answer
  uint32_t max_threads = 16;
  bool disabled = false;
  bool record_covered_launches = false;
};

void startWith(Options o) {
  REQUIRE(resetForTest(std::chrono::seconds(10)));
  Config c;
  c.endpoint = "fake:";
  c.cupti = o.cupti;
  c.batch_ms = 5;
  c.max_threads = o.max_threads;
  c.ring_events = 1024;
  c.disabled = o.disabled;
  c.record_covered_launches = o.record_covered_launches;
  c.log = LogLevel::Quiet;
  ShimDeps d;
  d.make_sink = [](const Config&, const model::NameTable& names, uint64_t, int64_t) {
    auto s = std::make_unique<FakeBatchSink>(&names);
    g_sink = s.get();
    return std::unique_ptr<BatchSink>(std::move(s));
  };
  d.make_nvml_port = [] {
    g_port_factory_threads.push_back(std::this_thread::get_id());
    return std::unique_ptr<profiler::NvmlPort>(std::make_unique<profiler::FakeNvmlPort>());
  };
  d.make_cupti_port = [o] {
    g_port_factory_threads.push_back(std::this_thread::get_id());
    auto p = std::make_unique<profiler::FakeCuptiPort>();
    p->subscribe_result_ = o.subscribe;
    p->enable_results_[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL] = o.kernels_enable;
    g_port = p.get();
    return std::unique_ptr<profiler::CuptiPort>(std::move(p));
  };
  g_sink = nullptr;
  g_port = nullptr;
  g_port_factory_threads.clear();
  configure(c, d);
}

// Everything the sink received so far, after making the drain go round.
struct Received {
  std::vector<model::KernelExec> kernels;
  std::vector<std::string> kernel_names;
  std::vector<model::Copy> copies;
  std::vector<model::Memset> memsets;
  std::vector<model::HostSync> syncs;
  std::vector<model::ApiCall> api_calls;
  std::vector<std::string> api_names;
  std::vector<model::Allocation> allocations;
  std::vector<transport::Hello> hellos;
  model::ShimCost cost; // the latest batch's
};
Received received() {
  REQUIRE(drainAndWait(std::chrono::seconds(10), 2));
  REQUIRE(g_sink);
  return g_sink->with([](auto& s) {
    Received r;
    r.hellos = s.hellos;
    for (const auto& b : s.batches) {
      auto add = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
      add(r.kernels, b.batch.kernels);
      add(r.kernel_names, b.kernel_names);
      add(r.copies, b.batch.copies);
      add(r.memsets, b.batch.memsets);
      add(r.syncs, b.batch.syncs);
      add(r.api_calls, b.batch.api_calls);
      add(r.api_names, b.api_names);
      add(r.allocations, b.batch.allocations);
      r.cost = b.batch.shim_cost;
    }
    return r;
  });
}

void stubA() {}
void stubB() {}

} // namespace

TEST_CASE("The shim starts on the first CUDA call, not before") {
  startWith({});
  CHECK(shimStatus().mode == kModeUnstarted);
  // Registration (static constructors) does not start anything.
  __cudaRegisterFunction(nullptr, reinterpret_cast<const char*>(&stubA), nullptr, "_Z5stubAv", -1,
                         nullptr, nullptr, nullptr, nullptr, nullptr);
  CHECK(shimStatus().mode == kModeUnstarted);
  CHECK(fakeCalls("__cudaRegisterFunction") == 1);
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 256) == cudaSuccess);
  CHECK(p != nullptr);
  auto st = shimStatus();
  CHECK(st.mode == kModeRecording);
  CHECK(st.session);
  CHECK(st.tier == model::CollectionTier::Interposer);
  CHECK(st.tier_reason == "GPUWISE_CUPTI=0");
  CHECK(cudaFree(p) == cudaSuccess);
}

namespace {

// The allocations and frees of the test below, with sizes (pinned memory included), and the API
// calls that stay visible: failed calls, graph launches, allocation calls.
void checkAllocationsAndApiCalls(const Received& r, void* dev, void* pinned, CUdeviceptr dptr) {
  auto alloc = [&](uint64_t address, bool is_free) {
    return std::find_if(r.allocations.begin(), r.allocations.end(),
                        [&](auto& a) { return a.address == address && a.is_free == is_free; });
  };
  auto dev_alloc = alloc(reinterpret_cast<uint64_t>(dev), false);
  REQUIRE(dev_alloc != r.allocations.end());
  CHECK(dev_alloc->bytes == (1u << 20));
  CHECK(dev_alloc->kind == MemoryKind::Device);
  auto dev_free = alloc(reinterpret_cast<uint64_t>(dev), true);
  REQUIRE(dev_free != r.allocations.end());
  CHECK(dev_free->bytes == (1u << 20));
  auto pin_free = alloc(reinterpret_cast<uint64_t>(pinned), true);
  REQUIRE(pin_free != r.allocations.end());
  CHECK(pin_free->kind == MemoryKind::Pinned);
  CHECK(pin_free->bytes == 8192);
  CHECK(alloc(uint64_t(dptr), false) != r.allocations.end());
  auto api = [&](const char* name) {
    return std::count(r.api_names.begin(), r.api_names.end(), name);
  };
  CHECK(api("cudaMalloc") == 2);       // one good, one failed
  CHECK(api("cudaLaunchKernel") == 1); // the failed launch
  CHECK(api("cuMemAlloc_v2") == 2);
  CHECK(api("cudaGraphLaunch") == 1);
  CHECK(r.allocations.size() == 5); // dev, pinned, dptr allocated; pinned and dev freed
}

// The Hello described this process and the (fake) devices, queried on the drain thread.
void checkHello(const Received& r) {
  REQUIRE(r.hellos.size() == 1);
  const auto& h = r.hellos[0];
  CHECK(h.session_id == shimStatus().session_id);
  CHECK(h.process.pid == getpid());
  CHECK(h.process.command.find("interposer_hooks_test") != std::string::npos);
  CHECK(h.process.tier == model::CollectionTier::Interposer);
  CHECK(h.simulated); // FakeCudart exports gwsimIsSimulated() == 1
  REQUIRE(h.devices.size() == 2);
  CHECK(h.devices[0].name == "Fake GPU 0");
  CHECK(h.devices[0].sm_count == 132);
  CHECK(h.devices[0].compute_major == 9);
  CHECK(h.devices[0].max_threads_per_sm == 2048);
}

} // namespace

TEST_CASE("Hooks forward, return the real result unchanged, and record what happened") {
  startWith({});
  long mallocs = fakeCalls("cudaMalloc");
  void* dev = nullptr;
  REQUIRE(cudaMalloc(&dev, 1 << 20) == cudaSuccess);
  CHECK(fakeCalls("cudaMalloc") == mallocs + 1);
  void* fail = nullptr;
  CHECK(cudaMalloc(&fail, kFakeFailBytes) == cudaErrorMemoryAllocation);

  std::vector<char> pageable(4096, 1);
  void* pinned = nullptr;
  REQUIRE(cudaMallocHost(&pinned, 8192) == cudaSuccess);
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x5000);
  CHECK(cudaMemcpy(dev, pageable.data(), 4096, cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK(cudaMemcpyAsync(dev, static_cast<char*>(pinned) + 100, 2048, cudaMemcpyHostToDevice,
                        stream) == cudaSuccess);
  CHECK(cudaMemcpyAsync(pinned, dev, 1024, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  CHECK(cudaMemset(dev, 0, 512) == cudaSuccess);
  CHECK(cudaMemsetAsync(dev, 0, 256, stream) == cudaSuccess);
  CHECK(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);

  // Launches: the classic entry point with a registered stub, and CUDA 13's <<<>>> path.
  __cudaRegisterFunction(nullptr, reinterpret_cast<const char*>(&stubA), nullptr, "_Z5stubAv", -1,
                         nullptr, nullptr, nullptr, nullptr, nullptr);
  __cudaRegisterFunction(nullptr, reinterpret_cast<const char*>(&stubB), nullptr, "_Z5stubBv", -1,
                         nullptr, nullptr, nullptr, nullptr, nullptr);
  CHECK(cudaSetDevice(1) == cudaSuccess);
  CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(&stubA), dim3(8, 2), dim3(128), nullptr, 64,
                         stream) == cudaSuccess);
  cudaKernel_t handle = nullptr;
  REQUIRE(__cudaGetKernel(&handle, reinterpret_cast<const void*>(&stubB)) == cudaSuccess);
  CHECK(__cudaLaunchKernel(handle, dim3(3), dim3(32, 4), nullptr, 0, nullptr) == cudaSuccess);
  CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(&stubA), dim3(0), dim3(1), nullptr, 0,
                         nullptr) == cudaErrorInvalidConfiguration);
  CHECK(cudaSetDevice(0) == cudaSuccess);
  // The driver path: a CUfunction named through cuFuncGetName.
  CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(0x1234), 1, 1, 1, 64, 1, 1, 0, nullptr, nullptr,
                       nullptr) == CUDA_SUCCESS);
  CUdeviceptr dptr = 0;
  CHECK(cuMemAlloc_v2(&dptr, 4096) == CUDA_SUCCESS);
  CHECK(cuMemAlloc_v2(&dptr, kFakeFailBytes) == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(cuMemcpyHtoD_v2(dptr, pageable.data(), 128) == CUDA_SUCCESS);
  CHECK(cuCtxSynchronize() == CUDA_SUCCESS);
  CHECK(cudaGraphLaunch(reinterpret_cast<cudaGraphExec_t>(0x99), stream) == cudaSuccess);
  CHECK(cudaFreeHost(pinned) == cudaSuccess);
  CHECK(cudaFree(dev) == cudaSuccess);

  Received r = received();
  // Kernels: named, configured, on the right device; the failed launch is not a kernel.
  REQUIRE(r.kernels.size() == 3);
  CHECK(r.kernel_names[0] == "_Z5stubAv");
  CHECK(r.kernels[0].grid == model::Dim3{8, 2, 1});
  CHECK(r.kernels[0].block == model::Dim3{128, 1, 1});
  CHECK(r.kernels[0].dynamic_shared_bytes == 64);
  CHECK(r.kernels[0].device == 1);
  CHECK(r.kernels[0].thread == uint32_t(gettid()));
  CHECK(r.kernels[0].launch_end >= r.kernels[0].launch_start);
  CHECK(r.kernel_names[1] == "_Z5stubBv"); // via the kernel handle
  CHECK(r.kernels[1].block == model::Dim3{32, 4, 1});
  CHECK(r.kernel_names[2] == "triton_fused_kernel");
  CHECK(r.kernels[2].device == 0);
  // Copies: direction, pinned vs pageable host side, sync vs async.
  REQUIRE(r.copies.size() == 4);
  CHECK(r.copies[0].direction == model::CopyDirection::HostToDevice);
  CHECK(r.copies[0].src == MemoryKind::Pageable);
  CHECK(r.copies[0].dst == MemoryKind::Device);
  CHECK(r.copies[0].bytes == 4096);
  CHECK_FALSE(r.copies[0].async);
  CHECK(r.copies[1].src == MemoryKind::Pinned); // inside the cudaMallocHost range
  CHECK(r.copies[1].async);
  CHECK(r.copies[1].stream != 0);
  CHECK(r.copies[2].direction == model::CopyDirection::DeviceToHost);
  CHECK(r.copies[2].dst == MemoryKind::Pinned);
  CHECK(r.copies[3].src == MemoryKind::Pageable); // cuMemcpyHtoD_v2 from the pageable vector
  REQUIRE(r.memsets.size() == 2);
  CHECK(r.memsets[0].bytes == 512);
  CHECK_FALSE(r.memsets[0].async);
  CHECK(r.memsets[1].async);
  // Host blocked time: the synchronous copies and memset, and the explicit syncs.
  auto count_kind = [&](model::SyncKind k) {
    return std::count_if(r.syncs.begin(), r.syncs.end(), [&](auto& s) { return s.kind == k; });
  };
  CHECK(count_kind(model::SyncKind::SyncCopy) == 3);
  CHECK(count_kind(model::SyncKind::Stream) == 1);
  CHECK(count_kind(model::SyncKind::Device) == 2); // cudaDeviceSynchronize and cuCtxSynchronize
  checkAllocationsAndApiCalls(r, dev, pinned, dptr);
  checkHello(r);
}

TEST_CASE("Nested calls and the shim's own threads are forwarded but not recorded") {
  startWith({});
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, 64) == cudaSuccess); // started
  size_t before = received().api_calls.size();
  long calls = fakeCalls("cudaMemset");
  t_state.in_hook = 1; // as if inside another hooked call
  CHECK(cudaMemset(p, 0, 64) == cudaSuccess);
  t_state.in_hook = 0;
  cudaError_t internal_result = cudaErrorUnknown;
  std::thread internal([&] {
    t_state.internal = 1;
    internal_result = cudaMemset(p, 0, 64);
  });
  internal.join();
  CHECK(internal_result == cudaSuccess);
  CHECK(fakeCalls("cudaMemset") == calls + 2);
  Received r = received();
  CHECK(r.memsets.empty());
  CHECK(r.api_calls.size() == before);
  CHECK(cudaFree(p) == cudaSuccess);
}

TEST_CASE("Each thread records into its own ring, released at exit and reused") {
  // The ring pool is process-wide, sized by the first configuration: 16 rings.
  startWith({});
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, 64) == cudaSuccess); // main thread holds one ring
  // Twenty threads one after another: each claims a ring, exits, and its ring is recycled.
  // (No Catch2 assertions on worker threads: Catch2 is not thread-safe.)
  std::vector<uint32_t> tids;
  std::atomic<int> failures{0};
  for (int i = 0; i < 20; ++i) {
    std::thread t([&] {
      tids.push_back(uint32_t(gettid()));
      if (cudaMemsetAsync(p, 0, 64, nullptr) != cudaSuccess) failures.fetch_add(1);
    });
    t.join();
    REQUIRE(drainAndWait(std::chrono::seconds(10), 1)); // lets the drain recycle the ring
  }
  Received r = received();
  CHECK(r.memsets.size() == 20);
  for (size_t i = 0; i < r.memsets.size(); ++i)
    CHECK(r.memsets[i].thread == tids[i]);
  CHECK(shimStatus().unringed_drops == 0);
  // More live threads than rings: the extra threads' events are dropped and counted.
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> live;
  constexpr int kLive = 20; // the main thread holds one of 16 rings: at least 5 threads miss
  for (int i = 0; i < kLive; ++i) {
    live.emplace_back([&] {
      // Zero bytes: the calls are what counts, and the threads do not write the same memory.
      if (cudaMemsetAsync(p, 0, 0, nullptr) != cudaSuccess) failures.fetch_add(1);
      ready.fetch_add(1);
      while (!go.load())
        std::this_thread::yield();
    });
  }
  while (ready.load() < kLive)
    std::this_thread::yield();
  go = true;
  for (auto& t : live)
    t.join();
  CHECK(failures.load() == 0);
  Received r2 = received();
  CHECK(r2.memsets.size() - 20 + shimStatus().unringed_drops == kLive);
  CHECK(shimStatus().unringed_drops >= 5);
  CHECK(shimStatus().drain.dropped_reported >= shimStatus().unringed_drops);
  CHECK(cudaFree(p) == cudaSuccess);
}

TEST_CASE("cuGetProcAddress hands out our wrappers for hooked entry points only") {
  startWith({});
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status;
  REQUIRE(cuGetProcAddress_v2("cuLaunchKernel", &fn, 13000, 0, &status) == CUDA_SUCCESS);
  CHECK(fn == reinterpret_cast<void*>(&cuLaunchKernel));
  REQUIRE(cuGetProcAddress_v2("cuMemAlloc", &fn, 13000, 0, &status) == CUDA_SUCCESS);
  CHECK(fn == reinterpret_cast<void*>(&cuMemAlloc_v2));
  REQUIRE(cuGetProcAddress_v2("cuFuncGetName", &fn, 13000, 0, &status) == CUDA_SUCCESS);
  CHECK(fn == dlsym(RTLD_DEFAULT, "cuFuncGetName")); // not hooked: the real pointer
  CHECK(cuGetProcAddress_v2("cuNoSuchThing", &fn, 13000, 0, &status) == CUDA_ERROR_NOT_FOUND);
  CHECK(fakeCalls("cuGetProcAddress_v2") == 4);
  // Calling through the handed-out pointer records like a direct call.
  REQUIRE(cuGetProcAddress_v2("cuLaunchKernel", &fn, 13000, 0, &status) == CUDA_SUCCESS);
  auto launch = reinterpret_cast<decltype(&cuLaunchKernel)>(fn);
  CHECK(launch(reinterpret_cast<CUfunction>(0x1), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr) ==
        CUDA_SUCCESS);
  CHECK(received().kernels.size() == 1);
}

TEST_CASE("A hook whose real function is missing answers 'not initialised'") {
  startWith({});
  // FakeCudart has neither of these.
  CHECK(cuLaunchKernelEx(nullptr, nullptr, nullptr, nullptr) == CUDA_ERROR_NOT_INITIALIZED);
  CHECK(cudaLaunchKernelExC_ptsz(nullptr, nullptr, nullptr) == cudaErrorInitializationError);
}

TEST_CASE("Disabled: hooks only forward, nothing starts") {
  startWith({.disabled = true});
  long calls = fakeCalls("cudaMalloc");
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 64) == cudaSuccess);
  CHECK(fakeCalls("cudaMalloc") == calls + 1);
  CHECK(shimStatus().mode == kModeOff);
  CHECK_FALSE(shimStatus().session);
  CHECK(cudaFree(p) == cudaSuccess);
}

TEST_CASE("CUPTI tier when CUPTI is free; interposer tier, with the reason, when it is held") {
  startWith({.cupti = true});
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, 64) == cudaSuccess);
  auto st = shimStatus();
  CHECK(st.tier == model::CollectionTier::Cupti);
  REQUIRE(g_port);
  CHECK(g_port->enabled_kinds_.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  REQUIRE(g_port->timestamp_);
  // CUPTI is told to stamp with our clock: CLOCK_MONOTONIC ns.
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  int64_t mono = int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  CHECK(std::llabs(int64_t(g_port->timestamp_()) - mono) < 50000000);
  Received r = received();
  REQUIRE(r.hellos.size() == 1);
  CHECK(r.hellos[0].process.tier == model::CollectionTier::Cupti);
  CHECK(cudaFree(p) == cudaSuccess);

  startWith({.cupti = true, .subscribe = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED});
  REQUIRE(cudaMalloc(&p, 64) == cudaSuccess);
  st = shimStatus();
  CHECK(st.tier == model::CollectionTier::Interposer);
  CHECK(st.tier_reason.find("another subscriber") != std::string::npos);
  r = received();
  REQUIRE(r.hellos.size() == 1);
  CHECK(r.hellos[0].process.tier == model::CollectionTier::Interposer);
  CHECK(r.hellos[0].process.tier_reason == st.tier_reason);
  CHECK(cudaFree(p) == cudaSuccess);
  CHECK(resetForTest(std::chrono::seconds(10)));
}

TEST_CASE(
    "Launches CUPTI records are only counted by the hooks; LAUNCH_DETAIL=full records them too") {
  // The CUPTI tier: the fake port covers launches, so the launch hooks take the counting path.
  startWith({.cupti = true});
  auto launch = [] {
    return cudaLaunchKernel(reinterpret_cast<const void*>(&stubA), dim3(8), dim3(128), nullptr, 0,
                            nullptr);
  };
  REQUIRE(launch() == cudaSuccess); // starts the shim
  for (int i = 0; i < 99; ++i)
    REQUIRE(launch() == cudaSuccess);
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, 64) == cudaSuccess); // still recorded in full
  Received r = received();
  CHECK(shimStatus().tier == model::CollectionTier::Cupti);
  // The first launch started the shim before the tier was known and was recorded; the rest counted.
  // (Recorded launches wait in the coverage tracker for CUPTI's verdict, so none is emitted yet.)
  CHECK(r.cost.launches_counted == 99);
  CHECK(shimStatus().drain.events_drained == 2); // the first launch and the allocation
  CHECK(shimStatus().drain.launches_counted == r.cost.launches_counted);
  CHECK(r.allocations.size() == 1);
  CHECK(r.cost.events_recorded == 2);
  // The estimate: calibrated per-call costs, a positive overhead, the session's wall time.
  CHECK(r.cost.full_call_ns > 0);
  CHECK(r.cost.counted_call_ns > 0);
  CHECK(r.cost.full_call_ns < 10000);
  CHECK(r.cost.session_ns > 0);
  CHECK(r.cost.overhead_ns > 0);
  CHECK(r.cost.overhead_ns < r.cost.session_ns);
  CHECK(r.cost.budget_ratio == Approx(0.01));
  CHECK(cudaFree(p) == cudaSuccess);

  startWith({.cupti = true, .record_covered_launches = true});
  for (int i = 0; i < 100; ++i)
    REQUIRE(launch() == cudaSuccess);
  r = received();
  // (No batch yet: recorded launches wait in the coverage tracker for CUPTI's verdict.)
  CHECK(shimStatus().drain.launches_counted == 0);
  CHECK(shimStatus().drain.events_drained == 100);

  // The interposer tier records every launch: there is nothing else to learn them from.
  startWith({.cupti = false});
  for (int i = 0; i < 100; ++i)
    REQUIRE(launch() == cudaSuccess);
  r = received();
  CHECK(r.cost.launches_counted == 0);
  CHECK(r.kernels.size() == 100);
  CHECK(resetForTest(std::chrono::seconds(10)));
}

TEST_CASE("A tool holding CUPTI's activity: the shim gives CUPTI back, records with its hooks, "
          "and the Hello says why") {
  // Subscribing worked, but another tool (a profiler attached earlier) holds kernel activity.
  startWith({.cupti = true, .kernels_enable = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED});
  auto launch = [] {
    return cudaLaunchKernel(reinterpret_cast<const void*>(&stubA), dim3(8), dim3(128), nullptr, 0,
                            nullptr);
  };
  for (int i = 0; i < 10; ++i)
    REQUIRE(launch() == cudaSuccess);
  auto st = shimStatus();
  CHECK(st.tier == model::CollectionTier::Interposer);
  CHECK(st.tier_reason.find("another subscriber") != std::string::npos);
  CHECK(st.tier_reason.find("cuptiActivityEnable(CONCURRENT_KERNEL)") != std::string::npos);
  REQUIRE(g_port);
  CHECK_FALSE(g_port->subscribed_); // unsubscribed again: the other tool is undisturbed
  CHECK(g_port->enabled_kinds_.empty());
  CHECK(g_port->runtime_cbids_.empty());
  Received r = received();
  REQUIRE(r.hellos.size() == 1);
  CHECK(r.hellos[0].process.tier == model::CollectionTier::Interposer);
  CHECK(r.hellos[0].process.tier_reason == st.tier_reason);
  CHECK(r.kernels.size() == 10); // every launch recorded by the hooks, host times only
  for (const auto& k : r.kernels)
    CHECK(k.start == 0);
  CHECK(r.cost.launches_counted == 0);

  // Profiling restricted to administrators: the same fallback, a different reason.
  startWith({.cupti = true, .subscribe = CUPTI_ERROR_INSUFFICIENT_PRIVILEGES});
  REQUIRE(launch() == cudaSuccess);
  st = shimStatus();
  CHECK(st.tier == model::CollectionTier::Interposer);
  CHECK(st.tier_reason.find("privileges") != std::string::npos);
  CHECK(resetForTest(std::chrono::seconds(10)));
}

TEST_CASE("The application's own CUPTI client: the shim hands CUPTI over, then records launches") {
  startWith({.cupti = true});
  auto launch = [] {
    return cudaLaunchKernel(reinterpret_cast<const void*>(&stubA), dim3(8), dim3(128), nullptr, 0,
                            nullptr);
  };
  for (int i = 0; i < 20; ++i)
    REQUIRE(launch() == cudaSuccess);
  REQUIRE(shimStatus().tier == model::CollectionTier::Cupti);
  REQUIRE(g_port);
  REQUIRE(g_port->subscribed_);
  REQUIRE(received().hellos.size() == 1); // the CUPTI tier's Hello is out

  // What torch.profiler's start does: the hook hands over, then calls the real cuptiSubscribe
  // (no libcupti in this test program: "not initialised", returned unchanged).
  CUpti_SubscriberHandle handle = nullptr;
  CHECK(cuptiSubscribe(&handle, nullptr, nullptr) == CUPTI_ERROR_NOT_INITIALIZED);
  auto st = shimStatus();
  CHECK(st.tier == model::CollectionTier::Interposer);
  CHECK(st.tier_reason.rfind("handed to the application's own CUPTI client ", 0) == 0);
  CHECK(st.tier_reason.find("(it called cuptiSubscribe, as torch.profiler does)") !=
        std::string::npos);
  CHECK_FALSE(g_port->subscribed_);
  CHECK(g_port->enabled_kinds_.empty());
  // CUPTI's own default clock is back (CLOCK_REALTIME) for whoever takes it next.
  REQUIRE(g_port->timestamp_);
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const int64_t real = int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  CHECK(std::llabs(int64_t(g_port->timestamp_()) - real) < 50000000);

  // From here the hooks record every launch, with nothing for CUPTI to add.
  for (int i = 0; i < 30; ++i)
    REQUIRE(launch() == cudaSuccess);
  Received r = received();
  CHECK(r.cost.launches_counted == 19); // the first launch started the shim and was recorded
  CHECK(r.kernels.size() == 31);
  REQUIRE(r.hellos.size() == 2);
  CHECK(r.hellos[0].process.tier == model::CollectionTier::Cupti);
  CHECK(r.hellos[1].process.tier == model::CollectionTier::Interposer);
  CHECK(r.hellos[1].process.tier_reason == st.tier_reason);

  // Asking again, or registering buffer callbacks next, changes nothing more.
  CHECK(cuptiActivityRegisterCallbacks(nullptr, nullptr) == CUPTI_ERROR_NOT_INITIALIZED);
  CHECK(shimStatus().tier_reason == st.tier_reason);

  // An application that starts its client before its first CUDA call keeps CUPTI: the session
  // that starts then never touches it.
  startWith({.cupti = true});
  CHECK(cuptiSubscribe(&handle, nullptr, nullptr) == CUPTI_ERROR_NOT_INITIALIZED);
  CHECK(shimStatus().mode == kModeUnstarted);
  REQUIRE(launch() == cudaSuccess);
  st = shimStatus();
  CHECK(st.tier == model::CollectionTier::Interposer);
  CHECK(st.tier_reason == "the application runs its own CUPTI client (it called cuptiSubscribe, as "
                          "torch.profiler does): CUPTI is left to it");
  CHECK_FALSE(g_port);
  CHECK(resetForTest(std::chrono::seconds(10)));
}

TEST_CASE("Libraries are loaded on the thread that starts the shim, never on the drain thread "
          "(a fork during a drain-thread dlopen aborts the child in ld.so)") {
  startWith({.cupti = true});
  void* p = nullptr;
  CHECK(cudaMalloc(&p, 256) == cudaSuccess);
  received(); // the drain has gone round: Hello sent, devices and NVML asked
  REQUIRE(g_port_factory_threads.size() == 2); // CUPTI's port and NVML's, once each
  for (auto id : g_port_factory_threads)
    CHECK(id == std::this_thread::get_id());
  CHECK(cudaFree(p) == cudaSuccess);
}
