// The simulated NVML's energy counter, power draw and clocks (core/energy_meter.h): the counter
// grows by idle power x elapsed time plus (busy - idle) power x the time work ran, the power draw
// is the mean since the previous power read, GWSIM_NVML_ENERGY=0 takes the counter away.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <thread>

#include <catch2/catch.hpp>
#include <cuda_runtime_api.h>

#include "profiler/nvml/nvml_types.h"
#include "tests/sanitizer_env.h"
#include "tests/simdevice/test_support.h"
#include "tests/skip_test.h"

extern "C" {
int gwsimSetKernelWork(const void* func, double work, int registers_per_thread);
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* mj);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* mw);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* mhz);
}

namespace {

volatile int g_sink = 0;
void busyStub() {
  g_sink = 1;
}

// The h200 model's figures (tests/simdevice/core/energy_meter.cpp).
constexpr double kIdleWatts = 90.0, kBusyWatts = 700.0;
constexpr double kKernelMs = 60.0;

int64_t monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

nvmlDevice_t device0() {
  REQUIRE(nvmlInit_v2() == NVML_SUCCESS);
  nvmlDevice_t h = nullptr;
  REQUIRE(nvmlDeviceGetHandleByIndex_v2(0, &h) == NVML_SUCCESS);
  return h;
}

unsigned long long energy(nvmlDevice_t h) {
  unsigned long long mj = 0;
  REQUIRE(nvmlDeviceGetTotalEnergyConsumption(h, &mj) == NVML_SUCCESS);
  return mj;
}

// Two kernels back to back on one stream; returns the time they ran (ms), from events.
float runTwoKernels() {
  const void* f = reinterpret_cast<const void*>(&busyStub);
  static bool registered = false;
  if (!registered) {
    gwsim_test::registerKernel(f, "_Z11busy_kernelPf");
    gwsimSetKernelWork(f, kKernelMs * 1e6 / 2000.0, 0); // one full wave: 2 us x work
    registered = true;
  }
  cudaEvent_t start, stop;
  REQUIRE(cudaEventCreate(&start) == cudaSuccess);
  REQUIRE(cudaEventCreate(&stop) == cudaSuccess);
  REQUIRE(cudaEventRecord(start, nullptr) == cudaSuccess);
  for (int i = 0; i < 2; ++i)
    REQUIRE(cudaLaunchKernel(f, dim3(132), dim3(256), nullptr, 0, nullptr) == cudaSuccess);
  REQUIRE(cudaEventRecord(stop, nullptr) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  float ms = 0;
  REQUIRE(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
  return ms;
}

} // namespace

TEST_CASE("the energy counter grows by idle power all the time and busy power while work runs") {
  REQUIRE(cudaFree(nullptr) == cudaSuccess); // the context, before the window
  nvmlDevice_t h = device0();
  const int64_t t0 = monotonicNs();
  const unsigned long long e0 = energy(h);
  const float busy_ms = runTwoKernels();
  const unsigned long long e1 = energy(h);
  const int64_t t1 = monotonicNs();
  REQUIRE(busy_ms > 2 * kKernelMs * 0.9);
  const double window_s = double(t1 - t0) / 1e9;
  const double expected_mj =
      1000.0 * (kIdleWatts * window_s + (kBusyWatts - kIdleWatts) * busy_ms / 1000.0);
  INFO("window " << window_s << " s, busy " << busy_ms << " ms");
  // The counter's own reads sit inside [t0, t1]: off by at most idle power x the read overhead.
  CHECK(double(e1 - e0) == Approx(expected_mj).epsilon(0.01));
  CHECK(double(e1 - e0) <= expected_mj + 1.0);
  CHECK(e0 > 123'456'789ull); // counted since the "driver loaded": readers take differences
  nvmlShutdown();
}

TEST_CASE("the power draw is the mean since the previous read, so it integrates to the counter") {
  REQUIRE(cudaFree(nullptr) == cudaSuccess);
  nvmlDevice_t h = device0();
  unsigned int p0 = 0, p1 = 0;
  REQUIRE(nvmlDeviceGetPowerUsage(h, &p0) == NVML_SUCCESS);
  const unsigned long long e0 = energy(h);
  const int64_t t0 = monotonicNs();
  runTwoKernels();
  const int64_t t1 = monotonicNs();
  const unsigned long long e1 = energy(h);
  REQUIRE(nvmlDeviceGetPowerUsage(h, &p1) == NVML_SUCCESS);
  CHECK(p1 > kIdleWatts * 1000);
  CHECK(p1 < kBusyWatts * 1000);
  // mW x s = mJ.
  CHECK(double(p1) * double(t1 - t0) / 1e9 == Approx(double(e1 - e0)).epsilon(0.01));
  unsigned int sm = 0, mem = 0;
  REQUIRE(nvmlDeviceGetClockInfo(h, NVML_CLOCK_SM, &sm) == NVML_SUCCESS);
  REQUIRE(nvmlDeviceGetClockInfo(h, NVML_CLOCK_MEM, &mem) == NVML_SUCCESS);
  int sm_khz = 0, mem_khz = 0;
  REQUIRE(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, 0) == cudaSuccess);
  REQUIRE(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess);
  CHECK(sm == unsigned(sm_khz / 1000));
  CHECK(mem == unsigned(mem_khz / 1000));
  nvmlShutdown();
}

TEST_CASE("GWSIM_NVML_ENERGY=0: a GPU without the energy counter, whose power still reads") {
  nvmlDevice_t h = device0();
  setenv("GWSIM_NVML_ENERGY", "0", 1);
  unsigned long long mj = 0;
  CHECK(nvmlDeviceGetTotalEnergyConsumption(h, &mj) == NVML_ERROR_NOT_SUPPORTED);
  unsigned int mw = 0;
  CHECK(nvmlDeviceGetPowerUsage(h, &mw) == NVML_SUCCESS);
  unsetenv("GWSIM_NVML_ENERGY");
  nvmlShutdown();
}

// The profiler samples power on its own thread while the application forks (a DataLoader's
// workers). A child forked while that thread held the meter's mutex inherited it held, and hung at
// its first kernel (addBusy): e2e_concurrency_fork_test hung at its first run beside a CPU hog.
// Runs as simdevice_nvml_energy_fork_test, reported Skipped in a sanitizer lane.
TEST_CASE("a child forked while another thread reads the power launches kernels and exits",
          "[.fork]") {
  if (!gpuwise::test::forkChildrenCheckable()) // tests/sanitizer_env.h
    gpuwise::test::skipTest("a sanitizer lane: children of a multithreaded fork cannot be checked");
  REQUIRE(cudaFree(nullptr) == cudaSuccess);
  nvmlDevice_t h = device0();
  std::atomic<bool> stop{false};
  std::atomic<long> reads{0};
  std::thread reader([&] {
    unsigned int mw = 0;
    while (!stop.load(std::memory_order_relaxed))
      if (nvmlDeviceGetPowerUsage(h, &mw) == NVML_SUCCESS) reads.fetch_add(1);
  });
  while (reads.load() == 0)
    std::this_thread::yield();
  const void* f = reinterpret_cast<const void*>(&busyStub);
  gwsim_test::registerKernel(f, "_Z11busy_kernelPf");
  const int kChildren = 40;
  int hung = 0, failed = 0;
  for (int c = 0; c < kChildren && hung == 0; ++c) { // one hung child is the finding
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      bool ok = true;
      for (int i = 0; i < 4; ++i)
        ok = ok && cudaLaunchKernel(f, dim3(1), dim3(32), nullptr, 0, nullptr) == cudaSuccess;
      _exit(ok && cudaDeviceSynchronize() == cudaSuccess ? 0 : 1);
    }
    // A budget, not an expectation: a healthy child ends in milliseconds.
    const auto waited = gwsim_test::waitChild(pid, std::chrono::seconds(10));
    if (waited.timed_out) ++hung;
    if (waited.exit_code > 0) ++failed;
  }
  stop.store(true);
  reader.join();
  INFO(reads.load() << " power reads beside the forks");
  CHECK(hung == 0);
  CHECK(failed == 0);
  nvmlShutdown();
}
