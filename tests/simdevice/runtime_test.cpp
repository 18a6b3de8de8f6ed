// The stand-in runtime's semantics, driven through the real CUDA runtime API: device identity,
// memory accounting, copies that really copy, errors, the virtual timeline's ordering and the
// blocking behaviour of synchronising calls. (CUPTI records are checked in cupti_test.cpp.)
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>

#include "tests/simdevice/test_support.h"

extern "C" {
int gwsimIsSimulated(void);
int gwsimSetKernelWork(const void* func, double work, int registers_per_thread);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st* stream);
cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream);
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream);
}

namespace {

volatile int g_sink = 0;
// Host stubs standing in for kernels: only their (distinct) addresses matter.
void shortStub() {
  g_sink = 1;
}
void longStub() {
  g_sink = 2;
}
void heavyStub() {
  g_sink = 3;
}
void unregisteredStub() {
  g_sink = 4;
}

// longStub with 132 blocks of 256 threads: long enough that a descheduled test thread (the test
// machines are small and shared) does not miss the window in which the work is still running.
constexpr double kLongKernelMs = 80.0;

struct Kernels {
  Kernels() {
    gwsim_test::registerKernel(fn(shortStub), "_Z12short_kernelPf");
    gwsim_test::registerKernel(fn(longStub), "_Z11long_kernelPf");
    gwsim_test::registerKernel(fn(heavyStub), "_Z12heavy_kernelPf");
    // One full wave of a 132-SM device at fill 1: duration = 2 us x work.
    gwsimSetKernelWork(fn(longStub), kLongKernelMs * 1e6 / 2000.0, 0);
  }
  static const void* fn(void (*f)()) { return reinterpret_cast<const void*>(f); }
};
const Kernels& kernels() {
  static Kernels registered;
  return registered;
}

const void* fn(void (*f)()) {
  kernels();
  return reinterpret_cast<const void*>(f);
}

cudaError_t launch(void (*f)(), dim3 grid, dim3 block, cudaStream_t stream = nullptr,
                   size_t shared = 0) {
  return cudaLaunchKernel(fn(f), grid, block, nullptr, shared, stream);
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

TEST_CASE("the default device is an H200 and says it is simulated only through gwsimIsSimulated") {
  int count = 0;
  REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
  CHECK(count == 1);
  cudaDeviceProp prop{};
  REQUIRE(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
  CHECK(std::string(prop.name) == "NVIDIA H200");
  CHECK(prop.multiProcessorCount == 132);
  CHECK(prop.totalGlobalMem == 150'754'820'096ull);
  CHECK(prop.major == 9);
  CHECK(prop.minor == 0);
  CHECK(prop.maxThreadsPerMultiProcessor == 2048);
  CHECK(prop.maxBlocksPerMultiProcessor == 32);
  CHECK(prop.regsPerMultiprocessor == 65536);
  CHECK(prop.sharedMemPerMultiprocessor == 233472);
  CHECK(prop.sharedMemPerBlockOptin == 232448);
  CHECK(prop.warpSize == 32);
  int sms = 0, major = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess);
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess);
  CHECK(sms == 132);
  CHECK(major == 9);
  CHECK(cudaGetDeviceProperties(&prop, 1) == cudaErrorInvalidDevice);
  CHECK(cudaSetDevice(1) == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaErrorInvalidDevice);
  CHECK(cudaGetLastError() == cudaSuccess);
  int version = 0;
  CHECK(cudaRuntimeGetVersion(&version) == cudaSuccess);
  CHECK(version == 13000);
  CHECK(gwsimIsSimulated() == 1);
}

TEST_CASE("cudaMemGetInfo follows allocations and allocations beyond the device fail") {
  size_t free0 = 0, total = 0;
  REQUIRE(cudaMemGetInfo(&free0, &total) == cudaSuccess);
  CHECK(total == 150'754'820'096ull);
  CHECK(free0 < total);
  void* big = nullptr;
  REQUIRE(cudaMalloc(&big, size_t{10} << 30) == cudaSuccess);
  size_t free1 = 0;
  REQUIRE(cudaMemGetInfo(&free1, &total) == cudaSuccess);
  CHECK(free0 - free1 == (size_t{10} << 30));

  void* too_big = nullptr;
  CHECK(cudaMalloc(&too_big, free1 + (size_t{2} << 20)) == cudaErrorMemoryAllocation);
  CHECK(too_big == nullptr);
  CHECK(cudaPeekAtLastError() == cudaErrorMemoryAllocation); // sticks until read
  CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
  CHECK(cudaGetLastError() == cudaSuccess);

  void* rest = nullptr;
  REQUIRE(cudaMalloc(&rest, free1 - (size_t{4} << 20)) == cudaSuccess);
  size_t free2 = 0;
  REQUIRE(cudaMemGetInfo(&free2, &total) == cudaSuccess);
  CHECK(free2 <= (size_t{4} << 20));
  REQUIRE(cudaFree(rest) == cudaSuccess);
  REQUIRE(cudaFree(big) == cudaSuccess);
  size_t free3 = 0;
  REQUIRE(cudaMemGetInfo(&free3, &total) == cudaSuccess);
  CHECK(free3 == free0);
  CHECK(cudaFree(big) == cudaErrorInvalidValue); // double free
  CHECK(cudaFree(nullptr) == cudaSuccess);
  cudaGetLastError();
}

TEST_CASE("copies move the bytes and know their direction") {
  constexpr size_t kBytes = 1 << 16;
  std::vector<unsigned char> pageable(kBytes), back(kBytes, 0);
  for (size_t i = 0; i < kBytes; ++i)
    pageable[i] = static_cast<unsigned char>(i * 7);
  unsigned char* pinned = nullptr;
  unsigned char *a = nullptr, *b = nullptr;
  REQUIRE(cudaMallocHost(reinterpret_cast<void**>(&pinned), kBytes) == cudaSuccess);
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&a), kBytes) == cudaSuccess);
  REQUIRE(cudaMalloc(reinterpret_cast<void**>(&b), kBytes) == cudaSuccess);

