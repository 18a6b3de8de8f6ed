// Stand-in libcupti.so.13: the CUPTI callback and activity API a profiler uses, over the simulated
// device's activity engine and subscriber (tests/simdevice/core). Records are the real CUPTI 13
// structs; see core/activity.h for when buffers are requested and completed.
//
// Typical client workflow, all supported: cuptiSubscribe -> cuptiEnableDomain/Callback ->
// cuptiActivityRegisterTimestampCallback -> cuptiActivityRegisterCallbacks -> cuptiActivityEnable
// (+ EnableRuntimeApi/EnableDriverApi filters) -> ... cuptiActivityFlushAll -> cuptiFinalize.
#include <pthread.h>

#include <cstring>
#include <mutex>
#include <string>

#include <cupti.h>

#include "tests/simdevice/core/records.h"
#include "tests/simdevice/core/simulator.h"

#define GWSIM_EXPORT extern "C" __attribute__((visibility("default")))

using namespace gpuwise::sim;

namespace {

thread_local CUptiResult t_last_error = CUPTI_SUCCESS;

// Every entry point returns through here: errors become cuptiGetLastError's answer.
CUptiResult ret(CUptiResult result) {
  if (result != CUPTI_SUCCESS) t_last_error = result;
  return result;
}

template <class F> CUptiResult guarded(F&& body) noexcept {
  try {
    return ret(body());
  } catch (...) {
    return ret(CUPTI_ERROR_UNKNOWN);
  }
}

const char* resultName(CUptiResult result) {
  switch (result) {
#define GWSIM_RESULT(name)                                                                         \
  case name:                                                                                       \
    return #name;
#include "tests/simdevice/cupti/result_names.inc"
#undef GWSIM_RESULT
  default: return nullptr;
  }
}

} // namespace

// ---- results and versions ----

GWSIM_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return ret(CUPTI_ERROR_INVALID_PARAMETER);
  const char* name = resultName(result);
  *str = name != nullptr ? name : "CUPTI_ERROR_UNKNOWN";
  return name != nullptr ? CUPTI_SUCCESS : ret(CUPTI_ERROR_INVALID_PARAMETER);
}

GWSIM_EXPORT CUptiResult cuptiGetErrorMessage(CUptiResult result, const char** str) {
  return cuptiGetResultString(result, str);
}

GWSIM_EXPORT CUptiResult cuptiGetVersion(uint32_t* version) {
  if (version == nullptr) return ret(CUPTI_ERROR_INVALID_PARAMETER);
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

GWSIM_EXPORT CUptiResult cuptiGetLastError(void) {
  const CUptiResult last = t_last_error;
  t_last_error = CUPTI_SUCCESS;
  return last;
}

// ---- callback API ----

// The name the current subscriber gave (cuptiSubscribe_v2), shown to the next one as "CUPTI for
// <name>", as the real library does; "gwsim-busy" when GWSIM_CUPTI_BUSY stands for another tool.
namespace {
std::mutex g_holder_mutex;
std::string g_holder_name;

// Held across fork(), as core/process_state.cpp holds the simulator's own: a profiler's thread may
// unsubscribe (handing CUPTI to the application) while the application forks, and the child's
// first subscribe would wait forever on a mutex that no thread of it holds. Never held while
// taking another lock, so no lock order to keep.
[[gnu::constructor]] void registerHolderForkHandlers() {
  pthread_atfork([] { g_holder_mutex.lock(); }, [] { g_holder_mutex.unlock(); },
                 [] { g_holder_mutex.unlock(); });
}
} // namespace

GWSIM_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber,
                                        CUpti_CallbackFunc callback, void* userdata) {
  return guarded([&] {
    const CUptiResult result = ::subscriber().subscribe(subscriber, callback, userdata);
    if (result == CUPTI_SUCCESS) {
      std::lock_guard lock(g_holder_mutex);
      g_holder_name.clear();
    }
    return result;
  });
}

