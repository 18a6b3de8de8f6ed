// The loop skeleton every sample shares: argument parsing (--steps N), error checking, counted
// launches and copies, the simulator cost hint, and the one summary line tests compare the
// profiler's totals against:
//
//   gwsample name=fp32_gemm steps=300 kernels=1200 h2d_bytes=... d2h_bytes=... d2d_bytes=0
//            pinned_bytes=... pageable_bytes=... syncs=... device="NVIDIA H200" simulated=1
//            wall_s=1.52
//
// pinned_bytes / pageable_bytes count the host side of H2D and D2H copies. The samples run
// unchanged on a real GPU (simulated=0) and on the simulated device (tests/simdevice).
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define GW_CHECK(call)                                                                             \
  do {                                                                                             \
    const cudaError_t gw_err_ = (call);                                                            \
    if (gw_err_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,               \
                   cudaGetErrorName(gw_err_), cudaGetErrorString(gw_err_));                        \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

namespace gwsample {

struct Totals {
  long long kernels = 0;
  unsigned long long h2d_bytes = 0, d2h_bytes = 0, d2d_bytes = 0;
  unsigned long long pinned_bytes = 0, pageable_bytes = 0;
  long long syncs = 0;
};

class Loop {
public:
  // Parses --steps N (default_steps when absent); exits 2 with a usage line on bad arguments.
  Loop(const char* name, int argc, char** argv, int default_steps)
      : name_(name), steps_(default_steps), start_(std::chrono::steady_clock::now()) {
    for (int i = 1; i < argc; ++i) {
      if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
        char* end = nullptr;
        const long value = std::strtol(argv[++i], &end, 10);
        if (end == argv[i] || *end != '\0' || value < 1 || value > 10'000'000) usage();
        steps_ = static_cast<int>(value);
      } else {
        usage();
      }
    }
    GW_CHECK(cudaSetDevice(0));
    GW_CHECK(cudaGetDeviceProperties(&prop_, 0));
    using IsSimulated = int (*)();
    auto is_simulated = reinterpret_cast<IsSimulated>(dlsym(RTLD_DEFAULT, "gwsimIsSimulated"));
    simulated_ = is_simulated != nullptr && is_simulated() == 1;
  }

  int steps() const { return steps_; }
  const cudaDeviceProp& device() const { return prop_; }
  bool simulated() const { return simulated_; }
  Totals& totals() { return totals_; }

  // kernel<<<grid, block, shared, stream>>>(args...), checked and counted.
  template <typename... Params, typename... Args>
  void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared, cudaStream_t stream,
              Args... args) {
    kernel<<<grid, block, shared, stream>>>(args...);
    GW_CHECK(cudaGetLastError());
    ++totals_.kernels;
  }

  // A counted copy; host_pinned says where the host side lives (ignored for device-to-device).
  void copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream,
            bool async, bool host_pinned) {
    if (async) {
      GW_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
    } else {
      GW_CHECK(cudaMemcpy(dst, src, bytes, kind));
    }
    if (kind == cudaMemcpyHostToDevice) totals_.h2d_bytes += bytes;
    if (kind == cudaMemcpyDeviceToHost) totals_.d2h_bytes += bytes;
    if (kind == cudaMemcpyDeviceToDevice) totals_.d2d_bytes += bytes;
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost) {
      (host_pinned ? totals_.pinned_bytes : totals_.pageable_bytes) += bytes;
    }
  }

  void deviceSync() {
    GW_CHECK(cudaDeviceSynchronize());
    ++totals_.syncs;
  }
  void streamSync(cudaStream_t stream) {
    GW_CHECK(cudaStreamSynchronize(stream));
    ++totals_.syncs;
  }
  void eventSync(cudaEvent_t event) {
    GW_CHECK(cudaEventSynchronize(event));
    ++totals_.syncs;
  }

  // Host work of `seconds` on this thread (a busy wait, as Python code that reads a value and
  // logs it keeps a core busy), the same on a real GPU and the simulated device.
  void hostWork(double seconds) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
    }
  }

  // Tells the simulated device how long one launch of `kernel` with this configuration should
  // take (about what it takes on a real H200), and its registers per thread. Uses the simulator's
  // documented cost model (tests/simdevice/README.md): duration = waves x 2 us x work x
  // max(fill, 0.25). A no-op on a real GPU, where gwsimSetKernelWork does not exist.
  template <typename... Params>
  void simulateKernelTime(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared,
                          double seconds, int registers) {
    using SetWork = int (*)(const void*, double, int);
    auto set_work = reinterpret_cast<SetWork>(dlsym(RTLD_DEFAULT, "gwsimSetKernelWork"));
    if (set_work == nullptr) return;
    const void* func = reinterpret_cast<const void*>(kernel);
    set_work(func, 1.0, registers); // registers first: they decide the occupancy below
    const int threads = static_cast<int>(block.x * block.y * block.z);
    int blocks_per_sm = 0;
    GW_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, func, threads, shared));
    const double slots =
        static_cast<double>(prop_.multiProcessorCount) * std::max(blocks_per_sm, 1);
    const double blocks = static_cast<double>(grid.x) * grid.y * grid.z;
    const double waves = std::ceil(blocks / slots);
    const double fill = std::min(1.0, blocks_per_sm * std::ceil(threads / 32.0) /
                                          (prop_.maxThreadsPerMultiProcessor / 32.0));
    const double work = seconds * 1e9 / (waves * kSimWaveNs * std::max(fill, 0.25));
    set_work(func, work, registers);
  }

  // Waits for the device and prints the summary line. Returns the process exit code.
  int finish() {
    GW_CHECK(cudaDeviceSynchronize());
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::printf("gwsample name=%s steps=%d kernels=%lld h2d_bytes=%llu d2h_bytes=%llu "
                "d2d_bytes=%llu pinned_bytes=%llu pageable_bytes=%llu syncs=%lld device=\"%s\" "
                "simulated=%d wall_s=%.3f\n",
                name_, steps_, totals_.kernels, totals_.h2d_bytes, totals_.d2h_bytes,
                totals_.d2d_bytes, totals_.pinned_bytes, totals_.pageable_bytes, totals_.syncs,
                prop_.name, simulated_ ? 1 : 0, wall);
    std::fflush(stdout);
    return 0;
  }

private:
  static constexpr double kSimWaveNs = 2000.0; // the simulator's wave time for work factor 1

  [[noreturn]] void usage() const {
    std::fprintf(stderr, "usage: %s [--steps N]\n", name_);
    std::exit(2);
  }

  const char* name_;
  int steps_;
  std::chrono::steady_clock::time_point start_;
  cudaDeviceProp prop_{};
  bool simulated_ = false;
  Totals totals_;
};

// A deterministic fill for host buffers (the samples never depend on kernel results).
inline void fillPattern(float* data, size_t count, unsigned seed) {
  unsigned state = seed * 2654435761u + 1u;
  for (size_t i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    data[i] = static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
  }
}

} // namespace gwsample
