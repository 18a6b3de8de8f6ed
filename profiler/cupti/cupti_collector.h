// CUPTI activity collection: decides the tier, enables the activity kinds, owns the buffer pool
// CUPTI writes into, and hands completed buffers to the drain thread.
//
// start(): subscribe (which is also how we learn that another tool already holds CUPTI:
// CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), register a timestamp callback so GPU records
// are stamped on the host's CLOCK_MONOTONIC timeline (refused: CUPTI's clock is mapped onto ours
// instead, hostMapping()), ask for system thread ids, register the
// buffer callbacks, enable CONCURRENT_KERNEL, MEMCPY, MEMSET, SYNCHRONIZATION, MEMORY2, MARKER
// (NVTX) and OVERHEAD, and
// record RUNTIME/DRIVER API activity only for the launch/copy/memset/sync/graph-launch cbids
// (cupti_cbids.h). Anything that fails before kernels are enabled undoes itself and reports why;
// the caller then stays on the interposer tier. Every failure reason names the call and CUPTI's
// code, and says in words what it means (another tool holds CUPTI, no driver, no privileges...).
// GRAPH_TRACE is deliberately not enabled: it replaces per-node kernel records with one record
// per graph, and per-node kernels (with graphId/graphNodeId) are what the analyses need.
//
// Threads: start() on the thread starting the shim (it may be inside the driver's
// InitializeInjection). flush(), consume(), takeDroppedRecords() on the drain thread. stop() by
// the owner once the drain thread is gone. CUPTI's buffer callbacks are static functions that only
// touch the pool (never call CUPTI from them: CUPTI may hold its own locks while calling them).
//
// One collector is active per process (CUPTI has one set of buffer callbacks). Its pool is leaked
// on purpose: CUPTI may complete a buffer during process exit.
#pragma once

#include "profiler/cupti/api_class.h"
#include "profiler/model/expected.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace gpuwise::profiler {

class CuptiPort;
class BufferPool;
class TimestampMapper;

class CuptiCollector {
public:
  struct Options {
    size_t buffer_bytes = size_t{2} << 20;
    size_t buffer_count = 16; // cap: 32 MiB reserved, committed as CUPTI writes
    bool memory = true;       // MEMORY2 (allocations) as well
    bool nvtx = true;         // MARKER: NVTX ranges and markers
    bool overhead = true;     // OVERHEAD: CUPTI's own cost
  };
  using TimestampFn = uint64_t (*)(); // CLOCK_MONOTONIC ns

  CuptiCollector(CuptiPort& port, Options options);
  ~CuptiCollector();
  CuptiCollector(const CuptiCollector&) = delete;
  CuptiCollector& operator=(const CuptiCollector&) = delete;

  // What is being collected (one line), or why nothing is.
  Expected<std::string> start(TimestampFn timestamp);
  bool active() const { return active_; }
  // True when CUPTI records GPU activity for calls of this class (its activity kind is enabled and
  // its API cbids are traced), so hook records of that class are only a fallback.
  bool covers(ApiClass cls) const { return active_ && covers_[int(cls)]; }

  // Null when CUPTI stamps records with our clock (the normal case). When CUPTI refused the
  // timestamp callback, the mapping from CUPTI's clock to ours that the decoder must apply
  // (timestamp_mapper.h); flush() adds a sample to it every cycle.
  const TimestampMapper* hostMapping() const { return mapper_.get(); }

  // Drain thread. forced: also buffers holding incomplete records (at exit).
  void flush(bool forced);
  // Drain thread: fn(buffer, valid_bytes) for each completed buffer, oldest first.
  size_t consume(const std::function<void(uint8_t*, size_t)>& fn);
  // Records CUPTI dropped since the previous call (its own count: no buffer, device buffer full).
  uint64_t takeDroppedRecords();
  uint64_t poolExhausted() const;

  // Disables activity and unsubscribes (tests, and a CUPTI that fails mid-run).
  void stop();

  // Handing CUPTI over to the application's own profiler (drain thread, in this order):
  // disableActivity() stops new records while the collector stays active, so a forced flush() and
  // consume() still deliver everything recorded so far and covers() still matches the hooks'
  // twins; then stop(); then restoreDefaultClock(), so a tool that takes CUPTI after us and sets
  // no clock of its own gets CUPTI's documented Linux default (CLOCK_REALTIME), not ours.
  void disableActivity();
  void restoreDefaultClock();

private:
  void undo();
  bool sampleClock();

  CuptiPort& port_;
  Options options_;
  BufferPool* pool_ = nullptr; // leaked, see above
  TimestampFn host_now_ = nullptr;
  std::unique_ptr<TimestampMapper> mapper_;
  void* subscriber_ = nullptr;
  bool active_ = false;
  bool covers_[kApiClassCount] = {};
  int enabled_kinds_[12] = {};
  int enabled_kind_count_ = 0;
};

} // namespace gpuwise::profiler
