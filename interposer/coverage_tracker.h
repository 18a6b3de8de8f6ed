// Keeps the hooks and CUPTI from counting the same call twice in the CUPTI tier.
//
// Launches, copies and memsets: CUPTI's records are authoritative (they have GPU times). A hook
// record of such a call is held until CUPTI has shown its hand for that thread (an API record of a
// later call on the same thread has arrived, or max_hold has passed, or the process is exiting);
// then it is dropped if a CUPTI API record of the same class lies inside its interval (CUPTI saw
// the call, so CUPTI's GPU record stands for it), and emitted otherwise (CUPTI missed the call:
// a library bound straight to the driver, records dropped, CUPTI not yet enabled).
//
// Synchronisations and allocations: the hooks are authoritative (they measure the host's blocked
// time and know pinned registrations). CUPTI's SYNCHRONIZATION and MEMORY2 records are held for
// cupti_hold and dropped when a hook record of the same call exists (a sync: same thread, the hook
// interval contains CUPTI's; an allocation: same address and operation), emitted otherwise.
//
// Everything is bounded: past max_held, the oldest hook records are decided early.
//
// Threads: the drain thread only.
#pragma once

#include "interposer/records.h"
#include "profiler/cupti/api_class.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>

namespace gpuwise::interposer {

class CoverageTracker {
public:
  struct Options {
    int64_t max_hold_ns = 10'000'000'000; // a hook record waits at most this for CUPTI
    int64_t cupti_hold_ns = 200'000'000;  // CUPTI sync/alloc records wait this for the hooks'
    int64_t tolerance_ns = 2'000;         // clock conversion slack when nesting intervals
    size_t max_held = size_t{1} << 17;
  };
  struct Stats {
    uint64_t hooks_covered = 0, hooks_emitted = 0;
    uint64_t cupti_syncs_dropped = 0, cupti_syncs_emitted = 0;
    uint64_t cupti_allocs_dropped = 0, cupti_allocs_emitted = 0;
  };

  CoverageTracker() : CoverageTracker(Options{}) {}
  explicit CoverageTracker(Options o) : options_(o) {}

  // Hook side.
  void holdHook(const model::KernelExec& k);
  void holdHook(const model::Copy& c);
  void holdHook(const model::Memset& m);
  void noteHookSync(const model::HostSync& s);
  void noteHookAllocation(const model::Allocation& a);
  // CUPTI side.
  void addApiSpan(const profiler::ApiSpan& span);
  void holdCuptiSync(const model::HostSync& s, int64_t now_ns);
  void holdCuptiAllocation(const model::Allocation& a, int64_t now_ns);

  // Decides what is due and appends the records to emit.
  void decide(int64_t now_ns, Records& out);
  // Decides everything (final flush).
  void decideAll(Records& out);

  const Stats& stats() const { return stats_; }
  size_t heldHooks() const { return held_hooks_; }
  size_t heldCupti() const { return cupti_syncs_.size() + cupti_allocs_.size(); }

private:
  struct HeldHook {
    int64_t start, end;
    profiler::ApiClass cls;
    model::KernelExec kernel;
    model::Copy copy;
    model::Memset memset;
  };
  struct Span {
    int64_t start, end;
    profiler::ApiClass cls;
    bool used;
  };
  struct Mark {
    int64_t start, end;
    bool used;
  };
  struct Lane {
    std::deque<HeldHook> hooks;         // by start
    std::deque<Span> spans;             // by start
    std::deque<Mark> syncs;             // hook syncs, by start
    int64_t api_watermark = INT64_MIN;  // latest CUPTI API start seen on this thread
    int64_t hook_watermark = INT64_MIN; // latest hook record start seen on this thread
  };
  struct AllocKey {
    uint64_t address;
    bool is_free;
    bool operator==(const AllocKey&) const = default;
  };
  struct AllocKeyHash {
    size_t operator()(const AllocKey& k) const {
      return std::hash<uint64_t>{}(k.address * 2 + k.is_free);
    }
  };

  void hold(uint32_t thread, HeldHook&& h);
  bool covered(Lane& lane, const HeldHook& h);
  static void emit(const HeldHook& h, Records& out);
  bool hookSyncCovers(Lane& lane, const model::HostSync& s);
  void decideLane(Lane& lane, int64_t now_ns, bool all, Records& out);
  void decideCupti(int64_t now_ns, bool all, Records& out);

  Options options_;
  Stats stats_;
  std::unordered_map<uint32_t, Lane> lanes_;
  size_t held_hooks_ = 0;
  std::deque<std::pair<model::HostSync, int64_t>> cupti_syncs_;     // (record, arrived)
  std::deque<std::pair<model::Allocation, int64_t>> cupti_allocs_;  // (record, arrived)
  std::unordered_map<AllocKey, int64_t, AllocKeyHash> hook_allocs_; // key -> last seen
  std::deque<std::pair<int64_t, AllocKey>> hook_alloc_order_;
};

} // namespace gpuwise::interposer
