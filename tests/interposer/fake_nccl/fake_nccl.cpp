#include "fake_nccl.h"

#include "interposer/nccl_declarations.h"

#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

using namespace gpuwise::interposer;
using nccl::Comm;
using nccl::DataType;
using nccl::RedOp;
using nccl::Result;

namespace {

constexpr Result kInvalidArgument = 4;

std::mutex g_mutex;
std::unordered_map<std::string, long>& counts() {
  static auto* m = new std::unordered_map<std::string, long>();
  return *m;
}
void note(const char* name) {
  std::lock_guard lock(g_mutex);
  ++counts()[name];
}

Result op(const char* name, size_t count, Comm comm) {
  note(name);
  if (!comm) return kInvalidArgument;
  return count == kFakeNcclFailCount ? kInvalidArgument : nccl::kSuccess;
}

} // namespace

extern "C" ncclComm* fakeNcclMakeComm(int nranks, int rank, int device);
extern "C" Result ncclBroadcast(const void*, void*, size_t, DataType, int, Comm, cudaStream_t);
extern "C" Result ncclCommInitRank(Comm*, int, nccl::UniqueId, int);

FAKE_EXPORT long fakeNcclCalls(const char* name) {
  std::lock_guard lock(g_mutex);
  auto it = counts().find(name);
  return it == counts().end() ? 0 : it->second;
}

FAKE_EXPORT ncclComm* fakeNcclMakeComm(int nranks, int rank, int device) {
  // Kept for the process's life (addresses stay unique in a test) and reachable, so leak checkers
  // do not report them.
  static std::deque<ncclComm> comms;
  std::lock_guard lock(g_mutex);
  return &comms.emplace_back(ncclComm{nranks, rank, device});
}

FAKE_EXPORT Result ncclCommInitRank(Comm* comm, int nranks, nccl::UniqueId, int rank) {
  note("ncclCommInitRank");
  if (!comm || nranks < 1 || rank < 0 || rank >= nranks) return kInvalidArgument;
  *comm = fakeNcclMakeComm(nranks, rank, 3);
  return nccl::kSuccess;
}

FAKE_EXPORT Result ncclCommInitRankConfig(Comm* comm, int nranks, nccl::UniqueId id, int rank,
                                          nccl::Config*) {
  note("ncclCommInitRankConfig");
  return ncclCommInitRank(comm, nranks, id, rank);
}

FAKE_EXPORT Result ncclCommInitRankScalable(Comm* comm, int nranks, int rank, int nids,
                                            nccl::UniqueId* ids, nccl::Config*) {
  note("ncclCommInitRankScalable");
  if (nids < 1 || !ids) return kInvalidArgument;
  return ncclCommInitRank(comm, nranks, ids[0], rank);
}

FAKE_EXPORT Result ncclCommInitAll(Comm* comms, int ndev, const int* devlist) {
  note("ncclCommInitAll");
  for (int i = 0; i < ndev; ++i)
    comms[i] = fakeNcclMakeComm(ndev, i, devlist ? devlist[i] : i);
  return nccl::kSuccess;
}

// Ranks with the same colour form a communicator of (parent size / 2) ranks, numbered by key.
FAKE_EXPORT Result ncclCommSplit(Comm comm, int color, int key, Comm* newcomm, nccl::Config*) {
  note("ncclCommSplit");
  if (!comm || !newcomm) return kInvalidArgument;
  *newcomm = color < 0 ? nullptr : fakeNcclMakeComm(comm->nranks / 2, key, comm->device);
  return nccl::kSuccess;
}

FAKE_EXPORT Result ncclCommDestroy(Comm comm) {
  note("ncclCommDestroy");
  return comm ? nccl::kSuccess : kInvalidArgument;
}
FAKE_EXPORT Result ncclCommAbort(Comm comm) {
  note("ncclCommAbort");
  return comm ? nccl::kSuccess : kInvalidArgument;
}

FAKE_EXPORT Result ncclCommCount(Comm comm, int* count) {
  note("ncclCommCount");
  if (!comm || !count) return kInvalidArgument;
  *count = comm->nranks;
  return nccl::kSuccess;
}
FAKE_EXPORT Result ncclCommUserRank(Comm comm, int* rank) {
  note("ncclCommUserRank");
  if (!comm || !rank) return kInvalidArgument;
  *rank = comm->rank;
  return nccl::kSuccess;
}
FAKE_EXPORT Result ncclCommCuDevice(Comm comm, int* device) {
  note("ncclCommCuDevice");
  if (!comm || !device) return kInvalidArgument;
  *device = comm->device;
  return nccl::kSuccess;
}

FAKE_EXPORT Result ncclAllReduce(const void*, void*, size_t count, DataType, RedOp, Comm comm,
                                 cudaStream_t) {
  return op("ncclAllReduce", count, comm);
}
FAKE_EXPORT Result ncclAllGather(const void*, void*, size_t count, DataType, Comm comm,
                                 cudaStream_t) {
  return op("ncclAllGather", count, comm);
}
FAKE_EXPORT Result ncclReduceScatter(const void*, void*, size_t count, DataType, RedOp, Comm comm,
                                     cudaStream_t) {
  return op("ncclReduceScatter", count, comm);
}
FAKE_EXPORT Result ncclBroadcast(const void*, void*, size_t count, DataType, int, Comm comm,
                                 cudaStream_t) {
  return op("ncclBroadcast", count, comm);
}
FAKE_EXPORT Result ncclBcast(void* buff, size_t count, DataType type, int root, Comm comm,
                             cudaStream_t stream) {
  note("ncclBcast");
  return ncclBroadcast(buff, buff, count, type, root, comm, stream);
}
FAKE_EXPORT Result ncclReduce(const void*, void*, size_t count, DataType, RedOp, int, Comm comm,
                              cudaStream_t) {
  return op("ncclReduce", count, comm);
}
FAKE_EXPORT Result ncclAlltoAll(const void*, void*, size_t count, DataType, Comm comm,
                                cudaStream_t) {
  return op("ncclAlltoAll", count, comm);
}
FAKE_EXPORT Result ncclSend(const void*, size_t count, DataType, int, Comm comm, cudaStream_t) {
  return op("ncclSend", count, comm);
}
FAKE_EXPORT Result ncclRecv(void*, size_t count, DataType, int, Comm comm, cudaStream_t) {
  return op("ncclRecv", count, comm);
}