  REQUIRE(cudaMemcpy(a, pageable.data(), kBytes, cudaMemcpyHostToDevice) == cudaSuccess);
  REQUIRE(cudaMemcpy(b, a, kBytes, cudaMemcpyDeviceToDevice) == cudaSuccess);
  REQUIRE(cudaMemcpy(pinned, b, kBytes, cudaMemcpyDefault) == cudaSuccess); // inferred: D2H
  CHECK(std::memcmp(pinned, pageable.data(), kBytes) == 0);

  REQUIRE(cudaMemset(a, 0x5a, kBytes) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(back.data(), a, kBytes, cudaMemcpyDeviceToHost, nullptr) == cudaSuccess);
  CHECK(back[0] == 0x5a);
  CHECK(back[kBytes - 1] == 0x5a);

  // 2D: 64 rows of 100 bytes out of a 256-byte pitch into a 128-byte pitch.
  REQUIRE(cudaMemcpy2D(b, 128, pageable.data(), 256, 100, 64, cudaMemcpyHostToDevice) ==
          cudaSuccess);
  REQUIRE(cudaMemcpy(back.data(), b, 128 * 64, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(std::memcmp(back.data() + 128 * 63, pageable.data() + 256 * 63, 100) == 0);
  CHECK(cudaMemcpy2D(b, 64, pageable.data(), 256, 100, 2, cudaMemcpyHostToDevice) ==
        cudaErrorInvalidPitchValue);

  // The declared direction must match where the pointers live; ranges must fit the allocation.
  CHECK(cudaMemcpy(pageable.data(), back.data(), 16, cudaMemcpyHostToDevice) ==
        cudaErrorInvalidValue);
  CHECK(cudaMemcpy(a, pageable.data(), kBytes + 1, cudaMemcpyHostToDevice) ==
        cudaErrorInvalidValue);
  CHECK(cudaMemcpy(nullptr, a, 16, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
  CHECK(cudaMemset(pageable.data(), 0, 16) == cudaErrorInvalidValue); // host memory
  cudaGetLastError();

  cudaPointerAttributes attributes{};
  REQUIRE(cudaPointerGetAttributes(&attributes, a + 100) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeDevice);
  CHECK(attributes.device == 0);
  REQUIRE(cudaPointerGetAttributes(&attributes, pinned) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeHost);
  REQUIRE(cudaPointerGetAttributes(&attributes, pageable.data()) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeUnregistered);

  REQUIRE(cudaHostRegister(pageable.data(), kBytes, cudaHostRegisterDefault) == cudaSuccess);
  REQUIRE(cudaPointerGetAttributes(&attributes, pageable.data() + 10) == cudaSuccess);
  CHECK(attributes.type == cudaMemoryTypeHost);
  CHECK(cudaHostRegister(pageable.data() + 8, 16, 0) == cudaErrorHostMemoryAlreadyRegistered);
  REQUIRE(cudaHostUnregister(pageable.data()) == cudaSuccess);
  CHECK(cudaHostUnregister(pageable.data()) == cudaErrorHostMemoryNotRegistered);
  cudaGetLastError();

  CHECK(cudaFree(pinned) == cudaErrorInvalidValue); // pinned memory is freed with cudaFreeHost
  CHECK(cudaFreeHost(pinned) == cudaSuccess);
  CHECK(cudaFree(a) == cudaSuccess);
  CHECK(cudaFree(b) == cudaSuccess);
  cudaGetLastError();
}

TEST_CASE("bad launches fail with the runtime's error codes") {
  CHECK(launch(shortStub, dim3(1), dim3(2048)) == cudaErrorInvalidConfiguration);
  CHECK(cudaPeekAtLastError() == cudaErrorInvalidConfiguration);
  CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
  CHECK(launch(shortStub, dim3(0), dim3(32)) == cudaErrorInvalidConfiguration);
  CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(&unregisteredStub), dim3(1), dim3(32),
                         nullptr, 0, nullptr) == cudaErrorInvalidDeviceFunction);
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
  CHECK(launch(shortStub, dim3(1), dim3(32), stream) == cudaErrorInvalidResourceHandle);
  CHECK(launch(shortStub, dim3(1), dim3(32), nullptr, 300 * 1024) == cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(std::string(cudaGetErrorString(cudaErrorMemoryAllocation)) == "out of memory");
  CHECK(std::string(cudaGetErrorName(cudaErrorInvalidResourceHandle)) ==
        "cudaErrorInvalidResourceHandle");
  CHECK(std::string(cudaGetErrorString(static_cast<cudaError_t>(123456))) ==
        "unrecognized error code");
}

TEST_CASE("the <<<>>> path: call configuration, kernel handle, launch") {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  REQUIRE(__cudaPushCallConfiguration(dim3(8, 2), dim3(128), 64, stream) == 0);
  dim3 grid, block;
  size_t shared = 0;
  cudaStream_t popped = nullptr;
  REQUIRE(__cudaPopCallConfiguration(&grid, &block, &shared, &popped) == cudaSuccess);
  CHECK(grid.x == 8);
  CHECK(grid.y == 2);
  CHECK(block.x == 128);
  CHECK(shared == 64);
  CHECK(popped == stream);
  CHECK(__cudaPopCallConfiguration(&grid, &block, &shared, &popped) ==
        cudaErrorMissingConfiguration);

  cudaKernel_t handle = nullptr;
  REQUIRE(__cudaGetKernel(&handle, fn(shortStub)) == cudaSuccess);
  REQUIRE(handle != nullptr);
  CHECK(__cudaLaunchKernel(handle, grid, block, nullptr, shared, stream) == cudaSuccess);
  // The runtime accepts a cudaKernel_t where it takes a `const void* func`.
  CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(handle), grid, block, nullptr, 0, stream) ==
        cudaSuccess);
  cudaKernel_t none = nullptr;
  CHECK(__cudaGetKernel(&none, reinterpret_cast<const void*>(&unregisteredStub)) ==
        cudaErrorInvalidDeviceFunction);
  cudaGetLastError();
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("occupancy and kernel attributes follow the registers a kernel declares") {
  int blocks = 0;
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn(heavyStub), 256, 0) ==
          cudaSuccess);
  CHECK(blocks == 8); // 2048 threads per SM / 256, 32 registers per thread
  REQUIRE(gwsimSetKernelWork(fn(heavyStub), 1.0, 128) == 1);
  REQUIRE(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn(heavyStub), 256, 0) ==
          cudaSuccess);
  CHECK(blocks == 2); // 65536 registers / (128 x 256)
  cudaFuncAttributes attributes{};
  REQUIRE(cudaFuncGetAttributes(&attributes, fn(heavyStub)) == cudaSuccess);
  CHECK(attributes.numRegs == 128);
  CHECK(attributes.maxThreadsPerBlock == 512);
  CHECK(gwsimSetKernelWork(reinterpret_cast<const void*>(&unregisteredStub), 2.0, 0) == 0);
}

