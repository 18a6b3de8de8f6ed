// NCCL probes: every collective and point-to-point call (ncclAllReduce, ncclAllGather,
// ncclReduceScatter, ncclBroadcast, ncclBcast, ncclReduce, ncclAlltoAll, ncclSend, ncclRecv) is
// recorded with its kind, element type, count, stream, and its communicator's id, size and this
// process's rank in it, so live runs know what each collective moved without the profiler's
// operators. The communicator facts come from the calls that create communicators
// (ncclCommInitRank, ncclCommInitRankConfig, ncclCommInitRankScalable, ncclCommInitAll,
// ncclCommSplit), never from the library on the collective path; ncclCommDestroy and
// ncclCommAbort retire them (nccl_comm_table.h).
//
// Communicator ids are the same on every rank, so the analysis can line one collective up across
// the job's processes: a hash of the ncclUniqueId(s) every member passed to its init; for a split,
// a hash of the parent's id, the split's number on the parent and the colour; for ncclCommInitAll
// (all ranks in this process) a hash of the process id and the call's number. Each collective gets
// the next number of its communicator's counter, from 1: NCCL requires every member to issue a
// communicator's collectives in the same order, so (communicator, sequence) names one collective
// job-wide. Send/recv are not ordered across ranks that way: they carry sequence 0 and their peer.
//
// Coverage. LD_PRELOAD: libnccl.so.2 exports its API unversioned, and the hooks (in GPUWISE_1,
// gpuwise.map) are the default definitions every unversioned reference from PyTorch or any program
// linked against NCCL binds to; the real function is reached through dlsym(RTLD_NEXT). A program
// without NCCL never calls them. Not covered: NCCL linked statically into the program, a libnccl
// dlopen'd with RTLD_LOCAL and called through its own dlsym handles, CUDA_INJECTION64_PATH alone
// (the shim arrives after symbols are bound), ncclGather/ncclScatter, ncclCommShrink (its
// collectives are recorded with an unknown communicator). Group calls are not hooked: each op of
// a group is recorded as its own call (with a real NCCL the group's kernels launch in
// ncclGroupEnd, after the calls returned).
//
// Hot path: the comm lookup and a relaxed fetch_add on its counter, then the same Recorder as the
// launch hooks (one 64-byte event, no allocation or lock, a full ring drops and counts). The
// reentrancy guard is released around the real call, so the kernels NCCL launches inside it are
// recorded by the launch hooks; a thread-local flag keeps NCCL's own calls to its exported entry
// points (ncclBcast calling ncclBroadcast) from being recorded or numbered twice.
#include "interposer/nccl_comm_table.h"
#include "interposer/nccl_declarations.h"
#include "interposer/real_symbol.h"
#include "interposer/recorder.h"
#include "profiler/model/events.h"

#include <unistd.h>

using namespace gpuwise::interposer;
namespace model = gpuwise::model;
using nccl::Comm;
using nccl::DataType;
using nccl::RedOp;
using nccl::Result;

namespace {

using AllReduceFn = Result (*)(const void*, void*, size_t, DataType, RedOp, Comm, cudaStream_t);
using AllGatherFn = Result (*)(const void*, void*, size_t, DataType, Comm, cudaStream_t);
using BroadcastFn = Result (*)(const void*, void*, size_t, DataType, int, Comm, cudaStream_t);
using BcastFn = Result (*)(void*, size_t, DataType, int, Comm, cudaStream_t);
using ReduceFn = Result (*)(const void*, void*, size_t, DataType, RedOp, int, Comm, cudaStream_t);
using SendFn = Result (*)(const void*, size_t, DataType, int, Comm, cudaStream_t);
using RecvFn = Result (*)(void*, size_t, DataType, int, Comm, cudaStream_t);
using InitRankFn = Result (*)(Comm*, int, nccl::UniqueId, int);
using InitRankConfigFn = Result (*)(Comm*, int, nccl::UniqueId, int, nccl::Config*);
using InitRankScalableFn = Result (*)(Comm*, int, int, int, nccl::UniqueId*, nccl::Config*);
using InitAllFn = Result (*)(Comm*, int, const int*);
using SplitFn = Result (*)(Comm, int, int, Comm*, nccl::Config*);
using CommFn = Result (*)(Comm);
using CommIntFn = Result (*)(Comm, int*);

#define GPUWISE_REAL_NCCL(fn, type)                                                                \
  constinit RealSymbol<type> real_##fn {                                                           \
#fn, nullptr, nccl::kLibrary                                                                   \
  }
