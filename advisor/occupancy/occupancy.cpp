#include "advisor/occupancy/occupancy.h"

#include <algorithm>
#include <climits>

// CUDA's host-only occupancy calculator: header-only, no runtime, no GPU. Only this file sees it.
#include <cuda_occupancy.h>

namespace gpuwise::profiler {

std::string_view limiterName(OccupancyLimiter limiter) {
  switch (limiter) {
  case OccupancyLimiter::Warps: return "warps";
  case OccupancyLimiter::Registers: return "registers";
  case OccupancyLimiter::SharedMemory: return "shared_memory";
  case OccupancyLimiter::Blocks: return "blocks";
  case OccupancyLimiter::Barriers: return "barriers";
  case OccupancyLimiter::None: break;
  }
  return "none";
}

namespace {

cudaOccDeviceProp toOccProp(const DeviceLimits& d) {
  cudaOccDeviceProp p;
  p.computeMajor = d.compute_major;
  p.computeMinor = d.compute_minor;
  p.maxThreadsPerBlock = static_cast<int>(d.max_threads_per_block);
  p.maxThreadsPerMultiprocessor = static_cast<int>(d.max_threads_per_sm);
  p.regsPerBlock =
      static_cast<int>(d.registers_per_block != 0 ? d.registers_per_block : d.registers_per_sm);
  p.regsPerMultiprocessor = static_cast<int>(d.registers_per_sm);
  p.warpSize = static_cast<int>(d.warp_size);
  p.sharedMemPerBlock = d.shared_memory_per_block;
  p.sharedMemPerMultiprocessor = d.shared_memory_per_sm;
  // numSms only feeds the input check; occupancy is per SM.
  p.numSms = d.sm_count != 0 ? static_cast<int>(d.sm_count) : 1;
  p.sharedMemPerBlockOptin = std::max(d.shared_memory_per_block_optin, d.shared_memory_per_block);
  p.reservedSharedMemPerBlock = d.reserved_shared_memory_per_block;
  return p;
}

// The kernel's attributes as the runtime would build them from cudaFuncAttributes: the launch
// succeeded, so its dynamic shared memory was within the kernel's opt-in limit; one block barrier
// (__syncthreads) as every real kernel has.
cudaOccFuncAttributes toOccAttributes(const LaunchShape& launch, const DeviceLimits& d) {
  cudaOccFuncAttributes a;
  a.maxThreadsPerBlock = static_cast<int>(d.max_threads_per_block);
  a.numRegs = static_cast<int>(launch.registers_per_thread);
  a.sharedSizeBytes = launch.static_shared_bytes;
  a.partitionedGCConfig = PARTITIONED_GC_OFF;
  a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  a.maxDynamicSharedSizeBytes = launch.dynamic_shared_bytes;
  a.numBlockBarriers = 1;
  a.virtualResourceCount = 0;
  return a;
}

uint32_t asLimit(int blocks) {
  return blocks == INT_MAX ? UINT32_MAX : static_cast<uint32_t>(std::max(blocks, 0));
}

// One resource to blame: at 100% the SM is full of warps; otherwise prefer the resource a user can
// act on (registers via __launch_bounds__, shared memory via tiling) over the block-size effects.
OccupancyLimiter primaryLimiter(uint8_t mask, double occupancy) {
  if (mask == 0) return OccupancyLimiter::None;
  if (occupancy >= 1.0 && (mask & limiterBit(OccupancyLimiter::Warps))) {
    return OccupancyLimiter::Warps;
  }
  for (OccupancyLimiter l :
       {OccupancyLimiter::Registers, OccupancyLimiter::SharedMemory, OccupancyLimiter::Blocks,
        OccupancyLimiter::Warps, OccupancyLimiter::Barriers}) {
    if (mask & limiterBit(l)) return l;
  }
  return OccupancyLimiter::None;
}

} // namespace

Occupancy theoreticalOccupancy(const LaunchShape& launch, const DeviceLimits& device) {
  Occupancy out;
  if (!device.valid() || launch.threads_per_block == 0) return out;

  cudaOccDeviceProp prop = toOccProp(device);
  cudaOccFuncAttributes attr = toOccAttributes(launch, device);
  cudaOccDeviceState state; // default carveout: the driver picks the shared-memory split
  cudaOccResult r{};
  cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(
      &r, &prop, &attr, &state,
      static_cast<int>(std::min<uint32_t>(launch.threads_per_block, INT_MAX)),
      static_cast<size_t>(launch.dynamic_shared_bytes));
  if (err != CUDA_OCC_SUCCESS) return out;

  uint32_t warps_per_block = (launch.threads_per_block + device.warp_size - 1) / device.warp_size;
  out.valid = true;
  out.registers_unknown = launch.registers_per_thread == 0;
  out.max_warps_per_sm = device.max_threads_per_sm / device.warp_size;
  out.active_blocks_per_sm = asLimit(r.activeBlocksPerMultiprocessor);
  out.active_warps_per_sm = out.active_blocks_per_sm * warps_per_block;
  out.occupancy = out.max_warps_per_sm == 0
                      ? 0.0
                      : double(out.active_warps_per_sm) / double(out.max_warps_per_sm);
  out.blocks_by_warps = asLimit(r.blockLimitWarps);
  out.blocks_by_registers = asLimit(r.blockLimitRegs);
  out.blocks_by_shared_memory = asLimit(r.blockLimitSharedMem);
  out.blocks_by_architecture = asLimit(r.blockLimitBlocks);

  if (r.limitingFactors & OCC_LIMIT_WARPS) out.limiter_mask |= limiterBit(OccupancyLimiter::Warps);
  if (r.limitingFactors & OCC_LIMIT_REGISTERS) {
    out.limiter_mask |= limiterBit(OccupancyLimiter::Registers);
  }
  if (r.limitingFactors & OCC_LIMIT_SHARED_MEMORY) {
    out.limiter_mask |= limiterBit(OccupancyLimiter::SharedMemory);
  }
  if (r.limitingFactors & OCC_LIMIT_BLOCKS)
    out.limiter_mask |= limiterBit(OccupancyLimiter::Blocks);
  if (r.limitingFactors & OCC_LIMIT_BARRIERS) {
    out.limiter_mask |= limiterBit(OccupancyLimiter::Barriers);
  }
  out.limiter = primaryLimiter(out.limiter_mask, out.occupancy);
  return out;
}

LaunchShape launchShape(const model::KernelExec& kernel) {
  LaunchShape s;
  s.threads_per_block = static_cast<uint32_t>(std::min<uint64_t>(kernel.block.count(), UINT32_MAX));
  s.registers_per_thread = kernel.registers_per_thread;
  s.static_shared_bytes = kernel.static_shared_bytes;
  s.dynamic_shared_bytes = kernel.dynamic_shared_bytes;
  return s;
}

WaveFill waveFill(uint64_t grid_blocks, uint32_t sm_count, uint32_t active_blocks_per_sm) {
  WaveFill w;
  if (sm_count == 0 || active_blocks_per_sm == 0) return w;
  w.valid = true;
  w.blocks = grid_blocks;
  w.blocks_per_wave = uint64_t{sm_count} * active_blocks_per_sm;
  if (grid_blocks == 0) return w;
  w.waves = double(grid_blocks) / double(w.blocks_per_wave);
  w.wave_count = (grid_blocks + w.blocks_per_wave - 1) / w.blocks_per_wave;
  w.sm_fill = std::min(1.0, w.waves);
  uint64_t slots = w.wave_count * w.blocks_per_wave;
  w.tail_loss = double(slots - grid_blocks) / double(slots);
  return w;
}

LaunchAnalysis analyzeLaunch(const model::KernelExec& kernel, const DeviceLimits& device) {
  LaunchAnalysis a;
  a.occupancy = theoreticalOccupancy(launchShape(kernel), device);
  if (a.occupancy.valid) {
    a.fill = waveFill(kernel.grid.count(), device.sm_count, a.occupancy.active_blocks_per_sm);
  }
  return a;
}

} // namespace gpuwise::profiler
