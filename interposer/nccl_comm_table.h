// What the NCCL hooks know about each communicator, learned when it is created
// (ncclCommInitRank*, ncclCommInitAll, ncclCommSplit): its job-wide id, size, this process's rank
// in it and its device; and the per-communicator call counter that numbers its collectives.
//
// A fixed open-addressing table keyed by the ncclComm_t: find() and nextSequence() run on the
// collective path (a few loads and one relaxed fetch_add; no allocation, no lock, never blocks).
// Slots are never reused: a destroyed communicator's key becomes a tombstone and its facts stay
// readable, so the drain thread can still resolve events recorded before the destroy. The table
// therefore holds the first kSlots communicators a process creates; later ones are untracked (their
// collectives are recorded with an unknown communicator, size and rank) and counted.
//
// Publication: add() claims an empty slot (CAS to kBusy), writes the facts, then publishes the key
// with a release store; readers match keys with acquire loads, so facts are complete once a key
// matches. The drain thread reads facts(slot) for a slot an event carries: the hook matched the key
// before writing the event, and the ring's release/acquire carries that forward.
//
// Threads: add/remove on whichever thread creates or destroys a communicator; find, nextSequence
// and nextSplit on application threads; facts on the drain thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace gpuwise::interposer {

class NcclCommTable {
public:
  static constexpr uint32_t kSlots = 1024;
  static constexpr uint16_t kNoSlot = 0xffff;

  struct Facts {
    uint64_t id = 0;     // the same on every rank of the communicator
    int32_t size = 0;    // ranks in it
    int32_t rank = 0;    // this process's rank in it
    int32_t device = -1; // the CUDA device it runs on; -1 unknown
  };

  // Registers `comm`. A live entry for the same pointer is kept (`replace` false) or retired and
  // replaced (a new communicator at a destroyed one's address). kNoSlot when the table is full.
  uint16_t add(const void* comm, const Facts& facts, bool replace) {
    const uintptr_t key = reinterpret_cast<uintptr_t>(comm);
    if (key < kFirstKey) return kNoSlot;
    if (uint16_t live = find(comm); live != kNoSlot) {
      if (!replace) return live;
      retire(live, key);
    }
    for (uint32_t i = 0, j = home(key); i < kSlots; ++i, j = (j + 1) & (kSlots - 1)) {
      uintptr_t expected = kEmpty;
      if (!slots_[j].key.compare_exchange_strong(expected, kBusy, std::memory_order_acq_rel))
        continue;
      slots_[j].facts = facts;
      slots_[j].sequence.store(0, std::memory_order_relaxed);
      slots_[j].splits.store(0, std::memory_order_relaxed);
      slots_[j].key.store(key, std::memory_order_release);
      return uint16_t(j);
    }
    untracked_.fetch_add(1, std::memory_order_relaxed);
    return kNoSlot;
  }

  // The communicator is gone: its pointer no longer matches (a new one may take the address).
  void remove(const void* comm) {
    if (uint16_t slot = find(comm); slot != kNoSlot)
      retire(slot, reinterpret_cast<uintptr_t>(comm));
  }

  // The live slot of `comm`, or kNoSlot.
  uint16_t find(const void* comm) const {
    const uintptr_t key = reinterpret_cast<uintptr_t>(comm);
    if (key < kFirstKey) return kNoSlot;
    for (uint32_t i = 0, j = home(key); i < kSlots; ++i, j = (j + 1) & (kSlots - 1)) {
      const uintptr_t k = slots_[j].key.load(std::memory_order_acquire);
      if (k == key) return uint16_t(j);
      if (k == kEmpty) return kNoSlot;
    }
    return kNoSlot;
  }

  // The number of this collective on its communicator, from 1.
  uint64_t nextSequence(uint16_t slot) {
    return slots_[slot].sequence.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  // How many ncclCommSplit calls this communicator had before this one (every member makes the
  // same calls in the same order, so the count is the same on every rank).
  uint32_t nextSplit(uint16_t slot) {
    return slots_[slot].splits.fetch_add(1, std::memory_order_relaxed);
  }

  // The facts of a slot add() returned (also after remove()).
  const Facts& facts(uint16_t slot) const { return slots_[slot].facts; }

  // Communicators created while the table was full.
  uint64_t untracked() const { return untracked_.load(std::memory_order_relaxed); }

private:
  // Key values below any object's address.
  static constexpr uintptr_t kEmpty = 0, kBusy = 1, kDead = 2, kFirstKey = 16;

  static uint32_t home(uintptr_t key) {
    return uint32_t((uint64_t(key) * 0x9E3779B97F4A7C15ull) >> 54) & (kSlots - 1);
  }
  void retire(uint16_t slot, uintptr_t key) {
    uintptr_t expected = key;
    slots_[slot].key.compare_exchange_strong(expected, kDead, std::memory_order_acq_rel);
  }

  struct Slot {
    std::atomic<uintptr_t> key{kEmpty};
    Facts facts{0, 0, 0, 0}; // all zero: the table lives in .bss
    std::atomic<uint64_t> sequence{0};
    std::atomic<uint32_t> splits{0};
  };
  Slot slots_[kSlots];
  std::atomic<uint64_t> untracked_{0};
};
static_assert(NcclCommTable::kSlots <= NcclCommTable::kNoSlot, "slot numbers fit 16 bits");

// The process's one table (hooks_nccl.cpp).
NcclCommTable& ncclComms();

} // namespace gpuwise::interposer
