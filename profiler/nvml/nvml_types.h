// The few NVML types and entry points gpuwise uses, declared here because nvml.h is not part of the
// CUDA toolkit images we build in. Names, values and layouts are copied from nvml.h (NVML 12.x /
// driver R535+), where each has been stable since it was introduced; only what we call is here.
//
// Nothing here is linked: the entry points are found with dlsym on libnvidia-ml.so.1
// (dl_nvml_port.cpp) or implemented by the simulated device (tests/simdevice/nvml).
#pragma once

#include <cstdint>

// NVML's own names, spelled as nvml.h spells them.
// NOLINTBEGIN(readability-identifier-naming)
extern "C" {

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpuInstance_st* nvmlGpuInstance_t;

typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_UNKNOWN = 999,
} nvmlReturn_t;

#define NVML_DEVICE_UUID_V2_BUFFER_SIZE 96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE 96
#define NVML_DEVICE_MIG_DISABLE 0
#define NVML_DEVICE_MIG_ENABLE 1
// usedGpuMemory when the driver cannot say (no permission, some MIG setups).
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
// nvmlDeviceGetGpuInstanceProfileInfoV's `profile` argument runs over 0 .. COUNT-1 (the
// NVML_GPU_INSTANCE_PROFILE_* values); GpuInstanceInfo.profileId is the id that entry reports.
#define NVML_GPU_INSTANCE_PROFILE_COUNT 0x0E
#define NVML_STRUCT_VERSION(data, ver)                                                             \
  (unsigned int)(sizeof(nvml##data##_v##ver##_t) | ((ver) << 24U))

// nvmlDeviceGetClockInfo's clock domains (nvmlClockType_t).
typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3,
} nvmlClockType_t;

typedef struct nvmlMemory_st {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;    // percent of the sample period a kernel was running
  unsigned int memory; // percent of the sample period device memory was read or written
} nvmlUtilization_t;

// nvmlDeviceGetComputeRunningProcesses_v3 fills this layout (nvmlProcessInfo_t in nvml.h).
typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory; // NVML_VALUE_NOT_AVAILABLE when unknown
  unsigned int gpuInstanceId;       // 0xFFFFFFFF outside MIG
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct nvmlGpuInstancePlacement_st {
  unsigned int start;
  unsigned int size;
} nvmlGpuInstancePlacement_t;

typedef struct nvmlGpuInstanceInfo_st {
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct nvmlGpuInstanceProfileInfo_v2_st {
  unsigned int version; // nvmlGpuInstanceProfileInfo_v2
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
  char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE]; // "MIG 1g.10gb"
} nvmlGpuInstanceProfileInfo_v2_t;
#define nvmlGpuInstanceProfileInfo_v2 NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2)

} // extern "C"
// NOLINTEND(readability-identifier-naming)
