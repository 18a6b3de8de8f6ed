// The port through which every CUPTI entry point gpuwise uses is called: one virtual method per
// CUPTI function, named after it without the "cupti" prefix. DlCuptiPort (dl_cupti_port.h) calls
// the real libcupti.so.13 found with dlopen; FakeCuptiPort (fake_cupti_port.h) stands in for it in
// tests, so enable/flush/decode paths are tested without a GPU (kineto's gap, closed).
//
// Threads: methods are called from the thread that starts collection (an application thread inside
// its first CUDA call, or the driver's InitializeInjection) and from the drain thread; CUPTI itself
// serialises what needs serialising. Implementations never throw.
//
// This folder is the only place that includes CUPTI headers.
#pragma once

#include <cupti.h>

namespace gpuwise::profiler {

class CuptiPort {
public:
  virtual ~CuptiPort() = default;

  // False when the library or one of the entry points below could not be found; every method then
  // returns CUPTI_ERROR_NOT_INITIALIZED. `whyUnavailable` says why in one line.
  virtual bool available() const = 0;
  virtual const char* whyUnavailable() const = 0;

  // cuptiSubscribe_v2 where the library has it (CUPTI 13), naming us "gpuwise" to the tool that
  // later finds CUPTI taken; cuptiSubscribe otherwise.
  virtual CUptiResult subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                void* userdata) = 0;
  // After subscribe() failed with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: the name CUPTI
  // gave for the tool holding it ("CUPTI for <name>", cuptiSubscribe_v2), or empty when unknown.
  virtual const char* subscriberHolding() const { return ""; }
  virtual CUptiResult unsubscribe(CUpti_SubscriberHandle subscriber) = 0;
  virtual CUptiResult activityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) = 0;
  virtual CUptiResult setThreadIdType(CUpti_ActivityThreadIdType type) = 0;
  virtual CUptiResult activityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                CUpti_BuffersCallbackCompleteFunc completed) = 0;
  virtual CUptiResult activityEnable(CUpti_ActivityKind kind) = 0;
  virtual CUptiResult activityDisable(CUpti_ActivityKind kind) = 0;
  virtual CUptiResult activityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) = 0;
  virtual CUptiResult activityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) = 0;
  virtual CUptiResult activityFlushAll(uint32_t flag) = 0;
  virtual CUptiResult activityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                                   size_t* dropped) = 0;
  virtual CUptiResult activityGetNextRecord(uint8_t* buffer, size_t valid_bytes,
                                            CUpti_Activity** record) = 0;
  // CUPTI's own clock (what records carry without our timestamp callback), for TimestampMapper.
  virtual CUptiResult getTimestamp(uint64_t* timestamp) = 0;
  // Never null: "CUPTI_ERROR_..." or a generic text for unknown codes.
  virtual const char* resultString(CUptiResult result) = 0;
};

} // namespace gpuwise::profiler
