// The real NVML, loaded with dlopen("libnvidia-ml.so.1") through the normal library search path
// (so the simulated device's stand-in is found when LD_LIBRARY_PATH points at it), behind a
// function table with a `valid` flag: a machine without the driver loads the shim and simply
// reports no device facts.
// Verified on the simulated device and on recorded traces only; not yet run on a GPU.
//
// Required entry points (init, count, handle by index, UUID, name, memory): without one the port
// is unavailable. The others (handle by UUID, utilisation, processes, MIG) are optional: a missing
// one answers NVML_ERROR_FUNCTION_NOT_FOUND, as an old driver's NVML would.
// The energy, power and clock entry points are optional too.
//
// Threads: construct on one thread; calls as NvmlPort says. The handle is never dlclose'd.
#pragma once

#include "profiler/nvml/nvml_port.h"

#include <string>

namespace gpuwise::profiler {

class DlNvmlPort final : public NvmlPort {
public:
  explicit DlNvmlPort(const char* library = "libnvidia-ml.so.1");

  bool available() const override { return t_.valid; }
  const char* whyUnavailable() const override { return why_.c_str(); }

  nvmlReturn_t init() override;
  nvmlReturn_t shutdown() override;
  nvmlReturn_t deviceGetCount(unsigned int* count) override;
  nvmlReturn_t deviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) override;
  nvmlReturn_t deviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) override;
  nvmlReturn_t deviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) override;
  nvmlReturn_t deviceGetName(nvmlDevice_t device, char* name, unsigned int length) override;
  nvmlReturn_t deviceGetIndex(nvmlDevice_t device, unsigned int* index) override;
  nvmlReturn_t deviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) override;
  nvmlReturn_t deviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* util) override;
  nvmlReturn_t deviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                nvmlProcessInfo_t* infos) override;
  nvmlReturn_t deviceGetMigMode(nvmlDevice_t device, unsigned int* current,
                                unsigned int* pending) override;
  nvmlReturn_t deviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int* is_mig) override;
  nvmlReturn_t deviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                        nvmlDevice_t* parent) override;
  nvmlReturn_t deviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) override;
  nvmlReturn_t deviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) override;
  nvmlReturn_t deviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id,
                                        nvmlGpuInstance_t* instance) override;
  nvmlReturn_t gpuInstanceGetInfo(nvmlGpuInstance_t instance, nvmlGpuInstanceInfo_t* info) override;
  nvmlReturn_t deviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                nvmlGpuInstanceProfileInfo_v2_t* info) override;
  nvmlReturn_t deviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                               unsigned long long* energy_mj) override;
  nvmlReturn_t deviceGetPowerUsage(nvmlDevice_t device, unsigned int* power_mw) override;
  nvmlReturn_t deviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                  unsigned int* clock_mhz) override;
  const char* errorString(nvmlReturn_t result) override;

private:
  struct Table {
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    nvmlReturn_t (*getCount)(unsigned int*) = nullptr;
    nvmlReturn_t (*byIndex)(unsigned int, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*byUuid)(const char*, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*getUuid)(nvmlDevice_t, char*, unsigned int) = nullptr;
    nvmlReturn_t (*getName)(nvmlDevice_t, char*, unsigned int) = nullptr;
    nvmlReturn_t (*getIndex)(nvmlDevice_t, unsigned int*) = nullptr;
    nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
    nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
    nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*) = nullptr;
    nvmlReturn_t (*migMode)(nvmlDevice_t, unsigned int*, unsigned int*) = nullptr;
    nvmlReturn_t (*isMig)(nvmlDevice_t, unsigned int*) = nullptr;
    nvmlReturn_t (*parent)(nvmlDevice_t, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*giId)(nvmlDevice_t, unsigned int*) = nullptr;
    nvmlReturn_t (*ciId)(nvmlDevice_t, unsigned int*) = nullptr;
    nvmlReturn_t (*giById)(nvmlDevice_t, unsigned int, nvmlGpuInstance_t*) = nullptr;
    nvmlReturn_t (*giInfo)(nvmlGpuInstance_t, nvmlGpuInstanceInfo_t*) = nullptr;
    nvmlReturn_t (*profileInfo)(nvmlDevice_t, unsigned int,
                                nvmlGpuInstanceProfileInfo_v2_t*) = nullptr;
    nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*) = nullptr;
    nvmlReturn_t (*clock)(nvmlDevice_t, nvmlClockType_t, unsigned int*) = nullptr;
    const char* (*errorString)(nvmlReturn_t) = nullptr;
    bool valid = false;
  };
  Table t_;
  std::string why_;
};

} // namespace gpuwise::profiler
