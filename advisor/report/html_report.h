// The HTML report: one self-contained file (inline CSS, no scripts or fonts fetched from the
// network) with a summary table, the recommendations with their evidence, the top kernels, the
// copies, the processes and the collection figures. The full JSON report is embedded in a
// <script type="application/json" id="gpuwise-report"> element, so charts added later can draw
// from it without another file.
//
// Pure; any thread.
#pragma once

#include "advisor/report/report_json.h"

#include <string>
#include <string_view>

namespace gpuwise::advisor {

std::string renderHtmlReport(const ReportInput& input, const ReportOptions& options = {});

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string htmlEscape(std::string_view text);

} // namespace gpuwise::advisor
