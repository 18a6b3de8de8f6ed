#include "profiler/cupti/dl_cupti_port.h"

#include <dlfcn.h>

namespace gpuwise::profiler {

namespace {
constexpr CUptiResult kUnavailable = CUPTI_ERROR_NOT_INITIALIZED;
} // namespace

DlCuptiPort::DlCuptiPort(const char* library)
    : DlCuptiPort(std::vector<std::string>{library ? library : ""}) {}

DlCuptiPort::DlCuptiPort(const std::vector<std::string>& candidates) {
  std::string first_error;
  for (const auto& library : candidates) {
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      // The first error says the most (the plain name's); the others are mostly "no such file".
      const char* err = dlerror();
      if (first_error.empty()) first_error = err ? err : "unknown dlopen error";
      continue;
    }
    // A library that loads but lacks a function ends the search: it is a CUPTI, just not one we
    // can use, and a second copy from elsewhere would be worse.
    if (bind(handle, library)) loaded_from_ = library;
    return;
  }
  if (candidates.size() == 1) {
    why_ = candidates.front() + " not loadable: " + first_error;
    return;
  }
  why_ = std::string("libcupti not found (tried");
  for (const auto& c : candidates)
    why_ += " " + c;
  why_ += "): " + first_error + "; GPUWISE_CUPTI_LIBRARY names it";
}

bool DlCuptiPort::bind(void* handle, const std::string& library) {
  Table t;
  bool missing = false;
  auto load = [&](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(handle, name));
    if (!slot && !missing) {
      missing = true;
      why_ = library + " lacks " + name;
    }
  };
  load(t.subscribe, "cuptiSubscribe");
  load(t.unsubscribe, "cuptiUnsubscribe");
  load(t.registerTimestampCallback, "cuptiActivityRegisterTimestampCallback");
  load(t.setThreadIdType, "cuptiSetThreadIdType");
  load(t.registerCallbacks, "cuptiActivityRegisterCallbacks");
  load(t.enable, "cuptiActivityEnable");
  load(t.disable, "cuptiActivityDisable");
  load(t.enableRuntimeApi, "cuptiActivityEnableRuntimeApi");
  load(t.enableDriverApi, "cuptiActivityEnableDriverApi");
  load(t.flushAll, "cuptiActivityFlushAll");
  load(t.getNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
  load(t.getNextRecord, "cuptiActivityGetNextRecord");
  load(t.getResultString, "cuptiGetResultString");
  t.getTimestamp = reinterpret_cast<decltype(t.getTimestamp)>(dlsym(handle, "cuptiGetTimestamp"));
  t.subscribeV2 = reinterpret_cast<decltype(t.subscribeV2)>(dlsym(handle, "cuptiSubscribe_v2"));
  // The handle is kept open (never dlclose'd) whether or not the table is complete: CUPTI may
  // already have started threads that point into it.
  t.valid = !missing;
  table_ = t;
  return t.valid;
}

#define GPUWISE_CUPTI_FORWARD(fn, ...) return table_.valid ? table_.fn(__VA_ARGS__) : kUnavailable

CUptiResult DlCuptiPort::subscribe(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* ud) {
  if (!table_.valid) return kUnavailable;
  holder_.clear();
  if (!table_.subscribeV2) return table_.subscribe(s, cb, ud);
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "gpuwise"; // CUPTI shows "CUPTI for gpuwise" to whoever comes next
  params.oldSubscriberName = holder;
  params.oldSubscriberSize = sizeof holder - 1;
  CUptiResult r = table_.subscribeV2(s, cb, ud, &params);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) holder_ = holder;
  return r;
}
CUptiResult DlCuptiPort::unsubscribe(CUpti_SubscriberHandle s) {
  GPUWISE_CUPTI_FORWARD(unsubscribe, s);
}
CUptiResult DlCuptiPort::activityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn) {
  GPUWISE_CUPTI_FORWARD(registerTimestampCallback, fn);
}
CUptiResult DlCuptiPort::setThreadIdType(CUpti_ActivityThreadIdType type) {
  GPUWISE_CUPTI_FORWARD(setThreadIdType, type);
}
CUptiResult DlCuptiPort::activityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                   CUpti_BuffersCallbackCompleteFunc completed) {
  GPUWISE_CUPTI_FORWARD(registerCallbacks, requested, completed);
}
CUptiResult DlCuptiPort::activityEnable(CUpti_ActivityKind kind) {
  GPUWISE_CUPTI_FORWARD(enable, kind);
}
CUptiResult DlCuptiPort::activityDisable(CUpti_ActivityKind kind) {
  GPUWISE_CUPTI_FORWARD(disable, kind);
}
CUptiResult DlCuptiPort::activityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  GPUWISE_CUPTI_FORWARD(enableRuntimeApi, cbid, enable);
}
CUptiResult DlCuptiPort::activityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  GPUWISE_CUPTI_FORWARD(enableDriverApi, cbid, enable);
}
CUptiResult DlCuptiPort::activityFlushAll(uint32_t flag) {
  GPUWISE_CUPTI_FORWARD(flushAll, flag);
}
CUptiResult DlCuptiPort::activityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t* n) {
  GPUWISE_CUPTI_FORWARD(getNumDroppedRecords, ctx, stream, n);
}
CUptiResult DlCuptiPort::activityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** r) {
  GPUWISE_CUPTI_FORWARD(getNextRecord, buffer, valid, r);
}

CUptiResult DlCuptiPort::getTimestamp(uint64_t* timestamp) {
  if (!table_.valid || !table_.getTimestamp) return kUnavailable;
  return table_.getTimestamp(timestamp);
}

#undef GPUWISE_CUPTI_FORWARD

const char* DlCuptiPort::resultString(CUptiResult result) {
  const char* s = nullptr;
  if (table_.valid && table_.getResultString(result, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error (no description)";
}

} // namespace gpuwise::profiler