GPUWISE_REAL_NCCL(ncclAllReduce, AllReduceFn);
GPUWISE_REAL_NCCL(ncclAllGather, AllGatherFn);
GPUWISE_REAL_NCCL(ncclReduceScatter, AllReduceFn);
GPUWISE_REAL_NCCL(ncclBroadcast, BroadcastFn);
GPUWISE_REAL_NCCL(ncclBcast, BcastFn);
GPUWISE_REAL_NCCL(ncclReduce, ReduceFn);
GPUWISE_REAL_NCCL(ncclAlltoAll, AllGatherFn);
GPUWISE_REAL_NCCL(ncclSend, SendFn);
GPUWISE_REAL_NCCL(ncclRecv, RecvFn);
GPUWISE_REAL_NCCL(ncclCommInitRank, InitRankFn);
GPUWISE_REAL_NCCL(ncclCommInitRankConfig, InitRankConfigFn);
GPUWISE_REAL_NCCL(ncclCommInitRankScalable, InitRankScalableFn);
GPUWISE_REAL_NCCL(ncclCommInitAll, InitAllFn);
GPUWISE_REAL_NCCL(ncclCommSplit, SplitFn);
GPUWISE_REAL_NCCL(ncclCommDestroy, CommFn);
GPUWISE_REAL_NCCL(ncclCommAbort, CommFn);
GPUWISE_REAL_NCCL(ncclCommCount, CommIntFn);
GPUWISE_REAL_NCCL(ncclCommUserRank, CommIntFn);
GPUWISE_REAL_NCCL(ncclCommCuDevice, CommIntFn);
#undef GPUWISE_REAL_NCCL

constinit NcclCommTable g_comms;
std::atomic<uint64_t> g_init_all_calls{0};

// Inside a hooked NCCL call on this thread: NCCL's own nested calls to its entry points.
__thread uint8_t t_in_nccl __attribute__((tls_model("initial-exec")));

// What an NCCL entry point answers when the real library is not there.
constexpr Result kNoLibrary = nccl::kSystemError;

bool succeeded(Result r) {
  return r == nccl::kSuccess || r == nccl::kInProgress;
}

// FNV-1a over bytes, continuing from `h`.
uint64_t hashBytes(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}
template <class T> uint64_t hashValue(const T& v, uint64_t h) {
  return hashBytes(&v, sizeof v, h);
}

// Runs `call` (an init or other non-collective entry point) as NCCL's own nested calls see it.
template <class Call> Result nested(Call&& call) {
  t_in_nccl = 1;
  Result r = call();
  t_in_nccl = 0;
  return r;
}

// The library's answer for a communicator; `fallback` when it has none (a non-blocking
// communicator still initialising, an old NCCL).
int askComm(RealSymbol<CommIntFn>& fn, Comm comm, int fallback) {
  CommIntFn f = fn.get();
  int v = fallback;
  if (!f || nested([&] { return f(comm, &v); }) != nccl::kSuccess) return fallback;
  return v;
}

void learn(Comm comm, uint64_t id, int size, int rank, bool replace) {
  if (!comm) return;
  NcclCommTable::Facts f;
  f.id = id ? id : 1; // 0 means "unknown" in the records
  f.size = size;
  f.rank = rank;
  f.device = askComm(real_ncclCommCuDevice, comm, int32_t(t_state.device));
  g_comms.add(comm, f, replace);
}

struct CallFacts {
  Comm comm;
  size_t count;
  DataType type;
  int peer; // send/recv; -1 for collectives
  cudaStream_t stream;
};

// Numbers the call on its communicator, runs it with the reentrancy guard released (its kernels
// are recorded by the launch hooks), then records one Collective event.
template <class Call>
[[gnu::noinline]] Result recordCollective(ApiId id, model::CollectiveKind kind, CallFacts facts,
                                          Call&& call) {
  const uint16_t slot = g_comms.find(facts.comm);
  const uint64_t sequence =
      facts.peer < 0 && slot != NcclCommTable::kNoSlot ? g_comms.nextSequence(slot) : 0;
  Recorder rec;
  if (!rec.begin()) return nested(call);
  t_state.in_hook = 0; // NCCL's own launches underneath are recorded by their hooks
  Result r = nested(call);
  t_state.in_hook = 1; // end() clears it
  if (RawEvent* e = rec.end(EventKind::Collective, id, succeeded(r) ? 0 : r, uint8_t(kind))) {
    if (slot != NcclCommTable::kNoSlot && g_comms.facts(slot).device >= 0)
      e->device = uint16_t(g_comms.facts(slot).device);
    e->u.collective.stream = reinterpret_cast<uint64_t>(facts.stream);
    e->u.collective.count = facts.count;
    e->u.collective.sequence = sequence;
    e->u.collective.comm = reinterpret_cast<uint64_t>(facts.comm);
    e->u.collective.peer = facts.peer;
    e->u.collective.slot = slot;
    e->u.collective.element =
        facts.type >= 0 && facts.type < nccl::kNumDataTypes ? uint8_t(facts.type) : uint8_t{0xff};
    rec.publish();
  }
  return r;
}

