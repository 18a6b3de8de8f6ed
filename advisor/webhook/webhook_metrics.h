// What the admission webhook exports at GET /metrics on its TLS port (docs/metrics.md, "The
// webhook's metrics"): its admissions by result, their latency as a histogram, and its version.
//
// Threads: record() from any connection thread (relaxed atomics, no lock); exposition() from any
// thread, a consistent-enough snapshot (each value read once; a review recorded meanwhile may be
// in the counter and not yet in the histogram).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace gpuwise::advisor {

class WebhookMetrics {
public:
  enum class Result {
    Injected, // answered 200 with a patch
    Skipped,  // answered 200, allowed unchanged (not a GPU pod, opted out, already injected...)
    Rejected, // answered 400: not an AdmissionReview the webhook can answer
    Error,    // answered 500: an internal error
  };
  static constexpr size_t kResults = 4;
  // gpuwise_webhook_admission_duration_seconds buckets (seconds), +Inf implied. The API server
  // gives the webhook 5 s (timeoutSeconds in the manifests).
  static constexpr std::array<double, 12> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                      0.1,   0.25,   0.5,   1,    2.5,   5};

  // One /mutate request answered with `result` after `seconds` (from its handler's start).
  void record(Result result, double seconds);
  // Only counted: the time of an internal error is unknown.
  void countError();

  // The exposition text (format 0.0.4); every series present from the start, at 0.
  std::string exposition(const std::string& version) const;

  uint64_t count(Result result) const;

private:
  std::array<std::atomic<uint64_t>, kResults> results_{};
  std::array<std::atomic<uint64_t>, kBuckets.size()> buckets_{}; // not cumulative
  std::atomic<uint64_t> timed_{0};
  std::atomic<uint64_t> sum_ns_{0};
};

const char* toString(WebhookMetrics::Result result);

} // namespace gpuwise::advisor
