#include "tests/simdevice/nccl/rendezvous.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpuwise::sim::nccl {

struct Slot {
  std::atomic<uint64_t> seq_plus1; // written last: 1 + the sequence number the slot holds
  int64_t known;
  uint64_t dep_plus1;
  uint64_t bytes;
  int32_t kind;
  int32_t unused;
};

struct RankArea {
  std::atomic<uint32_t> joined;
  int32_t nranks;
  Slot collective[kCollectiveRing];
  Slot peer[kMaxRanks][kPeerRing];
};

struct Segment {
  RankArea ranks[kMaxRanks];
};

namespace {

constexpr TimeNs kBaseLatencyNs = 6'000;

double envNumber(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  return end != v && x > 0 ? x : fallback;
}

// Sleeps a little between polls: on a small machine the peer we wait for needs the core.
void pause(int round) {
  if (round < 64) {
    sched_yield();
    return;
  }
  const timespec ts{0, 50'000};
  nanosleep(&ts, nullptr);
}

uint64_t cacheKey(int channel, uint64_t seq) {
  return (uint64_t(channel) << 40) | seq;
}

} // namespace

const char* opKindName(OpKind kind) {
  switch (kind) {
  case OpKind::AllReduce: return "AllReduce";
  case OpKind::AllGather: return "AllGather";
  case OpKind::ReduceScatter: return "ReduceScatter";
  case OpKind::Broadcast: return "Broadcast";
  case OpKind::Reduce: return "Reduce";
  case OpKind::Send: return "Send";
  case OpKind::Recv: return "Recv";
  }
  return "?";
}

TimeNs peerTimeoutNs() {
  return TimeNs(envNumber("GWSIM_NCCL_TIMEOUT_MS", 60'000.0) * 1e6);
}

TimeNs Rendezvous::transferNs(OpKind kind, uint64_t bytes, int participants) {
  static const double bytes_per_ns = envNumber("GWSIM_NCCL_BUS_GBPS", 100.0); // GB/s == B/ns
  const double n = std::max(participants, 1);
  double factor = 1.0;
  switch (kind) {
  case OpKind::AllReduce: factor = 2.0 * (n - 1) / n; break;
  case OpKind::AllGather:
  case OpKind::ReduceScatter: factor = (n - 1) / n; break;
  case OpKind::Broadcast:
  case OpKind::Reduce: factor = n > 1 ? 1.0 : 0.0; break;
  case OpKind::Send:
  case OpKind::Recv: factor = 1.0; break;
  }
  return kBaseLatencyNs + TimeNs(factor * double(bytes) / bytes_per_ns);
}

ncclResult_t Rendezvous::join(const std::string& name, int nranks, int rank,
                              std::unique_ptr<Rendezvous>* out) {
  const std::string shm_name = "/" + name;
  const int fd = shm_open(shm_name.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0 || ftruncate(fd, sizeof(Segment)) != 0) {
    std::fprintf(stderr, "gwsim nccl: rank %d: shared memory %s: %s\n", rank, shm_name.c_str(),
                 std::strerror(errno));
    if (fd >= 0) close(fd);
    return ncclSystemError;
  }
  void* p = mmap(nullptr, sizeof(Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return ncclSystemError;
  auto* seg = static_cast<Segment*>(p);
  seg->ranks[rank].nranks = nranks;
  if (seg->ranks[rank].joined.exchange(1, std::memory_order_acq_rel) != 0) {
    std::fprintf(stderr, "gwsim nccl: rank %d joined communicator %s twice\n", rank, name.c_str());
    munmap(p, sizeof(Segment));
    return ncclInvalidUsage;
  }
  const TimeNs deadline = nowNs() + peerTimeoutNs();
  for (int r = 0, round = 0; r < nranks; ++round) {
    if (seg->ranks[r].joined.load(std::memory_order_acquire) == 0) {
      if (nowNs() > deadline) {
        std::fprintf(stderr,
                     "gwsim nccl: rank %d: ncclCommInitRank timed out after %.1f s waiting for "
                     "rank %d of %d; ncclSystemError\n",
                     rank, double(peerTimeoutNs()) / 1e9, r, nranks);
        shm_unlink(shm_name.c_str());
        munmap(p, sizeof(Segment));
        return ncclSystemError;
      }
      pause(round);
      continue;
    }
    if (seg->ranks[r].nranks != nranks) {
      std::fprintf(stderr, "gwsim nccl: rank %d: rank %d joined with %d ranks, this one with %d\n",
                   rank, r, seg->ranks[r].nranks, nranks);
      munmap(p, sizeof(Segment));
      return ncclInvalidUsage;
    }
    ++r;
  }
  // Everyone has the segment mapped: the name is no longer needed (nothing left in /dev/shm).
  shm_unlink(shm_name.c_str());
  out->reset(new Rendezvous(seg, nranks, rank));
  return ncclSuccess;
}

Rendezvous::~Rendezvous() {
  munmap(seg_, sizeof(Segment));
}

Slot* Rendezvous::slotOf(int rank, int channel, uint64_t seq) const {
  RankArea& area = seg_->ranks[rank];
  if (channel == 0) return &area.collective[seq % kCollectiveRing];
  // Point-to-point between this rank and peer: each side writes the slots named by the other.
  const int other = rank == rank_ ? channel - 1 : rank_;
  return &area.peer[other][seq % kPeerRing];
}

void Rendezvous::publish(int channel, uint64_t seq, const Arrival& arrival) {
  Slot* slot = slotOf(rank_, channel, seq);
  slot->known = arrival.known;
  slot->dep_plus1 = arrival.dep_plus1;
  slot->bytes = arrival.bytes;
  slot->kind = int32_t(arrival.kind);
  slot->seq_plus1.store(seq + 1, std::memory_order_release);
}

void Rendezvous::fail(const std::string& why) {
  if (!failed_.exchange(true))
    std::fprintf(stderr, "gwsim nccl: rank %d: %s\n", rank_, why.c_str());
}

bool Rendezvous::readSlot(int rank, int channel, uint64_t seq, TimeNs deadline, Arrival* out) {
  const Slot* slot = slotOf(rank, channel, seq);
  for (int round = 0;; ++round) {
    const uint64_t held = slot->seq_plus1.load(std::memory_order_acquire);
    if (held == seq + 1) {
      out->known = slot->known;
      out->dep_plus1 = slot->dep_plus1;
      out->bytes = slot->bytes;
      out->kind = OpKind(slot->kind);
      if (slot->seq_plus1.load(std::memory_order_acquire) == seq + 1) return true;
    }
    if (held > seq + 1 || nowNs() > deadline || failed()) {
      char why[256];
      std::snprintf(why, sizeof why,
                    "%s #%llu on channel %d: %s rank %d; the communicator fails with "
                    "ncclSystemError",
                    channel == 0 ? "collective" : "send/recv", (unsigned long long)seq, channel,
                    held > seq + 1 ? "history overrun (a rank ran a ring ahead) reading"
                                   : "timed out waiting for",
                    rank);
      if (!failed()) fail(why);
      return false;
    }
    pause(round);
  }
}

bool Rendezvous::arrivalOf(int rank, int channel, uint64_t seq, TimeNs deadline, TimeNs* arrival,
                           Arrival* slot) {
  if (!readSlot(rank, channel, seq, deadline, slot)) return false;
  *arrival = slot->known;
  if (slot->dep_plus1 != 0) {
    TimeNs dep_end = 0;
    if (!endOf(channel, slot->dep_plus1 - 1, deadline, &dep_end)) return false;
    *arrival = std::max(*arrival, dep_end);
  }
  return true;
}

bool Rendezvous::endOf(int channel, uint64_t seq, TimeNs deadline, TimeNs* end) {
  if (auto it = ends_.find(cacheKey(channel, seq)); it != ends_.end()) {
    *end = it->second;
    return true;
  }
  std::vector<int> participants;
  if (channel == 0) {
    for (int r = 0; r < nranks_; ++r)
      participants.push_back(r);
  } else {
    participants.push_back(rank_);
    if (channel - 1 != rank_) participants.push_back(channel - 1);
  }
  TimeNs last = 0;
  Arrival mine;
  for (int r : participants) {
    TimeNs arrival = 0;
    Arrival slot;
    if (!arrivalOf(r, channel, seq, deadline, &arrival, &slot)) return false;
    if (r == rank_) mine = slot;
    last = std::max(last, arrival);
  }
  *end = last + transferNs(mine.kind, mine.bytes, int(participants.size()));
  ends_[cacheKey(channel, seq)] = *end;
  if (seq > 2 * kCollectiveRing) ends_.erase(cacheKey(channel, seq - 2 * kCollectiveRing));
  return true;
}

bool Rendezvous::resolve(int channel, uint64_t seq, TimeNs* start, TimeNs* end) {
  std::lock_guard lock(mutex_);
  const Slot* own = slotOf(rank_, channel, seq);
  const TimeNs known = own->seq_plus1.load(std::memory_order_acquire) == seq + 1 ? own->known : 0;
  const TimeNs deadline = nowNs() + peerTimeoutNs();
  TimeNs arrival = known;
  Arrival slot;
  if (!failed() && arrivalOf(rank_, channel, seq, deadline, &arrival, &slot) &&
      endOf(channel, seq, deadline, end)) {
    *start = arrival;
    return true;
  }
  // Failed: the kernel ends now (when the wait gave up), or at once when it already had.
  *start = known;
  *end = std::max(known, nowNs());
  return false;
}

} // namespace gpuwise::sim::nccl
