#include "profiler/cupti/fake_cupti_port.h"

#include "profiler/clock/tick.h"

namespace gpuwise::profiler {

namespace {
size_t align8(size_t n) {
  return (n + 7) & ~size_t{7};
}
int g_subscriber_token;
} // namespace

void FakeCuptiPort::addBytes(const void* record, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto* p = static_cast<const uint8_t*>(record);
  staged_.emplace_back(p, p + size);
}

size_t FakeCuptiPort::deliver() {
  std::vector<std::vector<uint8_t>> records;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    records.swap(staged_);
  }
  if (records.empty() || !requested_ || !completed_) return 0;
  size_t written = 0, next = 0;
  while (next < records.size()) {
    uint8_t* buffer = nullptr;
    size_t size = 0, max_records = 0;
    requested_(&buffer, &size, &max_records);
    if (!buffer) {
      std::lock_guard<std::mutex> lock(mutex_);
      dropped_ += records.size() - next;
      return written;
    }
    size_t used = 0;
    size_t in_this = 0;
    while (next < records.size()) {
      const auto& r = records[next];
      size_t need = kHeader + align8(r.size());
      if (used + need > size) break;
      uint32_t len = uint32_t(r.size());
      std::memcpy(buffer + used, &len, 4);
      std::memset(buffer + used + 4, 0, 4);
      std::memcpy(buffer + used + kHeader, r.data(), r.size());
      used += need;
      ++next;
      ++in_this;
    }
    if (in_this == 0) { // a record larger than a whole buffer: CUPTI would drop it
      std::lock_guard<std::mutex> lock(mutex_);
      ++dropped_;
      ++next;
    }
    written += in_this;
    completed_(nullptr, 0, buffer, size, used);
  }
  return written;
}

CUptiResult FakeCuptiPort::subscribe(CUpti_SubscriberHandle* s, CUpti_CallbackFunc, void*) {
  ++subscribe_calls_;
  if (subscribe_result_ != CUPTI_SUCCESS) return subscribe_result_;
  if (subscribed_) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  subscribed_ = true;
  *s = reinterpret_cast<CUpti_SubscriberHandle>(&g_subscriber_token);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::unsubscribe(CUpti_SubscriberHandle) {
  ++unsubscribe_calls_;
  subscribed_ = false;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::activityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) {
  if (timestamp_result_ != CUPTI_SUCCESS) return timestamp_result_;
  timestamp_ = fn;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::setThreadIdType(CUpti_ActivityThreadIdType type) {
  thread_id_type_ = type;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::activityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                     CUpti_BuffersCallbackCompleteFunc completed) {
  if (register_callbacks_result_ != CUPTI_SUCCESS) return register_callbacks_result_;
  requested_ = requested;
  completed_ = completed;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::activityEnable(CUpti_ActivityKind kind) {
  auto it = enable_results_.find(kind);
  if (it != enable_results_.end() && it->second != CUPTI_SUCCESS) return it->second;
  enabled_kinds_.insert(kind);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::activityDisable(CUpti_ActivityKind kind) {
  enabled_kinds_.erase(kind);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::activityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  if (enable)
    runtime_cbids_.insert(cbid);
  else
    runtime_cbids_.erase(cbid);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::activityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  if (enable)
    driver_cbids_.insert(cbid);
  else
    driver_cbids_.erase(cbid);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::activityFlushAll(uint32_t flag) {
  ++flushes_;
  if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) ++forced_flushes_;
  deliver();
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::activityGetNumDroppedRecords(CUcontext, uint32_t, size_t* n) {
  std::lock_guard<std::mutex> lock(mutex_);
  *n = dropped_;
  dropped_ = 0;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::activityGetNextRecord(uint8_t* buffer, size_t valid,
                                                 CUpti_Activity** r) {
  size_t offset = 0;
  if (*r) {
    uint8_t* cur = reinterpret_cast<uint8_t*>(*r);
    if (cur < buffer + kHeader || cur > buffer + valid) return CUPTI_ERROR_INVALID_PARAMETER;
    uint32_t len;
    std::memcpy(&len, cur - kHeader, 4);
    offset = size_t(cur - buffer) + align8(len);
  }
  if (offset + kHeader > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  uint32_t len;
  std::memcpy(&len, buffer + offset, 4);
  if (offset + kHeader + len > valid || len < sizeof(CUpti_Activity))
    return CUPTI_ERROR_INVALID_PARAMETER;
  *r = reinterpret_cast<CUpti_Activity*>(buffer + offset + kHeader);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCuptiPort::getTimestamp(uint64_t* timestamp) {
  if (get_timestamp_result_ != CUPTI_SUCCESS) return get_timestamp_result_;
  *timestamp = cuptiTime(int64_t(host_clock_ ? host_clock_() : monotonicNs()));
  return CUPTI_SUCCESS;
}

const char* FakeCuptiPort::resultString(CUptiResult result) {
  switch (result) {
  case CUPTI_SUCCESS: return "CUPTI_SUCCESS";
  case CUPTI_ERROR_NOT_INITIALIZED: return "CUPTI_ERROR_NOT_INITIALIZED";
  case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
  case CUPTI_ERROR_NOT_COMPATIBLE: return "CUPTI_ERROR_NOT_COMPATIBLE";
  case CUPTI_ERROR_NOT_SUPPORTED: return "CUPTI_ERROR_NOT_SUPPORTED";
  case CUPTI_ERROR_INVALID_KIND: return "CUPTI_ERROR_INVALID_KIND";
  case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: return "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    return "CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED";
  default: return "CUPTI_ERROR_UNKNOWN";
  }
}

} // namespace gpuwise::profiler
