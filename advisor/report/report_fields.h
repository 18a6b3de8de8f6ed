// Reading (and printing the figures of) a gpuwise.report/v1 document (nlohmann::ordered_json)
// defensively: the HTML sink and `gpuwise diff` read reports whose optional sections depend on the
// build that wrote them, so a missing or null field is "unknown", never an exception.
//
// Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuwise::advisor {

using ReportJson = nlohmann::ordered_json;

// The value at `path` inside `j`, nullptr when any step is missing or not an object.
const ReportJson* jsonAt(const ReportJson& j, std::initializer_list<std::string_view> path);
// The number at `path`, nullopt when missing, null or not a number.
std::optional<double> jsonNumber(const ReportJson& j, std::initializer_list<std::string_view> path);
// The string at `path`, empty when missing or not a string.
std::string jsonString(const ReportJson& j, std::initializer_list<std::string_view> path);

// Idle GPU seconds by cause, largest first, from whichever field the analyzers fill
// (summary.idle_seconds_by_cause, timeline.idle_by_cause, ...: {cause: seconds} or
// {cause: {seconds: ...}}); nullopt when the report does not break idle time down.
std::optional<std::vector<std::pair<std::string, double>>> idleCauses(const ReportJson& report);

// Money for people: "$1,234", "$12.35", "$0.05", "< $0.01", "$0".
std::string formatMoney(double usd);
// GPU time for people: "12.3 GPU-hours", "4.56 GPU-minutes", "175 ms of GPU time".
std::string formatGpuHours(double hours);
// Seconds for people, via formatDuration: "1.23 s", "45.6 ms", "789 us".
std::string formatSeconds(double seconds);

} // namespace gpuwise::advisor
