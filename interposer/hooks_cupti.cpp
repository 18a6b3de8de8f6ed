// The application's own CUPTI client: torch.profiler (Kineto), or any tool linked into the
// program, calls cuptiSubscribe / cuptiSubscribe_v2 / cuptiActivityRegisterCallbacks to start.
// CUPTI allows one subscriber and one set of buffer callbacks per process, and gpuwise usually
// took them first (on the first CUDA call, before the training loop opens its profiler): the
// application's profiler would then fail (MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), or silently steal
// the buffers gpuwise reads. So these hooks first hand CUPTI over (yieldCuptiToApplication: flush,
// disable, unsubscribe, CUPTI's default clock back, the hooks record launches again, the report
// says since when and why), then call the real function. gpuwise goes on at the interposer tier.
//
// Coverage: LD_PRELOAD, where references to these symbols (version node libcupti.so.13,
// gpuwise.map) bind here. A client that reaches CUPTI through dlsym on its own handle, or a shim
// injected only through CUDA_INJECTION64_PATH, is not seen: it then finds CUPTI taken, as before.
#include "interposer/real_symbol.h"
#include "interposer/runtime.h"
#include "interposer/thread_state.h"

#include <cupti.h>

namespace {

constexpr const char* kCuptiVersion = "libcupti.so.13"; // symbol version and soname

constinit gpuwise::interposer::RealSymbol<decltype(&::cuptiSubscribe)> real_cuptiSubscribe{
    "cuptiSubscribe", kCuptiVersion, kCuptiVersion};
constinit gpuwise::interposer::RealSymbol<decltype(&::cuptiSubscribe_v2)> real_cuptiSubscribe_v2{
    "cuptiSubscribe_v2", kCuptiVersion, kCuptiVersion};
constinit gpuwise::interposer::RealSymbol<decltype(&::cuptiActivityRegisterCallbacks)>
    real_cuptiActivityRegisterCallbacks{"cuptiActivityRegisterCallbacks", kCuptiVersion,
                                        kCuptiVersion};

void yieldTo(const char* call) {
  // The shim's own threads never stand for the application (and libcupti binds its internal calls
  // to itself, DT_SYMBOLIC, so its own use of these never arrives here).
  if (gpuwise::interposer::t_state.internal) return;
  try {
    gpuwise::interposer::yieldCuptiToApplication(call);
  } catch (...) {
    // Out of memory while handing over: the application's call goes ahead all the same.
  }
}

} // namespace

GPUWISE_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber,
                                          CUpti_CallbackFunc callback, void* userdata) {
  yieldTo("cuptiSubscribe");
  auto fn = real_cuptiSubscribe.get();
  return fn ? fn(subscriber, callback, userdata) : CUPTI_ERROR_NOT_INITIALIZED;
}

GPUWISE_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber,
                                             CUpti_CallbackFunc callback, void* userdata,
                                             CUpti_SubscriberParams* params) {
  yieldTo("cuptiSubscribe_v2");
  auto fn = real_cuptiSubscribe_v2.get();
  return fn ? fn(subscriber, callback, userdata, params) : CUPTI_ERROR_NOT_INITIALIZED;
}

GPUWISE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed) {
  yieldTo("cuptiActivityRegisterCallbacks");
  auto fn = real_cuptiActivityRegisterCallbacks.get();
  return fn ? fn(requested, completed) : CUPTI_ERROR_NOT_INITIALIZED;
}
