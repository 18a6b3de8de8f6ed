// The simulated libnvidia-ml.so.1: the NVML entry points gpuwise calls (profiler/nvml/nvml_port.h),
// describing the simulated devices the way the real NVML describes real ones: UUIDs that match
// cudaDeviceProp::uuid ("GPU-" + the same 16 bytes), memory (this process's allocations plus the
// context reserve), a utilisation figure, the compute-process list with this process in it.
//
// GWSIM_NVML=0: nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED.
// GWSIM_MIG_PROFILE=<profile> ("1g.18gb"): every CUDA device is a MIG slice of that profile on its
// GPU, as under CUDA_VISIBLE_DEVICES=MIG-...: the CUDA UUID is the slice's ("MIG-..."), the slice
// has GPU instance 1 / compute instance 0, its own memory size, no utilisation (NOT_SUPPORTED, as
// on real slices), and the parent's GPU-instance profile table lists the profile.
//
// Energy (core/energy_meter.h): the total energy counter grows with idle power all the time and
// busy power while the device runs work; the power draw is the mean since the previous power read;
// the clocks are the model's (cudaDeviceProp clockRate / memoryClockRate). Slices answer
// NOT_SUPPORTED for energy and power, as on real MIG slices.
// GWSIM_NVML_ENERGY=0: the counter is NOT_SUPPORTED (as on GPUs without it); power still works.
// GWSIM_NVML_ENERGY_LOG=<file>: every counter read is appended to the file as one line
// "<device> <energy_mj> <monotonic ns>", so a test can read what NVML answered independently of
// the shim that asked.
//
// Types are profiler/nvml/nvml_types.h (nvml.h is not in the toolkit). Threads: any.
#include "profiler/nvml/nvml_types.h"
#include "tests/simdevice/core/device_model.h"
#include "tests/simdevice/core/energy_meter.h"
#include "tests/simdevice/core/simulator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#define GWSIM_EXPORT extern "C" __attribute__((visibility("default")))

using namespace gpuwise::sim;

namespace {

constexpr int kMaxDevices = 16;
constexpr unsigned kProfileId = 19;

// Handles: parents are &g_handles[i].gpu, slices &g_handles[i].slice.
struct Handles {
  char gpu, slice;
};
Handles g_handles[kMaxDevices];
bool g_initialized = false;

std::string migProfile() {
  const char* p = std::getenv("GWSIM_MIG_PROFILE");
  return p && *p ? p : "";
}

// Memory of a profile "<N>g.<M>gb": M GB (the decimal figure in the name).
unsigned long long profileBytes(const std::string& profile) {
  size_t dot = profile.find("g.");
  unsigned long long gb =
      dot == std::string::npos ? 0 : std::strtoull(profile.c_str() + dot + 2, nullptr, 10);
  return gb * 1000000000ull;
}

int deviceCount() {
  return std::min(simulator().deviceCount(), kMaxDevices);
}

bool parentOf(nvmlDevice_t h, int* index) {
  for (int i = 0; i < deviceCount(); ++i)
    if (reinterpret_cast<char*>(h) == &g_handles[i].gpu) return *index = i, true;
  return false;
}
bool sliceOf(nvmlDevice_t h, int* index) {
  if (migProfile().empty()) return false;
  for (int i = 0; i < deviceCount(); ++i)
    if (reinterpret_cast<char*>(h) == &g_handles[i].slice) return *index = i, true;
  return false;
}
nvmlDevice_t parentHandle(int i) {
  return reinterpret_cast<nvmlDevice_t>(&g_handles[i].gpu);
}
nvmlDevice_t sliceHandle(int i) {
  return reinterpret_cast<nvmlDevice_t>(&g_handles[i].slice);
}

// The bytes cudaDeviceProp::uuid carries for device i (device_model.cpp: "gwsim" + key + ordinal).
void cudaUuid(int i, uint8_t (&b)[16]) {
  std::memset(b, 0, sizeof b);
  std::memcpy(b, "gwsim", 5);
  std::strncpy(reinterpret_cast<char*>(b) + 5, simulator().model(i).key, 10);
  b[15] = static_cast<uint8_t>(i);
}

std::string format(const uint8_t (&b)[16], const char* prefix) {
  char buf[64];
  std::snprintf(buf, sizeof buf,
                "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", prefix,
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                b[13], b[14], b[15]);
  return buf;
}

// The CUDA UUID is the slice's under MIG; the parent GPU gets its own.
std::string uuidOf(int i, bool slice) {
  uint8_t b[16];
  cudaUuid(i, b);
  if (!migProfile().empty() && !slice) b[14] ^= 0x80;
  return format(b, slice ? "MIG" : "GPU");
}

nvmlReturn_t copy(const std::string& s, char* out, unsigned int length) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (s.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

// Any handle: its CUDA device index and whether it is the slice.
bool resolve(nvmlDevice_t h, int* index, bool* slice) {
  if (!g_initialized) return false;
  if (parentOf(h, index)) return *slice = false, true;
  if (sliceOf(h, index)) return *slice = true, true;
  return false;
}

} // namespace

// The entry points, named as NVML names them.
// NOLINTBEGIN(readability-identifier-naming)
GWSIM_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  // GWSIM_NVML=0: a machine whose driver NVML cannot reach.
  if (const char* v = std::getenv("GWSIM_NVML"); v && std::strcmp(v, "0") == 0)
    return NVML_ERROR_DRIVER_NOT_LOADED;
  g_initialized = true;
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlShutdown(void) {
  if (!g_initialized) return NVML_ERROR_UNINITIALIZED;
  g_initialized = false;
  return NVML_SUCCESS;
}

GWSIM_EXPORT const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
  case NVML_SUCCESS: return "Success";
  case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
  case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
  case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
  case NVML_ERROR_NOT_FOUND: return "Not Found";
  case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
  default: return "Unknown Error";
  }
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!g_initialized) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = unsigned(deviceCount());
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (!g_initialized) return NVML_ERROR_UNINITIALIZED;
  if (!device || int(index) >= deviceCount()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = parentHandle(int(index));
  return NVML_SUCCESS;
}

