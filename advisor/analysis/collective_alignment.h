// Collective wait and clock alignment across the ranks of one job.
//
// A collective (all-reduce, all-gather, ...) cannot finish on any rank before the last rank has
// arrived: every rank's kernel for it ends at the same moment (within the transfer's last hop,
// microseconds). Ranks on different hosts have unrelated clocks, ranks on one host share one.
// The method:
//
//  1. Per process, its collective kernels in time order, grouped into channels: a channel is a
//     communicator where a model::Collective record names it, else the stream (NCCL runs each
//     communicator on a stream of its own). Channels are matched across processes by their order
//     of first use (the k-th channel of one rank is the k-th of another).
//  2. The reference is the process with the most collective kernels. For each other process q
//     and each matched channel, the i-th kernel of the reference is matched with the (i + s)-th
//     of q, for the shift s in [-kMaxShift, kMaxShift] (one rank's trace may begin a few
//     collectives later) whose matched pairs are compatible (same kind, same size and same
//     sequence number where both know them) and whose end differences (end_q - end_ref) agree
//     best (the smallest median absolute deviation; ties to more pairs, then to the smaller
//     offset: perfectly periodic collectives match equally well at every shift, and ranks of one
//     host share a clock).
//  3. q's clock offset = the median, over every matched pair, of end_q - end_ref. On one host it
//     is ~0; a rank whose clock runs 5 s ahead gets +5 s.
//  4. For each collective of the reference and the kernels matched to it, aligned start =
//     start - offset; the last rank to arrive is the latest aligned start; each rank's wait is
//     (that latest start - its own aligned start), clamped to [0, its kernel's duration].
//  5. A process's collective_wait: its waits summed per steady step (the collectives that start
//     inside that step, on its own clock), and the median step's wait x the steady steps: the
//     first collectives wait for the ranks' start-up, and a step in which the host descheduled
//     some rank (a loaded machine) is not the job. Without steps, the sum over every collective.
//     Scaled by total / kept where the process had more collectives than kMaxCollectiveTimings.
//
// With one process, or a process none of whose collectives match the reference's, nothing is
// measured: its offset is nullopt and its wait 0.
//
// Pure; any thread. O(K x n log n) for n collective kernels, K = 2 x kMaxShift + 1.
#pragma once

#include "advisor/analysis/rank_summary.h"

#include <optional>
#include <string_view>
#include <vector>

namespace gpuwise::advisor {

inline constexpr int kMaxShift = 8;

// A process's steady steps [start, end), in time order, on its own clock; empty: no steps.
struct CollectiveCountWindow {
  std::vector<std::pair<model::TimeNs, model::TimeNs>> steps;
};

struct RankAlignment {
  std::optional<model::TimeNs> offset_ns; // clock offset from the reference process
  model::TimeNs wait_ns = 0;              // median step's wait x steps (step 5 above)
  model::TimeNs all_wait_ns = 0;          // the same over every collective (start-up included)
  uint64_t matched = 0;                   // collectives matched with the reference
};

// Aligned with `processes`; `windows` (may be empty) aligned with it too.
std::vector<RankAlignment> alignCollectives(const std::vector<ProcessCollectiveTimings>& processes,
                                            const std::vector<CollectiveCountWindow>& windows);

// The collective a kernel name says (NCCL's ncclDevKernel_AllReduce_..., ncclKernel_AllGather_...,
// RCCL's the same); Unknown when the name says none.
model::CollectiveKind collectiveKindOfKernelName(std::string_view name);

} // namespace gpuwise::advisor