TEST_CASE("synchronising calls block until the virtual timeline reaches the awaited work") {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  cudaEvent_t before = nullptr, after = nullptr;
  REQUIRE(cudaEventCreate(&before) == cudaSuccess);
  REQUIRE(cudaEventCreate(&after) == cudaSuccess);
  REQUIRE(cudaEventRecord(before, stream) == cudaSuccess);
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(launch(longStub, dim3(132), dim3(256), stream) == cudaSuccess);
  REQUIRE(cudaEventRecord(after, stream) == cudaSuccess);
  CHECK(msSince(t0) < kLongKernelMs / 2); // launching does not wait
  CHECK(cudaStreamQuery(stream) == cudaErrorNotReady);
  CHECK(cudaEventQuery(after) == cudaErrorNotReady);
  CHECK(cudaGetLastError() == cudaSuccess); // "not ready" is an answer, not an error
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, before, after) == cudaErrorNotReady);
  REQUIRE(cudaEventSynchronize(after) == cudaSuccess);
  CHECK(msSince(t0) >= kLongKernelMs * 0.97);
  CHECK(cudaStreamQuery(stream) == cudaSuccess);
  REQUIRE(cudaEventElapsedTime(&ms, before, after) == cudaSuccess);
  CHECK(ms == Approx(kLongKernelMs).epsilon(0.05));

  const auto t1 = std::chrono::steady_clock::now();
  REQUIRE(launch(longStub, dim3(132), dim3(256), stream) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(msSince(t1) >= kLongKernelMs * 0.97);
  CHECK(msSince(t1) < kLongKernelMs * 3);
  cudaGetLastError();
  REQUIRE(cudaEventDestroy(before) == cudaSuccess);
  REQUIRE(cudaEventDestroy(after) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("pinned async copies do not block the host; pageable ones and sync copies do") {
  constexpr size_t kBytes = 1 << 20;
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
  void *device = nullptr, *pinned = nullptr;
  std::vector<char> pageable(kBytes, 1);
  REQUIRE(cudaMalloc(&device, kBytes) == cudaSuccess);
  REQUIRE(cudaMallocHost(&pinned, kBytes) == cudaSuccess);

  // Queue the copy behind a long kernel: whether the call returns before the stream drains
  // tells whether it blocked the host.
  REQUIRE(launch(longStub, dim3(132), dim3(256), stream) == cudaSuccess);
  REQUIRE(cudaMemcpyAsync(device, pinned, kBytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
  CHECK(cudaStreamQuery(stream) == cudaErrorNotReady);
  REQUIRE(cudaMemcpyAsync(device, pageable.data(), kBytes, cudaMemcpyHostToDevice, stream) ==
          cudaSuccess);
  CHECK(cudaStreamQuery(stream) == cudaSuccess); // the pageable copy held the host until done

  REQUIRE(launch(longStub, dim3(132), dim3(256)) == cudaSuccess);
  REQUIRE(cudaMemcpy(pinned, device, kBytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(cudaStreamQuery(nullptr) == cudaSuccess); // a synchronous D2H copy waits for it all

  REQUIRE(launch(longStub, dim3(132), dim3(256)) == cudaSuccess);
  void* other = nullptr;
  REQUIRE(cudaMalloc(&other, kBytes) == cudaSuccess);
  REQUIRE(cudaMemcpy(other, device, kBytes, cudaMemcpyDeviceToDevice) == cudaSuccess);
  CHECK(cudaStreamQuery(nullptr) == cudaErrorNotReady); // ... a device-to-device one does not
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cudaGetLastError();
  REQUIRE(cudaFree(other) == cudaSuccess);
  REQUIRE(cudaFree(device) == cudaSuccess);
  REQUIRE(cudaFreeHost(pinned) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("the legacy default stream waits for blocking streams but not for non-blocking ones") {
  cudaStream_t blocking = nullptr, non_blocking = nullptr;
  REQUIRE(cudaStreamCreate(&blocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&non_blocking, cudaStreamNonBlocking) == cudaSuccess);
  cudaEvent_t legacy_done = nullptr;
  REQUIRE(cudaEventCreate(&legacy_done) == cudaSuccess);

  REQUIRE(launch(longStub, dim3(132), dim3(256), blocking) == cudaSuccess);
  REQUIRE(launch(shortStub, dim3(1), dim3(32), nullptr) == cudaSuccess);
  REQUIRE(cudaEventRecord(legacy_done, nullptr) == cudaSuccess);
  REQUIRE(cudaEventSynchronize(legacy_done) == cudaSuccess);
  CHECK(cudaStreamQuery(blocking) == cudaSuccess); // legacy work ran after the blocking stream's

  REQUIRE(launch(longStub, dim3(132), dim3(256), non_blocking) == cudaSuccess);
  REQUIRE(launch(shortStub, dim3(1), dim3(32), nullptr) == cudaSuccess);
  REQUIRE(cudaEventRecord(legacy_done, nullptr) == cudaSuccess);
  REQUIRE(cudaEventSynchronize(legacy_done) == cudaSuccess);
  CHECK(cudaStreamQuery(non_blocking) == cudaErrorNotReady); // ... but not after this one's
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  cudaGetLastError();
  REQUIRE(cudaEventDestroy(legacy_done) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(blocking) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(non_blocking) == cudaSuccess);
}

TEST_CASE("stream queries report what the stream was created with") {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, -2) == cudaSuccess);
  int priority = 0;
  unsigned flags = 0;
  unsigned long long id = 0;
  REQUIRE(cudaStreamGetPriority(stream, &priority) == cudaSuccess);
  REQUIRE(cudaStreamGetFlags(stream, &flags) == cudaSuccess);
  REQUIRE(cudaStreamGetId(stream, &id) == cudaSuccess);
  CHECK(priority == -2);
  CHECK(flags == cudaStreamNonBlocking);
  CHECK(id >= 13);
  REQUIRE(cudaStreamGetId(nullptr, &id) == cudaSuccess);
  CHECK(id == 7); // the legacy default stream, as CUPTI numbers it
  int can = -1;
  REQUIRE(cudaDeviceCanAccessPeer(&can, 0, 0) == cudaSuccess);
  CHECK(can == 0);
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
  CHECK(cudaStreamGetFlags(stream, &flags) == cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}

TEST_CASE("stream capture records work into a graph that runs when launched") {
  cudaStream_t stream = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
  CHECK(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal) ==
        cudaErrorStreamCaptureUnsupported);
  cudaGetLastError();
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  REQUIRE(cudaStreamIsCapturing(stream, &status) == cudaSuccess);
  CHECK(status == cudaStreamCaptureStatusActive);
  for (int i = 0; i < 3; ++i)
    REQUIRE(launch(longStub, dim3(132), dim3(256), stream) == cudaSuccess);
  CHECK(cudaStreamQuery(stream) == cudaErrorStreamCaptureUnsupported);
  cudaGetLastError();
  cudaGraph_t graph = nullptr;
  REQUIRE(cudaStreamEndCapture(stream, &graph) == cudaSuccess);
  REQUIRE(graph != nullptr);
  CHECK(cudaStreamQuery(stream) == cudaSuccess); // captured work did not run
  cudaGraphExec_t exec = nullptr;
  REQUIRE(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(cudaGraphLaunch(exec, stream) == cudaSuccess);
  CHECK(cudaStreamQuery(stream) == cudaErrorNotReady);
  REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
  CHECK(msSince(t0) >= 3 * kLongKernelMs * 0.97);

  // A synchronising call inside a capture invalidates it.
  REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  CHECK(cudaStreamSynchronize(stream) == cudaErrorStreamCaptureUnsupported);
  cudaGraph_t broken = nullptr;
  CHECK(cudaStreamEndCapture(stream, &broken) == cudaErrorStreamCaptureInvalidated);
  CHECK(broken == nullptr);
  cudaGetLastError();
  REQUIRE(cudaGraphExecDestroy(exec) == cudaSuccess);
  REQUIRE(cudaGraphDestroy(graph) == cudaSuccess);
  CHECK(cudaGraphLaunch(exec, stream) == cudaErrorInvalidValue);
  cudaGetLastError();
  REQUIRE(cudaStreamDestroy(stream) == cudaSuccess);
}

TEST_CASE("many host threads can launch, copy and synchronise at once") {
  constexpr int kThreads = 8, kLaunches = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&failures] {
      cudaStream_t stream = nullptr;
      void* buffer = nullptr;
      std::vector<char> host(4096, 3);
      bool ok =
          cudaStreamCreate(&stream) == cudaSuccess && cudaMalloc(&buffer, 4096) == cudaSuccess;
      for (int i = 0; ok && i < kLaunches; ++i) {
        ok = launch(shortStub, dim3(4), dim3(64), stream) == cudaSuccess &&
             (i % 50 != 0 || cudaMemcpyAsync(buffer, host.data(), 4096, cudaMemcpyHostToDevice,
                                             stream) == cudaSuccess) &&
             (i % 20 != 0 || cudaStreamSynchronize(stream) == cudaSuccess);
      }
      ok = ok && cudaStreamSynchronize(stream) == cudaSuccess && cudaFree(buffer) == cudaSuccess &&
           cudaStreamDestroy(stream) == cudaSuccess;
      if (!ok) failures.fetch_add(1);
    });
  }
  for (auto& t : threads)
    t.join();
  CHECK(failures.load() == 0);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
}