// A whole GPU's index on the node: the simulated node's GPUs in CUDA order (no
// CUDA_VISIBLE_DEVICES reordering). Not for slices, as on real MIG handles.
GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t h, unsigned int* index) {
  if (!g_initialized) return NVML_ERROR_UNINITIALIZED;
  int i = 0;
  if (!index || !parentOf(h, &i)) return NVML_ERROR_INVALID_ARGUMENT;
  *index = unsigned(i);
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  if (!g_initialized) return NVML_ERROR_UNINITIALIZED;
  if (!uuid || !device) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < deviceCount(); ++i) {
    if (uuidOf(i, false) == uuid) return *device = parentHandle(i), NVML_SUCCESS;
    if (!migProfile().empty() && uuidOf(i, true) == uuid)
      return *device = sliceHandle(i), NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t h, char* uuid, unsigned int length) {
  int i;
  bool slice;
  if (!resolve(h, &i, &slice)) return NVML_ERROR_INVALID_ARGUMENT;
  return copy(uuidOf(i, slice), uuid, length);
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t h, char* name, unsigned int length) {
  int i;
  bool slice;
  if (!resolve(h, &i, &slice)) return NVML_ERROR_INVALID_ARGUMENT;
  std::string n = simulator().model(i).name;
  if (slice) n += " MIG " + migProfile();
  return copy(n, name, length);
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t* m) {
  int i;
  bool slice;
  if (!resolve(h, &i, &slice) || !m) return NVML_ERROR_INVALID_ARGUMENT;
  m->total = slice ? profileBytes(migProfile()) : simulator().model(i).total_memory_bytes;
  m->used = std::min<unsigned long long>(simulator().memoryUsed(i), m->total);
  m->free = m->total - m->used;
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t* u) {
  int i;
  bool slice;
  if (!resolve(h, &i, &slice) || !u) return NVML_ERROR_INVALID_ARGUMENT;
  if (slice) return NVML_ERROR_NOT_SUPPORTED;
  // A fixed figure: the simulator keeps no sampling window; tests check that it arrives.
  u->gpu = 42;
  u->memory = 17;
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t h,
                                                                  unsigned int* count,
                                                                  nvmlProcessInfo_t* infos) {
  int i;
  bool slice;
  if (!resolve(h, &i, &slice) || !count) return NVML_ERROR_INVALID_ARGUMENT;
  if (*count < 1 || !infos) {
    *count = 1;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  infos[0].pid = unsigned(getpid());
  infos[0].usedGpuMemory = simulator().memoryUsed(i);
  infos[0].gpuInstanceId = slice ? 1 : 0xFFFFFFFFu;
  infos[0].computeInstanceId = slice ? 0 : 0xFFFFFFFFu;
  *count = 1;
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int* current,
                                               unsigned int* pending) {
  int i;
  if (!g_initialized || !parentOf(h, &i) || !current || !pending)
    return NVML_ERROR_INVALID_ARGUMENT;
  *current = *pending = migProfile().empty() ? NVML_DEVICE_MIG_DISABLE : NVML_DEVICE_MIG_ENABLE;
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t h, unsigned int* is_mig) {
  int i;
  bool slice;
  if (!resolve(h, &i, &slice) || !is_mig) return NVML_ERROR_INVALID_ARGUMENT;
  *is_mig = slice ? 1 : 0;
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                                       nvmlDevice_t* parent) {
  int i;
  if (!g_initialized || !sliceOf(mig, &i) || !parent) return NVML_ERROR_INVALID_ARGUMENT;
  *parent = parentHandle(i);
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t h, unsigned int* id) {
  int i;
  if (!g_initialized || !sliceOf(h, &i) || !id) return NVML_ERROR_INVALID_ARGUMENT;
  *id = 1;
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t h, unsigned int* id) {
  int i;
  if (!g_initialized || !sliceOf(h, &i) || !id) return NVML_ERROR_INVALID_ARGUMENT;
  *id = 0;
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t h, unsigned int id,
                                                       nvmlGpuInstance_t* instance) {
  int i;
  if (!g_initialized || !parentOf(h, &i) || !instance) return NVML_ERROR_INVALID_ARGUMENT;
  if (migProfile().empty() || id != 1) return NVML_ERROR_NOT_FOUND;
  *instance = reinterpret_cast<nvmlGpuInstance_t>(&g_handles[i].slice);
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t instance,
                                                 nvmlGpuInstanceInfo_t* info) {
  int i;
  if (!g_initialized || !sliceOf(reinterpret_cast<nvmlDevice_t>(instance), &i) || !info)
    return NVML_ERROR_INVALID_ARGUMENT;
  info->device = parentHandle(i);
  info->id = 1;
  info->profileId = kProfileId;
  info->placement = {0, 1};
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(
    nvmlDevice_t h, unsigned int profile, nvmlGpuInstanceProfileInfo_v2_t* info) {
  int i;
  if (!g_initialized || !parentOf(h, &i) || !info || info->version != nvmlGpuInstanceProfileInfo_v2)
    return NVML_ERROR_INVALID_ARGUMENT;
  // One entry, the configured profile, at index 0.
  if (migProfile().empty() || profile != 0) return NVML_ERROR_NOT_SUPPORTED;
  std::string p = migProfile();
  info->id = kProfileId;
  info->sliceCount = unsigned(std::atoi(p.c_str()));
  info->memorySizeMB = profileBytes(p) / 1000000ull;
  std::snprintf(info->name, sizeof info->name, "MIG %s", p.c_str());
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t h,
                                                              unsigned long long* energy) {
  int i;
  bool slice;
  if (!resolve(h, &i, &slice) || !energy) return NVML_ERROR_INVALID_ARGUMENT;
  const char* off = std::getenv("GWSIM_NVML_ENERGY");
  if (slice || (off && std::strcmp(off, "0") == 0)) return NVML_ERROR_NOT_SUPPORTED;
  const TimeNs now = nowNs();
  *energy = energyMeter().energyMj(unsigned(i), simulator().model(i).key, now);
  if (const char* log = std::getenv("GWSIM_NVML_ENERGY_LOG"); log && *log)
    if (FILE* f = std::fopen(log, "a")) {
      std::fprintf(f, "%d %llu %lld\n", i, *energy, static_cast<long long>(now));
      std::fclose(f);
    }
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t h, unsigned int* power) {
  int i;
  bool slice;
  if (!resolve(h, &i, &slice) || !power) return NVML_ERROR_INVALID_ARGUMENT;
  if (slice) return NVML_ERROR_NOT_SUPPORTED;
  *power = energyMeter().powerMw(unsigned(i), simulator().model(i).key, nowNs());
  return NVML_SUCCESS;
}

GWSIM_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t h, nvmlClockType_t type,
                                                 unsigned int* clock) {
  int i;
  bool slice;
  if (!resolve(h, &i, &slice) || !clock) return NVML_ERROR_INVALID_ARGUMENT;
  const DeviceModel& m = simulator().model(i);
  if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS)
    return *clock = unsigned(m.clock_khz / 1000), NVML_SUCCESS;
  if (type == NVML_CLOCK_MEM) return *clock = unsigned(m.memory_clock_khz / 1000), NVML_SUCCESS;
  return NVML_ERROR_NOT_SUPPORTED;
}
// NOLINTEND(readability-identifier-naming)
