// The ranks of a job side by side (JobAnalysis::distributed, rank_summary.h): one RankSummary per
// rank (per process where the ranks are unknown; one entry for a single-process job too), from
// the figures the other analyzers already hold per process:
//   steps, step mean / p50   the process's steady steps (step_analyzer.h)
//   gpu_busy_ratio           busy / (step time x devices) over the steady steps; without steps,
//                            busy / GPU span (timeline_analyzer.h)
//   input_stall_ratio        input idle over the same reference
//   host_seconds             idle whose cause is the host (host_bound, launch_overhead, sync) in
//                            the steady steps; without steps, over the GPU span
//   compute, communication,  the timeline's per-device unions, summed over the process's devices
//   exposed, overlap ratio   (the communication analyzer's figures where it has the process)
//   collective_wait_seconds  collective_alignment.h, inside the steady steps
// and the straggler (straggler.h), the world size and the ranks it names that no input had.
//
// Two registry entries: the Records stage keeps each process's collective kernels
// (collectCollectiveTimings: the window's own records), the Summary stage computes the rest from
// the merged fields, so a live run's windows and processes give what one analysis of the whole
// job gives.
//
// Pure; any thread.
#pragma once

#include "advisor/analysis/rank_summary.h"
#include "profiler/model/trace.h"

#include <vector>

namespace gpuwise::advisor {

struct JobAnalysis;

// Every process's collective kernels (flagged kKernelCommunication, with GPU times), joined with
// their model::Collective records by correlation where the source gives one.
std::vector<ProcessCollectiveTimings> collectCollectiveTimings(const model::Trace& trace);
// Appends `other`'s kernels to `into`'s process of the same (pid, rank), up to the cap.
void mergeCollectiveTimings(std::vector<ProcessCollectiveTimings>& into,
                            const std::vector<ProcessCollectiveTimings>& other);

// Fills a.distributed's ranks, world size, missing ranks and straggler from a's other fields
// (timeline, steps, collection, communication) and a.distributed.collectives.
void summarizeRanks(JobAnalysis& a);

} // namespace gpuwise::advisor
