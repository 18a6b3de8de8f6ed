// The summary of a job from its pods' report summaries (report_merge.h says how each figure
// combines). Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

namespace gpuwise::advisor {

// `summaries`: each pod report's `summary` object (validated as objects by the caller).
nlohmann::ordered_json mergeSummaries(const std::vector<const nlohmann::ordered_json*>& summaries);

// timeline of the job (without its per-device list): seconds and counts summed, idle_ratio from
// the sums, idle_seconds_by_cause summed per cause; what the HTML's time breakdown reads.
nlohmann::ordered_json mergeTimelines(const std::vector<const nlohmann::ordered_json*>& timelines);

// summary.communication of the job: seconds and exposed seconds summed, the overlap ratio of the
// sums, by_kind merged by kind (counts, seconds and bytes summed, bandwidths weighted by seconds).
nlohmann::ordered_json
mergeCommunication(const std::vector<const nlohmann::ordered_json*>& communications);

} // namespace gpuwise::advisor
