// The stand-in NCCL's meeting point: one POSIX shared-memory segment per communicator, named from
// its unique id, where each rank publishes when its stream reaches each collective, and from which
// every rank computes the same end for it.
//
// Time: every rank's simulated device runs on the host's CLOCK_MONOTONIC (core/clock.h), so a
// rank's arrival (the earliest start the simulator gave its collective kernel) is comparable
// across the processes of one host as is. A collective with sequence number k on a channel:
//
//   arrival(r) = max(known start of r's kernel k, end of r's previous kernel on its stream when
//                    that one is a still unresolved collective of the same channel)
//   end(k)     = max over the participants of arrival(r) + transfer(kind, bytes, ranks)
//   start on r = arrival(r)                 (so a rank that waits for a late peer has a long
//   kernel)
//
// transfer = 6 us + NCCL's bus-bandwidth factor x bytes / link bandwidth (ring all-reduce:
// 2(n-1)/n x bytes; all-gather and reduce-scatter: (n-1)/n x the gathered bytes; broadcast,
// reduce, send and recv: bytes), with a nominal link of $GWSIM_NCCL_BUS_GBPS (default 100 GB/s,
// an order of magnitude of NVLink ring bandwidth). Every participant evaluates the same formula
// on the same published numbers, so the end is the same on every rank to the nanosecond.
//
// Channels: 0 is the communicator's collectives (all ranks, in the order every rank issues them,
// as NCCL requires); 1 + p is point-to-point with peer p (send/recv matched in issue order). Each
// rank writes only its own slots (a ring per channel); a slot is published by storing its sequence
// number last (release), so a reader sees whole slots.
//
// Waiting: resolve() blocks until every participant published the sequence number, at most
// $GWSIM_NCCL_TIMEOUT_MS (default 60 s) per wait; then one line on stderr, the communicator is
// failed (later resolves return at once) and the kernel ends when the wait gave up. A reader
// that finds a slot already overwritten by a later sequence (a rank more than a ring ahead of
// one that never synchronises) fails the same way.
//
// Threads: resolve() may be called from any thread (one mutex per rendezvous, held while
// waiting: callers of one communicator wait in turn). publish() is the issuing thread's.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <nccl.h>

#include "tests/simdevice/core/clock.h"

namespace gpuwise::sim::nccl {

inline constexpr int kMaxRanks = 64;
inline constexpr uint32_t kCollectiveRing = 1024;
inline constexpr uint32_t kPeerRing = 128;

enum class OpKind : int32_t { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, Send, Recv };
const char* opKindName(OpKind kind);

struct Arrival {
  TimeNs known = 0;       // earliest start from this rank's own stream
  uint64_t dep_plus1 = 0; // 1 + sequence of the unresolved kernel it follows on the channel, or 0
  uint64_t bytes = 0;     // the bytes the bus factor applies to (see the header comment)
  OpKind kind = OpKind::AllReduce;
};

struct Segment;
struct Slot;

class Rendezvous {
public:
  // Opens (creating if first) the segment `name`, marks `rank` present and waits until all
  // `nranks` are, or the timeout. ncclSystemError on timeout, ncclInvalidUsage when a rank joins
  // twice or the ranks disagree on the size; one stderr line says which.
  static ncclResult_t join(const std::string& name, int nranks, int rank,
                           std::unique_ptr<Rendezvous>* out);
  ~Rendezvous();

  int rank() const { return rank_; }
  int size() const { return nranks_; }
  bool failed() const { return failed_.load(std::memory_order_acquire); }

  void publish(int channel, uint64_t seq, const Arrival& arrival);
  // This rank's start and the common end of kernel `seq` of `channel` (see the header comment).
  // False when the communicator failed (timeout or overrun): start/end are then best effort.
  bool resolve(int channel, uint64_t seq, TimeNs* start, TimeNs* end);

  // The transfer time of one operation (exposed for the tests).
  static TimeNs transferNs(OpKind kind, uint64_t bytes, int participants);

private:
  Rendezvous(Segment* segment, int nranks, int rank)
      : seg_(segment), nranks_(nranks), rank_(rank) {}
  Slot* slotOf(int rank, int channel, uint64_t seq) const;
  bool readSlot(int rank, int channel, uint64_t seq, TimeNs deadline, Arrival* out);
  bool endOf(int channel, uint64_t seq, TimeNs deadline, TimeNs* end);
  bool arrivalOf(int rank, int channel, uint64_t seq, TimeNs deadline, TimeNs* arrival,
                 Arrival* slot);
  void fail(const std::string& why);

  Segment* seg_;
  int nranks_, rank_;
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::unordered_map<uint64_t, TimeNs> ends_; // key: channel << 40 | seq
};

// Milliseconds a rank waits for its peers ($GWSIM_NCCL_TIMEOUT_MS, default 60000).
TimeNs peerTimeoutNs();

} // namespace gpuwise::sim::nccl
