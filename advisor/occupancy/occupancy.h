// How well a kernel launch fills the GPU: theoretical occupancy per SM, and how its grid spreads
// over the SMs in waves.
//
// Theoretical occupancy is what Nsight Compute calls "Theoretical Occupancy": active warps per SM
// over the maximum, from the launch configuration (block size, registers per thread, static and
// dynamic shared memory) and the device limits. It is computed by CUDA's own host-side calculator
// (cuda_occupancy.h, included only in occupancy.cpp), so register and shared-memory allocation
// granularities, the driver's reserved shared memory and per-architecture block limits are NVIDIA's
// rules, not ours.
//
// The advisor uses it to recommend larger batches: low occupancy from too few warps, an SM fill
// below 1 (fewer blocks than SMs can hold) and tail waves all say "the GPU had room for more".
//
// Pure functions on plain values; any thread, never blocks, no allocation.
#pragma once

#include "advisor/occupancy/device_limits.h"
#include "profiler/model/events.h"

#include <cstdint>
#include <string_view>

namespace gpuwise::profiler {

// The resource that stops another block from becoming resident on an SM.
enum class OccupancyLimiter : uint8_t {
  None = 0,     // occupancy unknown
  Warps,        // warp slots (block size); also reported when occupancy is 100%
  Registers,    // registers per thread
  SharedMemory, // static + dynamic shared memory per block
  Blocks,       // the architecture's resident-block limit (small blocks)
  Barriers,     // named barriers (Hopper+)
};

// "none", "warps", "registers", "shared_memory", "blocks", "barriers".
std::string_view limiterName(OccupancyLimiter limiter);

constexpr uint8_t limiterBit(OccupancyLimiter l) {
  return uint8_t(1u << static_cast<unsigned>(l));
}

struct LaunchShape {
  uint32_t threads_per_block = 0;
  uint32_t registers_per_thread = 0; // 0: unknown
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
};

struct Occupancy {
  // False when the device limits are not valid() or the block size is 0; everything else is 0.
  bool valid = false;
  uint32_t active_blocks_per_sm =
      0; // 0 for a launch that cannot run (block or shared memory too big)
  uint32_t active_warps_per_sm = 0;
  uint32_t max_warps_per_sm = 0;
  double occupancy = 0; // active_warps_per_sm / max_warps_per_sm, 0..1
  OccupancyLimiter limiter = OccupancyLimiter::None;
  uint8_t limiter_mask = 0; // limiterBit() of every resource at the binding limit (ties)
  // Registers per thread were 0 (unknown): the register limit was left out, so occupancy is an
  // upper bound.
  bool registers_unknown = false;
  // Resident blocks each resource alone would allow; UINT32_MAX when it does not limit.
  uint32_t blocks_by_warps = 0;
  uint32_t blocks_by_registers = 0;
  uint32_t blocks_by_shared_memory = 0;
  uint32_t blocks_by_architecture = 0;
};

Occupancy theoreticalOccupancy(const LaunchShape& launch, const DeviceLimits& device);

// The launch shape of a kernel record: block x*y*z threads, its registers and shared memory.
LaunchShape launchShape(const model::KernelExec& kernel);

// How a grid of blocks spreads over the SMs. A wave is the blocks the whole GPU holds at once:
// sm_count x active blocks per SM.
struct WaveFill {
  bool valid = false;  // false when the SM count or the active blocks per SM are unknown/0
  uint64_t blocks = 0; // grid size
  uint64_t blocks_per_wave = 0;
  double waves = 0;        // blocks / blocks_per_wave
  uint64_t wave_count = 0; // ceil(waves): waves the scheduler actually runs
  // Share of the first wave's slots the grid fills: min(1, blocks / blocks_per_wave).
  double sm_fill = 0;
  // Share of all scheduled slots left idle because the last wave is partial:
  // (wave_count x blocks_per_wave - blocks) / (wave_count x blocks_per_wave). For a grid smaller
  // than one wave this is 1 - sm_fill; one block over a wave costs almost half of two waves.
  double tail_loss = 0;
};

WaveFill waveFill(uint64_t grid_blocks, uint32_t sm_count, uint32_t active_blocks_per_sm);

// Occupancy and wave fill of one kernel execution on a device.
struct LaunchAnalysis {
  Occupancy occupancy;
  WaveFill fill;
};

LaunchAnalysis analyzeLaunch(const model::KernelExec& kernel, const DeviceLimits& device);

} // namespace gpuwise::profiler
