#include "tests/simdevice/core/device_model.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace gpuwise::sim {
namespace {

// clang-format off
constexpr DeviceModel kModels[] = {
  // H200 SXM (GH100, cc 9.0): 132 SMs, 141 GB HBM3e (150,754,820,096 bytes reported), 228 KB of
  // shared memory per SM of which 227 KB opt-in per block, PCIe Gen5 host link.
  {"h200", "NVIDIA H200", 132, 150'754'820'096ull, 9, 0, 2048, 32, 65536, 65536,
   233472, 49152, 232448, 1024, 52'428'800, 6144, 1'980'000, 3'201'000, 3, 0x2335,
   50.0, 12.0, 2000.0, 4800.0},
  // A100 SXM4 80GB (GA100, cc 8.0): totalGlobalMem as the HTA recsys trace reports it.
  {"a100-80gb", "NVIDIA A100-SXM4-80GB", 108, 84'990'623'744ull, 8, 0, 2048, 32, 65536, 65536,
   167936, 49152, 166912, 1024, 41'943'040, 5120, 1'410'000, 1'593'000, 3, 0x20b2,
   24.0, 10.0, 1300.0, 2039.0},
  // V100 SXM2 16GB (GV100, cc 7.0): totalGlobalMem as the HTA V100 traces report it.
  {"v100", "Tesla V100-SXM2-16GB", 80, 16'945'512'448ull, 7, 0, 2048, 32, 65536, 65536,
   98304, 49152, 98304, 0, 6'291'456, 4096, 1'530'000, 877'000, 6, 0x1db1,
   12.0, 6.0, 750.0, 900.0},
};
// clang-format on

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

} // namespace

std::span<const DeviceModel> deviceModels() {
  return kModels;
}

const DeviceModel* findDeviceModel(std::string_view key) {
  for (const DeviceModel& model : kModels) {
    if (equalsIgnoreCase(key, model.key)) return &model;
  }
  return nullptr;
}

void fillDeviceProp(const DeviceModel& m, int ordinal, cudaDeviceProp* p) {
  std::memset(p, 0, sizeof(*p));
  std::strncpy(p->name, m.name, sizeof(p->name) - 1);
  // A stable, recognisable UUID: "gwsim" + model key + ordinal.
  std::memcpy(p->uuid.bytes, "gwsim", 5);
  std::strncpy(p->uuid.bytes + 5, m.key, 10);
  p->uuid.bytes[15] = static_cast<char>(ordinal);
  p->totalGlobalMem = m.total_memory_bytes;
  p->sharedMemPerBlock = m.shared_per_block;
  p->regsPerBlock = m.registers_per_block;
  p->warpSize = 32;
  p->memPitch = 2147483647;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsDim[0] = 1024, p->maxThreadsDim[1] = 1024, p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 2147483647, p->maxGridSize[1] = 65535, p->maxGridSize[2] = 65535;
  p->totalConstMem = 65536;
  p->major = m.cc_major;
  p->minor = m.cc_minor;
  p->textureAlignment = 512;
  p->texturePitchAlignment = 32;
  p->multiProcessorCount = m.sm_count;
  p->canMapHostMemory = 1;
  p->maxTexture1D = 131072;
  p->maxTexture2D[0] = 131072, p->maxTexture2D[1] = 65536;
  p->maxTexture3D[0] = p->maxTexture3D[1] = p->maxTexture3D[2] = 16384;
  p->surfaceAlignment = 512;
  p->concurrentKernels = 1;
  p->ECCEnabled = 1;
  p->pciBusID = 0x18 + ordinal;
  p->asyncEngineCount = m.async_engines;
  p->unifiedAddressing = 1;
  p->memoryBusWidth = m.memory_bus_width_bits;
  p->l2CacheSize = m.l2_bytes;
  p->persistingL2CacheMaxSize = m.cc_major >= 8 ? m.l2_bytes / 4 * 3 : 0;
  p->maxThreadsPerMultiProcessor = m.max_threads_per_sm;
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = m.shared_per_sm;
  p->regsPerMultiprocessor = m.registers_per_sm;
  p->managedMemory = 1;
  p->multiGpuBoardGroupID = ordinal;
  p->concurrentManagedAccess = 1;
  p->computePreemptionSupported = 1;
  p->canUseHostPointerForRegisteredMem = 1;
  p->cooperativeLaunch = 1;
  p->sharedMemPerBlockOptin = m.shared_per_block_optin;
  p->maxBlocksPerMultiProcessor = m.max_blocks_per_sm;
  p->accessPolicyMaxWindowSize = m.cc_major >= 8 ? 134213632 : 0;
  p->reservedSharedMemPerBlock = m.reserved_shared_per_block;
  p->hostRegisterSupported = 1;
  p->sparseCudaArraySupported = 1;
  p->hostRegisterReadOnlySupported = 1;
  p->timelineSemaphoreInteropSupported = 1;
  p->memoryPoolsSupported = 1;
  p->gpuDirectRDMASupported = 1;
  p->memoryPoolSupportedHandleTypes = 1;
  p->ipcEventSupported = 1;
  p->clusterLaunch = m.cc_major >= 9 ? 1 : 0;
  p->unifiedFunctionPointers = 1;
  p->deviceNumaId = -1;
  p->hostNumaId = -1;
  p->gpuPciDeviceID = (m.pci_device_id << 16) | 0x10de;
}

