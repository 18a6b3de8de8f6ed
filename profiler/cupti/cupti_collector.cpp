#include "profiler/cupti/cupti_collector.h"

#include "profiler/cupti/buffer_pool.h"
#include "profiler/cupti/cupti_cbids.h"
#include "profiler/cupti/cupti_port.h"
#include "profiler/cupti/timestamp_mapper.h"
#include "profiler/model/process_lifetime.h"

#include <atomic>
#include <ctime>

namespace gpuwise::profiler {

namespace {

// The active pool, for CUPTI's context-free C callbacks.
std::atomic<BufferPool*> g_pool{nullptr};

void CUPTIAPI onBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  BufferPool* pool = g_pool.load(std::memory_order_acquire);
  uint8_t* b = pool ? pool->acquire() : nullptr;
  *buffer = b;
  *size = b ? pool->bufferBytes() : 0;
  *max_records = 0;
}

void CUPTIAPI onBufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  BufferPool* pool = g_pool.load(std::memory_order_acquire);
  if (pool && buffer) pool->complete(buffer, valid);
}

// Subscribing is how we claim CUPTI; we need no callbacks from the callback API itself.
void CUPTIAPI onCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// One line for the report's collection section: what kept gpuwise off CUPTI, in words a user can
// act on, with the call and CUPTI's own code.
std::string describe(CuptiPort& port, const char* call, CUptiResult r) {
  std::string code = std::string(call) + " returned " + port.resultString(r);
  switch (r) {
  case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    if (*port.subscriberHolding())
      return std::string("CUPTI held by another subscriber, \"") + port.subscriberHolding() +
             "\": " + code;
    return "CUPTI held by another subscriber (torch.profiler, Nsight Systems, ncu or another "
           "tool): " +
           code;
  case CUPTI_ERROR_NOT_INITIALIZED: return "CUPTI could not initialise, no usable driver: " + code;
  case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    return "CUPTI refused for lack of privileges (GPU profiling restricted to admin users): " +
           code;
  case CUPTI_ERROR_NOT_COMPATIBLE:
    return "CUPTI not compatible with this driver or with a tool already attached: " + code;
  case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    return "CUPTI not supported on this virtualised GPU: " + code;
  default: return std::string(call) + " failed: " + port.resultString(r);
  }
}

} // namespace

CuptiCollector::CuptiCollector(CuptiPort& port, Options options) : port_(port), options_(options) {}

bool CuptiCollector::sampleClock() {
  if (!mapper_ || !host_now_) return false;
  uint64_t cupti = 0;
  const int64_t before = int64_t(host_now_());
  const CUptiResult r = port_.getTimestamp(&cupti);
  const int64_t after = int64_t(host_now_());
  return r == CUPTI_SUCCESS && mapper_->addSample(before, cupti, after);
}

CuptiCollector::~CuptiCollector() {
  // Deliberately no stop(): a collector destroyed while CUPTI is live (process exit) must not call
  // into CUPTI. The pool stays mapped.
  if (g_pool.load() == pool_ && !active_) g_pool.store(nullptr);
}

