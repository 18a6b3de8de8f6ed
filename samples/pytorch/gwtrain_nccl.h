// The few NCCL entry points libgwtrain_sim.so's data-parallel mode calls, found at run time: no
// build-time dependency on NCCL, and the library still loads where there is none (one rank).
//
// libnccl.so.2 is opened RTLD_GLOBAL and its functions looked up in the global scope, so calls
// go through whatever an LD_PRELOADed profiler put in front of them, as with a program that links
// NCCL. On the simulated device the loader path makes that the stand-in
// (tests/simdevice/nccl); on a GPU machine, the real NCCL. The types below are nccl.h's (an
// opaque communicator pointer, int-sized enums, a 128-byte unique id), with the values of its
// ncclDataType_t and ncclRedOp_t.
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstddef>
#include <cstdio>

namespace gwtrain {

struct NcclUniqueId {
  char internal[128];
};
using NcclComm = void*;
enum NcclType : int { kNcclFloat16 = 6, kNcclFloat32 = 7, kNcclBfloat16 = 9 };
constexpr int kNcclSum = 0;

struct NcclApi {
  int (*getUniqueId)(NcclUniqueId*) = nullptr;
  int (*commInitRank)(NcclComm*, int, NcclUniqueId, int) = nullptr;
  int (*allReduce)(const void*, void*, size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  int (*commDestroy)(NcclComm) = nullptr;
  const char* (*errorString)(int) = nullptr;

  // False (with the reason in `error`) when libnccl.so.2 or one of the functions is missing.
  bool load(char* error, size_t error_size) {
    if (allReduce != nullptr) return true;
    if (dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      std::snprintf(error, error_size, "dlopen(libnccl.so.2) failed: %s", dlerror());
      return false;
    }
    bool ok = find(getUniqueId, "ncclGetUniqueId", error, error_size) &&
              find(commInitRank, "ncclCommInitRank", error, error_size) &&
              find(allReduce, "ncclAllReduce", error, error_size) &&
              find(commDestroy, "ncclCommDestroy", error, error_size) &&
              find(errorString, "ncclGetErrorString", error, error_size);
    if (!ok) allReduce = nullptr;
    return ok;
  }

private:
  template <typename F> static bool find(F& f, const char* name, char* error, size_t error_size) {
    f = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
    if (f == nullptr) std::snprintf(error, error_size, "libnccl.so.2 has no %s", name);
    return f != nullptr;
  }
};

} // namespace gwtrain
