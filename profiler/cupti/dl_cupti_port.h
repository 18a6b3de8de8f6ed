// The real CUPTI, loaded with dlopen from the first of a list of candidates that loads (the shim
// passes cuptiCandidates(), cupti_library.h: the plain name first, so the simulated device's
// stand-in is picked up when LD_LIBRARY_PATH points at it) behind a function table with a `valid`
// flag: a machine without CUPTI loads the shim and simply stays on the interposer tier, and
// whyUnavailable() names every place tried.
// Verified on the simulated device and on recorded traces only; not yet run on a GPU.
//
// Threads: construct on one thread; calls as CuptiPort says. The library handle is never closed:
// CUPTI keeps threads and callbacks alive until process exit.
#pragma once

#include "profiler/cupti/cupti_port.h"

#include <string>
#include <vector>

namespace gpuwise::profiler {

class DlCuptiPort final : public CuptiPort {
public:
  // `library`: the name handed to dlopen.
  explicit DlCuptiPort(const char* library = "libcupti.so.13");
  // Each of `candidates` in turn, until one loads.
  explicit DlCuptiPort(const std::vector<std::string>& candidates);

  // The candidate that loaded, or empty.
  const std::string& loadedFrom() const { return loaded_from_; }

  bool available() const override { return table_.valid; }
  const char* whyUnavailable() const override { return why_.c_str(); }

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
  struct Table {
    bool valid = false;
    decltype(&::cuptiSubscribe) subscribe = nullptr;
    decltype(&::cuptiUnsubscribe) unsubscribe = nullptr;
    decltype(&::cuptiActivityRegisterTimestampCallback) registerTimestampCallback = nullptr;
    decltype(&::cuptiSetThreadIdType) setThreadIdType = nullptr;
    decltype(&::cuptiActivityRegisterCallbacks) registerCallbacks = nullptr;
    decltype(&::cuptiActivityEnable) enable = nullptr;
    decltype(&::cuptiActivityDisable) disable = nullptr;
    decltype(&::cuptiActivityEnableRuntimeApi) enableRuntimeApi = nullptr;
    decltype(&::cuptiActivityEnableDriverApi) enableDriverApi = nullptr;
    decltype(&::cuptiActivityFlushAll) flushAll = nullptr;
    decltype(&::cuptiActivityGetNumDroppedRecords) getNumDroppedRecords = nullptr;
    decltype(&::cuptiActivityGetNextRecord) getNextRecord = nullptr;
    decltype(&::cuptiGetResultString) getResultString = nullptr;
    decltype(&::cuptiGetTimestamp) getTimestamp = nullptr; // optional: not part of `valid`
    decltype(&::cuptiSubscribe_v2) subscribeV2 = nullptr;  // optional (CUPTI 13): names us
  };
  // Fills table_ from a loaded `handle`; false (why_ set) when a function is missing.
  bool bind(void* handle, const std::string& library);

  Table table_;
  std::string why_;
  std::string loaded_from_;
  std::string holder_; // who held CUPTI when subscribe() was refused, as CUPTI named it
};

} // namespace gpuwise::profiler
