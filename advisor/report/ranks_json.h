// The report's per-rank surfaces in JSON: `ranks[]`, one object per RankSummary (one entry for a
// single-rank job too), and `summary.straggler` (null without one); and back, for the per-pod
// report merge, which reads the ranks[] of each pod's report.
//
//   ranks[]: {rank, host, pid, gpu, steps, step_mean_seconds, step_p50_seconds, gpu_busy_ratio,
//             compute_seconds, communication_seconds, communication_exposed_seconds,
//             communication_overlap_ratio, collective_wait_seconds, input_stall_ratio}
//            rank null for a process without one; unknown figures null.
//   summary.straggler: {rank, cause, others_wait_seconds, step_p50_seconds,
//                       peers_step_p50_seconds}
//
// Pure; any thread.
#pragma once

#include "advisor/analysis/rank_summary.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

nlohmann::ordered_json ranksJson(const std::vector<RankSummary>& ranks);
nlohmann::ordered_json stragglerJson(const std::optional<StragglerFinding>& straggler);

// One ranks[] entry back; false with `error` naming the field when it is not one.
bool rankFromJson(const nlohmann::ordered_json& j, RankSummary* out, std::string* error);
std::optional<StragglerCause> stragglerCauseFromString(const std::string& name);
// summary.straggler back; nullopt when it is null or not an object.
std::optional<StragglerFinding> stragglerFromJson(const nlohmann::ordered_json& j);

} // namespace gpuwise::advisor
