// A CUPTI activity client for in-process tests of the CUPTI stand-in: subscribes once, stamps
// records with CLOCK_MONOTONIC, hands out buffers of a settable size (or none, to test drops),
// and keeps a copy of every record delivered so a test can inspect them after a forced flush.
//
// Test thread calls everything except the buffer callbacks, which CUPTI calls (on its worker or
// the flushing thread); one mutex guards the collected records.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <cupti.h>

namespace gwsim_test {

struct ActivityRecord {
  CUpti_ActivityKind kind;
  std::vector<uint8_t> bytes;
  template <typename T> T as() const {
    T value;
    std::memcpy(&value, bytes.data(), sizeof(T));
    return value;
  }
};

class CuptiRecorder {
public:
  static CuptiRecorder& instance();

  CUpti_SubscriberHandle subscriber() const { return subscriber_; }
  // Forced flush, then drops everything collected so far.
  void reset();
  // Forced flush (or a default one); returns every record collected since the last reset().
  std::vector<ActivityRecord> flush(bool forced = true);
  template <typename T>
  std::vector<T> records(const std::vector<ActivityRecord>& all, CUpti_ActivityKind kind) const {
    std::vector<T> out;
    for (const ActivityRecord& r : all) {
      if (r.kind == kind) out.push_back(r.as<T>());
    }
    return out;
  }

  std::atomic<size_t> buffer_size{1u << 20};
  std::atomic<bool> refuse_buffers{false};
  std::atomic<int> buffers_completed{0};
  std::atomic<bool> misaligned_record{false};
  std::atomic<bool> oversized_buffer{false};

  // Runtime API callbacks seen (ENTER and EXIT), for the callback tests.
  struct Callback {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    CUpti_ApiCallbackSite site;
    uint32_t correlation;
    std::string function;
    std::string symbol;
    unsigned grid_x = 0, block_x = 0; // cudaLaunchKernel's parameters, read during the callback
  };
  std::vector<Callback> callbacks();
  void clearCallbacks();

private:
  CuptiRecorder();
  static void CUPTIAPI onRequest(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI onComplete(CUcontext, uint32_t, uint8_t* buffer, size_t size, size_t valid);
  static void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const void* data);

  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::mutex mutex_;
  std::vector<ActivityRecord> records_;
  std::vector<Callback> callbacks_;
};

uint64_t monotonicNs();

} // namespace gwsim_test
