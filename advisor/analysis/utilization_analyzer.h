// Utilisation over time: per (process, device), how busy the GPU was in each of a fixed number of
// time buckets, and how much device memory the process held over time. The report draws these as
// the "utilisation over time" and "memory over time" charts; the size is bounded (kSeriesBuckets
// values per series) whatever the trace length.
//
// Busy series: the device's GPU span (first GPU activity start .. last end, as in the timeline
// analyzer) cut into `buckets` equal intervals; bucket i holds the length of the union of kernel,
// copy and memset intervals inside it (busy_ns), and of kernels alone (kernel_ns) and copies alone
// (copy_ns). busy_ns[i] / bucketLength(i) is the union-busy fraction of that interval, and the
// busy_ns values sum exactly to the timeline analyzer's busy time for the device.
//
// Memory series, per (process, device), from the memory analyzer's sources, best first:
// MemorySample reserved and allocated bytes, else the running sum of Allocation records (the
// replay of allocation_replay.h, the one the memory analyzer's peak takes). The span is
// first..last memory record; bucket i holds the highest level seen in it, buckets without a
// record carry the level of the previous one (memory stays held until freed). A level of -1
// means "nothing known yet" (before the first record of that kind).
//
// Recent busy series, per (process, device): busy ns (the same union of kernel, copy and memset
// intervals) per kRecentBucketNs bucket aligned on absolute time, for the last kRecentBuckets
// buckets of the device's span. Its buckets do not move when the span widens, so windows of a live
// run merge it exactly (sum per bucket, keep the latest kRecentBuckets): what /metrics's busy share
// of the last 60 s is computed from without raw records (busyBetween(): exact on whole buckets,
// at most one bucket's busy time off where the 60 s start falls inside a bucket).
//
// Pure function of the trace; any thread. Results merge by (pid, rank, device): the two series
// are re-bucketed onto the widened span (busy time spread evenly over each old bucket, memory by
// maximum), which is exact in totals and approximate in shape; the recent series merge by bucket
// time (exact, except that records of two windows that overlap in time are not united: each
// bucket is capped at its length).
#pragma once

#include "advisor/analysis/memory_analyzer.h"
#include "profiler/model/trace.h"

#include <optional>
#include <vector>

namespace gpuwise::advisor {

inline constexpr size_t kSeriesBuckets = 200;

// Edges shared by every series: bucket i of a span [start, end) cut into n buckets is
// [edge(i), edge(i + 1)), edge(i) = start + (end - start) * i / n, rounded down.
model::TimeNs bucketEdge(model::TimeNs start, model::TimeNs end, size_t n, size_t i);

struct BusySeries {
  int64_t pid = 0;
  int32_t rank = -1;
  uint32_t device = 0;
  model::TimeNs start = 0, end = 0;                       // the device's GPU span
  std::vector<model::TimeNs> busy_ns, kernel_ns, copy_ns; // one value per bucket

  size_t buckets() const { return busy_ns.size(); }
  model::TimeNs bucketLength(size_t i) const;
  // busy_ns[i] / bucketLength(i), 0..1; 0 for an empty bucket.
  double busyRatio(size_t i) const;
  double kernelRatio(size_t i) const;
  double copyRatio(size_t i) const;
};

struct MemorySeries {
  int64_t pid = 0;
  int32_t rank = -1;
  uint32_t device = 0;
  MemorySource source = MemorySource::Reserved; // what `reserved`/`allocated` hold (see above)
  model::TimeNs start = 0, end = 0;
  // Highest level per bucket, -1 unknown. With MemorySource::Allocations only `allocated` is
  // filled (the running sum); `reserved` is empty.
  std::vector<int64_t> reserved, allocated;
  uint64_t memory_total_bytes = 0; // the device's capacity, 0 when unknown

  size_t buckets() const { return std::max(reserved.size(), allocated.size()); }
  // The highest level of either kind, 0 when nothing is known.
  uint64_t peak() const;
};

inline constexpr model::TimeNs kRecentBucketNs = 1'000'000'000; // 1 s
inline constexpr size_t kRecentBuckets = 120;                   // the last 2 minutes

struct RecentBusy {
  int64_t pid = 0;
  int32_t rank = -1;
  uint32_t device = 0;
  model::TimeNs start = 0, end = 0; // the device's GPU span (as BusySeries)
  // busy_ns[i] is the busy time in [(first_bucket + i) * kRecentBucketNs, + kRecentBucketNs);
  // consecutive buckets, at most kRecentBuckets, the last one holding `end`.
  int64_t first_bucket = 0;
  std::vector<model::TimeNs> busy_ns;

  // Busy time in [from, to): whole buckets exactly; a bucket cut by `from` or `to` counts its
  // busy time in proportion to the part of it (within the span) that lies inside. Time before
  // the series' first bucket counts nothing.
  model::TimeNs busyBetween(model::TimeNs from, model::TimeNs to) const;
};

struct UtilizationResult {
  std::vector<BusySeries> busy;     // in trace order; by (pid, rank, device) after merge()
  std::vector<MemorySeries> memory; // only (process, device) pairs with a memory record
  std::vector<RecentBusy> recent;   // one per BusySeries, same order

  void merge(const UtilizationResult& other);
};

UtilizationResult analyzeUtilization(const model::Trace& trace, size_t buckets = kSeriesBuckets);

} // namespace gpuwise::advisor
