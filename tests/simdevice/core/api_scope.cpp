#include "tests/simdevice/core/api_scope.h"

#include <atomic>

#include "tests/simdevice/core/injection.h"

namespace gpuwise::sim {
namespace {

std::atomic<uint32_t> g_next_correlation{0};
thread_local cudaError_t t_last_error = cudaSuccess;

} // namespace

cudaError_t peekLastError() {
  return t_last_error;
}

cudaError_t takeLastError() {
  const cudaError_t error = t_last_error;
  t_last_error = cudaSuccess;
  return error;
}

void setLastError(cudaError_t error) {
  // cudaErrorNotReady is a status (a query's answer), not an error: it does not stick.
  if (error != cudaSuccess && error != cudaErrorNotReady) t_last_error = error;
}

ApiScope::ApiScope(uint32_t cbid, const char* name, const void* params, const char* symbol,
                   DriverCall driver, bool needs_context)
    : sim_((ensureInjected(), simulator())), activity_(activity()), subscriber_(subscriber()),
      cbid_(cbid), driver_(driver) {
  const int device = sim_.currentDevice();
  if (needs_context) sim_.ensureContext(device);
  call_.correlation = g_next_correlation.fetch_add(1, std::memory_order_relaxed) + 1;
  activity_.emitExternalCorrelations(call_.correlation);
  if (subscriber_.subscribed()) {
    entered_ = true;
    data_.callbackSite = CUPTI_API_ENTER;
    data_.functionName = name;
    data_.functionParams = params;
    data_.functionReturnValue = &result_;
    data_.symbolName = symbol;
    data_.context = sim_.contextHandle(device);
    data_.contextUid = sim_.contextId(device);
    data_.correlationData = &correlation_data_;
    data_.correlationId = call_.correlation;
    subscriber_.invoke(CUPTI_CB_DOMAIN_RUNTIME_API, cbid_, &data_);
    if (driver_.cbid != 0) {
      driver_data_ = data_;
      driver_data_.functionName = driver_.name;
      driver_data_.functionParams = nullptr; // the simulator has no driver parameter structs
      driver_data_.functionReturnValue = &driver_result_;
      driver_data_.correlationData = &driver_correlation_data_;
      subscriber_.invoke(CUPTI_CB_DOMAIN_DRIVER_API, driver_.cbid, &driver_data_);
    }
  }
  call_.start = nowNs();
  driver_start_ = call_.start + 100;
}

cudaError_t ApiScope::finish(cudaError_t result) {
  result_ = result;
  driver_result_ = result == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  const TimeNs end = nowNs();
  if (driver_.cbid != 0) {
    emitApiRecord(activity_, /*driver=*/true, driver_.cbid, std::min(driver_start_, end),
                  std::max(end - 100, std::min(driver_start_, end)), call_.correlation,
                  static_cast<uint32_t>(driver_result_));
  }
  emitApiRecord(activity_, /*driver=*/false, cbid_, call_.start, end, call_.correlation,
                static_cast<uint32_t>(result));
  if (entered_) { // EXIT only for calls whose ENTER the subscriber saw
    if (driver_.cbid != 0) {
      driver_data_.callbackSite = CUPTI_API_EXIT;
      subscriber_.invoke(CUPTI_CB_DOMAIN_DRIVER_API, driver_.cbid, &driver_data_);
    }
    data_.callbackSite = CUPTI_API_EXIT;
    subscriber_.invoke(CUPTI_CB_DOMAIN_RUNTIME_API, cbid_, &data_);
  }
  setLastError(result);
  return result;
}

} // namespace gpuwise::sim
