// An NVML stand-in for tests: a list of devices (whole GPUs and MIG slices) configured in plain
// fields, answered the way NVML answers (INSUFFICIENT_SIZE for short process buffers,
// NOT_SUPPORTED for utilisation on a slice, NOT_FOUND for unknown UUIDs). Counts what was called.
//
// Threads: configure before use; then one thread at a time.
#pragma once

#include "profiler/nvml/nvml_port.h"

#include <string>
#include <vector>

namespace gpuwise::profiler {

class FakeNvmlPort final : public NvmlPort {
public:
  struct Device {
    std::string uuid; // "GPU-..." / "MIG-..."
    std::string name;
    unsigned long long total = 0, used = 0;
    bool utilization_supported = true;
    unsigned int gpu_util = 0, memory_util = 0;
    std::vector<nvmlProcessInfo_t> processes;
    // MIG slice: its parent (index into devices_, listed by index only when not a slice).
    bool mig = false;
    int parent = -1;
    unsigned int gpu_instance = 0, compute_instance = 0, profile_id = 0;
    // Power: the energy counter, the draw and the clocks; each read answers the current value,
    // or the configured failure (NOT_SUPPORTED always on slices).
    nvmlReturn_t energy_result = NVML_SUCCESS, power_result = NVML_SUCCESS;
    unsigned long long energy_mj = 0;
    unsigned int power_mw = 0, sm_clock_mhz = 0, memory_clock_mhz = 0;
  };

  // Configuration.
  bool available_ = true;
  nvmlReturn_t init_result_ = NVML_SUCCESS;
  bool lookup_by_uuid_ = true; // false: deviceGetHandleByUUID is "function not found"
  std::vector<Device> devices_;
  std::vector<nvmlGpuInstanceProfileInfo_v2_t> profiles_; // by profile index (parents only)

  // What the code under test did.
  int init_calls_ = 0, shutdown_calls_ = 0, process_calls_ = 0, energy_calls_ = 0, power_calls_ = 0;

  bool available() const override { return available_; }
  const char* whyUnavailable() const override { return "fake: libnvidia-ml.so.1 not loadable"; }

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

  // A profile entry as NVML's table has it ("MIG 1g.18gb").
  static nvmlGpuInstanceProfileInfo_v2_t profile(unsigned int id, unsigned int slices,
                                                 unsigned long long memory_mb, const char* name);

private:
  Device* at(nvmlDevice_t h);
  // An opaque handle, as NVML's are: never dereferenced, only mapped back by at().
  static nvmlDevice_t handle(size_t i) {
    return reinterpret_cast<nvmlDevice_t>(i + 1); // NOLINT(performance-no-int-to-ptr)
  }
  bool initialized_ = false;
};

} // namespace gpuwise::profiler
