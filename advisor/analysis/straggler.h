// The straggler: the rank the others wait for, and what makes it slow. Reads only RankSummary,
// so the per-pod report merge finds it on ranks read back from JSON as the analysis does.
//
// With collective waits measured (collective_alignment.h; any rank's wait > 0):
//   the candidate is the rank whose collective wait per step is least; it is the straggler when
//   the others wait substantially (the median of their wait per step at least
//   Thresholds::Straggler::min_others_wait_share of the median step p50) and it waits itself at
//   most max_own_wait_ratio of that median: in a balanced job every rank is sometimes the last
//   to arrive, so every rank waits about as much.
//   others_wait_seconds = the sum of the other ranks' collective waits.
// Without collectives (ranks that never wait for each other): the rank whose step p50 is over
//   min_step_ratio x the median of the others'; others_wait_seconds = the time the others would
//   save running at its pace, sum over them of (its p50 - their p50) x their steps.
// Cause: per step (per rank totals where any rank has no steps), what it spends longer on than
//   the median of its peers: compute (compute_seconds: slower kernels, a throttled GPU), input
//   (input_stall_ratio x step mean: its loader) or host (host_seconds: launches, Python, syncs);
//   the largest excess, compute when none exceeds.
//
// Pure; any thread.
#pragma once

#include "advisor/analysis/rank_summary.h"
#include "advisor/rules/thresholds.h"

#include <optional>
#include <vector>

namespace gpuwise::advisor {

// nullopt with fewer than two ranks, or none that the others wait for.
std::optional<StragglerFinding> findStraggler(const std::vector<RankSummary>& ranks,
                                              const Thresholds::Straggler& thresholds = {});

} // namespace gpuwise::advisor