cudaError_t deviceAttribute(const DeviceModel& m, int ordinal, cudaDeviceAttr attr, int* value) {
  if (value == nullptr || static_cast<int>(attr) < 1 || static_cast<int>(attr) >= cudaDevAttrMax) {
    return cudaErrorInvalidValue;
  }
  cudaDeviceProp p;
  fillDeviceProp(m, ordinal, &p);
  int v = 0;
  switch (attr) {
  case cudaDevAttrMaxThreadsPerBlock: v = p.maxThreadsPerBlock; break;
  case cudaDevAttrMaxBlockDimX: v = p.maxThreadsDim[0]; break;
  case cudaDevAttrMaxBlockDimY: v = p.maxThreadsDim[1]; break;
  case cudaDevAttrMaxBlockDimZ: v = p.maxThreadsDim[2]; break;
  case cudaDevAttrMaxGridDimX: v = p.maxGridSize[0]; break;
  case cudaDevAttrMaxGridDimY: v = p.maxGridSize[1]; break;
  case cudaDevAttrMaxGridDimZ: v = p.maxGridSize[2]; break;
  case cudaDevAttrMaxSharedMemoryPerBlock: v = static_cast<int>(p.sharedMemPerBlock); break;
  case cudaDevAttrTotalConstantMemory: v = static_cast<int>(p.totalConstMem); break;
  case cudaDevAttrWarpSize: v = p.warpSize; break;
  case cudaDevAttrMaxPitch: v = static_cast<int>(p.memPitch); break;
  case cudaDevAttrMaxRegistersPerBlock: v = p.regsPerBlock; break;
  case cudaDevAttrClockRate: v = m.clock_khz; break;
  case cudaDevAttrTextureAlignment: v = static_cast<int>(p.textureAlignment); break;
  case cudaDevAttrGpuOverlap: v = 1; break;
  case cudaDevAttrMultiProcessorCount: v = p.multiProcessorCount; break;
  case cudaDevAttrCanMapHostMemory: v = 1; break;
  case cudaDevAttrConcurrentKernels: v = 1; break;
  case cudaDevAttrEccEnabled: v = p.ECCEnabled; break;
  case cudaDevAttrPciBusId: v = p.pciBusID; break;
  case cudaDevAttrMemoryClockRate: v = m.memory_clock_khz; break;
  case cudaDevAttrGlobalMemoryBusWidth: v = p.memoryBusWidth; break;
  case cudaDevAttrL2CacheSize: v = p.l2CacheSize; break;
  case cudaDevAttrMaxThreadsPerMultiProcessor: v = p.maxThreadsPerMultiProcessor; break;
  case cudaDevAttrAsyncEngineCount: v = p.asyncEngineCount; break;
  case cudaDevAttrUnifiedAddressing: v = 1; break;
  case cudaDevAttrComputeCapabilityMajor: v = p.major; break;
  case cudaDevAttrComputeCapabilityMinor: v = p.minor; break;
  case cudaDevAttrStreamPrioritiesSupported: v = 1; break;
  case cudaDevAttrGlobalL1CacheSupported: v = 1; break;
  case cudaDevAttrLocalL1CacheSupported: v = 1; break;
  case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
    v = static_cast<int>(p.sharedMemPerMultiprocessor);
    break;
  case cudaDevAttrMaxRegistersPerMultiprocessor: v = p.regsPerMultiprocessor; break;
  case cudaDevAttrManagedMemory: v = 1; break;
  case cudaDevAttrMultiGpuBoardGroupID: v = ordinal; break;
  case cudaDevAttrSingleToDoublePrecisionPerfRatio: v = 2; break;
  case cudaDevAttrConcurrentManagedAccess: v = 1; break;
  case cudaDevAttrComputePreemptionSupported: v = 1; break;
  case cudaDevAttrCanUseHostPointerForRegisteredMem: v = 1; break;
  case cudaDevAttrCooperativeLaunch: v = 1; break;
  case cudaDevAttrMaxSharedMemoryPerBlockOptin:
    v = static_cast<int>(p.sharedMemPerBlockOptin);
    break;
  case cudaDevAttrHostRegisterSupported: v = 1; break;
  case cudaDevAttrMaxBlocksPerMultiprocessor: v = p.maxBlocksPerMultiProcessor; break;
  case cudaDevAttrMaxPersistingL2CacheSize: v = p.persistingL2CacheMaxSize; break;
  case cudaDevAttrMaxAccessPolicyWindowSize: v = p.accessPolicyMaxWindowSize; break;
  case cudaDevAttrReservedSharedMemoryPerBlock:
    v = static_cast<int>(p.reservedSharedMemPerBlock);
    break;
  case cudaDevAttrMemoryPoolsSupported: v = 1; break;
  case cudaDevAttrGPUDirectRDMASupported: v = 1; break;
  case cudaDevAttrClusterLaunch: v = p.clusterLaunch; break;
  case cudaDevAttrIpcEventSupport: v = 1; break;
  case cudaDevAttrNumaId: v = -1; break;
  case cudaDevAttrHostNumaId: v = -1; break;
  case cudaDevAttrGpuPciDeviceId: v = static_cast<int>(p.gpuPciDeviceID); break;
  default: v = 0; break; // a real attribute this model does not describe: reported as 0
  }
  *value = v;
  return cudaSuccess;
}

} // namespace gpuwise::sim
