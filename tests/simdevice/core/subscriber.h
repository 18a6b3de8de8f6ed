// The CUPTI callback API of the simulated device: the one subscriber, the domains and callback ids
// it enabled, and the calls into its callback. CUPTI allows one subscriber per process; with
// GWSIM_CUPTI_BUSY=1 the simulator behaves as if another tool (Nsight Systems, torch.profiler)
// already holds it.
//
// Any thread. wants() is lock-free (called on every API call); invoke() calls the client without
// holding any simulator lock.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include <cupti.h>

namespace gpuwise::sim {

class Subscriber {
public:
  explicit Subscriber(bool busy) : busy_(busy) {}

  CUptiResult subscribe(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc callback,
                        void* userdata);
  CUptiResult unsubscribe(CUpti_SubscriberHandle handle);
  CUptiResult enableCallback(uint32_t enable, CUpti_SubscriberHandle handle,
                             CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
  CUptiResult enableDomain(uint32_t enable, CUpti_SubscriberHandle handle,
                           CUpti_CallbackDomain domain);
  CUptiResult enableAllDomains(uint32_t enable, CUpti_SubscriberHandle handle);
  CUptiResult callbackState(uint32_t* enable, CUpti_SubscriberHandle handle,
                            CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const;

  bool subscribed() const { return callback_.load(std::memory_order_acquire) != nullptr; }
  bool wants(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const {
    return domain > 0 && domain < CUPTI_CB_DOMAIN_SIZE && cbid < kCbids &&
           enabled_[domain][cbid].load(std::memory_order_relaxed) && subscribed();
  }
  // Calls the subscriber's callback if it enabled (domain, cbid).
  void invoke(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) const;

private:
  static constexpr uint32_t kCbids = 1024;
  bool validHandle(CUpti_SubscriberHandle handle) const;
  static uint32_t cbidCount(CUpti_CallbackDomain domain);

  const bool busy_;
  std::atomic<CUpti_CallbackFunc> callback_{nullptr};
  std::atomic<void*> userdata_{nullptr};
  std::array<std::array<std::atomic<bool>, kCbids>, CUPTI_CB_DOMAIN_SIZE> enabled_{};
};

} // namespace gpuwise::sim
