// The CUPTI stand-in driven the way an activity client drives the real one: record kinds and
// fields in the real CUPTI 13 structs, correlation with API records and callbacks, the virtual
// timeline's ordering and timestamps, buffer delivery, drops, the timestamp callback, graphs.
#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "tests/simdevice/cupti_recorder.h"
#include "tests/simdevice/test_support.h"

extern "C" int gwsimSetKernelWork(const void* func, double work, int registers_per_thread);

using gwsim_test::CuptiRecorder;
using gwsim_test::monotonicNs;

namespace {

volatile int g_sink = 0;
void quickStub() {
  g_sink = 1;
} // default cost: a couple of microseconds
void workStub() {
  g_sink = 2;
} // 100 us with 264 blocks of 128 threads
void longStub() {
  g_sink = 3;
} // 5 ms with 132 blocks of 256 threads
void flushStub() {
  g_sink = 4;
} // 50 ms with 132 blocks of 256 threads

constexpr uint64_t kLaunchLatencyNs = 4000;

const void* fn(void (*f)()) {
  static const bool registered = [] {
    gwsim_test::registerKernel(reinterpret_cast<const void*>(&quickStub), "_Z12quick_kernelv");
    gwsim_test::registerKernel(reinterpret_cast<const void*>(&workStub), "_Z11work_kernelPfi");
    gwsim_test::registerKernel(reinterpret_cast<const void*>(&longStub), "_Z11long_kernelv");
    gwsim_test::registerKernel(reinterpret_cast<const void*>(&flushStub), "_Z12flush_kernelv");
    // Full waves at fill 1: duration = 2 us x work.
    gwsimSetKernelWork(reinterpret_cast<const void*>(&workStub), 50, 0);
    gwsimSetKernelWork(reinterpret_cast<const void*>(&longStub), 2500, 0);
    gwsimSetKernelWork(reinterpret_cast<const void*>(&flushStub), 25000, 0);
    return true;
  }();
  (void)registered;
  return reinterpret_cast<const void*>(f);
}

void launch(void (*f)(), dim3 grid, dim3 block, cudaStream_t stream = nullptr, size_t shared = 0) {
  REQUIRE(cudaLaunchKernel(fn(f), grid, block, nullptr, shared, stream) == cudaSuccess);
}

CuptiRecorder& recorder() {
  return CuptiRecorder::instance();
}

// Enables activity kinds for one test case and starts from an empty record list.
struct Kinds {
  std::vector<CUpti_ActivityKind> kinds;
  Kinds(std::initializer_list<CUpti_ActivityKind> list) : kinds(list) {
    fn(quickStub);
    recorder().reset();
    for (CUpti_ActivityKind kind : kinds)
      REQUIRE(cuptiActivityEnable(kind) == CUPTI_SUCCESS);
  }
  ~Kinds() {
    for (CUpti_ActivityKind kind : kinds)
      cuptiActivityDisable(kind);
    cudaDeviceSynchronize();
    recorder().reset();
  }
};

using Kernel = CUpti_ActivityKernel10;
using Api = CUpti_ActivityAPI;

std::vector<Kernel> kernelsOf(const std::vector<gwsim_test::ActivityRecord>& all) {
  auto kernels = recorder().records<Kernel>(all, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::sort(kernels.begin(), kernels.end(),
            [](const Kernel& a, const Kernel& b) { return a.start < b.start; });
  return kernels;
}

const Api* apiFor(const std::vector<Api>& apis, uint32_t correlation) {
  for (const Api& api : apis) {
    if (api.correlationId == correlation) return &api;
  }
  return nullptr;
}

uint32_t streamId(cudaStream_t stream) {
  uint32_t id = 0;
  REQUIRE(cuptiGetStreamIdEx(nullptr, stream, 0, &id) == CUPTI_SUCCESS);
  return id;
}

} // namespace

TEST_CASE("a kernel record carries its launch and sits on the timeline after the launch latency") {
  Kinds on{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME};
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  const uint64_t before = monotonicNs();
  launch(workStub, dim3(264), dim3(128), stream, 1024);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  const uint64_t after = monotonicNs();
  const auto all = recorder().flush();
  const auto kernels = kernelsOf(all);
  REQUIRE(kernels.size() == 1);
  const Kernel& k = kernels[0];
  CHECK(std::string(k.name) == "_Z11work_kernelPfi");
  CHECK(k.gridX == 264);
  CHECK(k.gridY == 1);
  CHECK(k.gridZ == 1);
  CHECK(k.blockX == 128);
  CHECK(k.dynamicSharedMemory == 1024);
  CHECK(k.staticSharedMemory == 0);
  CHECK(k.registersPerThread == 32);
  CHECK(k.deviceId == 0);
  CHECK(k.contextId == 1);
  CHECK(k.streamId == streamId(stream));
  CHECK(k.streamId != 7); // 7 is the legacy default stream
  CHECK(k.graphId == 0);
  CHECK(k.graphNodeId == 0);
  CHECK(k.gridId > 0);
  CHECK(k.launchType == CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR);
  CHECK(k.queued <= k.submitted);
  CHECK(k.submitted <= k.start);
  CHECK(double(k.end - k.start) == Approx(100'000).epsilon(0.04)); // 2 us x work 50, +-3 % jitter
  CHECK(k.end <= after);

  const auto apis = recorder().records<Api>(all, CUPTI_ACTIVITY_KIND_RUNTIME);
  const Api* api = apiFor(apis, k.correlationId);
  REQUIRE(api != nullptr);
  CHECK(api->cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  CHECK(api->start >= before);
  CHECK(k.start >= api->start + kLaunchLatencyNs);
  CHECK(api->returnValue == cudaSuccess);
  bool saw_sync = false;
  for (const Api& a : apis)
    saw_sync |= a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020 && a.end <= after;
  CHECK(saw_sync);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("one stream runs its kernels in order; non-blocking streams overlap") {
  Kinds on{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  cudaStream_t a = nullptr, b = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking) == cudaSuccess);
  for (int i = 0; i < 4; ++i)
    launch(longStub, dim3(132), dim3(256), a);
  launch(longStub, dim3(132), dim3(256), b);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto kernels = kernelsOf(recorder().flush());
  REQUIRE(kernels.size() == 5);
  std::vector<Kernel> on_a;
  const Kernel* on_b = nullptr;
  for (const Kernel& k : kernels) {
    if (k.streamId == streamId(a)) on_a.push_back(k);
    if (k.streamId == streamId(b)) on_b = &k;
  }
  REQUIRE(on_a.size() == 4);
  REQUIRE(on_b != nullptr);
  for (size_t i = 1; i < on_a.size(); ++i) {
    CHECK(on_a[i].start >= on_a[i - 1].end);
    CHECK(on_a[i].correlationId > on_a[i - 1].correlationId);
  }
  CHECK(on_b->start < on_a.back().end); // b did not wait for a
  REQUIRE(cudaStreamDestroy(a) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(b) == cudaSuccess);
}

TEST_CASE("the legacy default stream serialises with blocking streams only") {
  Kinds on{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  cudaStream_t blocking = nullptr, non_blocking = nullptr;
  REQUIRE(cudaStreamCreate(&blocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&non_blocking, cudaStreamNonBlocking) == cudaSuccess);
  launch(longStub, dim3(132), dim3(256), blocking);
  launch(quickStub, dim3(1), dim3(32), nullptr);  // waits for `blocking`
  launch(quickStub, dim3(1), dim3(32), blocking); // waits for the legacy stream
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  launch(flushStub, dim3(132), dim3(256), non_blocking); // 50 ms: outlasts any host preemption
  launch(quickStub, dim3(1), dim3(32), nullptr);         // does not wait for `non_blocking`
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  auto kernels =
      recorder().records<Kernel>(recorder().flush(), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  REQUIRE(kernels.size() == 5);
  std::sort(kernels.begin(), kernels.end(),
            [](const Kernel& x, const Kernel& y) { return x.correlationId < y.correlationId; });
  CHECK(kernels[1].streamId == 7);
  CHECK(kernels[1].start >= kernels[0].end);
  CHECK(kernels[2].start >= kernels[1].end);
  CHECK(kernels[4].streamId == 7);
  CHECK(kernels[4].start < kernels[3].end);
  REQUIRE(cudaStreamDestroy(blocking) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(non_blocking) == cudaSuccess);
}

TEST_CASE("copy records say direction, memory kinds and async; pageable copies are slower") {
  Kinds on{CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_RUNTIME};
  constexpr size_t kBytes = 1 << 20;
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  void *device = nullptr, *device2 = nullptr, *pinned = nullptr;
  std::vector<char> pageable(kBytes, 7);
  REQUIRE(cudaMalloc(&device, kBytes) == cudaSuccess);
  REQUIRE(cudaMalloc(&device2, kBytes) == cudaSuccess);
  REQUIRE(cudaMallocHost(&pinned, kBytes) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(device, pinned, kBytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(device, pageable.data(), kBytes, cudaMemcpyHostToDevice, stream) ==
          cudaSuccess);
  REQUIRE(cudaMemcpy(pinned, device, kBytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  REQUIRE(cudaMemcpy(device2, device, kBytes, cudaMemcpyDeviceToDevice) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto all = recorder().flush();
  auto copies = recorder().records<CUpti_ActivityMemcpy6>(all, CUPTI_ACTIVITY_KIND_MEMCPY);
  REQUIRE(copies.size() == 4);
  std::sort(copies.begin(), copies.end(),
            [](const auto& x, const auto& y) { return x.correlationId < y.correlationId; });
  const auto& pinned_h2d = copies[0];
  const auto& pageable_h2d = copies[1];
  const auto& d2h = copies[2];
  const auto& d2d = copies[3];
  CHECK(pinned_h2d.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  CHECK(pinned_h2d.srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  CHECK(pinned_h2d.dstKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  CHECK(pinned_h2d.flags == CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
  CHECK(pinned_h2d.bytes == kBytes);
  CHECK(pinned_h2d.streamId == streamId(stream));
  CHECK(pageable_h2d.srcKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
  CHECK(pageable_h2d.start >= pinned_h2d.end); // same stream, same copy engine
  CHECK(d2h.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
  CHECK(d2h.dstKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  CHECK(d2h.flags == 0); // synchronous cudaMemcpy
  CHECK(d2h.streamId == 7);
  CHECK(d2d.copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
  // Bandwidths: pinned 50 GB/s, pageable 12 GB/s (or slower: the host stages the bytes), D2D 2
  // TB/s.
  const double pinned_ns = double(pinned_h2d.end - pinned_h2d.start);
  const double pageable_ns = double(pageable_h2d.end - pageable_h2d.start);
  CHECK(pinned_ns == Approx(1500 + kBytes / 50.0).epsilon(0.04));
  CHECK(pageable_ns >= (1500 + kBytes / 12.0) * 0.96);
  CHECK(pageable_ns > 3 * pinned_ns);
  CHECK(double(d2d.end - d2d.start) < pinned_ns / 5);
  for (const auto& copy : copies) {
    CHECK(copy.correlationId == copy.runtimeCorrelationId);
    CHECK(apiFor(recorder().records<Api>(all, CUPTI_ACTIVITY_KIND_RUNTIME), copy.correlationId) !=
          nullptr);
  }
  REQUIRE(cudaFree(device) == cudaSuccess);
  REQUIRE(cudaFree(device2) == cudaSuccess);
  REQUIRE(cudaFreeHost(pinned) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("memset and memory records describe the operation and the allocation") {
  Kinds on{CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMORY2};
  void *device = nullptr, *pinned = nullptr;
  REQUIRE(cudaMalloc(&device, 3 << 20) == cudaSuccess);
  REQUIRE(cudaMallocHost(&pinned, 4096) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(device, 0x11, 1 << 20, nullptr) == cudaSuccess);
  REQUIRE(cudaMemset(device, 0, 3 << 20) == cudaSuccess);
  REQUIRE(cudaFree(device) == cudaSuccess);
  REQUIRE(cudaFreeHost(pinned) == cudaSuccess);
  const auto all = recorder().flush();
  auto memsets = recorder().records<CUpti_ActivityMemset4>(all, CUPTI_ACTIVITY_KIND_MEMSET);
  REQUIRE(memsets.size() == 2);
  std::sort(memsets.begin(), memsets.end(),
            [](const auto& x, const auto& y) { return x.correlationId < y.correlationId; });
  CHECK(memsets[0].value == 0x11);
  CHECK(memsets[0].bytes == (1u << 20));
  CHECK(memsets[0].flags == CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC);
  CHECK(memsets[0].memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  CHECK(memsets[1].flags == 0);
  CHECK(memsets[1].start >= memsets[0].end);
  const auto memory = recorder().records<CUpti_ActivityMemory4>(all, CUPTI_ACTIVITY_KIND_MEMORY2);
  REQUIRE(memory.size() == 4);
  CHECK(memory[0].memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
  CHECK(memory[0].memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  CHECK(memory[0].address == reinterpret_cast<uintptr_t>(device));
  CHECK(memory[0].bytes == (3u << 20));
  CHECK(memory[1].memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  CHECK(memory[2].memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE);
  CHECK(memory[2].address == reinterpret_cast<uintptr_t>(device));
  CHECK(memory[3].memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
  CHECK(memory[0].timestamp < memory[2].timestamp);
}

TEST_CASE("a synchronising call returns no earlier than the awaited work's end") {
  Kinds on{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  cudaEvent_t event = nullptr;
  REQUIRE(cudaEventCreate(&event) == cudaSuccess);

  launch(longStub, dim3(132), dim3(256), stream);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  const uint64_t after_stream_sync = monotonicNs();
  launch(longStub, dim3(132), dim3(256), stream);
  REQUIRE(cudaEventRecord(event, stream) == cudaSuccess);
  REQUIRE(cudaEventSynchronize(event) == cudaSuccess);
  const uint64_t after_event_sync = monotonicNs();
  REQUIRE(cudaStreamWaitEvent(nullptr, event, 0) == cudaSuccess);
  launch(longStub, dim3(132), dim3(256), stream);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const uint64_t after_device_sync = monotonicNs();

  const auto all = recorder().flush();
  const auto kernels = kernelsOf(all);
  REQUIRE(kernels.size() == 3);
  CHECK(after_stream_sync >= kernels[0].end);
  CHECK(after_event_sync >= kernels[1].end);
  CHECK(after_device_sync >= kernels[2].end);
  auto syncs =
      recorder().records<CUpti_ActivitySynchronization2>(all, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  REQUIRE(syncs.size() == 4);
  std::sort(syncs.begin(), syncs.end(),
            [](const auto& x, const auto& y) { return x.correlationId < y.correlationId; });
  CHECK(syncs[0].type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
  CHECK(syncs[0].streamId == streamId(stream));
  CHECK(syncs[0].end >= kernels[0].end);
  CHECK(syncs[1].type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE);
  CHECK(syncs[1].cudaEventId != CUPTI_SYNCHRONIZATION_INVALID_VALUE);
  CHECK(syncs[1].end >= kernels[1].end);
  CHECK(syncs[2].type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT);
  CHECK(syncs[2].cudaEventId == syncs[1].cudaEventId);
  CHECK(syncs[2].streamId == 7);
  CHECK(syncs[3].type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
  CHECK(syncs[3].end >= kernels[2].end);
  REQUIRE(cudaEventDestroy(event) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("API records follow the per-cbid runtime and driver filters") {
  Kinds on{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  REQUIRE(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1) ==
          CUPTI_SUCCESS);
  REQUIRE(cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1) == CUPTI_SUCCESS);
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, 4096) == cudaSuccess);
  launch(quickStub, dim3(2), dim3(32));
  REQUIRE(cudaFree(p) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto all = recorder().flush();
  REQUIRE(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 0) ==
          CUPTI_SUCCESS);
  REQUIRE(cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 0) == CUPTI_SUCCESS);
  const auto runtime = recorder().records<Api>(all, CUPTI_ACTIVITY_KIND_RUNTIME);
  const auto driver = recorder().records<Api>(all, CUPTI_ACTIVITY_KIND_DRIVER);
  const auto kernels = kernelsOf(all);
  REQUIRE(runtime.size() == 1); // cudaMalloc and cudaFree were not asked for
  REQUIRE(driver.size() == 1);
  REQUIRE(kernels.size() == 1);
  CHECK(runtime[0].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  CHECK(driver[0].cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  // One correlation id for the runtime call, the driver call under it, and the kernel.
  CHECK(driver[0].correlationId == runtime[0].correlationId);
  CHECK(kernels[0].correlationId == runtime[0].correlationId);
  CHECK(driver[0].start >= runtime[0].start);
  CHECK(driver[0].end <= runtime[0].end);
  CHECK(runtime[0].processId == static_cast<uint32_t>(getpid()));
}

TEST_CASE("runtime API callbacks: enter and exit with one correlation id, name, params, symbol") {
  Kinds on{CUPTI_ACTIVITY_KIND_RUNTIME};
  CuptiRecorder& rec = recorder();
  REQUIRE(cuptiEnableDomain(1, rec.subscriber(), CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS);
  rec.clearCallbacks();
  void* p = nullptr;
  REQUIRE(cudaMalloc(&p, 4096) == cudaSuccess);
  launch(quickStub, dim3(1), dim3(32));
  REQUIRE(cuptiEnableDomain(0, rec.subscriber(), CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS);
  REQUIRE(cudaFree(p) == cudaSuccess); // not seen: the domain is off again
  const auto callbacks = rec.callbacks();
  REQUIRE(callbacks.size() == 4);
  CHECK(callbacks[0].function == "cudaMalloc");
  CHECK(callbacks[0].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
  CHECK(callbacks[0].site == CUPTI_API_ENTER);
  CHECK(callbacks[1].site == CUPTI_API_EXIT);
  CHECK(callbacks[1].correlation == callbacks[0].correlation);
  CHECK(callbacks[2].function == "cudaLaunchKernel");
  CHECK(callbacks[2].symbol == "_Z12quick_kernelv");
  CHECK(callbacks[2].grid_x == 1); // read from functionParams inside the callback
  CHECK(callbacks[2].block_x == 32);
  CHECK(callbacks[3].correlation == callbacks[2].correlation);
  const auto apis = rec.records<Api>(rec.flush(), CUPTI_ACTIVITY_KIND_RUNTIME);
  CHECK(apiFor(apis, callbacks[0].correlation) != nullptr);
  CHECK(apiFor(apis, callbacks[2].correlation) != nullptr);
  uint32_t state = 1;
  REQUIRE(cuptiGetCallbackState(&state, rec.subscriber(), CUPTI_CB_DOMAIN_RUNTIME_API,
                                CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020) == CUPTI_SUCCESS);
  CHECK(state == 0);
}

TEST_CASE("external correlation ids pushed on a thread tag that thread's API calls") {
  Kinds on{CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  REQUIRE(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 42) ==
          CUPTI_SUCCESS);
  launch(quickStub, dim3(1), dim3(32));
  uint64_t last = 0;
  REQUIRE(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last) ==
          CUPTI_SUCCESS);
  CHECK(last == 42);
  CHECK(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last) ==
        CUPTI_ERROR_QUEUE_EMPTY);
  launch(quickStub, dim3(1), dim3(32)); // nothing pushed: no external record
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto all = recorder().flush();
  const auto external = recorder().records<CUpti_ActivityExternalCorrelation>(
      all, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  const auto kernels = kernelsOf(all);
  REQUIRE(external.size() == 1);
  REQUIRE(kernels.size() == 2);
  CHECK(external[0].externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
  CHECK(external[0].externalId == 42);
  CHECK(external[0].correlationId == kernels[0].correlationId);
}

TEST_CASE("a graph replays its captured kernels as graph nodes of the launch") {
  Kinds on{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME,
           CUPTI_ACTIVITY_KIND_MEMSET};
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  void* buffer = nullptr;
  REQUIRE(cudaMalloc(&buffer, 4096) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  launch(workStub, dim3(264), dim3(128), stream);
  REQUIRE(cudaMemsetAsync(buffer, 0, 4096, stream) == cudaSuccess);
  launch(workStub, dim3(264), dim3(128), stream);
  launch(quickStub, dim3(1), dim3(32), stream);
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
  REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  uint32_t graph_id = 0;
  REQUIRE(cuptiGetGraphId(reinterpret_cast<CUgraph>(graph), &graph_id) == CUPTI_SUCCESS);
  const auto all = recorder().flush();
  const auto kernels = kernelsOf(all);
  const auto memsets = recorder().records<CUpti_ActivityMemset4>(all, CUPTI_ACTIVITY_KIND_MEMSET);
  REQUIRE(kernels.size() == 6); // captured launches did not run; each replay ran three
  REQUIRE(memsets.size() == 2);
  std::vector<uint32_t> launches;
  for (const Api& api : recorder().records<Api>(all, CUPTI_ACTIVITY_KIND_RUNTIME)) {
    if (api.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000)
      launches.push_back(api.correlationId);
  }
  REQUIRE(launches.size() == 2);
  std::set<uint64_t> nodes;
  for (size_t i = 0; i < kernels.size(); ++i) {
    CHECK(kernels[i].graphId == graph_id);
    CHECK(kernels[i].graphNodeId != 0);
    CHECK(kernels[i].correlationId == launches[i / 3]);
    nodes.insert(kernels[i].graphNodeId);
  }
  CHECK(nodes.size() == 3);
  CHECK(memsets[0].graphId == graph_id);
  CHECK(memsets[0].graphNodeId != 0);
  // Nodes run back to back after one launch latency.
  CHECK(kernels[1].start >= memsets[0].end);
  CHECK(kernels[1].start - memsets[0].end < 2000);
  REQUIRE(cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(cudaGraphDestroy(graph) == cudaSuccess);
  REQUIRE(cudaFree(buffer) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("a default flush delivers only complete records; a forced flush delivers all") {
  Kinds on{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  launch(flushStub, dim3(132), dim3(256));
  CHECK(kernelsOf(recorder().flush(/*forced=*/false)).empty()); // 50 ms kernel still running
  const auto forced = kernelsOf(recorder().flush(/*forced=*/true));
  REQUIRE(forced.size() == 1);
  CHECK(forced[0].end > monotonicNs()); // its end is still in the future
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
}

TEST_CASE("records the client has no buffer for are dropped and counted") {
  Kinds on{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  size_t dropped = 99;
  REQUIRE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS); // resets
  recorder().refuse_buffers = true;
  for (int i = 0; i < 7; ++i)
    launch(quickStub, dim3(1), dim3(32));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  REQUIRE(cuptiActivityFlushAll(0) == CUPTI_SUCCESS);
  recorder().refuse_buffers = false;
  REQUIRE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS);
  CHECK(dropped == 7);
  REQUIRE(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS);
  CHECK(dropped == 0);
  CHECK(kernelsOf(recorder().flush()).empty());
}

TEST_CASE("full buffers are completed and records are 8-byte aligned") {
  Kinds on{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME};
  recorder().buffer_size = 1024; // a few records each
  const int before = recorder().buffers_completed.load();
  for (int i = 0; i < 20; ++i)
    launch(quickStub, dim3(1), dim3(32));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto all = recorder().flush();
  recorder().buffer_size = 1u << 20;
  CHECK(kernelsOf(all).size() == 20);
  CHECK(recorder().records<Api>(all, CUPTI_ACTIVITY_KIND_RUNTIME).size() >= 20);
  const size_t per_buffer = 1024 / ((sizeof(Kernel) + 7) / 8 * 8);
  CHECK(recorder().buffers_completed.load() - before >= int(40 / (per_buffer + 3)));
  CHECK_FALSE(recorder().misaligned_record.load());
  CHECK_FALSE(recorder().oversized_buffer.load());
}

TEST_CASE("a registered timestamp callback puts records in the client's clock") {
  Kinds on{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  static constexpr uint64_t kShift = 1'000'000'000'000ull; // 1000 s ahead of CLOCK_MONOTONIC
  REQUIRE(cuptiActivityRegisterTimestampCallback(
              []() -> uint64_t { return monotonicNs() + kShift; }) == CUPTI_SUCCESS);
  const uint64_t before = monotonicNs();
  launch(workStub, dim3(264), dim3(128));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const uint64_t after = monotonicNs();
  uint64_t cupti_now = 0;
  REQUIRE(cuptiGetTimestamp(&cupti_now) == CUPTI_SUCCESS);
  const auto kernels = kernelsOf(recorder().flush());
  REQUIRE(cuptiActivityRegisterTimestampCallback(monotonicNs) == CUPTI_SUCCESS);
  REQUIRE(kernels.size() == 1);
  // Within the 1 us the offset measurement may be off by.
  CHECK(kernels[0].start + 1000 >= before + kShift + kLaunchLatencyNs);
  CHECK(kernels[0].end <= after + kShift + 1000);
  CHECK(cupti_now + 1000 >= after + kShift);
}

TEST_CASE("CUPTI allows one subscriber and names its results") {
  CuptiRecorder::instance();
  CUpti_SubscriberHandle second = nullptr;
  CHECK(cuptiSubscribe(&second, nullptr, nullptr) ==
        CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(cuptiGetLastError() == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(cuptiGetLastError() == CUPTI_SUCCESS);
  const char* text = nullptr;
  REQUIRE(cuptiGetResultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &text) ==
          CUPTI_SUCCESS);
  CHECK(std::string(text) == "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  uint32_t version = 0;
  REQUIRE(cuptiGetVersion(&version) == CUPTI_SUCCESS);
  CHECK(version == CUPTI_API_VERSION);
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_INVALID) == CUPTI_ERROR_INVALID_KIND);
  size_t size = sizeof(size_t);
  size_t buffer_size = 0;
  REQUIRE(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &buffer_size) ==
          CUPTI_SUCCESS);
  size_t want = 8u << 20;
  REQUIRE(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &want) ==
          CUPTI_SUCCESS);
  REQUIRE(cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &buffer_size) ==
          CUPTI_SUCCESS);
  CHECK(buffer_size == want);
}

TEST_CASE("device and overhead records") {
  Kinds on{CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_OVERHEAD,
           CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  launch(quickStub, dim3(1), dim3(32));
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto all = recorder().flush();
  const auto devices = recorder().records<CUpti_ActivityDevice5>(all, CUPTI_ACTIVITY_KIND_DEVICE);
  REQUIRE(devices.size() == 1);
  CHECK(std::string(devices[0].name) == "NVIDIA H200");
  CHECK(devices[0].numMultiprocessors == 132);
  CHECK(devices[0].globalMemorySize == 150'754'820'096ull);
  CHECK(devices[0].computeCapabilityMajor == 9);
  CHECK(devices[0].maxWarpsPerMultiprocessor == 64);
  // Handing out the buffer for these records took the client's request callback some time.
  const auto overhead =
      recorder().records<CUpti_ActivityOverhead3>(all, CUPTI_ACTIVITY_KIND_OVERHEAD);
  for (const auto& o : overhead) {
    CHECK(o.overheadKind == CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST);
    CHECK(o.end >= o.start);
  }
}

TEST_CASE("launches from many threads all get records with unique correlation ids") {
  Kinds on{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  constexpr int kThreads = 8, kLaunches = 100;
  std::vector<std::thread> threads;
  std::vector<cudaStream_t> streams(kThreads);
  for (auto& s : streams)
    REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&streams, t] {
      for (int i = 0; i < kLaunches; ++i) {
        cudaLaunchKernel(fn(quickStub), dim3(2), dim3(64), nullptr, 0, streams[t]);
      }
    });
  }
  for (auto& t : threads)
    t.join();
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto kernels = kernelsOf(recorder().flush());
  REQUIRE(kernels.size() == kThreads * kLaunches);
  std::set<uint32_t> correlations;
  std::map<uint32_t, uint64_t> last_end;
  for (const Kernel& k : kernels) { // sorted by start: per stream, no overlap
    correlations.insert(k.correlationId);
    CHECK(k.start >= last_end[k.streamId]);
    last_end[k.streamId] = k.end;
  }
  CHECK(correlations.size() == kernels.size());
  CHECK(last_end.size() == kThreads);
  for (auto& s : streams)
    REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
}

TEST_CASE("with only the serial KERNEL kind on, kernels do not overlap") {
  Kinds on{CUPTI_ACTIVITY_KIND_KERNEL};
  cudaStream_t a = nullptr, b = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking) == cudaSuccess);
  launch(workStub, dim3(264), dim3(128), a);
  launch(workStub, dim3(264), dim3(128), b);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  auto kernels = recorder().records<Kernel>(recorder().flush(), CUPTI_ACTIVITY_KIND_KERNEL);
  REQUIRE(kernels.size() == 2);
  std::sort(kernels.begin(), kernels.end(),
            [](const Kernel& x, const Kernel& y) { return x.start < y.start; });
  CHECK(kernels[0].kind == CUPTI_ACTIVITY_KIND_KERNEL);
  CHECK(kernels[1].start >= kernels[0].end);
  REQUIRE(cudaStreamDestroy(a) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(b) == cudaSuccess);
}

TEST_CASE("cuptiActivityGetNextRecord walks a buffer and rejects bad input") {
  alignas(8) uint8_t buffer[2 * sizeof(CUpti_ActivityAPI) + 8] = {};
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.correlationId = 5;
  std::memcpy(buffer, &api, sizeof(api));
  api.correlationId = 6;
  std::memcpy(buffer + sizeof(api), &api, sizeof(api));
  const size_t valid = 2 * sizeof(api);
  CUpti_Activity* record = nullptr;
  REQUIRE(cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS);
  CHECK(reinterpret_cast<CUpti_ActivityAPI*>(record)->correlationId == 5);
  REQUIRE(cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS);
  CHECK(reinterpret_cast<CUpti_ActivityAPI*>(record)->correlationId == 6);
  CHECK(cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_ERROR_MAX_LIMIT_REACHED);
  record = nullptr;
  CHECK(cuptiActivityGetNextRecord(buffer, valid - 4, &record) == CUPTI_SUCCESS);
  CHECK(cuptiActivityGetNextRecord(buffer, valid - 4, &record) ==
        CUPTI_ERROR_INVALID_KIND); // truncated
  record = nullptr;
  CHECK(cuptiActivityGetNextRecord(nullptr, valid, &record) == CUPTI_ERROR_INVALID_PARAMETER);
}
