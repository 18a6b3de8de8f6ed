// The hot path every hook shares: the on/off check, the reentrancy guard, the two timestamps and
// the ring write.
//
//   if (Recorder::off()) return real(args...);     // the off path: a load and a branch
//   ... in a [[gnu::noinline]] helper:
//   Recorder rec;
//   if (!rec.begin()) return real(args...);        // not started, nested, or one of our threads
//   auto r = real(args...);
//   if (RawEvent* e = rec.end(EventKind::Copy, ApiId::cudaMemcpy, r)) { fill e->u; rec.publish(); }
//   return r;
//
// Off is one relaxed load of the mode and a branch. Counting (the launch hooks in the CUPTI tier)
// is a TLS check and a store to the thread's counter, inline in the hook. Recording is two counter
// reads (rdtsc: ~13 ns each on an EPYC VM, most of recording's 43 ns), a few TLS accesses and a
// 64-byte store into the thread's own ring, published with one release store. No lock and no
// allocation after the thread's first event (which claims its ring).
//
// Threads: application threads, each on its own ring.
#pragma once

#include "interposer/raw_event.h"
#include "interposer/ring_pool.h"
#include "interposer/thread_state.h"
#include "profiler/clock/tick.h"

#include <atomic>

namespace gpuwise::interposer {

enum Mode : uint8_t {
  kModeUnstarted = 0, // nothing started yet; the first CUDA call starts the shim
  kModeStarting = 1,  // one thread is starting it; others forward without recording
  kModeRecording = 2,
  kModeOff = 3, // disabled, failed, or past the final flush: forward only
};

namespace detail {
extern std::atomic<uint8_t> g_mode;
// Launch hooks only count, they do not record, while this is set: CUPTI records every launch with
// its API interval (the CUPTI tier), or the drain thread shed detail because the shim's estimated
// cost went over its budget. Written by the starting thread and the drain thread, read by hooks.
extern std::atomic<uint8_t> g_count_launches;
// Slow paths, out of line (runtime.cpp).
bool beginSlow(uint8_t mode);         // may start the shim; true when recording afterwards
RingSlot* claimRing(ThreadState& ts); // first event of a thread, or after the pool ran dry
void kickDrain();                     // a ring reached half full
} // namespace detail

// The launch hooks' cheap path: true when launches are only counted right now.
inline bool countingLaunches() {
  return detail::g_count_launches.load(std::memory_order_relaxed) != 0;
}

// Counts the launch on the thread's ring and forwards. The cost is a TLS read, a plain store to the
// thread's own counter and the reentrancy flag around the call (so the driver launch the runtime
// makes underneath is not counted twice). No timestamp.
template <class Call> inline auto countLaunch(Call&& call) -> decltype(call()) {
  ThreadState& ts = t_state;
  if (ts.in_hook | ts.internal) return call();
  RingSlot* slot = ts.ring;
  if (__builtin_expect(!slot, 0) && !(slot = detail::claimRing(ts))) return call();
  slot->ring.count();
  ts.in_hook = 1;
  auto r = call();
  ts.in_hook = 0;
  return r;
}

class Recorder {
public:
  // The whole cost of a hook when the shim is off (disabled, failed, or past exit): one relaxed
  // load and a branch, then a tail call to the real function. Hooks test it first. gcc still saves
  // the registers the counting path needs before the test: 4-5 ns a launch (BM_LaunchOff).
  static bool off() { return detail::g_mode.load(std::memory_order_relaxed) == kModeOff; }

  bool begin() {
    uint8_t m = detail::g_mode.load(std::memory_order_relaxed);
    if (__builtin_expect(m != kModeRecording, 0) && !detail::beginSlow(m)) return false;
    ThreadState& ts = t_state;
    if (ts.in_hook | ts.internal) return false;
    ts.in_hook = 1;
    t0_ = profiler::processTicks();
    return true;
  }

  // After the real call returned. nullptr when the event is dropped (ring full, no ring); the drop
  // is counted. The returned event's header is filled; the caller fills `u` and publishes.
  RawEvent* end(EventKind kind, ApiId api, int32_t result, uint8_t sub = 0) {
    uint64_t t1 = profiler::processTicks();
    ThreadState& ts = t_state;
    ts.in_hook = 0;
    RingSlot* slot = ts.ring;
    if (__builtin_expect(!slot, 0) && !(slot = detail::claimRing(ts))) return nullptr;
    RawEvent* e = slot->ring.tryReserve();
    if (!e) return nullptr;
    e->t0 = t0_;
    e->t1 = t1;
    e->kind = kind;
    e->sub = sub;
    e->api = api;
    e->result = int16_t(result > 32767 ? 32767 : result);
    e->device = uint16_t(ts.device);
    slot_ = slot;
    return e;
  }

  void publish() {
    if (__builtin_expect(slot_->ring.publish(), 0)) detail::kickDrain();
  }

  // The hazard slot for PinnedRegistry::classify (valid after a successful end()).
  uint32_t readerIndex() const { return slot_->index; }

private:
  uint64_t t0_ = 0;
  RingSlot* slot_ = nullptr;
};

} // namespace gpuwise::interposer
