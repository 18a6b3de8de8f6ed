// The HTML efficiency report: one self-contained file a person opens in any browser, offline.
//
//   verdict         GPU busy %, idle time, the cost of idle GPU time, what the GPU waited for,
//                   the top recommendations and their savings; "SIMULATED DEVICE" when simulated
//   charts          utilisation over time, where the GPU span went and idle time by cause,
//                   precision mix, top kernels, copies by direction and host memory, memory over
//                   time: inline SVG drawn by svg_chart.h, each with a text alternative
//   details         top kernels with precision and occupancy, copies, host syncs, recommendations
//                   with their evidence, action and cost, the collection tier and dropped events
//
// Self-contained: inline CSS, no script that runs, no external resource, and a
// Content-Security-Policy that forbids fetching anything, so even a bug cannot make the page
// reach the network. The full JSON report is embedded in
// <script type="application/json" id="gpuwise-report"> (data, not code). Every string from the
// trace (kernel names contain <, > and &) is escaped. Printable: sections do not split across
// pages and colours print.
//
// The page is drawn from the JSON report alone (html_sections.h), so it shows what the JSON says.
// Pure; any thread.
#pragma once

#include "advisor/report/report_json.h"

#include <string>
#include <string_view>

namespace gpuwise::advisor {

std::string renderHtmlReport(const ReportInput& input, const ReportOptions& options = {});
// The page for a report already built (buildReportJson, or a gpuwise.report/v1 file).
std::string renderHtmlReport(const nlohmann::ordered_json& report);

// Escapes &, <, >, " and ' for HTML (and XML) text and attribute values.
std::string htmlEscape(std::string_view text);

} // namespace gpuwise::advisor
