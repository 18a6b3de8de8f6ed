#include "profiler/nvml/dl_nvml_port.h"

#include <type_traits>

#include <dlfcn.h>

namespace gpuwise::profiler {

namespace {
constexpr nvmlReturn_t kUnavailable = NVML_ERROR_LIBRARY_NOT_FOUND;
constexpr nvmlReturn_t kMissing = NVML_ERROR_FUNCTION_NOT_FOUND;
} // namespace

DlNvmlPort::DlNvmlPort(const char* library) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    why_ = std::string(library) + " not loadable: " + (err ? err : "unknown dlopen error");
    return;
  }
  Table t;
  bool missing = false;
  auto load = [&](auto& slot, const char* name, bool required) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(handle, name));
    if (!slot && required && !missing) {
      missing = true;
      why_ = std::string(library) + " lacks " + name;
    }
  };
  load(t.init, "nvmlInit_v2", true);
  load(t.shutdown, "nvmlShutdown", true);
  load(t.getCount, "nvmlDeviceGetCount_v2", true);
  load(t.byIndex, "nvmlDeviceGetHandleByIndex_v2", true);
  load(t.getUuid, "nvmlDeviceGetUUID", true);
  load(t.getName, "nvmlDeviceGetName", true);
  load(t.memory, "nvmlDeviceGetMemoryInfo", true);
  load(t.byUuid, "nvmlDeviceGetHandleByUUID", false);
  load(t.getIndex, "nvmlDeviceGetIndex", false);
  load(t.utilization, "nvmlDeviceGetUtilizationRates", false);
  load(t.processes, "nvmlDeviceGetComputeRunningProcesses_v3", false);
  load(t.migMode, "nvmlDeviceGetMigMode", false);
  load(t.isMig, "nvmlDeviceIsMigDeviceHandle", false);
  load(t.parent, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle", false);
  load(t.giId, "nvmlDeviceGetGpuInstanceId", false);
  load(t.ciId, "nvmlDeviceGetComputeInstanceId", false);
  load(t.giById, "nvmlDeviceGetGpuInstanceById", false);
  load(t.giInfo, "nvmlGpuInstanceGetInfo", false);
  load(t.profileInfo, "nvmlDeviceGetGpuInstanceProfileInfoV", false);
  load(t.energy, "nvmlDeviceGetTotalEnergyConsumption", false);
  load(t.power, "nvmlDeviceGetPowerUsage", false);
  load(t.clock, "nvmlDeviceGetClockInfo", false);
  load(t.errorString, "nvmlErrorString", false);
  t.valid = !missing;
  t_ = t;
}

// Required entry points: unavailable when the table is not valid.
#define GPUWISE_NVML_REQUIRED(fn, ...) return t_.valid ? t_.fn(__VA_ARGS__) : kUnavailable
// Optional ones: also "function not found" when this driver's NVML lacks them.
#define GPUWISE_NVML_OPTIONAL(fn, ...)                                                             \
  return !t_.valid ? kUnavailable : t_.fn ? t_.fn(__VA_ARGS__) : kMissing

nvmlReturn_t DlNvmlPort::init() {
  GPUWISE_NVML_REQUIRED(init);
}
nvmlReturn_t DlNvmlPort::shutdown() {
  GPUWISE_NVML_REQUIRED(shutdown);
}
nvmlReturn_t DlNvmlPort::deviceGetCount(unsigned int* n) {
  GPUWISE_NVML_REQUIRED(getCount, n);
}
nvmlReturn_t DlNvmlPort::deviceGetHandleByIndex(unsigned int i, nvmlDevice_t* d) {
  GPUWISE_NVML_REQUIRED(byIndex, i, d);
}
nvmlReturn_t DlNvmlPort::deviceGetHandleByUUID(const char* uuid, nvmlDevice_t* d) {
  GPUWISE_NVML_OPTIONAL(byUuid, uuid, d);
}
nvmlReturn_t DlNvmlPort::deviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int length) {
  GPUWISE_NVML_REQUIRED(getUuid, d, uuid, length);
}
nvmlReturn_t DlNvmlPort::deviceGetName(nvmlDevice_t d, char* name, unsigned int length) {
  GPUWISE_NVML_REQUIRED(getName, d, name, length);
}
nvmlReturn_t DlNvmlPort::deviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  GPUWISE_NVML_REQUIRED(memory, d, m);
}
nvmlReturn_t DlNvmlPort::deviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  GPUWISE_NVML_OPTIONAL(utilization, d, u);
}
nvmlReturn_t DlNvmlPort::deviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int* n,
                                                          nvmlProcessInfo_t* infos) {
  GPUWISE_NVML_OPTIONAL(processes, d, n, infos);
}
nvmlReturn_t DlNvmlPort::deviceGetMigMode(nvmlDevice_t d, unsigned int* cur, unsigned int* pend) {
  GPUWISE_NVML_OPTIONAL(migMode, d, cur, pend);
}
nvmlReturn_t DlNvmlPort::deviceIsMigDeviceHandle(nvmlDevice_t d, unsigned int* is_mig) {
  GPUWISE_NVML_OPTIONAL(isMig, d, is_mig);
}
nvmlReturn_t DlNvmlPort::deviceGetIndex(nvmlDevice_t d, unsigned int* index) {
  GPUWISE_NVML_OPTIONAL(getIndex, d, index);
}
nvmlReturn_t DlNvmlPort::deviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                                  nvmlDevice_t* parent) {
  GPUWISE_NVML_OPTIONAL(parent, mig, parent);
}
nvmlReturn_t DlNvmlPort::deviceGetGpuInstanceId(nvmlDevice_t d, unsigned int* id) {
  GPUWISE_NVML_OPTIONAL(giId, d, id);
}
nvmlReturn_t DlNvmlPort::deviceGetComputeInstanceId(nvmlDevice_t d, unsigned int* id) {
  GPUWISE_NVML_OPTIONAL(ciId, d, id);
}
nvmlReturn_t DlNvmlPort::deviceGetGpuInstanceById(nvmlDevice_t d, unsigned int id,
                                                  nvmlGpuInstance_t* gi) {
  GPUWISE_NVML_OPTIONAL(giById, d, id, gi);
}
nvmlReturn_t DlNvmlPort::gpuInstanceGetInfo(nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t* info) {
  GPUWISE_NVML_OPTIONAL(giInfo, gi, info);
}
nvmlReturn_t DlNvmlPort::deviceGetGpuInstanceProfileInfoV(nvmlDevice_t d, unsigned int profile,
                                                          nvmlGpuInstanceProfileInfo_v2_t* info) {
  GPUWISE_NVML_OPTIONAL(profileInfo, d, profile, info);
}

nvmlReturn_t DlNvmlPort::deviceGetTotalEnergyConsumption(nvmlDevice_t d,
                                                         unsigned long long* energy_mj) {
  GPUWISE_NVML_OPTIONAL(energy, d, energy_mj);
}
nvmlReturn_t DlNvmlPort::deviceGetPowerUsage(nvmlDevice_t d, unsigned int* power_mw) {
  GPUWISE_NVML_OPTIONAL(power, d, power_mw);
}
nvmlReturn_t DlNvmlPort::deviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t type,
                                            unsigned int* clock_mhz) {
  GPUWISE_NVML_OPTIONAL(clock, d, type, clock_mhz);
}

const char* DlNvmlPort::errorString(nvmlReturn_t r) {
  const char* s = t_.valid && t_.errorString ? t_.errorString(r) : nullptr;
  return s ? s : "NVML error";
}

} // namespace gpuwise::profiler
