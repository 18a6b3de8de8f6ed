// One runtime API call as CUPTI sees it. Every traced entry point of the stand-in libcudart opens
// an ApiScope and returns through finish():
//
//   ApiScope api(CBID, "cudaMalloc", &params);       // injection, context, correlation id,
//                                                     // external correlation, ENTER callbacks
//   cudaError_t err = simulator().allocate(..., api.call());
//   return api.finish(err);                           // EXIT callbacks, API records, last error
//
// A runtime call may name the driver call the real runtime makes under it (cuLaunchKernel under
// cudaLaunchKernel ...): it gets nested DRIVER_API callbacks and a DRIVER record with the same
// correlation id, as CUPTI reports them.
//
// Application threads only; holds no lock; the subscriber's callbacks run on the calling thread.
#pragma once

#include <cstdint>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "tests/simdevice/core/simulator.h"

namespace gpuwise::sim {

struct DriverCall {
  uint32_t cbid = 0; // 0: none
  const char* name = nullptr;
};

class ApiScope {
public:
  ApiScope(uint32_t cbid, const char* name, const void* params, const char* symbol = nullptr,
           DriverCall driver = {}, bool needs_context = true);
  ApiScope(const ApiScope&) = delete;
  ApiScope& operator=(const ApiScope&) = delete;

  const CallInfo& call() const { return call_; }
  Simulator& sim() const { return sim_; }

  // Ends the call: returns `result` after the EXIT callbacks and records; a failing result
  // becomes the thread's last error (cudaGetLastError).
  cudaError_t finish(cudaError_t result);

private:
  Simulator& sim_;
  Activity& activity_;
  Subscriber& subscriber_;
  uint32_t cbid_;
  DriverCall driver_;
  CallInfo call_;
  TimeNs driver_start_ = 0;
  bool entered_ = false;
  cudaError_t result_ = cudaSuccess;
  CUresult driver_result_ = CUDA_SUCCESS;
  uint64_t correlation_data_ = 0;
  uint64_t driver_correlation_data_ = 0;
  CUpti_CallbackData data_{};
  CUpti_CallbackData driver_data_{};
};

// The calling thread's last error: cudaPeekAtLastError / cudaGetLastError (which also resets it).
cudaError_t peekLastError();
cudaError_t takeLastError();
void setLastError(cudaError_t error);

} // namespace gpuwise::sim
