// The per-pod report merge: `gpuwise report a.json b.json ...`, where each file is one sidecar's
// `gpuwise.report/v1` report of some of a job's ranks, gives the job's report.
//
//   ranks[]            concatenated, by rank; the same rank in two reports, or two world sizes,
//                      is refused with one line naming both files
//   gpus[], processes[] concatenated
//   summary            seconds, counts and bytes summed; ratios weighted by the time they are a
//                      share of (busy by span, precision and tensor cores by kernel time, input
//                      stall by step time); steps as the per-rank view says (the count each rank
//                      ran, the median of the ranks' p50s); memory peak the largest; idle by cause
//                      summed; summary.communication summed, by_kind merged by kind;
//                      summary.straggler re-detected on the merged ranks
//   recommendations[]  each pod's, with the ranks it covers; the same id from several pods is one
//                      entry whose expected_saving_ratio is the pods' savings weighted by their
//                      share of the job's ranks (a fraction of the job); the pods' fix_straggler
//                      (each saw only its own ranks) give way to the job's straggler
//   notes[]            merged the same way
//   top_kernels[]      merged by name (count and seconds summed), the 20 longest
//   merged_from[]      {file, ranks[]} per input report
//
// Pure; any thread.
#pragma once

#include "advisor/analysis/rank_summary.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

struct PodReport {
  std::string path; // named in errors and merged_from[]
  nlohmann::ordered_json report;
};

// True when `head` (the first bytes of a file) opens a JSON object with a member
// "schema": "gpuwise.report/v1" (the first member of every report gpuwise writes; later where a
// tool rewrote the report with its keys sorted).
bool looksLikeReportJson(const std::string& head);

// False with `error` set to one line naming the file(s) when the reports cannot be one job.
bool mergeReports(const std::vector<PodReport>& pods, nlohmann::ordered_json* merged,
                  std::string* error);

// The straggler of the merged ranks: the job-wide analysis's detection, run on the ranks the
// reports carry.
std::optional<StragglerFinding> detectStragglerOfRanks(const std::vector<RankSummary>& ranks);

} // namespace gpuwise::advisor
