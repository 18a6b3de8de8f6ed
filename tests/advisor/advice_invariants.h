// The invariants every gpuwise.report/v1 report keeps between its advice and the breakdown
// beside it, checked from the report's own figures (not from what a rule says of itself):
//   - every recommendation and note names the part of the breakdown it explains (explains.part),
//     and its expected_saving_ratio is at most the share of the reference time that part
//     accounts for in the report: an idle cause's summary.idle_seconds_by_cause over the GPU span
//     (input: summary.input_stall_ratio; one rank's loader, parameters.rank: that rank's stall over
//     its own step time, which the report's summary does not hold), pageable copy time, GPU busy
//     time; the ranks' collective wait and exposed communication (communication.*) are bounded
//     by their reference alone;
//   - recommendations save at least the advice floor, notes less (risks excepted);
//   - enable_tf32 is never listed beside enable_mixed_precision (it is one of its alternatives).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpuwise::advisor::test {

// One line per broken invariant; empty when the report is consistent. Json: nlohmann::json or
// nlohmann::ordered_json.
using Json = nlohmann::ordered_json;
inline std::vector<std::string> adviceInvariantViolations(const Json& report,
                                                          double advice_floor = 0.02) {
  std::vector<std::string> out;
  const auto& s = report.at("summary");
  auto number = [](const Json& j, const char* key) {
    return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : -1.0;
  };
  const double span = number(s, "gpu_span_seconds");
  auto check = [&](const Json& r, bool is_note) {
    const std::string id = r.at("id").get<std::string>();
    const double saving = r.at("expected_saving_ratio").get<double>();
    if (!r.contains("explains") || !r.at("explains").at("part").is_string() ||
        r.at("explains").at("part").get<std::string>().empty()) {
      out.push_back(id + ": names no part of the breakdown");
      return;
    }
    const auto& ex = r.at("explains");
    const std::string part = ex.at("part").get<std::string>();
    const bool risk = part.rfind("risk.", 0) == 0;
    double bound = 1.0;
    if (part == "idle.input" && r.contains("parameters") && r.at("parameters").contains("rank")) {
      bound = 1.0;
    } else if (part == "idle.input") {
      bound = number(s, "input_stall_ratio");
    } else if (part.rfind("idle.", 0) == 0) {
      const auto& by = s.at("idle_seconds_by_cause");
      std::string cause = part.substr(5);
      bound = by.is_object() && by.contains(cause) && span > 0 ? by.at(cause).get<double>() / span
                                                               : -1.0;
    } else if (part == "copies.pageable") {
      double ref = ex.at("reference_seconds").get<double>();
      bound = ref > 0 ? s.at("memcpy").at("pageable_seconds").get<double>() / ref : -1.0;
    } else if (part == "busy" || part == "busy.fp32_matmul") {
      bound = span > 0 ? number(s, "gpu_busy_seconds") / span : -1.0;
    } else if (part == "communication.wait" || part == "communication.exposed" ||
               part == "gpu.class") {
      const double ref = ex.at("reference_seconds").get<double>();
      bound = ref > 0 ? ex.at("seconds").get<double>() / ref : -1.0;
    } else if (part != "gpu.unused" && !risk) {
      out.push_back(id + ": unknown part " + part);
    }
    if (!risk && saving > bound + 1e-9)
      out.push_back(id + ": saves " + std::to_string(saving) + " but " + part + " accounts for " +
                    std::to_string(bound));
    if (!risk && !is_note && saving < advice_floor)
      out.push_back(id + ": a recommendation under the advice floor (" + std::to_string(saving) +
                    ")");
    if (is_note && saving >= advice_floor)
      out.push_back(id + ": a note at or above the advice floor (" + std::to_string(saving) + ")");
  };
  bool mixed = false, tf32 = false;
  for (const auto& r : report.at("recommendations")) {
    check(r, false);
    mixed = mixed || r.at("id") == "enable_mixed_precision";
    tf32 = tf32 || r.at("id") == "enable_tf32";
  }
  if (report.contains("notes"))
    for (const auto& r : report.at("notes"))
      check(r, true);
  if (mixed && tf32) out.push_back("enable_tf32 listed beside enable_mixed_precision");
  return out;
}

inline std::vector<std::string> adviceInvariantViolations(const nlohmann::json& report,
                                                          double advice_floor = 0.02) {
  return adviceInvariantViolations(Json::parse(report.dump()), advice_floor);
}

} // namespace gpuwise::advisor::test
