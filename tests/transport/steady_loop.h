// A synthetic steady training loop: the kernel stream the codec is sized for. Used by the codec
// tests (bytes-per-kernel bound) and by tests/bench/transport_codec_bench.cpp.
//
// Shape, from what PyTorch training loops look like under Nsight/Kineto: one step launches a fixed
// sequence of ~1.5x `distinct` kernels drawn from `distinct` launch sites (forward and backward
// reuse kernels), on one stream from one thread. Nominal GPU durations are log-normal (median
// ~40 us, a few ms at most), host gaps between launches 6-30 us, launch calls 2.5-7 us, the GPU
// starting ~3 us after a launch or ~1 us after the previous kernel when it is behind. Every time
// gets independent Gaussian jitter (sigma = `jitter`, 3% by default), so no two steps repeat
// exactly. The step ends with a host synchronisation (loss.item()).
#pragma once

#include "profiler/model/events.h"
#include "profiler/model/name_table.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace gpuwise::transport::testing {

class SteadyLoop {
public:
  SteadyLoop(model::NameTable& names, uint64_t seed, int distinct = 32, double jitter = 0.03)
      : rng_(seed), jitter_(jitter) {
    std::lognormal_distribution<double> dur(std::log(40e3), 1.2);
    std::uniform_real_distribution<double> gap(6e3, 30e3), launch(2.5e3, 7e3);
    std::uniform_int_distribution<int> pick(0, distinct - 1);
    for (int i = 0; i < distinct; ++i) {
      Site s;
      s.kernel.name =
          names.intern("void at::native::elementwise_kernel<128, 4, " + std::to_string(i) +
                       ">(int, at::native::gpu_kernel_impl_nocast<float>)");
      s.kernel.device = 0;
      s.kernel.stream = 7;
      s.kernel.thread = 4242;
      s.kernel.grid = {uint32_t(80 * (1 + i % 7)), 1, 1};
      s.kernel.block = {uint32_t(128 << (i % 3)), 1, 1};
      s.kernel.registers_per_thread = 32 + 8 * (i % 9);
      s.kernel.static_shared_bytes = (i % 4) * 4096;
      s.kernel.dynamic_shared_bytes = (i % 5 == 0) ? 49152 : 0;
      s.gpu_ns = std::clamp(dur(rng_), 2e3, 3e6);
      s.gap_ns = gap(rng_);
      s.launch_ns = launch(rng_);
      sites_.push_back(s);
    }
    const int length = distinct + distinct / 2;
    for (int i = 0; i < length; ++i)
      sequence_.push_back(i < distinct ? i : pick(rng_));
  }

  // Appends the next `n` kernels of the loop.
  void next(size_t n, std::vector<model::KernelExec>& out) {
    for (size_t i = 0; i < n; ++i) {
      if (pos_ == sequence_.size()) { // end of step: the host waits for the GPU
        pos_ = 0;
        host_ = std::max(host_, gpu_free_) + jittered(15e3);
      }
      const Site& s = sites_[sequence_[pos_++]];
      model::KernelExec k = s.kernel;
      host_ += jittered(s.gap_ns);
      k.launch_start = host_;
      k.launch_end = host_ + jittered(s.launch_ns);
      host_ = k.launch_end;
      k.start = std::max(k.launch_start + jittered(3e3), gpu_free_ + jittered(1e3));
      k.end = k.start + jittered(s.gpu_ns);
      gpu_free_ = k.end;
      out.push_back(k);
    }
  }

private:
  struct Site {
    model::KernelExec kernel;
    double gpu_ns = 0, gap_ns = 0, launch_ns = 0;
  };
  int64_t jittered(double nominal) {
    std::normal_distribution<double> n(1.0, jitter_);
    return std::max<int64_t>(1, std::llround(nominal * std::max(0.5, n(rng_))));
  }

  std::mt19937_64 rng_;
  double jitter_;
  std::vector<Site> sites_;
  std::vector<int> sequence_;
  size_t pos_ = 0;
  int64_t host_ = 3'600'000'000'000'000; // CLOCK_MONOTONIC ns after ~41 days of uptime
  int64_t gpu_free_ = 0;
};

} // namespace gpuwise::transport::testing
