// FakeNccl: a stand-in libnccl.so.2 for the NCCL hook tests. Every entry point the hooks wrap,
// built on the shim's own NCCL declarations (no nccl.h needed). Communicators are plain structs
// with the size, rank and device they were created with; collectives do nothing and succeed,
// except a count of kFakeNcclFailCount, which fails with ncclInvalidArgument (result
// pass-through). ncclBcast goes through the exported ncclBroadcast, as a library calling its own
// entry points would.
#pragma once

#include <cstddef>

struct ncclComm {
  int nranks;
  int rank;
  int device;
};

extern "C" {
long fakeNcclCalls(const char* name); // calls of `name` that reached the fake
// A communicator made behind the hooks' back (as ncclCommShrink would).
ncclComm* fakeNcclMakeComm(int nranks, int rank, int device);
}

inline constexpr size_t kFakeNcclFailCount = 12345;
