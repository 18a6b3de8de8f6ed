// Stand-in libnccl.so.2: the NCCL entry points a data-parallel training loop uses, with the real
// nccl.h signatures, on the simulated device.
//
// A collective (or send/recv) queues one kernel named like NCCL's own
// (`ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)`, mangled as CUPTI
// reports it) on the caller's stream as a deferred kernel of the simulator: it starts when the
// stream reaches it and ends when the last rank's stream has reached it plus the transfer time
// (rendezvous.h). Issuing never blocks the host, as with a real NCCL; whatever later needs the
// stream (a synchronisation, an event recorded after it, more work on the stream) waits for the
// peers. Data never moves (kernels never run on the simulated device).
//
// Group calls nest; the ops of a group are issued as they come, each its own kernel (where a real
// NCCL fuses a group's point-to-point ops into one SendRecv kernel), and inside a group no op waits
// for the one before it on the stream, so the group's kernels overlap as a fused one's work
// would. Outside a group, a send followed by a receive that its peer mirrors deadlocks until the
// timeout, as the real NCCL documents it may. A communicator is never freed (its pending
// kernels may still be resolved after ncclCommDestroy); destroying it only forbids new work.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <nccl.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tests/simdevice/core/api_scope.h"
#include "tests/simdevice/core/kernel_registry.h"
#include "tests/simdevice/core/simulator.h"
#include "tests/simdevice/nccl/rendezvous.h"

using namespace gpuwise::sim;
using namespace gpuwise::sim::nccl;

#define GWSIM_EXPORT extern "C" __attribute__((visibility("default")))

struct ncclComm {
  std::unique_ptr<Rendezvous> rendezvous;
  int device = 0;
  std::atomic<bool> destroyed{false};
  std::mutex mutex;                      // issue order
  uint64_t next_seq[1 + kMaxRanks] = {}; // per channel
};