// The common shape of every collective hook: forward untouched when the shim is off or NCCL is
// calling itself, record otherwise.
template <class Call>
Result collective(ApiId id, model::CollectiveKind kind, CallFacts facts, Call&& call) {
  if (Recorder::off() || t_in_nccl) return call();
  return recordCollective(id, kind, facts, call);
}

} // namespace

namespace gpuwise::interposer {
NcclCommTable& ncclComms() {
  return g_comms;
}
} // namespace gpuwise::interposer

GPUWISE_EXPORT Result ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    DataType type, RedOp op, Comm comm, cudaStream_t stream) {
  auto fn = real_ncclAllReduce.get();
  if (!fn) return kNoLibrary;
  return collective(ApiId::ncclAllReduce, model::CollectiveKind::AllReduce,
                    {comm, count, type, -1, stream},
                    [=] { return fn(sendbuff, recvbuff, count, type, op, comm, stream); });
}

GPUWISE_EXPORT Result ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                    DataType type, Comm comm, cudaStream_t stream) {
  auto fn = real_ncclAllGather.get();
  if (!fn) return kNoLibrary;
  return collective(ApiId::ncclAllGather, model::CollectiveKind::AllGather,
                    {comm, sendcount, type, -1, stream},
                    [=] { return fn(sendbuff, recvbuff, sendcount, type, comm, stream); });
}

GPUWISE_EXPORT Result ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                        DataType type, RedOp op, Comm comm, cudaStream_t stream) {
  auto fn = real_ncclReduceScatter.get();
  if (!fn) return kNoLibrary;
  return collective(ApiId::ncclReduceScatter, model::CollectiveKind::ReduceScatter,
                    {comm, recvcount, type, -1, stream},
                    [=] { return fn(sendbuff, recvbuff, recvcount, type, op, comm, stream); });
}

GPUWISE_EXPORT Result ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                    DataType type, int root, Comm comm, cudaStream_t stream) {
  auto fn = real_ncclBroadcast.get();
  if (!fn) return kNoLibrary;
  return collective(ApiId::ncclBroadcast, model::CollectiveKind::Broadcast,
                    {comm, count, type, -1, stream},
                    [=] { return fn(sendbuff, recvbuff, count, type, root, comm, stream); });
}

GPUWISE_EXPORT Result ncclBcast(void* buff, size_t count, DataType type, int root, Comm comm,
                                cudaStream_t stream) {
  auto fn = real_ncclBcast.get();
  if (!fn) return kNoLibrary;
  return collective(ApiId::ncclBcast, model::CollectiveKind::Broadcast,
                    {comm, count, type, -1, stream},
                    [=] { return fn(buff, count, type, root, comm, stream); });
}

GPUWISE_EXPORT Result ncclReduce(const void* sendbuff, void* recvbuff, size_t count, DataType type,
                                 RedOp op, int root, Comm comm, cudaStream_t stream) {
  auto fn = real_ncclReduce.get();
  if (!fn) return kNoLibrary;
  return collective(ApiId::ncclReduce, model::CollectiveKind::Reduce,
                    {comm, count, type, -1, stream},
                    [=] { return fn(sendbuff, recvbuff, count, type, op, root, comm, stream); });
}

GPUWISE_EXPORT Result ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                   DataType type, Comm comm, cudaStream_t stream) {
  auto fn = real_ncclAlltoAll.get();
  if (!fn) return kNoLibrary;
  return collective(ApiId::ncclAlltoAll, model::CollectiveKind::AllToAll,
                    {comm, count, type, -1, stream},
                    [=] { return fn(sendbuff, recvbuff, count, type, comm, stream); });
}

GPUWISE_EXPORT Result ncclSend(const void* sendbuff, size_t count, DataType type, int peer,
                               Comm comm, cudaStream_t stream) {
  auto fn = real_ncclSend.get();
  if (!fn) return kNoLibrary;
  return collective(ApiId::ncclSend, model::CollectiveKind::Send,
                    {comm, count, type, peer < 0 ? -1 : peer, stream},
                    [=] { return fn(sendbuff, count, type, peer, comm, stream); });
}

GPUWISE_EXPORT Result ncclRecv(void* recvbuff, size_t count, DataType type, int peer, Comm comm,
                               cudaStream_t stream) {
  auto fn = real_ncclRecv.get();
  if (!fn) return kNoLibrary;
  return collective(ApiId::ncclRecv, model::CollectiveKind::Recv,
                    {comm, count, type, peer < 0 ? -1 : peer, stream},
                    [=] { return fn(recvbuff, count, type, peer, comm, stream); });
}

