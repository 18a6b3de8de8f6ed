// The summary of a job from its pods' report summaries (report_merge.h says how each figure
// combines). Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

namespace gpuwise::advisor {

// `summaries`: each pod report's `summary` object (validated as objects by the caller).
nlohmann::ordered_json mergeSummaries(const std::vector<const nlohmann::ordered_json*>& summaries);

// summary.communication of the job: seconds and exposed seconds summed, the overlap ratio of the
// sums, by_kind merged by kind (counts, seconds and bytes summed, bandwidths weighted by seconds).
nlohmann::ordered_json
mergeCommunication(const std::vector<const nlohmann::ordered_json*>& communications);

} // namespace gpuwise::advisor
