#include "tests/simdevice/cupti_recorder.h"

#include <cstdlib>
#include <ctime>

#include "tests/simdevice/core/records.h" // recordSize: the struct size of each kind

namespace gwsim_test {

uint64_t CUPTIAPI monotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

CuptiRecorder& CuptiRecorder::instance() {
  static CuptiRecorder* recorder = new CuptiRecorder(); // leaked: CUPTI may call back at exit
  return *recorder;
}

CuptiRecorder::CuptiRecorder() {
  cuptiSubscribe(&subscriber_, onCallback, this);
  cuptiActivityRegisterTimestampCallback(monotonicNs);
  cuptiActivityRegisterCallbacks(onRequest, onComplete);
}

void CUPTIAPI CuptiRecorder::onRequest(uint8_t** buffer, size_t* size, size_t* max_records) {
  CuptiRecorder& self = instance();
  *max_records = 0;
  if (self.refuse_buffers.load()) {
    *buffer = nullptr;
    *size = 0;
    return;
  }
  *size = self.buffer_size.load();
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
}

void CUPTIAPI CuptiRecorder::onComplete(CUcontext, uint32_t, uint8_t* buffer, size_t size,
                                        size_t valid) {
  CuptiRecorder& self = instance();
  if (valid > size) self.oversized_buffer = true;
  {
    std::lock_guard lock(self.mutex_);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      if (reinterpret_cast<uintptr_t>(record) % 8 != 0) self.misaligned_record = true;
      const size_t bytes = gpuwise::sim::recordSize(record->kind);
      const auto* begin = reinterpret_cast<const uint8_t*>(record);
      self.records_.push_back({record->kind, std::vector<uint8_t>(begin, begin + bytes)});
    }
  }
  self.buffers_completed.fetch_add(1);
  std::free(buffer);
}

void CUPTIAPI CuptiRecorder::onCallback(void* userdata, CUpti_CallbackDomain domain,
                                        CUpti_CallbackId cbid, const void* data) {
  auto* self = static_cast<CuptiRecorder*>(userdata);
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  Callback seen{domain,
                cbid,
                cb->callbackSite,
                cb->correlationId,
                cb->functionName != nullptr ? cb->functionName : "",
                cb->symbolName != nullptr ? cb->symbolName : ""};
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
      cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 && cb->functionParams != nullptr) {
    const auto* params = static_cast<const cudaLaunchKernel_v7000_params*>(cb->functionParams);
    seen.grid_x = params->gridDim.x;
    seen.block_x = params->blockDim.x;
  }
  std::lock_guard lock(self->mutex_);
  self->callbacks_.push_back(seen);
}

void CuptiRecorder::reset() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(mutex_);
  records_.clear();
}

std::vector<ActivityRecord> CuptiRecorder::flush(bool forced) {
  cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  std::lock_guard lock(mutex_);
  return records_;
}

std::vector<CuptiRecorder::Callback> CuptiRecorder::callbacks() {
  std::lock_guard lock(mutex_);
  return callbacks_;
}

void CuptiRecorder::clearCallbacks() {
  std::lock_guard lock(mutex_);
  callbacks_.clear();
}

} // namespace gwsim_test
