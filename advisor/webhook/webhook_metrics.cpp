#include "advisor/webhook/webhook_metrics.h"

#include "advisor/metrics/family_writer.h"

namespace gpuwise::advisor {

namespace {

using metrics::Family;
using metrics::FamilyWriter;
using metrics::formatValue;

// docs/metrics.md, "The webhook's metrics", verbatim.
constexpr Family kAdmissions{
    "gpuwise_webhook_admissions_total", "counter",
    "AdmissionReviews the webhook answered, by result: injected (patched), skipped (allowed "
    "unchanged), rejected (a malformed request, answered 400), error (an internal error, answered "
    "500)."};
constexpr Family kDuration{"gpuwise_webhook_admission_duration_seconds", "histogram",
                           "Time the webhook took to answer an AdmissionReview, from its request "
                           "head to its answer."};
constexpr Family kBuildInfo{"gpuwise_webhook_build_info", "gauge",
                            "Always 1: the version of the gpuwise webhook."};

constexpr WebhookMetrics::Result kAll[] = {
    WebhookMetrics::Result::Injected, WebhookMetrics::Result::Skipped,
    WebhookMetrics::Result::Rejected, WebhookMetrics::Result::Error};

} // namespace

const char* toString(WebhookMetrics::Result result) {
  switch (result) {
  case WebhookMetrics::Result::Injected: return "injected";
  case WebhookMetrics::Result::Skipped: return "skipped";
  case WebhookMetrics::Result::Rejected: return "rejected";
  case WebhookMetrics::Result::Error: return "error";
  }
  return "error";
}

void WebhookMetrics::record(Result result, double seconds) {
  results_[size_t(result)].fetch_add(1, std::memory_order_relaxed);
  if (!(seconds >= 0)) seconds = 0;
  for (size_t b = 0; b < kBuckets.size(); ++b)
    if (seconds <= kBuckets[b]) {
      buckets_[b].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  sum_ns_.fetch_add(uint64_t(seconds * 1e9), std::memory_order_relaxed);
  timed_.fetch_add(1, std::memory_order_relaxed);
}

void WebhookMetrics::countError() {
  results_[size_t(Result::Error)].fetch_add(1, std::memory_order_relaxed);
}

uint64_t WebhookMetrics::count(Result result) const {
  return results_[size_t(result)].load(std::memory_order_relaxed);
}

std::string WebhookMetrics::exposition(const std::string& version) const {
  std::string out;
  {
    FamilyWriter w(kAdmissions, out);
    for (Result r : kAll)
      w.sample("", {{"result", toString(r)}}, double(count(r)));
  }
  {
    // The count first: buckets recorded meanwhile then never exceed it.
    const uint64_t timed = timed_.load(std::memory_order_relaxed);
    const double sum = double(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
    FamilyWriter w(kDuration, out);
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kBuckets.size(); ++b) {
      cumulative += buckets_[b].load(std::memory_order_relaxed);
      if (cumulative > timed) cumulative = timed;
      w.sample("_bucket", {{"le", formatValue(kBuckets[b])}}, double(cumulative));
    }
    w.sample("_bucket", {{"le", "+Inf"}}, double(timed));
    w.sample("_sum", {}, sum);
    w.sample("_count", {}, double(timed));
  }
  FamilyWriter(kBuildInfo, out).sample("", {{"version", version}}, 1);
  return out;
}

} // namespace gpuwise::advisor
