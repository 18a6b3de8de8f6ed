// The report's `timeline_series` section: the utilisation analyzer's bounded series (busy share
// and memory per time bucket, per process and device), for the HTML charts and for anyone
// plotting a report. Additive to gpuwise.report/v1:
//
//   timeline_series
//     buckets                  the most buckets a series has (kSeriesBuckets)
//     busy[]                   {pid, rank, device, start_ns, end_ns, bucket_seconds,
//                               busy_ratio[], kernel_ratio[], copy_ratio[]}   ratios 0..1, 4
//                               decimals
//     memory[]                 {pid, rank, device, source, start_ns, end_ns, bucket_seconds,
//                               memory_total_bytes, reserved_bytes[] | null, allocated_bytes[] |
//                               null}
//                              a bucket's highest level; null inside an array: not known yet
//
// start_ns/end_ns are on the trace's clock, so a busy and a memory series of the same process
// line up. Pure; any thread.
#pragma once

#include "advisor/analysis/utilization_analyzer.h"

#include <nlohmann/json.hpp>

namespace gpuwise::advisor {

nlohmann::ordered_json timelineSeriesJson(const UtilizationResult& utilization);

} // namespace gpuwise::advisor
