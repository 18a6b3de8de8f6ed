// Stand-in libcudart.so.13: devices, properties, errors and versions. The simulated device keeps
// the real product name (MIG tables and cost tables key on it); that it is simulated is exposed
// only through gwsimIsSimulated().
#include <cstring>

#include "tests/simdevice/core/device_model.h"
#include "tests/simdevice/cudart/runtime_common.h"

using namespace gpuwise::sim;

namespace {

const char* errorName(cudaError_t error) {
  switch (error) {
#define GWSIM_ERROR(name)                                                                          \
  case name:                                                                                       \
    return #name;
#include "tests/simdevice/cudart/error_names.inc"
#undef GWSIM_ERROR
  default: return nullptr;
  }
}

// The real runtime's messages for the codes programs meet most; other known codes read as their
// name, unknown ones as the real runtime's "unrecognized error code".
const char* errorString(cudaError_t error) {
  switch (error) {
  case cudaSuccess: return "no error";
  case cudaErrorInvalidValue: return "invalid argument";
  case cudaErrorMemoryAllocation: return "out of memory";
  case cudaErrorInitializationError: return "initialization error";
  case cudaErrorCudartUnloading: return "driver shutting down";
  case cudaErrorInvalidConfiguration: return "invalid configuration argument";
  case cudaErrorInvalidPitchValue: return "invalid pitch argument";
  case cudaErrorInvalidSymbol: return "invalid device symbol";
  case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
  case cudaErrorMissingConfiguration: return "__global__ function call is not configured";
  case cudaErrorNoDevice: return "no CUDA-capable device is detected";
  case cudaErrorInvalidDevice: return "invalid device ordinal";
  case cudaErrorInvalidDeviceFunction: return "invalid device function";
  case cudaErrorInvalidResourceHandle: return "invalid resource handle";
  case cudaErrorIllegalState: return "the operation cannot be performed in the present state";
  case cudaErrorNotReady: return "device not ready";
  case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
  case cudaErrorLaunchFailure: return "unspecified launch failure";
  case cudaErrorHostMemoryAlreadyRegistered:
    return "part or all of the requested memory range is already mapped";
  case cudaErrorHostMemoryNotRegistered:
    return "pointer does not correspond to a registered memory region";
  case cudaErrorNotSupported: return "operation not supported";
  case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
  case cudaErrorStreamCaptureInvalidated:
    return "operation failed due to a previous error during capture";
  case cudaErrorStreamCaptureImplicit:
    return "operation would make the legacy stream depend on a capturing blocking stream";
  case cudaErrorUnknown: return "unknown error";
  default: break;
  }
  const char* name = errorName(error);
  return name != nullptr ? name : "unrecognized error code";
}

} // namespace