GWSIM_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber,
                                           CUpti_CallbackFunc callback, void* userdata,
                                           CUpti_SubscriberParams* params) {
  return guarded([&] {
    const CUptiResult result = ::subscriber().subscribe(subscriber, callback, userdata);
    std::lock_guard lock(g_holder_mutex);
    if (result == CUPTI_SUCCESS) {
      g_holder_name = params != nullptr && params->subscriberName != nullptr
                          ? std::string("CUPTI for ") + params->subscriberName
                          : std::string();
    } else if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && params != nullptr &&
               params->oldSubscriberName != nullptr && params->oldSubscriberSize > 0) {
      // Who holds CUPTI, as the real library reports it to the second subscriber.
      const std::string holder = g_holder_name.empty() ? "gwsim-busy" : g_holder_name;
      std::strncpy(params->oldSubscriberName, holder.c_str(), params->oldSubscriberSize - 1);
      params->oldSubscriberName[params->oldSubscriberSize - 1] = '\0';
    }
    return result;
  });
}

GWSIM_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle handle) {
  return guarded([&] {
    const CUptiResult result = ::subscriber().unsubscribe(handle);
    if (result == CUPTI_SUCCESS) {
      std::lock_guard lock(g_holder_mutex);
      g_holder_name.clear();
    }
    return result;
  });
}

GWSIM_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle handle,
                                             CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return guarded([&] { return ::subscriber().enableCallback(enable, handle, domain, cbid); });
}

GWSIM_EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle handle,
                                           CUpti_CallbackDomain domain) {
  return guarded([&] { return ::subscriber().enableDomain(enable, handle, domain); });
}

GWSIM_EXPORT CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle handle) {
  return guarded([&] { return ::subscriber().enableAllDomains(enable, handle); });
}

GWSIM_EXPORT CUptiResult cuptiGetCallbackState(uint32_t* enable, CUpti_SubscriberHandle handle,
                                               CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return guarded([&] { return ::subscriber().callbackState(enable, handle, domain, cbid); });
}

GWSIM_EXPORT CUptiResult cuptiSupportedDomains(size_t* domainCount,
                                               CUpti_DomainTable* domainTable) {
  static CUpti_CallbackDomain domains[] = {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API,
                                           CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CB_DOMAIN_SYNCHRONIZE};
  if (domainCount == nullptr || domainTable == nullptr) return ret(CUPTI_ERROR_INVALID_PARAMETER);
  *domainCount = sizeof(domains) / sizeof(domains[0]);
  *domainTable = domains;
  return CUPTI_SUCCESS;
}

// ---- activity API ----

GWSIM_EXPORT CUptiResult cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc request, CUpti_BuffersCallbackCompleteFunc complete) {
  return guarded([&] { return activity().registerCallbacks(request, complete); });
}

GWSIM_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  return guarded([&] {
    const CUptiResult result = activity().enable(kind);
    if (result == CUPTI_SUCCESS && kind == CUPTI_ACTIVITY_KIND_DEVICE)
      simulator().emitDeviceRecords();
    return result;
  });
}

GWSIM_EXPORT CUptiResult cuptiActivityEnableContext(CUcontext context, CUpti_ActivityKind kind) {
  return cuptiActivityEnable(kind);
}

GWSIM_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  return guarded([&] { return activity().disable(kind); });
}

GWSIM_EXPORT CUptiResult cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind) {
  return cuptiActivityDisable(kind);
}

GWSIM_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  return guarded([&] { return activity().flushAll(flag); });
}

GWSIM_EXPORT CUptiResult cuptiActivityFlush(CUcontext context, uint32_t streamId, uint32_t flag) {
  return cuptiActivityFlushAll(flag);
}

GWSIM_EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t time) {
  return guarded([&] { return activity().flushPeriod(time); });
}

GWSIM_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                           size_t* dropped) {
  return guarded([&] { return activity().droppedRecords(dropped); });
}

GWSIM_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t validBufferSizeBytes,
                                                    CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return ret(CUPTI_ERROR_INVALID_PARAMETER);
  size_t offset = 0;
  if (*record != nullptr) {
    const auto* current = reinterpret_cast<const uint8_t*>(*record);
    if (current < buffer || current >= buffer + validBufferSizeBytes) {
      return ret(CUPTI_ERROR_INVALID_PARAMETER);
    }
    const size_t size = recordSize((*record)->kind);
    if (size == 0) return ret(CUPTI_ERROR_INVALID_KIND);
    offset = static_cast<size_t>(current - buffer) + ((size + 7) & ~size_t{7});
  }
  if (offset + sizeof(CUpti_ActivityKind) > validBufferSizeBytes) {
    return CUPTI_ERROR_MAX_LIMIT_REACHED; // the normal end of a buffer, not an error to remember
  }
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  const size_t size = recordSize(next->kind);
  if (size == 0 || offset + size > validBufferSizeBytes) return ret(CUPTI_ERROR_INVALID_KIND);
  *record = next;
  return CUPTI_SUCCESS;
}

