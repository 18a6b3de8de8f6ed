// Step inference for traces without step annotations (live gpuwise runs, Kineto traces recorded
// without a profiler schedule): training loops repeat the same launch sequence every iteration,
// so the steps are the periods of that sequence.
//
// 1. The sequence: the GPU activities of the process's busiest device in host launch order (GPU
//    start order where the launch is unknown), each a token (kernel name, copy direction, memset),
//    with the host syncs of the main launching thread interleaved as a "sync" token.
// 2. Candidate periods: the recurrence distances of anchor tokens, from the k-th next occurrence
//    (k = 1..4, so a batch copied as two H2D copies still gives the step): first the H2D copies
//    (each step loads a batch), then the host syncs (loss.item(), a per-step synchronize), then,
//    only if neither gives a period, any token. A candidate is the most common distance of a
//    token when at least half its distances agree.
// 3. A candidate p is a period when seq[i] recurs at i + p (or one element either side: a step
//    with one launch more or less shifts the comparisons that straddle it) for kMinMatchRate of the
//    positions of a region that holds at least three periods, half the sequence and a kernel
//    in each period: the region is the maximum-sum run
//    of +(1 - rate) per match and -rate per mismatch, so a warm-up iteration that launches other
//    kernels (cuDNN autotuning) or a ragged end does not hide the period. The smallest period of
//    the first group that has one wins (a per-layer repetition inside a step does not pass: the
//    forward and backward layers differ). Steps are cut only inside the region.
// 4. Where to cut: before the token that follows the longest GPU idle of each period, most
//    consistently (per token, the sum over period-long blocks of its longest preceding idle: the
//    step boundary is where the GPU waits for the next batch); the first cut is its occurrence in
//    the first period with the longest idle, each next one is re-found within p/8 positions of
//    the previous cut plus p, so a step with an extra or a missing launch does not shift the rest.
//    When the period came from the host syncs, only the first GPU element after a sync (or a
//    token's first occurrence: the first step has no sync before it) may be cut (the host
//    returning from its per-step sync opens the step): when the host is the
//    bottleneck every gap looks alike, and a descheduled thread makes the longest one anywhere.
//
// The windows are on the GPU timeline: from the start of the idle gap before a step's first
// activity to the same point of the next step (the last step: to the end of its last activity);
// only whole periods become steps.
//
// Pure; any thread. O(n log n) plus O(n) per candidate period, with a bounded number of candidates.
#pragma once

#include "advisor/analysis/activity_index.h"

#include <optional>
#include <vector>

namespace gpuwise::advisor {

inline constexpr double kMinMatchRate = 0.85;

struct InferredSteps {
  std::vector<Interval> windows; // consecutive step windows, in time order
  uint32_t device = 0;           // the device whose launch sequence was used
  uint32_t period = 0;           // elements (GPU activities and host syncs) per step
  double match_rate = 0;         // share of the region's positions where the sequence recurs
  const char* anchor = "";       // "h2d_copy", "sync" or "sequence": what gave the period
};

// nullopt when the sequence has no period that passes, or fewer than two whole periods.
std::optional<InferredSteps> inferSteps(const ActivityIndex& index);

} // namespace gpuwise::advisor