GWSIM_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
  GWSIM_GUARD_BEGIN
  cudaGetDeviceCount_v3020_params params{count};
  ApiScope api(GWSIM_CBID(cudaGetDeviceCount_v3020), "cudaGetDeviceCount", &params, nullptr, {},
               false);
  if (count == nullptr) return api.finish(cudaErrorInvalidValue);
  *count = api.sim().deviceCount();
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaGetDevice(int* device) {
  GWSIM_GUARD_BEGIN
  cudaGetDevice_v3020_params params{device};
  ApiScope api(GWSIM_CBID(cudaGetDevice_v3020), "cudaGetDevice", &params, nullptr, {}, false);
  if (device == nullptr) return api.finish(cudaErrorInvalidValue);
  *device = api.sim().currentDevice();
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaSetDevice(int device) {
  GWSIM_GUARD_BEGIN
  cudaSetDevice_v3020_params params{device};
  ApiScope api(GWSIM_CBID(cudaSetDevice_v3020), "cudaSetDevice", &params, nullptr, {}, false);
  const cudaError_t err = api.sim().setDevice(device);
  if (err == cudaSuccess) api.sim().ensureContext(device); // CUDA 12+: cudaSetDevice initialises
  return api.finish(err);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  GWSIM_GUARD_BEGIN
  cudaGetDeviceProperties_v12000_params params{prop, device};
  ApiScope api(GWSIM_CBID(cudaGetDeviceProperties_v12000), "cudaGetDeviceProperties", &params,
               nullptr, {}, false);
  if (prop == nullptr) return api.finish(cudaErrorInvalidValue);
  if (device < 0 || device >= api.sim().deviceCount()) return api.finish(cudaErrorInvalidDevice);
  fillDeviceProp(api.sim().model(device), device, prop);
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  GWSIM_GUARD_BEGIN
  cudaDeviceGetAttribute_v5000_params params{value, attr, device};
  ApiScope api(GWSIM_CBID(cudaDeviceGetAttribute_v5000), "cudaDeviceGetAttribute", &params, nullptr,
               {}, false);
  if (device < 0 || device >= api.sim().deviceCount()) return api.finish(cudaErrorInvalidDevice);
  return api.finish(deviceAttribute(api.sim().model(device), device, attr, value));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
  GWSIM_GUARD_BEGIN
  cudaDeviceCanAccessPeer_v4000_params params{canAccessPeer, device, peerDevice};
  ApiScope api(GWSIM_CBID(cudaDeviceCanAccessPeer_v4000), "cudaDeviceCanAccessPeer", &params,
               nullptr, {}, false);
  const int count = api.sim().deviceCount();
  if (canAccessPeer == nullptr) return api.finish(cudaErrorInvalidValue);
  if (device < 0 || device >= count || peerDevice < 0 || peerDevice >= count) {
    return api.finish(cudaErrorInvalidDevice);
  }
  *canAccessPeer = device != peerDevice ? 1 : 0; // NVLink-connected boards
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaDeviceReset(void) {
  GWSIM_GUARD_BEGIN
  ApiScope api(GWSIM_CBID(cudaDeviceReset_v3020), "cudaDeviceReset", nullptr);
  // Waits for the device's work; allocations stay (a test instrument need not tear them down).
  return api.finish(api.sim().deviceSynchronize(api.call()));
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  GWSIM_GUARD_BEGIN
  cudaSetDeviceFlags_v3020_params params{flags};
  ApiScope api(GWSIM_CBID(cudaSetDeviceFlags_v3020), "cudaSetDeviceFlags", &params, nullptr, {},
               false);
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  GWSIM_GUARD_BEGIN
  cudaGetDeviceFlags_v7000_params params{flags};
  ApiScope api(GWSIM_CBID(cudaGetDeviceFlags_v7000), "cudaGetDeviceFlags", &params, nullptr, {},
               false);
  if (flags == nullptr) return api.finish(cudaErrorInvalidValue);
  *flags = cudaDeviceScheduleAuto | cudaDeviceMapHost;
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaDeviceGetLimit(size_t* pValue, cudaLimit limit) {
  GWSIM_GUARD_BEGIN
  cudaDeviceGetLimit_v3020_params params{pValue, limit};
  ApiScope api(GWSIM_CBID(cudaDeviceGetLimit_v3020), "cudaDeviceGetLimit", &params, nullptr, {},
               false);
  if (pValue == nullptr) return api.finish(cudaErrorInvalidValue);
  switch (limit) {
  case cudaLimitStackSize: *pValue = 1024; break;
  case cudaLimitPrintfFifoSize: *pValue = 1u << 20; break;
  case cudaLimitMallocHeapSize: *pValue = 8u << 20; break;
  case cudaLimitMaxL2FetchGranularity: *pValue = 64; break;
  default: *pValue = 0; break;
  }
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
  GWSIM_GUARD_BEGIN
  cudaDeviceSetLimit_v3020_params params{limit, value};
  ApiScope api(GWSIM_CBID(cudaDeviceSetLimit_v3020), "cudaDeviceSetLimit", &params, nullptr, {},
               false);
  return api.finish(cudaSuccess);
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaGetLastError(void) {
  GWSIM_GUARD_BEGIN
  ApiScope api(GWSIM_CBID(cudaGetLastError_v3020), "cudaGetLastError", nullptr, nullptr, {}, false);
  const cudaError_t last = takeLastError();
  api.finish(cudaSuccess);
  return last;
  GWSIM_GUARD_END
}

GWSIM_EXPORT cudaError_t cudaPeekAtLastError(void) {
  GWSIM_GUARD_BEGIN
  ApiScope api(GWSIM_CBID(cudaPeekAtLastError_v3020), "cudaPeekAtLastError", nullptr, nullptr, {},
               false);
  const cudaError_t last = peekLastError();
  api.finish(cudaSuccess);
  return last;
  GWSIM_GUARD_END
}

GWSIM_EXPORT const char* cudaGetErrorString(cudaError_t error) {
  return errorString(error);
}

GWSIM_EXPORT const char* cudaGetErrorName(cudaError_t error) {
  const char* name = errorName(error);
  return name != nullptr ? name : "cudaErrorUnknown";
}

GWSIM_EXPORT cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  if (runtimeVersion == nullptr) return cudaErrorInvalidValue;
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

GWSIM_EXPORT cudaError_t cudaDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return cudaErrorInvalidValue;
  *driverVersion = CUDA_VERSION; // the driver API version of the headers: 13000
  return cudaSuccess;
}
