// The CUPTI activity engine of the simulated device: which activity kinds are on, the records the
// simulator emits, and their delivery to the client in buffers the client hands out.
//
// Record life: the runtime side builds a real CUPTI 13 struct (cupti_activity.h) and calls
// emitNow (host-side records: API calls, syncs, allocations, external correlation) or emitAt
// (GPU records: a kernel, copy or memset that completes at a future point of the virtual
// timeline). A GPU record is "incomplete" until the clock passes its end, like a real one whose
// timestamps are not written yet: flushAll(0) delivers only complete records, a forced flush
// delivers everything. Records move to the client's buffers in deliver(): on the worker thread
// ("gwsim-cupti", every flush period or 10 ms; it completes only full buffers, as real CUPTI's
// periodic flush does) and on the thread calling cuptiActivityFlushAll (which also completes the
// partly filled buffer).
//
// Threads and locks: emit* and the enable queries are called from application threads, never
// block and take only mutex_ (never held while calling out). deliver() holds pump_mutex_ while it
// calls the client's buffer callbacks; a callback may call CUDA or CUPTI (a flush from inside a
// completion callback returns at once instead of deadlocking). Lock order: pump_mutex_ -> the
// simulator's mutex -> mutex_.
//
// Memory is bounded: at most kMaxQueuedRecords incomplete + undelivered records; beyond that, and
// whenever the client returns no buffer, records are dropped and counted
// (cuptiActivityGetNumDroppedRecords).
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <queue>
#include <vector>

#include <cupti.h>

#include "tests/simdevice/core/clock.h"

namespace gpuwise::sim {

inline constexpr size_t kMaxRecordBytes = 256;
inline constexpr size_t kMaxQueuedRecords = 1u << 18;
inline constexpr uint32_t kMaxCbid = 1024;

class Activity {
public:
  explicit Activity(bool busy);

  // ---- queries the runtime side makes on every call (lock-free) ----
  bool enabled(CUpti_ActivityKind kind) const {
    return (enabled_.load(std::memory_order_relaxed) >> static_cast<unsigned>(kind)) & 1u;
  }
  bool anyEnabled() const { return enabled_.load(std::memory_order_relaxed) != 0; }
  bool runtimeApiRecorded(uint32_t cbid) const {
    return cbid < kMaxCbid && runtime_api_[cbid].load(std::memory_order_relaxed);
  }
  bool driverApiRecorded(uint32_t cbid) const {
    return cbid < kMaxCbid && driver_api_[cbid].load(std::memory_order_relaxed);
  }
  // A simulator (CLOCK_MONOTONIC) time in the client's clock: shifted by the offset measured
  // when the client registered a timestamp callback (0 without one, or when the client's clock is
  // CLOCK_MONOTONIC itself).
  uint64_t mapTime(TimeNs t) const {
    return static_cast<uint64_t>(t + offset_ns_.load(std::memory_order_relaxed));
  }
  uint32_t threadId() const; // per cuptiSetThreadIdType: pthread_self (default) or gettid

  // ---- emitting (application threads) ----
  void emitNow(const void* record, size_t size);
  void emitAt(TimeNs complete_at, const void* record, size_t size);
  // One EXTERNAL_CORRELATION record per kind with a pushed id on this thread.
  void emitExternalCorrelations(uint32_t correlation_id);

  // ---- the CUPTI activity API ----
  CUptiResult enable(CUpti_ActivityKind kind);
  CUptiResult disable(CUpti_ActivityKind kind);
  CUptiResult registerCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                CUpti_BuffersCallbackCompleteFunc complete);
  CUptiResult flushAll(uint32_t flag);
  CUptiResult flushPeriod(uint32_t ms);
  CUptiResult droppedRecords(size_t* dropped);
  CUptiResult registerTimestampCallback(CUpti_TimestampCallbackFunc callback);
  CUptiResult enableRuntimeApi(uint32_t cbid, bool enable);
  CUptiResult enableDriverApi(uint32_t cbid, bool enable);
  CUptiResult setAttribute(CUpti_ActivityAttribute attr, size_t* size, const void* value);
  CUptiResult getAttribute(CUpti_ActivityAttribute attr, size_t* size, void* value);
  CUptiResult pushExternalCorrelation(CUpti_ExternalCorrelationKind kind, uint64_t id);
  CUptiResult popExternalCorrelation(CUpti_ExternalCorrelationKind kind, uint64_t* last);
  CUptiResult setThreadIdType(CUpti_ActivityThreadIdType type);
  CUptiResult getThreadIdType(CUpti_ActivityThreadIdType* type) const;
  CUptiResult finalize();

  // Counters for tests and diagnostics.
  uint64_t recordsDelivered() const { return delivered_.load(std::memory_order_relaxed); }

private:
  struct Record {
    TimeNs due = 0;
    uint64_t seq = 0; // emission order, to keep records of one instant in order
    uint32_t size = 0;
    alignas(8) std::array<uint8_t, kMaxRecordBytes> bytes;
  };
  struct LaterFirst {
    bool operator()(const Record& a, const Record& b) const {
      return a.due != b.due ? a.due > b.due : a.seq > b.seq;
    }
  };

  void enqueueLocked(TimeNs due, const void* record, size_t size);
  void startWorkerLocked();
  void workerLoop();
  // Moves complete (or, forced, all) records to the client; completes full buffers, and the
  // partly filled one too when complete_partial.
  void deliver(bool force, bool complete_partial);
  bool ensureBufferLocked(); // pump_mutex_ held

  const bool busy_;
  std::atomic<uint64_t> enabled_{0};
  std::array<std::atomic<bool>, kMaxCbid> runtime_api_{};
  std::array<std::atomic<bool>, kMaxCbid> driver_api_{};
  std::atomic<int64_t> offset_ns_{0};
  std::atomic<int> thread_id_type_{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> delivered_{0};

  // mutex_: the queues, the callbacks, the worker's wake-up.
  std::mutex mutex_;
  std::condition_variable wake_;
  std::priority_queue<Record, std::vector<Record>, LaterFirst> pending_; // incomplete GPU records
  std::deque<Record> ready_;                                             // complete, undelivered
  uint64_t next_seq_ = 0;
  CUpti_BuffersCallbackRequestFunc request_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete_ = nullptr;
  uint32_t flush_period_ms_ = 0;
  bool worker_started_ = false;
  std::array<uint64_t, 16> attributes_{};

  // pump_mutex_: the client buffer being filled.
  std::mutex pump_mutex_;
  uint8_t* buffer_ = nullptr;
  size_t buffer_size_ = 0;
  size_t buffer_used_ = 0;
  size_t buffer_records_ = 0;
  size_t buffer_max_records_ = 0;
};

} // namespace gpuwise::sim
