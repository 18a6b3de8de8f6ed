// The per-rank view of a distributed job for people: which ranks a bounded view shows, and the
// terminal's per-rank table.
//
// A job of many ranks is collapsed to its slowest and fastest ranks by step p50 (the straggler,
// when one was found, always among them); the JSON report keeps every rank.
//
//   rank  host          GPU               steps  step p50   busy  comm s  exposed  wait s  input
//   0     node-a        A100-SXM4-80GB       40   212 ms   71.0%   1.23     0.41    0.02   1.0%
//
// Pure; any thread.
#pragma once

#include "advisor/analysis/rank_summary.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

struct RankSelection {
  std::vector<size_t> shown; // indexes into the ranks, in display order
  size_t hidden = 0;         // ranks left out
};

// Every rank, in rank order, when there are at most `max_shown`; else the `slowest` ranks by step
// p50 (slowest first), then the `fastest` (slowest of them first), with the straggler added when
// it is neither. Ranks without a step p50 count as fastest.
RankSelection selectRanks(const std::vector<RankSummary>& ranks,
                          const std::optional<StragglerFinding>& straggler, size_t max_shown,
                          size_t slowest, size_t fastest);

// The terminal's table (lines indented by two, each ending in '\n'), collapsed past 8 ranks to the
// slowest 4 and fastest 2 with a line saying how many more the JSON report has, and the straggler
// named on a line of its own. Empty for a job of at most one rank.
std::string renderRankTable(const std::vector<RankSummary>& ranks,
                            const std::optional<StragglerFinding>& straggler);

// stragglerSentence() on a line of the terminal summary; empty without a straggler.
std::string stragglerLine(const std::optional<StragglerFinding>& straggler);
// The sentence both name the straggler with: "rank 2 is the straggler (compute): the other ranks
// wait 310 ms for it in their collectives". Ranks in lockstep share one step time, so the wait,
// not the step, is what tells the straggler apart.
std::string stragglerSentence(const StragglerFinding& straggler);

} // namespace gpuwise::advisor
