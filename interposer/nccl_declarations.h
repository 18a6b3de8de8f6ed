// The slice of NCCL's C API the hooks need, declared here so the shim builds without nccl.h (the
// shim never links NCCL). Values and layouts are NCCL's stable ABI (nccl.h 2.x): results and data
// types are C enums (an int), a communicator is an opaque pointer, a unique id is 128 bytes passed
// by value, a config is only ever passed through.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

struct ncclComm; // NCCL's own opaque type: ncclComm_t is `struct ncclComm*`

namespace gpuwise::interposer::nccl {

using Comm = ::ncclComm*;
using Result = int;   // ncclResult_t
using DataType = int; // ncclDataType_t
using RedOp = int;    // ncclRedOp_t
using Config = void;  // ncclConfig_t: passed through untouched

constexpr Result kSuccess = 0;
constexpr Result kSystemError = 2;
constexpr Result kInProgress = 7; // a non-blocking communicator queued the call

// ncclDataType_t values, ncclInt8 = 0 ... ncclFloat8e5m2 = 11.
constexpr int kNumDataTypes = 12;

struct UniqueId {
  char internal[128];
};
static_assert(sizeof(UniqueId) == 128, "NCCL_UNIQUE_ID_BYTES");

// The real library's soname, for finding an RTLD_LOCAL-loaded NCCL.
inline constexpr const char* kLibrary = "libnccl.so.2";

} // namespace gpuwise::interposer::nccl
