#include "tests/simdevice/core/cost_model.h"

#include <algorithm>
#include <cmath>

#include <cuda_occupancy.h>

namespace gpuwise::sim {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

} // namespace

int occupancyBlocksPerSm(const DeviceModel& model, int block_threads, int registers,
                         size_t shared_bytes) {
  cudaDeviceProp prop;
  fillDeviceProp(model, 0, &prop);
  cudaOccDeviceProp occ_prop(prop);
  cudaOccFuncAttributes attributes;
  attributes.maxThreadsPerBlock = 1024;
  attributes.numRegs = std::max(registers, 1);
  attributes.sharedSizeBytes = 0;
  attributes.maxDynamicSharedSizeBytes = model.shared_per_block_optin;
  // Programs opt in to large dynamic shared memory with cudaFuncSetAttribute; the simulator
  // assumes they did rather than failing a launch that would run after the opt-in.
  attributes.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
  attributes.numBlockBarriers = 1;
  cudaOccDeviceState state;
  cudaOccResult result;
  if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &occ_prop, &attributes, &state,
                                              block_threads, shared_bytes) != CUDA_OCC_SUCCESS) {
    return 0;
  }
  return result.activeBlocksPerMultiprocessor;
}

KernelCost CostModel::kernel(const DeviceModel& model, const KernelShape& s, uint64_t seq) const {
  KernelCost cost;
  const uint64_t threads = uint64_t{s.block.x} * s.block.y * s.block.z;
  const uint64_t blocks = uint64_t{s.grid.x} * s.grid.y * s.grid.z;
  if (threads == 0 || blocks == 0 || threads > 1024 || s.block.z > 64 || s.grid.y > 65535 ||
      s.grid.z > 65535 || s.grid.x > 2147483647u) {
    cost.error = cudaErrorInvalidConfiguration;
    return cost;
  }
  const size_t shared = s.dynamic_shared + s.static_shared;
  if (shared > model.shared_per_block_optin) {
    cost.error = cudaErrorInvalidValue; // what the runtime returns for too much dynamic smem
    return cost;
  }
  cost.blocks_per_sm = occupancyBlocksPerSm(model, static_cast<int>(threads), s.registers, shared);
  if (cost.blocks_per_sm <= 0) {
    cost.error = cudaErrorLaunchOutOfResources;
    return cost;
  }
  const uint64_t slots = uint64_t(model.sm_count) * uint64_t(cost.blocks_per_sm);
  cost.waves = (blocks + slots - 1) / slots;
  const double warps_per_block = std::ceil(static_cast<double>(threads) / 32.0);
  const double fill =
      std::min(1.0, cost.blocks_per_sm * warps_per_block / (model.max_threads_per_sm / 32.0));
  const double work = s.work > 0 ? s.work : 1.0;
  const double ns = static_cast<double>(cost.waves) * static_cast<double>(config_.wave_ns) * work *
                    std::max(fill, 0.25);
  const double floored = std::max(ns, static_cast<double>(config_.kernel_floor_ns));
  cost.duration_ns = static_cast<TimeNs>(std::llround(floored * jitterFactor(seq)));
  return cost;
}

TimeNs CostModel::copyNs(const DeviceModel& model, CopyPath path, uint64_t bytes,
                         uint64_t seq) const {
  double gbps = model.pinned_gbps;
  switch (path) {
  case CopyPath::Pinned: gbps = model.pinned_gbps; break;
  case CopyPath::Pageable: gbps = model.pageable_gbps; break;
  case CopyPath::DeviceToDevice: gbps = model.d2d_gbps; break;
  case CopyPath::HostToHost: gbps = model.pageable_gbps; break;
  }
  const double ns =
      static_cast<double>(config_.copy_latency_ns) + static_cast<double>(bytes) / gbps;
  return static_cast<TimeNs>(std::llround(ns * jitterFactor(seq)));
}

TimeNs CostModel::memsetNs(const DeviceModel& model, uint64_t bytes, uint64_t seq) const {
  const double ns = static_cast<double>(config_.copy_latency_ns) +
                    static_cast<double>(bytes) / (2 * model.d2d_gbps);
  return static_cast<TimeNs>(std::llround(ns * jitterFactor(seq)));
}

double CostModel::jitterFactor(uint64_t seq) const {
  if (config_.jitter <= 0) return 1.0;
  const uint64_t bits = splitmix64(config_.seed * 0x100000001b3ull ^ seq) >> 11;   // 53 bits
  const double unit = static_cast<double>(bits) / static_cast<double>(1ull << 53); // [0, 1)
  return 1.0 + config_.jitter * (2.0 * unit - 1.0);
}

} // namespace gpuwise::sim
