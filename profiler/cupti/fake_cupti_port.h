// A CUPTI stand-in for tests: records what was enabled, answers with configurable results, and
// delivers hand-built real CUPTI 13 records (activity_builders.h) through the buffer callbacks the
// collector registered, exactly as CUPTI would: request a buffer, fill it, complete it.
//
// The buffer layout is the fake's own (each record prefixed by its size); activityGetNextRecord
// walks that layout, so decoders tested here never depend on CUPTI's private framing.
//
// Threads: configure before use; deliver()/flush from any one thread at a time.
#pragma once

#include "profiler/cupti/cupti_port.h"

#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace gpuwise::profiler {

class FakeCuptiPort final : public CuptiPort {
public:
  // Configuration.
  bool available_ = true;
  std::string why_unavailable_ = "fake: unavailable";
  CUptiResult subscribe_result_ = CUPTI_SUCCESS;
  std::string holder_; // subscriberHolding() after a refused subscribe
  CUptiResult timestamp_result_ = CUPTI_SUCCESS;
  CUptiResult register_callbacks_result_ = CUPTI_SUCCESS;
  std::map<CUpti_ActivityKind, CUptiResult> enable_results_; // default CUPTI_SUCCESS

  // What the code under test did.
  bool subscribed_ = false;
  int subscribe_calls_ = 0;
  int unsubscribe_calls_ = 0;
  CUpti_TimestampCallbackFunc timestamp_ = nullptr;
  CUpti_ActivityThreadIdType thread_id_type_ = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
  CUpti_BuffersCallbackRequestFunc requested_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed_ = nullptr;
  std::set<CUpti_ActivityKind> enabled_kinds_;
  std::set<CUpti_CallbackId> runtime_cbids_, driver_cbids_;
  int flushes_ = 0, forced_flushes_ = 0;

  // CUPTI's own clock as getTimestamp reports it: host ns (`host_clock_`, CLOCK_MONOTONIC unless a
  // test sets one) scaled by `cupti_rate_` plus `cupti_offset_`. Tests build records in this clock
  // with cuptiTime() when the timestamp callback is refused.
  uint64_t (*host_clock_)() = nullptr;
  int64_t cupti_offset_ = 0;
  double cupti_rate_ = 1.0;
  CUptiResult get_timestamp_result_ = CUPTI_SUCCESS;
  uint64_t cuptiTime(int64_t host_ns) const {
    return uint64_t(int64_t(double(host_ns) * cupti_rate_) + cupti_offset_);
  }

  // Records CUPTI "dropped" (no buffer was handed out); reported once, like CUPTI's counter.
  size_t dropped_ = 0;

  // Appends a record to the next buffer to be delivered.
  template <class Record> void add(const Record& r) { addBytes(&r, sizeof r); }
  void addBytes(const void* record, size_t size);
  // Requests a buffer through the registered callback, fills it with the added records (as many as
  // fit; the rest are counted as dropped, as CUPTI does) and completes it. Returns records written.
  size_t deliver();
  // Records added but not yet delivered are delivered on the next activityFlushAll.
  size_t pending() const { return staged_.size(); }

  bool available() const override { return available_; }
  const char* whyUnavailable() const override { return why_unavailable_.c_str(); }
  CUptiResult subscribe(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* ud) override;
  CUptiResult unsubscribe(CUpti_SubscriberHandle s) override;
  const char* subscriberHolding() const override { return holder_.c_str(); }
  CUptiResult activityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) override;
  CUptiResult setThreadIdType(CUpti_ActivityThreadIdType type) override;
  CUptiResult activityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                        CUpti_BuffersCallbackCompleteFunc completed) override;
  CUptiResult activityEnable(CUpti_ActivityKind kind) override;
  CUptiResult activityDisable(CUpti_ActivityKind kind) override;
  CUptiResult activityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) override;
  CUptiResult activityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) override;
  CUptiResult activityFlushAll(uint32_t flag) override;
  CUptiResult activityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t* n) override;
  CUptiResult activityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** r) override;
  CUptiResult getTimestamp(uint64_t* timestamp) override;
  const char* resultString(CUptiResult result) override;

private:
  static constexpr size_t kHeader = 8; // u32 record size, u32 pad: keeps records 8-byte aligned
  std::vector<std::vector<uint8_t>> staged_;
  mutable std::mutex mutex_;
};

} // namespace gpuwise::profiler
