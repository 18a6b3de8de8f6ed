#include "advisor/report/report_fields.h"

#include "advisor/report/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpuwise::advisor {

using json = ReportJson;

const ReportJson* jsonAt(const ReportJson& j, std::initializer_list<std::string_view> path) {
  const json* at = &j;
  for (auto key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(std::string(key));
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

std::optional<double> jsonNumber(const ReportJson& j,
                                 std::initializer_list<std::string_view> path) {
  const json* at = jsonAt(j, path);
  if (!at || !at->is_number()) return std::nullopt;
  return at->get<double>();
}

std::string jsonString(const ReportJson& j, std::initializer_list<std::string_view> path) {
  const json* at = jsonAt(j, path);
  return at && at->is_string() ? at->get<std::string>() : std::string();
}

std::optional<std::vector<std::pair<std::string, double>>> idleCauses(const ReportJson& r) {
  for (auto path : {std::initializer_list<std::string_view>{"summary", "idle_seconds_by_cause"},
                    {"timeline", "idle_by_cause"},
                    {"timeline", "idle_seconds_by_cause"},
                    {"idle_causes"}}) {
    const json* at = jsonAt(r, path);
    if (!at || !at->is_object() || at->empty()) continue;
    std::vector<std::pair<std::string, double>> causes;
    for (const auto& [cause, v] : at->items()) {
      if (v.is_number()) {
        causes.emplace_back(cause, v.get<double>());
      } else if (auto s = jsonNumber(v, {"seconds"})) {
        causes.emplace_back(cause, *s);
      }
    }
    if (causes.empty()) continue;
    std::stable_sort(causes.begin(), causes.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return causes;
  }
  return std::nullopt;
}

std::string formatMoney(double usd) {
  if (!std::isfinite(usd)) return "n/a";
  char buf[64];
  double a = std::fabs(usd);
  if (a >= 1000) {
    std::snprintf(buf, sizeof buf, "%.0f", a);
    std::string digits = buf, grouped;
    for (size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
      grouped += digits[i];
    }
    return (usd < 0 ? "-$" : "$") + grouped;
  }
  if (a == 0) return "$0";
  if (a < 0.01) return "< $0.01"; // fractions of a cent read as noise
  std::snprintf(buf, sizeof buf, "%.2f", a);
  return (usd < 0 ? "-$" : "$") + std::string(buf);
}

std::string formatGpuHours(double hours) {
  if (!std::isfinite(hours)) return "n/a";
  if (hours >= 1.0) return formatSignificant(hours, 3) + " GPU-hours";
  if (hours * 60.0 >= 1.0) return formatSignificant(hours * 60.0, 3) + " GPU-minutes";
  return formatSeconds(hours * 3600.0) + " of GPU time";
}

std::string formatSeconds(double seconds) {
  return formatDuration(static_cast<model::TimeNs>(std::llround(seconds * 1e9)));
}

} // namespace gpuwise::advisor
