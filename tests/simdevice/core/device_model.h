// The GPU models the simulated device can pretend to be (GWSIM_DEVICE): real product names and the
// per-SM limits the occupancy calculator and the cost model need, plus the copy bandwidths the
// cost model uses. Numbers are the ones the real parts report through cudaGetDeviceProperties
// (cross-checked with deviceProperties in the real traces under ../shared/traces where present).
//
// Pure data and pure functions: any thread, no locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <cuda_runtime_api.h>

namespace gpuwise::sim {

struct DeviceModel {
  const char* key;  // GWSIM_DEVICE value: "h200", "a100-80gb", "v100"
  const char* name; // product name exactly as the real part reports it
  int sm_count;
  uint64_t total_memory_bytes;
  int cc_major, cc_minor;
  int max_threads_per_sm;
  int max_blocks_per_sm;
  int registers_per_sm;
  int registers_per_block;
  size_t shared_per_sm;
  size_t shared_per_block;
  size_t shared_per_block_optin;
  size_t reserved_shared_per_block;
  int l2_bytes;
  int memory_bus_width_bits;
  int clock_khz;
  int memory_clock_khz;
  int async_engines;
  uint32_t pci_device_id;
  // Copy bandwidths in GB/s (= bytes per ns) and the DRAM bandwidth for CUPTI's device record.
  double pinned_gbps;   // H2D / D2H from page-locked host memory (PCIe / NVLink-C2C DMA)
  double pageable_gbps; // H2D / D2H from pageable memory, staged by the driver
  double d2d_gbps;      // device-to-device copies and memsets
  double dram_gbps;
};

// Every model the simulator knows, h200 first (the default).
std::span<const DeviceModel> deviceModels();

// The model for a GWSIM_DEVICE key (case-insensitive), or nullptr.
const DeviceModel* findDeviceModel(std::string_view key);

// Fills *prop the way the real runtime would for this model as device `ordinal`.
void fillDeviceProp(const DeviceModel& model, int ordinal, cudaDeviceProp* prop);

// cudaDeviceGetAttribute for this model; cudaErrorInvalidValue for an attribute outside the enum.
cudaError_t deviceAttribute(const DeviceModel& model, int ordinal, cudaDeviceAttr attr, int* value);

} // namespace gpuwise::sim