namespace {

constexpr char kIdPrefix[] = "gwsim-nccl-";
constexpr int kMaxKernelNames = 512;
constexpr dim3 kGrid{16, 1, 1}; // NCCL launches one block per channel
constexpr dim3 kBlock{512, 1, 1};

thread_local int t_group_depth = 0;

// Every communicator ever made: never freed (see the header comment), and kept reachable so that
// leak checkers do not report them.
void keepCommunicator(ncclComm* comm) {
  static std::mutex mutex;
  static auto* all = new std::vector<ncclComm*>();
  std::lock_guard lock(mutex);
  all->push_back(comm);
}

const char* typeName(ncclDataType_t t) {
  static const char* const kNames[] = {"i8",  "u8",  "i32", "u32",  "i64",    "u64",
                                       "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2"};
  return t >= 0 && t < ncclNumTypes ? kNames[t] : nullptr;
}

size_t typeSize(ncclDataType_t t) {
  static const size_t kSizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return t >= 0 && t < ncclNumTypes ? kSizes[t] : 0;
}

const char* opName(ncclRedOp_t op, ncclDataType_t t) {
  switch (op) {
  case ncclSum: return "Sum";
  case ncclProd: return "Prod";
  case ncclMax:
  case ncclMin: return "MinMax";
  case ncclAvg:
    return t == ncclFloat16 || t == ncclFloat32 || t == ncclFloat64 || t == ncclBfloat16
               ? "PreMulSum"
               : "SumPostDiv";
  default: return nullptr;
  }
}

// The host "stub" of each kernel name: an address in this array (the registry keys kernels by
// address; nothing ever calls it).
char g_stubs[kMaxKernelNames];

const void* kernelFor(const std::string& name) {
  static std::mutex mutex;
  static std::unordered_map<std::string, const void*> by_name;
  static void** module = nullptr;
  std::lock_guard lock(mutex);
  if (auto it = by_name.find(name); it != by_name.end()) return it->second;
  if (by_name.size() >= size_t(kMaxKernelNames)) return nullptr;
  static char fatbin_stand_in[16];
  if (module == nullptr) module = KernelRegistry::instance().registerModule(fatbin_stand_in);
  const void* stub = &g_stubs[by_name.size()];
  const std::string mangled =
      "_Z" + std::to_string(name.size()) + name + "24ncclDevKernelArgsStorageILm4096EE";
  KernelRegistry::instance().registerFunction(module, stub, mangled.c_str(), int(kBlock.x));
  by_name.emplace(name, stub);
  return stub;
}

uint64_t tokenOf(int channel, uint64_t seq) {
  return (uint64_t(channel) << 40) | (seq + 1);
}
int channelOf(uint64_t token) {
  return int(token >> 40);
}
uint64_t seqOf(uint64_t token) {
  return (token & ((uint64_t(1) << 40) - 1)) - 1;
}

void resolveKernel(void* context, uint64_t token, TimeNs* start, TimeNs* end) {
  auto* comm = static_cast<ncclComm*>(context);
  comm->rendezvous->resolve(channelOf(token), seqOf(token), start, end);
}

ncclResult_t checkComm(ncclComm_t comm) {
  if (comm == nullptr || comm->destroyed.load()) return ncclInvalidArgument;
  if (comm->rendezvous->failed()) return ncclSystemError;
  return ncclSuccess;
}

// Queues the op's kernel on `stream` and publishes this rank's arrival.
ncclResult_t issue(ncclComm_t comm, OpKind kind, int channel, const std::string& kernel,
                   uint64_t bus_bytes, cudaStream_t stream) {
  const void* func = kernelFor(kernel);
  if (func == nullptr) return ncclInternalError;
  Simulator& sim = simulator();
  // Kernels of this channel chain on the stream; anything else pending there must end first,
  // except inside a group, whose ops NCCL runs together (one fused kernel): there they overlap,
  // and waiting here for one of them could deadlock the ranks' sends and receives.
  const DeferredHooks last = sim.lastPending(stream, false);
  if (last.token != 0 && (last.context != comm || channelOf(last.token) != channel) &&
      t_group_depth == 0)
    sim.settle(stream, false);
  std::lock_guard lock(comm->mutex);
  const uint64_t seq = comm->next_seq[channel]++;
  const DeferredHooks hooks{resolveKernel, comm, tokenOf(channel, seq)};
  cudaLaunchConfig_t config{};
  config.gridDim = kGrid;
  config.blockDim = kBlock;
  config.stream = stream;
  cudaLaunchKernelExC_v11060_params params{&config, func, nullptr};
  KernelInfo info;
  KernelRegistry::instance().find(func, &info);
  ApiScope api(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, "cudaLaunchKernelExC", &params,
               info.name, DriverCall{CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx"});
  LaunchRequest request{func, kGrid, kBlock, 0, stream, false, false};
  TimeNs earliest = 0;
  DeferredHooks previous;
  const cudaError_t err =
      api.sim().launchDeferred(request, api.call(), hooks, &earliest, &previous);
  spinUntil(api.call().start + api.sim().config().launch_host_ns);
  api.finish(err);
  Arrival arrival;
  arrival.known = earliest;
  arrival.kind = kind;
  arrival.bytes = bus_bytes;
  if (previous.token != 0 && previous.context == comm && channelOf(previous.token) == channel)
    arrival.dep_plus1 = seqOf(previous.token) + 1;
  // Published even when the launch failed, so the peers are not left waiting for this rank.
  comm->rendezvous->publish(channel, seq, arrival);
  return err == cudaSuccess ? ncclSuccess : ncclUnhandledCudaError;
}

ncclResult_t collective(ncclComm_t comm, OpKind kind, const char* stem, size_t count,
                        ncclDataType_t type, const ncclRedOp_t* op, size_t bus_count,
                        cudaStream_t stream) {
  if (ncclResult_t r = checkComm(comm); r != ncclSuccess) return r;
  const char* type_name = typeName(type);
  const char* op_name = op != nullptr ? opName(*op, type) : "";
  if (type_name == nullptr || op_name == nullptr) return ncclInvalidArgument;
  if (count == 0) return ncclSuccess;
  std::string kernel = std::string("ncclDevKernel_") + stem;
  if (op != nullptr) kernel += std::string("_") + op_name + "_" + type_name;
  kernel += "_RING_LL";
  return issue(comm, kind, 0, kernel, uint64_t(bus_count) * typeSize(type), stream);
}

ncclResult_t pointToPoint(OpKind kind, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                          cudaStream_t stream) {
  if (ncclResult_t r = checkComm(comm); r != ncclSuccess) return r;
  if (typeName(type) == nullptr || peer < 0 || peer >= comm->rendezvous->size())
    return ncclInvalidArgument;
  if (count == 0) return ncclSuccess;
  return issue(comm, kind, 1 + peer, "ncclDevKernel_SendRecv", uint64_t(count) * typeSize(type),
               stream);
}

} // namespace

GWSIM_EXPORT ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

GWSIM_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess: return "no error";
  case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
  case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError: return "remote process exited or there was a network error";
  case ncclInProgress: return "NCCL operation in progress";
  default: return "unknown result code";
  }
}

GWSIM_EXPORT const char* ncclGetLastError(ncclComm_t) {
  return "";
}

GWSIM_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  if (id == nullptr) return ncclInvalidArgument;
  std::memset(id->internal, 0, sizeof id->internal);
  std::random_device random;
  std::string name = kIdPrefix;
  char hex[9];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(hex, sizeof hex, "%08x", unsigned(random()));
    name += hex;
  }
  std::memcpy(id->internal, name.c_str(), name.size());
  return ncclSuccess;
}

GWSIM_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* out, int nranks, ncclUniqueId id, int rank) {
  if (out == nullptr || nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks)
    return ncclInvalidArgument;
  id.internal[NCCL_UNIQUE_ID_BYTES - 1] = '\0';
  if (std::strncmp(id.internal, kIdPrefix, sizeof kIdPrefix - 1) != 0) return ncclInvalidArgument;
  auto comm = std::make_unique<ncclComm>();
  comm->device = simulator().currentDevice();
  if (ncclResult_t r = Rendezvous::join(id.internal, nranks, rank, &comm->rendezvous);
      r != ncclSuccess)
    return r;
  *out = comm.release();
  keepCommunicator(*out);
  return ncclSuccess;
}

