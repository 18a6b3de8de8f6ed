#include "tests/simdevice/core/subscriber.h"

namespace gpuwise::sim {
namespace {

// The handle CUPTI hands out: only its identity matters.
struct CUpti_Subscriber_st_tag {
  int unused;
};
CUpti_Subscriber_st_tag g_handle_storage;

CUpti_SubscriberHandle theHandle() {
  return reinterpret_cast<CUpti_SubscriberHandle>(&g_handle_storage);
}

} // namespace

uint32_t Subscriber::cbidCount(CUpti_CallbackDomain domain) {
  switch (domain) {
  case CUPTI_CB_DOMAIN_DRIVER_API: return CUPTI_DRIVER_TRACE_CBID_SIZE;
  case CUPTI_CB_DOMAIN_RUNTIME_API: return CUPTI_RUNTIME_TRACE_CBID_SIZE;
  case CUPTI_CB_DOMAIN_RESOURCE: return CUPTI_CBID_RESOURCE_SIZE;
  case CUPTI_CB_DOMAIN_SYNCHRONIZE: return CUPTI_CBID_SYNCHRONIZE_SIZE;
  case CUPTI_CB_DOMAIN_NVTX: return CUPTI_CBID_NVTX_SIZE;
  case CUPTI_CB_DOMAIN_STATE: return CUPTI_CBID_STATE_SIZE;
  default: return 0;
  }
}

bool Subscriber::validHandle(CUpti_SubscriberHandle handle) const {
  return handle == theHandle() && subscribed();
}

CUptiResult Subscriber::subscribe(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc callback,
                                  void* userdata) {
  if (handle == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (busy_) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  // A subscriber with no callback still holds CUPTI (activity-only clients subscribe that way).
  static void (*const kNoCallback)(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) =
      [](void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {};
  CUpti_CallbackFunc expected = nullptr;
  userdata_.store(userdata, std::memory_order_relaxed);
  if (!callback_.compare_exchange_strong(expected, callback != nullptr ? callback : kNoCallback,
                                         std::memory_order_acq_rel)) {
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  *handle = theHandle();
  return CUPTI_SUCCESS;
}

CUptiResult Subscriber::unsubscribe(CUpti_SubscriberHandle handle) {
  if (!validHandle(handle)) return CUPTI_ERROR_INVALID_PARAMETER;
  for (auto& domain : enabled_) {
    for (auto& on : domain)
      on.store(false, std::memory_order_relaxed);
  }
  callback_.store(nullptr, std::memory_order_release);
  userdata_.store(nullptr, std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult Subscriber::enableCallback(uint32_t enable, CUpti_SubscriberHandle handle,
                                       CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (!validHandle(handle) || domain <= 0 || domain >= CUPTI_CB_DOMAIN_SIZE ||
      cbid >= cbidCount(domain) || cbid >= kCbids) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  enabled_[domain][cbid].store(enable != 0, std::memory_order_relaxed);
  return CUPTI_SUCCESS;
}

CUptiResult Subscriber::enableDomain(uint32_t enable, CUpti_SubscriberHandle handle,
                                     CUpti_CallbackDomain domain) {
  if (!validHandle(handle) || domain <= 0 || domain >= CUPTI_CB_DOMAIN_SIZE) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  const uint32_t count = cbidCount(domain);
  for (uint32_t cbid = 0; cbid < count && cbid < kCbids; ++cbid) {
    enabled_[domain][cbid].store(enable != 0, std::memory_order_relaxed);
  }
  return CUPTI_SUCCESS;
}

CUptiResult Subscriber::enableAllDomains(uint32_t enable, CUpti_SubscriberHandle handle) {
  if (!validHandle(handle)) return CUPTI_ERROR_INVALID_PARAMETER;
  for (int domain = 1; domain < CUPTI_CB_DOMAIN_SIZE; ++domain) {
    enableDomain(enable, handle, static_cast<CUpti_CallbackDomain>(domain));
  }
  return CUPTI_SUCCESS;
}

CUptiResult Subscriber::callbackState(uint32_t* enable, CUpti_SubscriberHandle handle,
                                      CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const {
  if (enable == nullptr || !validHandle(handle) || domain <= 0 || domain >= CUPTI_CB_DOMAIN_SIZE ||
      cbid >= cbidCount(domain) || cbid >= kCbids) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  *enable = enabled_[domain][cbid].load(std::memory_order_relaxed) ? 1 : 0;
  return CUPTI_SUCCESS;
}

void Subscriber::invoke(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const void* data) const {
  if (!wants(domain, cbid)) return;
  CUpti_CallbackFunc callback = callback_.load(std::memory_order_acquire);
  if (callback != nullptr) callback(userdata_.load(std::memory_order_relaxed), domain, cbid, data);
}

} // namespace gpuwise::sim
