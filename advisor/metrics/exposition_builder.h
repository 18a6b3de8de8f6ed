// The Prometheus text exposition (format 0.0.4) of a live job: exactly the names, types, labels
// and HELP texts of docs/metrics.md, from JobFigures (metrics_input.h).
//
// Rules the builder keeps:
//  - every documented label is on every series of its metric; a value nobody knows is empty;
//  - a figure the collection tier cannot know is absent, never 0 (GPU time without CUPTI, memory
//    nobody reported, steps before any step was recognised);
//  - counters never go back: the analysis is recomputed from the snapshot on each refresh and a
//    figure may come out lower (a window re-attributed, a process restarted under the same
//    labels), so each counter series exports the maximum of what it exported before and now;
//  - label values are valid UTF-8 of at most kMaxLabelValueBytes (sanitizeLabelValue), then
//    escape backslash, double quote and newline; HELP texts escape backslash and newline
//    (family_writer.h).
//
// Not thread-safe: one owner (MetricsServer's refresh thread). build() is pure apart from the
// counter floors it keeps between calls.
#pragma once

#include "advisor/metrics/family_writer.h"
#include "advisor/metrics/metrics_input.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuwise::advisor::metrics {

inline constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";
// gpuwise_step_duration_seconds buckets (seconds), +Inf implied.
inline constexpr double kStepBuckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                          1,     2.5,  5,     10,   30,  60};

// The advisor's own figures, known from its start, before any process connects: what it is (its
// pod, from its own environment), since when it runs, and what its ingest received so far.
struct AdvisorFigures {
  std::string ns, pod; // GPUWISE_NAMESPACE, GPUWISE_POD of the advisor; empty outside a pod
  double start_time_seconds = 0; // Unix time the advisor started
  uint64_t batches = 0;          // batches received (IngestProgress::batches)
  uint64_t events = 0;           // events absorbed from them
  uint64_t bytes = 0;            // bytes of the messages taken from the receive queue
  uint64_t rejected = 0;         // messages undecodable, for no stream, or shed by a full queue
  // --gpu-hour-price: the price of every GPU's hour; unset, its model's list price (advisor/cost)
  std::optional<double> gpu_hour_price;
  // --gpu-price CLASS=USD / --gpu-prices FILE: per GPU class, below --gpu-hour-price
  std::vector<std::pair<std::string, double>> gpu_class_prices;
};

class ExpositionBuilder {
public:
  // `advisor`: the figures build(job) reports; a zero start time means "now".
  explicit ExpositionBuilder(AdvisorFigures advisor = {});

  // The exposition of `job`, with the advisor's figures of the constructor.
  std::string build(const JobFigures& job);
  // The same with the advisor's latest figures (its identity, start time and GPU-hour price are the
  // constructor's when `advisor` leaves them empty or zero).
  std::string build(const JobFigures& job, const AdvisorFigures& advisor);

private:
  AdvisorFigures advisor_;
  // Per counter series, the highest value exported so far: the floor of the next export.
  std::map<std::string, double> counters_;
};

// RANK when known, else "pid-<pid>".
std::string rankLabel(const model::ProcessInfo& info);

} // namespace gpuwise::advisor::metrics
