// Simulator settings, read once from the environment when the simulator first starts (and again in
// a forked child, which starts a fresh simulator). Every variable is documented in
// tests/simdevice/README.md; the defaults give H200-like timing.
#pragma once

#include <cstdint>
#include <string>

#include "tests/simdevice/core/clock.h"

namespace gpuwise::sim {

struct SimConfig {
  std::string device_key = "h200"; // GWSIM_DEVICE
  bool device_key_known = true;    // false when GWSIM_DEVICE named no model (h200 is used)
  int device_count = 1;            // GWSIM_DEVICE_COUNT, 1..16

  // GPU side.
  TimeNs launch_latency_ns = 4'000; // GWSIM_LAUNCH_LATENCY_NS: host launch -> earliest kernel start
  TimeNs kernel_floor_ns = 1'500;   // shortest kernel
  TimeNs wave_ns = 2'000;           // one full wave of work factor 1 (see cost_model.h)
  TimeNs copy_latency_ns = 1'500;   // fixed cost of every copy / memset on the GPU
  TimeNs graph_node_gap_ns = 600;   // gap between consecutive nodes of a replayed graph
  double jitter = 0.03;             // GWSIM_JITTER_PCT / 100: +-3 % deterministic jitter
  uint64_t seed = 1;                // GWSIM_SEED

  // Host side: what each call costs the calling thread, like the real driver's CPU overhead.
  TimeNs launch_host_ns = 2'500; // GWSIM_LAUNCH_HOST_NS: cudaLaunchKernel / <<<>>>
  TimeNs async_host_ns = 2'000;  // async copies and memsets, graph launch, event record
  TimeNs alloc_host_ns = 10'000; // cudaMalloc / cudaFree / cudaMallocHost ...

  // Memory the driver keeps for itself: cudaMemGetInfo's free starts below total by this much.
  uint64_t context_reserve_bytes = 512ull << 20;

  bool cupti_busy = false; // GWSIM_CUPTI_BUSY=1: another tool holds CUPTI
};

// Reads the GWSIM_* variables. Unknown or malformed values fall back to the defaults above.
SimConfig loadConfigFromEnv();

} // namespace gpuwise::sim
