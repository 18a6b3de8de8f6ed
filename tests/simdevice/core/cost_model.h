// How long simulated GPU work takes. Documented in tests/simdevice/README.md ("Cost model"):
//
//   kernel:  blocks_per_sm = CUDA occupancy calculator (block size, registers, shared memory)
//            waves         = ceil(grid blocks / (SMs x blocks_per_sm))
//            fill          = blocks_per_sm x warps per block / max warps per SM   (0..1)
//            duration      = max(kernel_floor, waves x wave_ns x work x max(fill, 0.25)) x jitter
//   copy:    copy_latency + bytes / bandwidth(path)   x jitter
//   memset:  copy_latency + bytes / (2 x d2d bandwidth)   x jitter
//
// `work` is the kernel's work factor (1 unless the program set one with gwsimSetKernelWork): one
// unit is wave_ns (2 us) of a fully occupied SM. Jitter is deterministic: a function of the seed
// and the operation's sequence number, uniform in +-SimConfig::jitter.
//
// Pure functions of their arguments: any thread, no locks.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "tests/simdevice/core/config.h"
#include "tests/simdevice/core/device_model.h"

namespace gpuwise::sim {

struct KernelShape {
  dim3 grid, block;
  size_t dynamic_shared = 0;
  size_t static_shared = 0;
  int registers = 32;
  double work = 1.0;
};

struct KernelCost {
  cudaError_t error = cudaSuccess; // cudaErrorInvalidConfiguration, cudaErrorLaunchOutOfResources
  int blocks_per_sm = 0;
  uint64_t waves = 0;
  TimeNs duration_ns = 0;
};

enum class CopyPath : uint8_t { Pinned, Pageable, DeviceToDevice, HostToHost };

// Resident blocks per SM from CUDA's own occupancy calculator (cuda_occupancy.h); 0 when one block
// does not fit (too many threads, registers or shared memory).
int occupancyBlocksPerSm(const DeviceModel& model, int block_threads, int registers,
                         size_t shared_bytes);

class CostModel {
public:
  explicit CostModel(const SimConfig& config) : config_(config) {}

  KernelCost kernel(const DeviceModel& model, const KernelShape& shape, uint64_t seq) const;
  TimeNs copyNs(const DeviceModel& model, CopyPath path, uint64_t bytes, uint64_t seq) const;
  TimeNs memsetNs(const DeviceModel& model, uint64_t bytes, uint64_t seq) const;

  // 1 +- jitter, a pure function of (seed, seq).
  double jitterFactor(uint64_t seq) const;

private:
  SimConfig config_;
};

} // namespace gpuwise::sim