GWSIM_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* out, int nranks, ncclUniqueId id,
                                                 int rank, ncclConfig_t*) {
  return ncclCommInitRank(out, nranks, id, rank);
}

// One process, one rank per device: the ranks join from threads of their own.
GWSIM_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (comms == nullptr || ndev < 1 || ndev > kMaxRanks) return ncclInvalidArgument;
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  std::vector<ncclResult_t> results(size_t(ndev), ncclSuccess);
  std::vector<std::thread> threads;
  for (int i = 0; i < ndev; ++i) {
    threads.emplace_back([&, i] {
      const int device = devlist != nullptr ? devlist[i] : i;
      if (simulator().setDevice(device) != cudaSuccess) {
        results[size_t(i)] = ncclInvalidArgument;
        return;
      }
      results[size_t(i)] = ncclCommInitRank(&comms[i], ndev, id, i);
    });
  }
  for (auto& t : threads)
    t.join();
  for (ncclResult_t r : results) {
    if (r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

GWSIM_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclInvalidArgument;
  comm->destroyed.store(true);
  return ncclSuccess;
}

GWSIM_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return comm == nullptr ? ncclInvalidArgument : ncclSuccess;
}

GWSIM_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return ncclCommDestroy(comm);
}

GWSIM_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
  if (comm == nullptr || error == nullptr) return ncclInvalidArgument;
  *error = comm->rendezvous->failed() ? ncclSystemError : ncclSuccess;
  return ncclSuccess;
}

GWSIM_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return ncclInvalidArgument;
  *count = comm->rendezvous->size();
  return ncclSuccess;
}

GWSIM_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return ncclInvalidArgument;
  *rank = comm->rendezvous->rank();
  return ncclSuccess;
}

GWSIM_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (comm == nullptr || device == nullptr) return ncclInvalidArgument;
  *device = comm->device;
  return ncclSuccess;
}

GWSIM_EXPORT ncclResult_t ncclAllReduce(const void*, void*, size_t count, ncclDataType_t type,
                                        ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, OpKind::AllReduce, "AllReduce", count, type, &op, count, stream);
}

GWSIM_EXPORT ncclResult_t ncclAllGather(const void*, void*, size_t sendcount, ncclDataType_t type,
                                        ncclComm_t comm, cudaStream_t stream) {
  const size_t ranks = comm != nullptr ? size_t(comm->rendezvous->size()) : 1;
  return collective(comm, OpKind::AllGather, "AllGather", sendcount, type, nullptr,
                    sendcount * ranks, stream);
}

GWSIM_EXPORT ncclResult_t ncclReduceScatter(const void*, void*, size_t recvcount,
                                            ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                                            cudaStream_t stream) {
  const size_t ranks = comm != nullptr ? size_t(comm->rendezvous->size()) : 1;
  return collective(comm, OpKind::ReduceScatter, "ReduceScatter", recvcount, type, &op,
                    recvcount * ranks, stream);
}

GWSIM_EXPORT ncclResult_t ncclBroadcast(const void*, void*, size_t count, ncclDataType_t type,
                                        int root, ncclComm_t comm, cudaStream_t stream) {
  if (comm != nullptr && (root < 0 || root >= comm->rendezvous->size())) return ncclInvalidArgument;
  return collective(comm, OpKind::Broadcast, "Broadcast", count, type, nullptr, count, stream);
}

GWSIM_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t type, int root,
                                    ncclComm_t comm, cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, type, root, comm, stream);
}

GWSIM_EXPORT ncclResult_t ncclReduce(const void*, void*, size_t count, ncclDataType_t type,
                                     ncclRedOp_t op, int root, ncclComm_t comm,
                                     cudaStream_t stream) {
  if (comm != nullptr && (root < 0 || root >= comm->rendezvous->size())) return ncclInvalidArgument;
  return collective(comm, OpKind::Reduce, "Reduce", count, type, &op, count, stream);
}

GWSIM_EXPORT ncclResult_t ncclSend(const void*, size_t count, ncclDataType_t type, int peer,
                                   ncclComm_t comm, cudaStream_t stream) {
  return pointToPoint(OpKind::Send, count, type, peer, comm, stream);
}

GWSIM_EXPORT ncclResult_t ncclRecv(void*, size_t count, ncclDataType_t type, int peer,
                                   ncclComm_t comm, cudaStream_t stream) {
  return pointToPoint(OpKind::Recv, count, type, peer, comm, stream);
}

GWSIM_EXPORT ncclResult_t ncclGroupStart() {
  ++t_group_depth;
  return ncclSuccess;
}

GWSIM_EXPORT ncclResult_t ncclGroupEnd() {
  if (t_group_depth == 0) return ncclInvalidUsage;
  --t_group_depth;
  return ncclSuccess;
}
