#include "advisor/occupancy/device_limits.h"

#include <array>

namespace gpuwise::profiler {

namespace {

constexpr uint32_t kKiB = 1024;

struct ArchRow {
  int major, minor;
  uint32_t threads_per_sm, blocks_per_sm, smem_per_sm, smem_optin, reserved;
};

// Per-SM limits by compute capability, from the CUDA C++ Programming Guide's "Technical
// Specifications per Compute Capability" and cudaDeviceProp on real boards (the Kineto traces in
// ../shared/traces record them for 7.0, 8.0, 9.0 and 10.0). Every architecture here has 64 Ki
// 32-bit registers per SM and per block, and 48 KiB of shared memory per block without opt-in.
constexpr std::array kArchitectures = {
    //      cc     threads blocks smem/SM      opt-in/block  reserved
    ArchRow{6, 0, 2048, 32, 64 * kKiB, 48 * kKiB, 0},       // GP100
    ArchRow{6, 1, 2048, 32, 96 * kKiB, 48 * kKiB, 0},       // GP10x
    ArchRow{7, 0, 2048, 32, 96 * kKiB, 96 * kKiB, 0},       // V100
    ArchRow{7, 5, 1024, 16, 64 * kKiB, 64 * kKiB, 0},       // T4, RTX 20xx
    ArchRow{8, 0, 2048, 32, 164 * kKiB, 163 * kKiB, kKiB},  // A100, A30
    ArchRow{8, 6, 1536, 16, 100 * kKiB, 99 * kKiB, kKiB},   // A10, A40, RTX 30xx
    ArchRow{8, 7, 1536, 16, 164 * kKiB, 163 * kKiB, kKiB},  // Jetson Orin
    ArchRow{8, 9, 1536, 24, 100 * kKiB, 99 * kKiB, kKiB},   // L4, L40S, RTX 40xx
    ArchRow{9, 0, 2048, 32, 228 * kKiB, 227 * kKiB, kKiB},  // H100, H200, GH200
    ArchRow{10, 0, 2048, 32, 228 * kKiB, 227 * kKiB, kKiB}, // B200, GB200
    ArchRow{12, 0, 1536, 24, 100 * kKiB, 99 * kKiB, kKiB},  // RTX 50xx, RTX PRO 6000 Blackwell
};

struct NamedGpu {
  std::string_view needle; // substring of the marketing name; longer needles come first
  int major, minor;
  uint32_t sm_count;
};

// Common data-centre and workstation boards. Order matters: "A100" before "A10", "L40" before
// "L4", "H200" before "H20".
constexpr std::array kGpuNames = {
    NamedGpu{"GH200", 9, 0, 132},     NamedGpu{"H200", 9, 0, 132},
    NamedGpu{"H100 PCIe", 9, 0, 114}, NamedGpu{"H100", 9, 0, 132},
    NamedGpu{"H800", 9, 0, 132},      NamedGpu{"H20", 9, 0, 78},
    NamedGpu{"B200", 10, 0, 148},     NamedGpu{"A100", 8, 0, 108},
    NamedGpu{"A800", 8, 0, 108},      NamedGpu{"A30", 8, 0, 56},
    NamedGpu{"A40", 8, 6, 84},        NamedGpu{"A10G", 8, 6, 80},
    NamedGpu{"A10", 8, 6, 72},        NamedGpu{"L40S", 8, 9, 142},
    NamedGpu{"L40", 8, 9, 142},       NamedGpu{"L4", 8, 9, 58},
    NamedGpu{"RTX 5090", 12, 0, 170}, NamedGpu{"RTX PRO 6000", 12, 0, 188},
    NamedGpu{"RTX 4090", 8, 9, 128},  NamedGpu{"RTX 3090", 8, 6, 82},
    NamedGpu{"V100", 7, 0, 80},       NamedGpu{"T4", 7, 5, 40},
    NamedGpu{"GP100", 6, 0, 56},      NamedGpu{"P100", 6, 0, 56},
};

DeviceLimits fromRow(const ArchRow& row, int minor) {
  DeviceLimits d;
  d.compute_major = row.major;
  d.compute_minor = minor;
  d.max_threads_per_sm = row.threads_per_sm;
  d.max_blocks_per_sm = row.blocks_per_sm;
  d.registers_per_sm = 64 * kKiB;
  d.registers_per_block = 64 * kKiB;
  d.shared_memory_per_sm = row.smem_per_sm;
  d.shared_memory_per_block = 48 * kKiB;
  d.shared_memory_per_block_optin = row.smem_optin;
  d.reserved_shared_memory_per_block = row.reserved;
  d.source = LimitsSource::ComputeCapability;
  return d;
}

} // namespace

std::optional<DeviceLimits> limitsForComputeCapability(int major, int minor) {
  const ArchRow* best = nullptr;
  for (const ArchRow& row : kArchitectures) {
    if (row.major != major || row.minor > minor) continue;
    if (best == nullptr || row.minor > best->minor) best = &row;
  }
  if (best == nullptr) return std::nullopt;
  return fromRow(*best, minor);
}

bool isNonNvidiaGpu(std::string_view name) {
  for (std::string_view vendor : {"AMD", "Instinct", "Radeon", "MTIA", "ARTEMIS"}) {
    if (name.find(vendor) != std::string_view::npos) return true;
  }
  return false;
}

std::optional<DeviceLimits> limitsForGpuName(std::string_view name) {
  if (name.empty() || isNonNvidiaGpu(name)) return std::nullopt;
  for (const NamedGpu& gpu : kGpuNames) {
    if (name.find(gpu.needle) == std::string_view::npos) continue;
    std::optional<DeviceLimits> d = limitsForComputeCapability(gpu.major, gpu.minor);
    if (!d) return std::nullopt;
    d->sm_count = gpu.sm_count;
    d->source = LimitsSource::GpuName;
    return d;
  }
  return std::nullopt;
}

DeviceLimits resolveDeviceLimits(const model::DeviceInfo& device) {
  if (isNonNvidiaGpu(device.name)) return {};
  std::optional<DeviceLimits> by_name = limitsForGpuName(device.name);
  std::optional<DeviceLimits> base;
  if (device.compute_major > 0) {
    base = limitsForComputeCapability(device.compute_major, device.compute_minor);
  } else {
    base = by_name;
  }
  if (!base) return {};

  DeviceLimits d = *base;
  d.sm_count = device.sm_count != 0 ? device.sm_count : (by_name ? by_name->sm_count : 0);
  if (device.warp_size != 0) d.warp_size = device.warp_size;
  if (device.max_threads_per_sm != 0) d.max_threads_per_sm = device.max_threads_per_sm;
  if (device.max_blocks_per_sm != 0) d.max_blocks_per_sm = device.max_blocks_per_sm;
  if (device.registers_per_sm != 0) d.registers_per_sm = device.registers_per_sm;
  if (device.shared_memory_per_sm != 0) d.shared_memory_per_sm = device.shared_memory_per_sm;
  if (uint32_t max_block = device.max_shared_memory_per_block; max_block != 0) {
    if (max_block > d.shared_memory_per_block) {
      d.shared_memory_per_block_optin = max_block;
    } else {
      d.shared_memory_per_block = max_block;
    }
  }
  if (device.max_threads_per_sm != 0 && device.registers_per_sm != 0 &&
      device.shared_memory_per_sm != 0) {
    d.source = LimitsSource::Device;
  }
  return d;
}

} // namespace gpuwise::profiler
