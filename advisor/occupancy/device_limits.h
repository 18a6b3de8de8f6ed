// Per-SM hardware limits of a GPU, as the occupancy calculator needs them.
//
// A trace gives some of them (Kineto's deviceProperties, CUPTI's device record, NVML), the shim's
// DeviceInfo carries what it gives, and the rest comes from tables here: first by compute
// capability (the architecture fixes warps, blocks, registers and shared memory per SM), and when
// even that is unknown, by GPU name (which also gives the SM count of common boards).
//
// Pure functions on plain values; any thread, never blocks.
#pragma once

#include "profiler/model/process.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuwise::profiler {

// Where the architecture limits came from, best first.
enum class LimitsSource : uint8_t {
  Unknown = 0,       // not an NVIDIA GPU we can describe: no occupancy
  Device,            // the trace or the device itself reported the per-SM limits
  ComputeCapability, // the table below, keyed by the reported compute capability
  GpuName,           // compute capability inferred from the GPU name, then the table
};

struct DeviceLimits {
  int compute_major = 0, compute_minor = 0;
  uint32_t sm_count = 0; // 0 when unknown: SM fill and waves are then unavailable
  uint32_t warp_size = 32;
  uint32_t max_threads_per_block = 1024;
  uint32_t max_threads_per_sm = 0;
  uint32_t max_blocks_per_sm = 0;
  uint32_t registers_per_sm = 0;
  uint32_t registers_per_block = 0;
  uint32_t shared_memory_per_sm = 0;
  uint32_t shared_memory_per_block = 0;          // without opt-in (48 KiB on every GPU here)
  uint32_t shared_memory_per_block_optin = 0;    // with cudaFuncAttributeMaxDynamicSharedMemorySize
  uint32_t reserved_shared_memory_per_block = 0; // taken by the driver per block, Ampere and later
  LimitsSource source = LimitsSource::Unknown;

  // True when theoretical occupancy can be computed.
  bool valid() const {
    return source != LimitsSource::Unknown && compute_major > 0 && max_threads_per_sm > 0 &&
           max_blocks_per_sm > 0 && registers_per_sm > 0 && shared_memory_per_sm > 0 &&
           warp_size > 0;
  }
};

// The architecture's limits for a compute capability: 6.0, 6.1, 7.0, 7.5, 8.0, 8.6, 8.7, 8.9, 9.0,
// 10.0, 12.0 exactly; another minor of a known major takes the nearest lower known minor of that
// major (10.3 -> 10.0, 12.1 -> 12.0). sm_count stays 0. nullopt for anything else.
std::optional<DeviceLimits> limitsForComputeCapability(int major, int minor);

// Compute capability and SM count of a GPU recognised by name ("NVIDIA H100 80GB HBM3" -> 9.0 with
// 132 SMs, "Tesla V100-DGXS-32GB" -> 7.0 with 80), with that capability's limits. nullopt for
// names not in the table and for non-NVIDIA GPUs.
std::optional<DeviceLimits> limitsForGpuName(std::string_view name);

// True for names of GPUs that are not NVIDIA's (AMD Instinct/Radeon): their traces may report a
// "compute capability" (gfx9 as 9.0) that means something else.
bool isNonNvidiaGpu(std::string_view name);

// Limits for a device as a trace describes it: every non-zero field of `device` wins; the rest
// comes from the compute-capability table, or from the GPU name when the capability is 0.0.
// `device.max_shared_memory_per_block` above the default 48 KiB is taken as the opt-in maximum.
// Not valid() when neither the capability nor the name is known, or the GPU is not NVIDIA's.
DeviceLimits resolveDeviceLimits(const model::DeviceInfo& device);

} // namespace gpuwise::profiler