Expected<std::string> CuptiCollector::start(TimestampFn timestamp) {
  if (!port_.available())
    return unexpected(std::string("CUPTI unavailable: ") + port_.whyUnavailable());

  CUpti_SubscriberHandle sub = nullptr;
  CUptiResult r = port_.subscribe(&sub, onCallback, nullptr);
  if (r != CUPTI_SUCCESS) return unexpected(describe(port_, "cuptiSubscribe", r));
  subscriber_ = sub;

  // GPU records must land on the host's timeline, or nothing joins. CUPTI stamping them with our
  // clock is exact; when it refuses, its own clock is mapped onto ours from bracketed samples.
  host_now_ = timestamp;
  mapper_.reset();
  std::string clock_note;
  r = port_.activityRegisterTimestampCallback(
      reinterpret_cast<CUpti_TimestampCallbackFunc>(timestamp));
  if (r != CUPTI_SUCCESS) {
    mapper_ = std::make_unique<TimestampMapper>();
    bool sampled = false;
    for (int i = 0; i < 16 && !sampled; ++i)
      sampled = sampleClock();
    if (!sampled) {
      mapper_.reset();
      undo();
      return unexpected(describe(port_, "cuptiActivityRegisterTimestampCallback", r) +
                        "; cuptiGetTimestamp unusable, no way onto the host's timeline");
    }
    clock_note = std::string("; CUPTI's clock mapped onto the host's (timestamp callback: ") +
                 port_.resultString(r) + ")";
  }
  // System thread ids, so API records name the same threads as the hooks (gettid). Not fatal:
  // without it joins still work by correlation, only the coverage check loses its thread key.
  port_.setThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);

  if (!pool_) {
    pool_ =
        model::keptForProcessLifetime(new BufferPool(options_.buffer_bytes, options_.buffer_count));
    if (!pool_->valid()) {
      undo();
      return unexpected("could not reserve CUPTI activity buffers");
    }
  }
  g_pool.store(pool_, std::memory_order_release);
  r = port_.activityRegisterCallbacks(onBufferRequested, onBufferCompleted);
  if (r != CUPTI_SUCCESS) {
    undo();
    return unexpected(describe(port_, "cuptiActivityRegisterCallbacks", r));
  }

  auto enable = [&](CUpti_ActivityKind kind) {
    if (port_.activityEnable(kind) != CUPTI_SUCCESS) return false;
    enabled_kinds_[enabled_kind_count_++] = int(kind);
    return true;
  };
  r = port_.activityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    undo();
    return unexpected(describe(port_, "cuptiActivityEnable(CONCURRENT_KERNEL)", r));
  }
  enabled_kinds_[enabled_kind_count_++] = int(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  bool have[kApiClassCount] = {};
  have[int(ApiClass::Launch)] = true;
  have[int(ApiClass::GraphLaunch)] = true;
  have[int(ApiClass::Copy)] = enable(CUPTI_ACTIVITY_KIND_MEMCPY);
  have[int(ApiClass::Memset)] = enable(CUPTI_ACTIVITY_KIND_MEMSET);
  have[int(ApiClass::Sync)] = enable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  if (options_.memory) enable(CUPTI_ACTIVITY_KIND_MEMORY2);
  // Optional kinds: refused (an older CUPTI, a tool holding NVTX) costs only what they add. NVTX
  // markers arrive only when NVTX loads CUPTI as its injection (NVTX_INJECTION64_PATH).
  const bool markers = options_.nvtx && enable(CUPTI_ACTIVITY_KIND_MARKER);
  const bool overhead = options_.overhead && enable(CUPTI_ACTIVITY_KIND_OVERHEAD);

  // API records only for classes whose GPU records are on: a traced API with no GPU record would
  // make the interposer drop its own record of the call for nothing.
  for (const TracedCbid& t : tracedRuntimeCbids())
    if (have[int(t.cls)] && port_.activityEnableRuntimeApi(t.cbid, 1) == CUPTI_SUCCESS)
      covers_[int(t.cls)] = true;
  for (const TracedCbid& t : tracedDriverCbids())
    if (have[int(t.cls)] && port_.activityEnableDriverApi(t.cbid, 1) == CUPTI_SUCCESS)
      covers_[int(t.cls)] = true;

  active_ = true;
  std::string what = "CUPTI activity: kernels";
  if (have[int(ApiClass::Copy)]) what += ", copies";
  if (have[int(ApiClass::Memset)]) what += ", memsets";
  if (have[int(ApiClass::Sync)]) what += ", syncs";
  if (options_.memory) what += ", memory";
  if (markers) what += ", NVTX";
  if (overhead) what += ", CUPTI overhead";
  return what + clock_note;
}

void CuptiCollector::undo() {
  disableActivity();
  if (subscriber_) port_.unsubscribe(static_cast<CUpti_SubscriberHandle>(subscriber_));
  subscriber_ = nullptr;
  active_ = false;
  for (bool& c : covers_)
    c = false;
}

void CuptiCollector::flush(bool forced) {
  if (!active_) return;
  if (mapper_) sampleClock(); // before the records it will map are read
  port_.activityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

size_t CuptiCollector::consume(const std::function<void(uint8_t*, size_t)>& fn) {
  return pool_ ? pool_->consume(fn) : 0;
}

uint64_t CuptiCollector::takeDroppedRecords() {
  if (!active_) return 0;
  size_t dropped = 0;
  if (port_.activityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS) return 0;
  return dropped;
}

uint64_t CuptiCollector::poolExhausted() const {
  return pool_ ? pool_->exhausted() : 0;
}

void CuptiCollector::disableActivity() {
  for (int i = 0; i < enabled_kind_count_; ++i)
    port_.activityDisable(CUpti_ActivityKind(enabled_kinds_[i]));
  enabled_kind_count_ = 0;
}

namespace {
uint64_t CUPTIAPI realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}
} // namespace

void CuptiCollector::restoreDefaultClock() {
  if (!mapper_ && host_now_) port_.activityRegisterTimestampCallback(&realtimeNs);
}

void CuptiCollector::stop() {
  if (!active_ && !subscriber_) return;
  port_.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  undo();
}

} // namespace gpuwise::profiler