GWSIM_EXPORT CUptiResult
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc callback) {
  return guarded([&] { return activity().registerTimestampCallback(callback); });
}

GWSIM_EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  return guarded([&] { return activity().enableRuntimeApi(cbid, enable != 0); });
}

GWSIM_EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  return guarded([&] { return activity().enableDriverApi(cbid, enable != 0); });
}

GWSIM_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize,
                                                   void* value) {
  return guarded([&] { return activity().setAttribute(attr, valueSize, value); });
}

GWSIM_EXPORT CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize,
                                                   void* value) {
  return guarded([&] { return activity().getAttribute(attr, valueSize, value); });
}

GWSIM_EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                                uint64_t id) {
  return guarded([&] { return activity().pushExternalCorrelation(kind, id); });
}

GWSIM_EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                               uint64_t* lastId) {
  return guarded([&] { return activity().popExternalCorrelation(kind, lastId); });
}

GWSIM_EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  return guarded([&] { return activity().setThreadIdType(type); });
}

GWSIM_EXPORT CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
  return guarded([&] { return activity().getThreadIdType(type); });
}

// Accepted switches the simulator has nothing to change for.
GWSIM_EXPORT CUptiResult cuptiActivityEnableLatencyTimestamps(uint8_t enable) {
  return CUPTI_SUCCESS;
}
GWSIM_EXPORT CUptiResult cuptiActivityEnableLaunchAttributes(uint8_t enable) {
  return CUPTI_SUCCESS;
}
GWSIM_EXPORT CUptiResult cuptiActivityEnableAllSyncRecords(uint8_t enable) {
  return CUPTI_SUCCESS;
}
GWSIM_EXPORT CUptiResult cuptiActivityEnableDeviceGraph(uint8_t enable) {
  return CUPTI_SUCCESS;
}

GWSIM_EXPORT CUptiResult cuptiFinalize(void) {
  return guarded([&] { return activity().finalize(); });
}

// ---- identities ----

GWSIM_EXPORT CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  return guarded([&] {
    if (timestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *timestamp = activity().mapTime(nowNs());
    return CUPTI_SUCCESS;
  });
}

GWSIM_EXPORT CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t* deviceId) {
  return guarded([&] {
    if (deviceId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    if (context == nullptr) {
      *deviceId = static_cast<uint32_t>(simulator().currentDevice());
      return CUPTI_SUCCESS;
    }
    return simulator().contextInfo(context, deviceId, nullptr) ? CUPTI_SUCCESS
                                                               : CUPTI_ERROR_INVALID_CONTEXT;
  });
}

GWSIM_EXPORT CUptiResult cuptiGetContextId(CUcontext context, uint32_t* contextId) {
  return guarded([&] {
    if (contextId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    return simulator().contextInfo(context, nullptr, contextId) ? CUPTI_SUCCESS
                                                                : CUPTI_ERROR_INVALID_CONTEXT;
  });
}

GWSIM_EXPORT CUptiResult cuptiGetStreamIdEx(CUcontext context, CUstream stream,
                                            uint8_t perThreadStream, uint32_t* streamId) {
  return guarded([&] {
    if (streamId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    return simulator().streamId(stream, perThreadStream != 0, streamId)
               ? CUPTI_SUCCESS
               : CUPTI_ERROR_INVALID_STREAM;
  });
}

GWSIM_EXPORT CUptiResult cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t* streamId) {
  return cuptiGetStreamIdEx(context, stream, 0, streamId);
}

GWSIM_EXPORT CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t* pId) {
  return guarded([&] {
    if (pId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    return simulator().graphId(reinterpret_cast<cudaGraph_t>(graph), pId)
               ? CUPTI_SUCCESS
               : CUPTI_ERROR_INVALID_PARAMETER;
  });
}
