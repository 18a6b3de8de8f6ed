#include "tests/simdevice/core/activity.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace gpuwise::sim {
namespace {

// A completion callback that flushes must not re-enter deliver() on its own thread.
thread_local bool t_in_delivery = false;

// The worker must stop calling into the client once the process is exiting: the client's state
// may already be destroyed. Set by an atexit handler registered when the worker starts, i.e.
// after the client's own statics exist, so it runs before their destructors.
std::atomic<bool> g_exiting{false};

std::array<std::vector<uint64_t>, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE>& externalStacks() {
  thread_local std::array<std::vector<uint64_t>, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE> stacks;
  return stacks;
}

// Size in bytes of each activity attribute's value (CUpti_ActivityAttribute docs).
size_t attributeSize(CUpti_ActivityAttribute attr) {
  switch (attr) {
  case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER:
  case CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED:
  case CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER: return sizeof(uint8_t);
  default: return sizeof(size_t);
  }
}

} // namespace

Activity::Activity(bool busy) : busy_(busy) {
  attributes_[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE] = 3u << 20;
  attributes_[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP] = 3u << 20;
  attributes_[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT] = 250;
  attributes_[CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_SIZE] = 65536;
  attributes_[CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_LIMIT] = 65536;
}

uint32_t Activity::threadId() const {
  if (thread_id_type_.load(std::memory_order_relaxed) == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return static_cast<uint32_t>(syscall(SYS_gettid));
  }
  return static_cast<uint32_t>(pthread_self());
}

void Activity::emitNow(const void* record, size_t size) {
  std::lock_guard lock(mutex_);
  enqueueLocked(0, record, size);
}

void Activity::emitAt(TimeNs complete_at, const void* record, size_t size) {
  std::lock_guard lock(mutex_);
  enqueueLocked(complete_at, record, size);
}

void Activity::enqueueLocked(TimeNs due, const void* record, size_t size) {
  if (size > kMaxRecordBytes || pending_.size() + ready_.size() >= kMaxQueuedRecords) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Record r;
  r.due = due;
  r.seq = next_seq_++;
  r.size = static_cast<uint32_t>(size);
  std::memcpy(r.bytes.data(), record, size);
  if (due <= 0) {
    ready_.push_back(r);
  } else {
    pending_.push(r);
  }
}

void Activity::emitExternalCorrelations(uint32_t correlation_id) {
  if (!enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) return;
  auto& stacks = externalStacks();
  for (size_t kind = 0; kind < stacks.size(); ++kind) {
    if (stacks[kind].empty()) continue;
    CUpti_ActivityExternalCorrelation rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    rec.externalKind = static_cast<CUpti_ExternalCorrelationKind>(kind);
    rec.externalId = stacks[kind].back();
    rec.correlationId = correlation_id;
    emitNow(&rec, sizeof(rec));
  }
}

CUptiResult Activity::enable(CUpti_ActivityKind kind) {
  if (busy_) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT || kind >= 64) {
    return CUPTI_ERROR_INVALID_KIND;
  }
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
    for (auto& on : runtime_api_)
      on.store(true, std::memory_order_relaxed);
  }
  if (kind == CUPTI_ACTIVITY_KIND_DRIVER) {
    for (auto& on : driver_api_)
      on.store(true, std::memory_order_relaxed);
  }
  enabled_.fetch_or(uint64_t{1} << static_cast<unsigned>(kind), std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  startWorkerLocked();
  return CUPTI_SUCCESS;
}