// Communicator creation and destruction: learn or retire, never record.

GPUWISE_EXPORT Result ncclCommInitRank(Comm* comm, int nranks, nccl::UniqueId id, int rank) {
  auto fn = real_ncclCommInitRank.get();
  if (!fn) return kNoLibrary;
  if (Recorder::off() || t_in_nccl) return fn(comm, nranks, id, rank);
  Result r = nested([&] { return fn(comm, nranks, id, rank); });
  if (succeeded(r) && comm) learn(*comm, hashValue(id, 0xcbf29ce484222325ull), nranks, rank, true);
  return r;
}

GPUWISE_EXPORT Result ncclCommInitRankConfig(Comm* comm, int nranks, nccl::UniqueId id, int rank,
                                             nccl::Config* config) {
  auto fn = real_ncclCommInitRankConfig.get();
  if (!fn) return kNoLibrary;
  if (Recorder::off() || t_in_nccl) return fn(comm, nranks, id, rank, config);
  Result r = nested([&] { return fn(comm, nranks, id, rank, config); });
  if (succeeded(r) && comm) learn(*comm, hashValue(id, 0xcbf29ce484222325ull), nranks, rank, true);
  return r;
}

GPUWISE_EXPORT Result ncclCommInitRankScalable(Comm* comm, int nranks, int rank, int nids,
                                               nccl::UniqueId* ids, nccl::Config* config) {
  auto fn = real_ncclCommInitRankScalable.get();
  if (!fn) return kNoLibrary;
  if (Recorder::off() || t_in_nccl) return fn(comm, nranks, rank, nids, ids, config);
  Result r = nested([&] { return fn(comm, nranks, rank, nids, ids, config); });
  if (succeeded(r) && comm && ids && nids > 0)
    learn(*comm, hashBytes(ids, sizeof(nccl::UniqueId) * size_t(nids)), nranks, rank, true);
  return r;
}

GPUWISE_EXPORT Result ncclCommInitAll(Comm* comms, int ndev, const int* devlist) {
  auto fn = real_ncclCommInitAll.get();
  if (!fn) return kNoLibrary;
  if (Recorder::off() || t_in_nccl) return fn(comms, ndev, devlist);
  Result r = nested([&] { return fn(comms, ndev, devlist); });
  if (!succeeded(r) || !comms) return r;
  const uint64_t call = g_init_all_calls.fetch_add(1, std::memory_order_relaxed);
  const uint64_t id = hashValue(call, hashValue(int64_t(getpid()), 0x6e63636c616c6cull));
  // An NCCL whose InitAll goes through its own exported InitRank (from threads of its own) has
  // registered these already, with the id all of them share: keep those.
  for (int i = 0; i < ndev; ++i)
    learn(comms[i], id, ndev, i, false);
  return r;
}

GPUWISE_EXPORT Result ncclCommSplit(Comm comm, int color, int key, Comm* newcomm,
                                    nccl::Config* config) {
  auto fn = real_ncclCommSplit.get();
  if (!fn) return kNoLibrary;
  if (Recorder::off() || t_in_nccl) return fn(comm, color, key, newcomm, config);
  const uint16_t parent = g_comms.find(comm);
  // Counted before the call, as every member does, whether or not it joins a new communicator.
  const uint32_t split = parent != NcclCommTable::kNoSlot ? g_comms.nextSplit(parent) : 0;
  Result r = nested([&] { return fn(comm, color, key, newcomm, config); });
  if (!succeeded(r) || !newcomm || !*newcomm) return r; // NCCL_SPLIT_NOCOLOR: no communicator
  uint64_t id = parent != NcclCommTable::kNoSlot ? g_comms.facts(parent).id
                                                 : reinterpret_cast<uint64_t>(comm);
  id = hashValue(color, hashValue(split, hashValue(id, 0x73706c6974ull)));
  learn(*newcomm, id, askComm(real_ncclCommCount, *newcomm, -1),
        askComm(real_ncclCommUserRank, *newcomm, -1), true);
  return r;
}

GPUWISE_EXPORT Result ncclCommDestroy(Comm comm) {
  auto fn = real_ncclCommDestroy.get();
  if (!fn) return kNoLibrary;
  if (t_in_nccl) return fn(comm);
  g_comms.remove(comm);
  return nested([&] { return fn(comm); });
}

GPUWISE_EXPORT Result ncclCommAbort(Comm comm) {
  auto fn = real_ncclCommAbort.get();
  if (!fn) return kNoLibrary;
  if (t_in_nccl) return fn(comm);
  g_comms.remove(comm);
  return nested([&] { return fn(comm); });
}
