#include "profiler/nvml/fake_nvml_port.h"

#include <cstring>

namespace gpuwise::profiler {

namespace {
nvmlReturn_t copyText(const std::string& s, char* out, unsigned int length) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (s.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}
} // namespace

FakeNvmlPort::Device* FakeNvmlPort::at(nvmlDevice_t h) {
  auto i = reinterpret_cast<uintptr_t>(h);
  if (!initialized_ || i == 0 || i > devices_.size()) return nullptr;
  return &devices_[i - 1];
}

nvmlReturn_t FakeNvmlPort::init() {
  ++init_calls_;
  if (!available_) return NVML_ERROR_LIBRARY_NOT_FOUND;
  initialized_ = init_result_ == NVML_SUCCESS;
  return init_result_;
}

nvmlReturn_t FakeNvmlPort::shutdown() {
  ++shutdown_calls_;
  initialized_ = false;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetCount(unsigned int* count) {
  if (!initialized_) return NVML_ERROR_UNINITIALIZED;
  unsigned int n = 0;
  for (const auto& d : devices_)
    n += d.mig ? 0 : 1;
  *count = n;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  if (!initialized_) return NVML_ERROR_UNINITIALIZED;
  unsigned int n = 0;
  for (size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i].mig) continue;
    if (n++ == index) {
      *device = handle(i);
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t FakeNvmlPort::deviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  if (!lookup_by_uuid_) return NVML_ERROR_FUNCTION_NOT_FOUND;
  if (!initialized_) return NVML_ERROR_UNINITIALIZED;
  for (size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i].uuid == uuid) {
      *device = handle(i);
      return NVML_SUCCESS;
    }
  return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t FakeNvmlPort::deviceGetUUID(nvmlDevice_t h, char* uuid, unsigned int length) {
  Device* d = at(h);
  return d ? copyText(d->uuid, uuid, length) : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t FakeNvmlPort::deviceGetName(nvmlDevice_t h, char* name, unsigned int length) {
  Device* d = at(h);
  return d ? copyText(d->name, name, length) : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t FakeNvmlPort::deviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t* m) {
  Device* d = at(h);
  if (!d) return NVML_ERROR_INVALID_ARGUMENT;
  m->total = d->total;
  m->used = d->used;
  m->free = d->total - d->used;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t* u) {
  Device* d = at(h);
  if (!d) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->mig || !d->utilization_supported) return NVML_ERROR_NOT_SUPPORTED;
  u->gpu = d->gpu_util;
  u->memory = d->memory_util;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetComputeRunningProcesses(nvmlDevice_t h, unsigned int* count,
                                                            nvmlProcessInfo_t* infos) {
  ++process_calls_;
  Device* d = at(h);
  if (!d || !count) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned int n = unsigned(d->processes.size());
  if (*count < n || (n && !infos)) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned int i = 0; i < n; ++i)
    infos[i] = d->processes[i];
  *count = n;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetMigMode(nvmlDevice_t h, unsigned int* current,
                                            unsigned int* pending) {
  Device* d = at(h);
  if (!d || d->mig) return NVML_ERROR_INVALID_ARGUMENT;
  bool any = false;
  for (const auto& s : devices_)
    any |= s.mig && &devices_[size_t(s.parent)] == d;
  *current = *pending = any ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceIsMigDeviceHandle(nvmlDevice_t h, unsigned int* is_mig) {
  Device* d = at(h);
  if (!d) return NVML_ERROR_INVALID_ARGUMENT;
  *is_mig = d->mig ? 1 : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetIndex(nvmlDevice_t h, unsigned int* index) {
  Device* d = at(h);
  if (!d || d->mig || !index) return NVML_ERROR_INVALID_ARGUMENT;
  // The position among whole GPUs, as deviceGetHandleByIndex counts them.
  unsigned int n = 0;
  for (const Device& other : devices_) {
    if (&other == d) break;
    n += other.mig ? 0 : 1;
  }
  *index = n;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                                    nvmlDevice_t* parent) {
  Device* d = at(mig);
  if (!d || !d->mig || d->parent < 0) return NVML_ERROR_INVALID_ARGUMENT;
  *parent = handle(size_t(d->parent));
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetGpuInstanceId(nvmlDevice_t h, unsigned int* id) {
  Device* d = at(h);
  if (!d || !d->mig) return NVML_ERROR_INVALID_ARGUMENT;
  *id = d->gpu_instance;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetComputeInstanceId(nvmlDevice_t h, unsigned int* id) {
  Device* d = at(h);
  if (!d || !d->mig) return NVML_ERROR_INVALID_ARGUMENT;
  *id = d->compute_instance;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetGpuInstanceById(nvmlDevice_t h, unsigned int id,
                                                    nvmlGpuInstance_t* instance) {
  Device* parent = at(h);
  if (!parent || parent->mig) return NVML_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < devices_.size(); ++i)
    if (devices_[i].mig && &devices_[size_t(devices_[i].parent)] == parent &&
        devices_[i].gpu_instance == id) {
      // NOLINTNEXTLINE(performance-no-int-to-ptr): an opaque handle, never dereferenced
      *instance = reinterpret_cast<nvmlGpuInstance_t>(i + 1);
      return NVML_SUCCESS;
    }
  return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t FakeNvmlPort::gpuInstanceGetInfo(nvmlGpuInstance_t instance,
                                              nvmlGpuInstanceInfo_t* info) {
  Device* d = at(reinterpret_cast<nvmlDevice_t>(instance));
  if (!d || !d->mig) return NVML_ERROR_INVALID_ARGUMENT;
  info->device = handle(size_t(d->parent));
  info->id = d->gpu_instance;
  info->profileId = d->profile_id;
  info->placement = {0, 1};
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetGpuInstanceProfileInfoV(nvmlDevice_t h, unsigned int profile,
                                                            nvmlGpuInstanceProfileInfo_v2_t* info) {
  Device* d = at(h);
  if (!d || d->mig || info->version != nvmlGpuInstanceProfileInfo_v2)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (profile >= profiles_.size()) return NVML_ERROR_NOT_SUPPORTED;
  *info = profiles_[profile];
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetTotalEnergyConsumption(nvmlDevice_t h,
                                                           unsigned long long* energy_mj) {
  ++energy_calls_;
  Device* d = at(h);
  if (!d || !energy_mj) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->mig) return NVML_ERROR_NOT_SUPPORTED;
  if (d->energy_result != NVML_SUCCESS) return d->energy_result;
  *energy_mj = d->energy_mj;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetPowerUsage(nvmlDevice_t h, unsigned int* power_mw) {
  ++power_calls_;
  Device* d = at(h);
  if (!d || !power_mw) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->mig) return NVML_ERROR_NOT_SUPPORTED;
  if (d->power_result != NVML_SUCCESS) return d->power_result;
  *power_mw = d->power_mw;
  return NVML_SUCCESS;
}

nvmlReturn_t FakeNvmlPort::deviceGetClockInfo(nvmlDevice_t h, nvmlClockType_t type,
                                              unsigned int* clock_mhz) {
  Device* d = at(h);
  if (!d || !clock_mhz) return NVML_ERROR_INVALID_ARGUMENT;
  if (type == NVML_CLOCK_SM) return *clock_mhz = d->sm_clock_mhz, NVML_SUCCESS;
  if (type == NVML_CLOCK_MEM) return *clock_mhz = d->memory_clock_mhz, NVML_SUCCESS;
  return NVML_ERROR_NOT_SUPPORTED;
}

const char* FakeNvmlPort::errorString(nvmlReturn_t r) {
  switch (r) {
  case NVML_SUCCESS: return "Success";
  case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
  case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
  case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
  case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
  default: return "Unknown Error";
  }
}

nvmlGpuInstanceProfileInfo_v2_t FakeNvmlPort::profile(unsigned int id, unsigned int slices,
                                                      unsigned long long memory_mb,
                                                      const char* name) {
  nvmlGpuInstanceProfileInfo_v2_t p{};
  p.version = nvmlGpuInstanceProfileInfo_v2;
  p.id = id;
  p.sliceCount = slices;
  p.memorySizeMB = memory_mb;
  std::strncpy(p.name, name, sizeof p.name - 1);
  return p;
}

} // namespace gpuwise::profiler
