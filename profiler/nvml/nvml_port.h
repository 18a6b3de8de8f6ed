// The port through which every NVML entry point gpuwise uses is called: one virtual method per
// NVML function, named after it without the "nvml" prefix (and without its _vN suffix). DlNvmlPort
// (dl_nvml_port.h) calls the real libnvidia-ml.so.1 found with dlopen; FakeNvmlPort
// (fake_nvml_port.h) stands in for it in tests.
//
// Threads: NVML is thread-safe; gpuwise calls it from one thread at a time anyway (the drain
// thread, never an application thread). Implementations never throw.
#pragma once

#include "profiler/nvml/nvml_types.h"

namespace gpuwise::profiler {

class NvmlPort {
public:
  virtual ~NvmlPort() = default;

  // False when the library or one of the required entry points could not be found; every method
  // then returns NVML_ERROR_LIBRARY_NOT_FOUND. `whyUnavailable` says why in one line.
  virtual bool available() const = 0;
  virtual const char* whyUnavailable() const = 0;

  virtual nvmlReturn_t init() = 0; // nvmlInit_v2
  virtual nvmlReturn_t shutdown() = 0;
  virtual nvmlReturn_t deviceGetCount(unsigned int* count) = 0;                              // _v2
  virtual nvmlReturn_t deviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) = 0; // _v2
  virtual nvmlReturn_t deviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) = 0;
  virtual nvmlReturn_t deviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) = 0;
  virtual nvmlReturn_t deviceGetName(nvmlDevice_t device, char* name, unsigned int length) = 0;
  // The node's index of a whole GPU (nvidia-smi's); not for MIG handles.
  virtual nvmlReturn_t deviceGetIndex(nvmlDevice_t device, unsigned int* index) = 0;
  virtual nvmlReturn_t deviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) = 0;
  virtual nvmlReturn_t deviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* util) = 0;
  virtual nvmlReturn_t deviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                        nvmlProcessInfo_t* infos) = 0; // _v3
  virtual nvmlReturn_t deviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                        unsigned int* pending) = 0;
  virtual nvmlReturn_t deviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int* is_mig) = 0;
  virtual nvmlReturn_t deviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                                nvmlDevice_t* parent) = 0;
  virtual nvmlReturn_t deviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) = 0;
  virtual nvmlReturn_t deviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) = 0;
  virtual nvmlReturn_t deviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id,
                                                nvmlGpuInstance_t* instance) = 0;
  virtual nvmlReturn_t gpuInstanceGetInfo(nvmlGpuInstance_t instance,
                                          nvmlGpuInstanceInfo_t* info) = 0;
  virtual nvmlReturn_t deviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                        nvmlGpuInstanceProfileInfo_v2_t* info) = 0;
  // Millijoules since the driver loaded (Volta and newer; NOT_SUPPORTED elsewhere and on MIG
  // slices).
  virtual nvmlReturn_t deviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                       unsigned long long* energy_mj) = 0;
  // Milliwatts: on Ampere (but GA100) and newer a 1 s average, on GA100 and older instantaneous.
  virtual nvmlReturn_t deviceGetPowerUsage(nvmlDevice_t device, unsigned int* power_mw) = 0;
  virtual nvmlReturn_t deviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                          unsigned int* clock_mhz) = 0;
  // Never null.
  virtual const char* errorString(nvmlReturn_t result) = 0;
};

} // namespace gpuwise::profiler