CUptiResult Activity::disable(CUpti_ActivityKind kind) {
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT || kind >= 64) {
    return CUPTI_ERROR_INVALID_KIND;
  }
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
    for (auto& on : runtime_api_)
      on.store(false, std::memory_order_relaxed);
  }
  if (kind == CUPTI_ACTIVITY_KIND_DRIVER) {
    for (auto& on : driver_api_)
      on.store(false, std::memory_order_relaxed);
  }
  enabled_.fetch_and(~(uint64_t{1} << static_cast<unsigned>(kind)), std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult Activity::enableRuntimeApi(uint32_t cbid, bool enable) {
  if (busy_) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  if (cbid >= kMaxCbid) return CUPTI_ERROR_INVALID_PARAMETER;
  runtime_api_[cbid].store(enable, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  startWorkerLocked();
  return CUPTI_SUCCESS;
}

CUptiResult Activity::enableDriverApi(uint32_t cbid, bool enable) {
  if (busy_) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  if (cbid >= kMaxCbid) return CUPTI_ERROR_INVALID_PARAMETER;
  driver_api_[cbid].store(enable, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  startWorkerLocked();
  return CUPTI_SUCCESS;
}

CUptiResult Activity::registerCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                        CUpti_BuffersCallbackCompleteFunc complete) {
  if (request == nullptr || complete == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard lock(mutex_);
  request_ = request;
  complete_ = complete;
  return CUPTI_SUCCESS;
}

CUptiResult Activity::flushAll(uint32_t flag) {
  {
    std::lock_guard lock(mutex_);
    if (request_ == nullptr) return CUPTI_ERROR_INVALID_OPERATION;
  }
  deliver((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0, /*complete_partial=*/true);
  return CUPTI_SUCCESS;
}

CUptiResult Activity::flushPeriod(uint32_t ms) {
  std::lock_guard lock(mutex_);
  flush_period_ms_ = ms;
  wake_.notify_all();
  return CUPTI_SUCCESS;
}

CUptiResult Activity::droppedRecords(size_t* dropped) {
  if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *dropped = static_cast<size_t>(dropped_.exchange(0, std::memory_order_relaxed));
  return CUPTI_SUCCESS;
}

CUptiResult Activity::registerTimestampCallback(CUpti_TimestampCallbackFunc callback) {
  if (callback == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  // Offset between the client's clock and CLOCK_MONOTONIC, from the tightest of a few
  // bracketed readings. A client whose clock is CLOCK_MONOTONIC reads inside the bracket: its
  // offset is taken as exactly 0 so records and the client's own host timestamps agree to the ns.
  TimeNs best_window = INT64_MAX;
  int64_t offset = 0;
  for (int i = 0; i < 7; ++i) {
    const TimeNs t0 = nowNs();
    const auto client = static_cast<int64_t>(callback());
    const TimeNs t1 = nowNs();
    if (t1 - t0 < best_window) {
      best_window = t1 - t0;
      offset = client - (t0 + (t1 - t0) / 2);
    }
  }
  if (std::llabs(offset) <= best_window / 2 + 1000) offset = 0;
  offset_ns_.store(offset, std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult Activity::setAttribute(CUpti_ActivityAttribute attr, size_t* size, const void* value) {
  if (size == nullptr || value == nullptr || attr < 0 ||
      static_cast<size_t>(attr) >= attributes_.size()) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  const size_t want = attributeSize(attr);
  if (*size < want) return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
  uint64_t v = 0;
  if (want == sizeof(uint8_t)) {
    v = *static_cast<const uint8_t*>(value);
  } else {
    size_t s = 0;
    std::memcpy(&s, value, sizeof(s));
    v = s;
  }
  std::lock_guard lock(mutex_);
  attributes_[attr] = v;
  return CUPTI_SUCCESS;
}

CUptiResult Activity::getAttribute(CUpti_ActivityAttribute attr, size_t* size, void* value) {
  if (size == nullptr || value == nullptr || attr < 0 ||
      static_cast<size_t>(attr) >= attributes_.size()) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  const size_t want = attributeSize(attr);
  if (*size < want) return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
  std::lock_guard lock(mutex_);
  if (want == sizeof(uint8_t)) {
    *static_cast<uint8_t*>(value) = static_cast<uint8_t>(attributes_[attr]);
  } else {
    const size_t s = static_cast<size_t>(attributes_[attr]);
    std::memcpy(value, &s, sizeof(s));
  }
  *size = want;
  return CUPTI_SUCCESS;
}

CUptiResult Activity::pushExternalCorrelation(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
      kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  externalStacks()[kind].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult Activity::popExternalCorrelation(CUpti_ExternalCorrelationKind kind, uint64_t* last) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
      kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  auto& stack = externalStacks()[kind];
  if (stack.empty()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (last != nullptr) *last = stack.back();
  stack.pop_back();
  return CUPTI_SUCCESS;
}

CUptiResult Activity::setThreadIdType(CUpti_ActivityThreadIdType type) {
  if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT &&
      type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  thread_id_type_.store(type, std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult Activity::getThreadIdType(CUpti_ActivityThreadIdType* type) const {
  if (type == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *type = static_cast<CUpti_ActivityThreadIdType>(thread_id_type_.load(std::memory_order_relaxed));
  return CUPTI_SUCCESS;
}

CUptiResult Activity::finalize() {
  deliver(/*force=*/true, /*complete_partial=*/true);
  enabled_.store(0, std::memory_order_relaxed);
  for (auto& on : runtime_api_)
    on.store(false, std::memory_order_relaxed);
  for (auto& on : driver_api_)
    on.store(false, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  request_ = nullptr;
  complete_ = nullptr;
  return CUPTI_SUCCESS;
}

void Activity::startWorkerLocked() {
  if (worker_started_) return;
  worker_started_ = true;
  std::atexit([] { g_exiting.store(true, std::memory_order_relaxed); });
  // Detached and never joined: the Activity is leaked, so the thread can outlive main safely.
  std::thread([this] { workerLoop(); }).detach();
}

void Activity::workerLoop() {
  pthread_setname_np(pthread_self(), "gwsim-cupti");
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      const uint32_t period = flush_period_ms_ != 0 ? flush_period_ms_ : 10;
      wake_.wait_for(lock, std::chrono::milliseconds(period));
    }
    if (g_exiting.load(std::memory_order_relaxed)) return;
    deliver(/*force=*/false, /*complete_partial=*/false);
  }
}

bool Activity::ensureBufferLocked() {
  if (buffer_ != nullptr) return true;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  {
    std::lock_guard lock(mutex_);
    request = request_;
    complete = complete_;
  }
  if (request == nullptr) return false;
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  const TimeNs t0 = nowNs();
  request(&buffer, &size, &max_records);
  const TimeNs t1 = nowNs();
  if (enabled(CUPTI_ACTIVITY_KIND_OVERHEAD)) {
    CUpti_ActivityOverhead3 rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    rec.overheadKind = CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
    rec.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    rec.objectId.pt.processId = static_cast<uint32_t>(getpid());
    rec.objectId.pt.threadId = threadId();
    rec.start = mapTime(t0);
    rec.end = mapTime(t1);
    emitNow(&rec, sizeof(rec));
  }
  if (buffer == nullptr || size < 8) return false;
  if (reinterpret_cast<uintptr_t>(buffer) % 8 != 0) {
    // CUPTI requires 8-byte aligned buffers; hand it back unused rather than misalign records.
    if (complete != nullptr) complete(nullptr, 0, buffer, size, 0);
    return false;
  }
  buffer_ = buffer;
  buffer_size_ = size;
  buffer_used_ = 0;
  buffer_records_ = 0;
  buffer_max_records_ = max_records;
  return true;
}

void Activity::deliver(bool force, bool complete_partial) {
  if (t_in_delivery) return;
  std::lock_guard pump(pump_mutex_);
  t_in_delivery = true;
  std::deque<Record> batch;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  {
    std::lock_guard lock(mutex_);
    const TimeNs now = nowNs();
    while (!pending_.empty() && (force || pending_.top().due <= now)) {
      ready_.push_back(pending_.top());
      pending_.pop();
    }
    batch.swap(ready_);
    complete = complete_;
  }
  auto completeBuffer = [&] {
    uint8_t* buffer = buffer_;
    const size_t size = buffer_size_, used = buffer_used_;
    buffer_ = nullptr;
    buffer_size_ = buffer_used_ = buffer_records_ = buffer_max_records_ = 0;
    if (complete != nullptr) complete(nullptr, 0, buffer, size, used);
  };
  bool refused = false; // the client declined a buffer: drop the rest of this pass unasked
  for (const Record& r : batch) {
    const size_t aligned = (r.size + 7u) & ~size_t{7};
    if (buffer_ != nullptr &&
        (buffer_used_ + aligned > buffer_size_ ||
         (buffer_max_records_ != 0 && buffer_records_ >= buffer_max_records_))) {
      completeBuffer();
    }
    if (refused || !ensureBufferLocked() || aligned > buffer_size_) {
      refused = refused || buffer_ == nullptr;
      dropped_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    std::memcpy(buffer_ + buffer_used_, r.bytes.data(), r.size);
    std::memset(buffer_ + buffer_used_ + r.size, 0, aligned - r.size);
    buffer_used_ += aligned;
    ++buffer_records_;
    delivered_.fetch_add(1, std::memory_order_relaxed);
  }
  if (complete_partial && buffer_ != nullptr && buffer_used_ > 0) completeBuffer();
  t_in_delivery = false;
}

} // namespace gpuwise::sim
