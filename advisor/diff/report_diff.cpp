#include "advisor/diff/report_diff.h"

#include "advisor/report/format.h"
#include "advisor/report/report_fields.h"
#include "advisor/report/report_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;

// Below these absolute changes a non-gate metric reads "same" whatever its relative change:
// half a percentage point of a ratio, a microsecond, a kilobyte, a cent.
double noiseFloor(Unit u) {
  switch (u) {
  case Unit::Ratio: return 0.005;
  case Unit::Seconds: return 1e-6;
  case Unit::Bytes: return 1e3;
  case Unit::Money: return 0.01;
  }
  return 0.0;
}

// The standard error of a median of n samples is about 1.2533 sigma / sqrt(n) (normal steps),
// and sigma is about IQR / 1.349: so 0.93 x IQR / sqrt(n), relative to the median when the IQR is.
constexpr double kMedianErrorPerIqr = 1.2533 / 1.349;

// Tolerance on the threshold comparison, so an edge computed in floating point (0.8 x 0.95)
// does not flip the verdict.
constexpr double kEdgeEpsilon = 1e-9;

std::string format(std::optional<double> v, Unit u) {
  if (!v) return "unknown";
  switch (u) {
  case Unit::Seconds: return formatSeconds(*v);
  case Unit::Ratio: return formatPercent(*v);
  case Unit::Bytes: return formatBytes(static_cast<uint64_t>(std::max(0.0, *v)));
  case Unit::Money: return formatMoney(*v);
  }
  return "";
}

std::string deltaText(const MetricDelta& m) {
  auto d = m.delta();
  if (!d) return "";
  char buf[48];
  if (m.unit == Unit::Ratio) {
    std::snprintf(buf, sizeof buf, "%+.1f pts", *d * 100.0);
    return buf;
  }
  if (auto r = m.relative()) {
    std::snprintf(buf, sizeof buf, "%+.1f%%", *r * 100.0);
    return buf;
  }
  return (*d >= 0 ? "+" : "-") + format(std::fabs(*d), m.unit);
}

const char* toString(Better b) {
  switch (b) {
  case Better::Lower: return "lower";
  case Better::Higher: return "higher";
  case Better::Neither: return "neither";
  }
  return "neither";
}

const char* toString(Unit u) {
  switch (u) {
  case Unit::Seconds: return "seconds";
  case Unit::Ratio: return "ratio";
  case Unit::Bytes: return "bytes";
  case Unit::Money: return "usd";
  }
  return "";
}

void classify(MetricDelta& m, double threshold) {
  auto d = m.delta();
  if (!d) {
    m.change = Change::Unknown;
    return;
  }
  auto rel = m.relative();
  bool beyond = rel ? std::fabs(*rel) > threshold + kEdgeEpsilon : *d != 0.0;
  if (!m.gate && std::fabs(*d) < noiseFloor(m.unit)) beyond = false;
  if (!beyond) {
    m.change = Change::Same;
  } else if (m.better == Better::Neither) {
    m.change = Change::Changed;
  } else {
    bool up = *d > 0;
    m.change = (up == (m.better == Better::Higher)) ? Change::Better : Change::Worse;
  }
}

std::set<std::string> recommendationIds(const json& r) {
  std::set<std::string> ids;
  if (const json* recs = jsonAt(r, {"recommendations"}); recs && recs->is_array())
    for (const auto& rec : *recs)
      if (auto id = jsonString(rec, {"id"}); !id.empty()) ids.insert(id);
  return ids;
}

std::optional<double> busyRatio(const json& r) {
  auto idle = jsonNumber(r, {"summary", "gpu_idle_ratio"});
  if (!idle) return std::nullopt;
  return 1.0 - *idle;
}

std::optional<double> steadyNumber(const json& r, std::string_view key) {
  return jsonNumber(r, {"summary", "steps", "steady", key});
}

// The steady median's 95% interval (summary.steps.steady.p50_ci95_seconds), nullopt without it.
std::optional<std::pair<double, double>> medianInterval(const json& r) {
  const json* ci = jsonAt(r, {"summary", "steps", "steady", "p50_ci95_seconds"});
  if (!ci || !ci->is_array() || ci->size() != 2 || !(*ci)[0].is_number() || !(*ci)[1].is_number())
    return std::nullopt;
  const double low = (*ci)[0].get<double>(), high = (*ci)[1].get<double>();
  if (!std::isfinite(low) || !std::isfinite(high) || high < low) return std::nullopt;
  return std::pair{low, high};
}

// Two runs whose steady medians' 95% intervals lie apart by more than the threshold differ,
// whatever the band says: the band widens with a noisy run's spread, and a run whose steps a busy
// host stretched can carry a wide interval that still lies wholly above the base's (a 42% slower
// run beside a CPU hog had a 73% band). Overlapping intervals keep the band's answer.
void separateIntervals(MetricDelta& m, const json& base, const json& next, double threshold) {
  if (m.change != Change::Same) return;
  const auto b = medianInterval(base), n = medianInterval(next);
  if (!b || !n) return;
  if (n->first > b->second * (1 + threshold))
    m.change = Change::Worse;
  else if (n->second < b->first * (1 - threshold))
    m.change = Change::Better;
}

// The steady median's relative standard error from its 95% interval (summary.steps.steady.
// p50_ci95_seconds, order statistics): half its width over 1.96, over the median. nullopt for a
// report without it (written before it was added), which the IQR then stands in for.
std::optional<double> medianErrorFromInterval(const json& r) {
  const json* ci = jsonAt(r, {"summary", "steps", "steady", "p50_ci95_seconds"});
  auto median = steadyNumber(r, "p50_seconds");
  if (!ci || !ci->is_array() || ci->size() != 2 || !(*ci)[0].is_number() || !(*ci)[1].is_number() ||
      !median || !(*median > 0))
    return std::nullopt;
  const double low = (*ci)[0].get<double>(), high = (*ci)[1].get<double>();
  if (!std::isfinite(low) || !std::isfinite(high) || high < low) return std::nullopt;
  return (high - low) / (2.0 * 1.96) / *median;
}

// The noise band of the gate (report_diff.h): the threshold, or the uncertainty of the
// difference of the two steady medians where that is larger.
double noiseBand(const json& base, const json& next, const DiffOptions& o) {
  double variance = 0;
  for (const json* r : {&base, &next}) {
    if (auto se = medianErrorFromInterval(*r)) {
      variance += *se * *se;
      continue;
    }
    auto iqr = steadyNumber(*r, "iqr_ratio");
    auto count = steadyNumber(*r, "count");
    if (!iqr || !count || !std::isfinite(*iqr) || *iqr < 0 || *count < 1) continue;
    const double se = kMedianErrorPerIqr * *iqr / std::sqrt(*count);
    variance += se * se;
  }
  return std::max(o.threshold, o.noise_spread * std::sqrt(variance));
}

std::optional<double> idleSeconds(const json& r) {
  auto span = jsonNumber(r, {"summary", "gpu_span_seconds"});
  auto busy = jsonNumber(r, {"summary", "gpu_busy_seconds"});
  if (!span || !busy) return std::nullopt;
  return *span - *busy;
}

// Idle by cause: every cause either report names.
template <class Add> void addIdleByCause(const json& base, const json& next, Add& add) {
  std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> causes;
  if (auto c = idleCauses(base))
    for (const auto& [k, v] : *c)
      causes[k].first = v;
  if (auto c = idleCauses(next))
    for (const auto& [k, v] : *c)
      causes[k].second = v;
  for (const auto& [cause, values] : causes) {
    std::string label = "idle: " + cause;
    std::replace(label.begin(), label.end(), '_', ' ');
    add("idle_seconds." + cause, label, Unit::Seconds, Better::Lower, false, values.first,
        values.second);
  }
}

// Kernel time by precision class: every class either report names, in order of first mention.
template <class Add> void addPrecisionMix(const json& base, const json& next, Add& add) {
  std::vector<std::string> classes;
  for (const json* r : {&base, &next})
    if (const json* mix = jsonAt(*r, {"summary", "precision_time_ratio"}); mix && mix->is_object())
      for (const auto& [k, v] : mix->items())
        if (std::find(classes.begin(), classes.end(), k) == classes.end()) classes.push_back(k);
  for (const auto& k : classes)
    add("precision_time_ratio." + k, "kernel time in " + k, Unit::Ratio, Better::Neither, false,
        jsonNumber(base, {"summary", "precision_time_ratio", k}),
        jsonNumber(next, {"summary", "precision_time_ratio", k}));
}

void compareRecommendations(const json& base, const json& next, ReportDiff& diff) {
  auto before = recommendationIds(base), after = recommendationIds(next);
  for (const auto& id : after)
    (before.contains(id) ? diff.kept : diff.appeared).push_back(id);
  for (const auto& id : before)
    if (!after.contains(id)) diff.disappeared.push_back(id);
}

// The verdict from the gate metrics alone: any worse is a regression.
void judge(ReportDiff& diff) {
  bool comparable = false, improved = false;
  for (const auto& m : diff.metrics) {
    if (!m.gate || m.change == Change::Unknown) continue;
    comparable = true;
    if (m.change == Change::Worse) diff.regressions.push_back(m.name);
    if (m.change == Change::Better) improved = true;
  }
  diff.verdict = !diff.regressions.empty() ? DiffVerdict::Regression
                 : !comparable             ? DiffVerdict::NotComparable
                 : improved                ? DiffVerdict::Improvement
                                           : DiffVerdict::Unchanged;
}

} // namespace

const char* toString(Change c) {
  switch (c) {
  case Change::Same: return "same";
  case Change::Better: return "better";
  case Change::Worse: return "worse";
  case Change::Changed: return "changed";
  case Change::Unknown: return "unknown";
  }
  return "unknown";
}

const char* toString(DiffVerdict v) {
  switch (v) {
  case DiffVerdict::Regression: return "regression";
  case DiffVerdict::Improvement: return "improvement";
  case DiffVerdict::Unchanged: return "unchanged";
  case DiffVerdict::NotComparable: return "not_comparable";
  }
  return "not_comparable";
}

std::optional<double> MetricDelta::delta() const {
  if (!base || !next) return std::nullopt;
  return *next - *base;
}

std::optional<double> MetricDelta::relative() const {
  auto d = delta();
  if (!d || *base == 0.0) return std::nullopt;
  return *d / std::fabs(*base);
}

std::string validateReport(const json& r) {
  if (!r.is_object()) return "not a JSON object";
  const json* schema = jsonAt(r, {"schema"});
  if (!schema) return std::string("no \"schema\" field: not a ") + kReportSchema + " report";
  if (!schema->is_string() || schema->get<std::string>() != kReportSchema)
    return "schema is " + schema->dump() + ", not " + kReportSchema;
  const json* summary = jsonAt(r, {"summary"});
  if (!summary || !summary->is_object()) return "no \"summary\" object";
  if (const json* recs = jsonAt(r, {"recommendations"}); recs && !recs->is_array())
    return "\"recommendations\" is not an array";
  return "";
}

ReportDiff diffReports(const json& base, const json& next, const DiffOptions& options) {
  ReportDiff diff;
  diff.threshold = options.threshold;
  diff.steady = steadyNumber(base, "p50_seconds") && steadyNumber(next, "p50_seconds");
  diff.noise_band = diff.steady ? noiseBand(base, next, options) : options.threshold;
  auto add = [&](std::string name, std::string label, Unit unit, Better better, bool gate,
                 std::optional<double> b, std::optional<double> n) {
    MetricDelta m{std::move(name), std::move(label), unit, better, gate, b, n, Change::Unknown};
    classify(m, gate ? diff.noise_band : options.threshold);
    diff.metrics.push_back(std::move(m));
  };
  auto num = [](const json& r, std::initializer_list<std::string_view> path) {
    return jsonNumber(r, path);
  };
  if (diff.steady) {
    add("step_seconds", "step time (median, steady)", Unit::Seconds, Better::Lower, true,
        steadyNumber(base, "p50_seconds"), steadyNumber(next, "p50_seconds"));
    separateIntervals(diff.metrics.back(), base, next, options.threshold);
  } else {
    add("step_seconds", "step time (mean)", Unit::Seconds, Better::Lower, true,
        num(base, {"summary", "steps", "mean_seconds"}),
        num(next, {"summary", "steps", "mean_seconds"}));
  }
  auto steadyBusy = [&](const json& r) { return steadyNumber(r, "gpu_busy_ratio_p50"); };
  if (diff.steady && steadyBusy(base) && steadyBusy(next)) {
    add("gpu_busy_ratio", "GPU busy share (median step)", Unit::Ratio, Better::Higher, true,
        steadyBusy(base), steadyBusy(next));
  } else {
    add("gpu_busy_ratio", "GPU busy share", Unit::Ratio, Better::Higher, true, busyRatio(base),
        busyRatio(next));
  }
  add("wall_seconds", "wall time", Unit::Seconds, Better::Lower, false,
      num(base, {"summary", "wall_seconds"}), num(next, {"summary", "wall_seconds"}));
  add("gpu_span_seconds", "GPU span", Unit::Seconds, Better::Neither, false,
      num(base, {"summary", "gpu_span_seconds"}), num(next, {"summary", "gpu_span_seconds"}));
  add("gpu_busy_seconds", "GPU busy time", Unit::Seconds, Better::Neither, false,
      num(base, {"summary", "gpu_busy_seconds"}), num(next, {"summary", "gpu_busy_seconds"}));
  add("gpu_idle_seconds", "GPU idle time", Unit::Seconds, Better::Lower, false, idleSeconds(base),
      idleSeconds(next));

  addIdleByCause(base, next, add);
  add("input_stall_ratio", "input stall share of step", Unit::Ratio, Better::Lower, false,
      num(base, {"summary", "input_stall_ratio"}), num(next, {"summary", "input_stall_ratio"}));
  add("launch_overhead_ratio", "launch overhead share of idle", Unit::Ratio, Better::Lower, false,
      num(base, {"summary", "launch_overhead_ratio"}),
      num(next, {"summary", "launch_overhead_ratio"}));
  add("host_sync_seconds", "host blocked in syncs", Unit::Seconds, Better::Lower, false,
      num(base, {"summary", "host_sync_seconds"}), num(next, {"summary", "host_sync_seconds"}));
  add("pageable_copy_seconds", "pageable copy time", Unit::Seconds, Better::Lower, false,
      num(base, {"summary", "memcpy", "pageable_seconds"}),
      num(next, {"summary", "memcpy", "pageable_seconds"}));

  addPrecisionMix(base, next, add);
  add("tensor_core_time_ratio", "kernel time on tensor cores", Unit::Ratio, Better::Higher, false,
      num(base, {"summary", "tensor_core_time_ratio"}),
      num(next, {"summary", "tensor_core_time_ratio"}));
  add("occupancy_theoretical", "theoretical occupancy", Unit::Ratio, Better::Higher, false,
      num(base, {"summary", "occupancy_theoretical"}),
      num(next, {"summary", "occupancy_theoretical"}));
  add("memory_peak_bytes", "peak device memory", Unit::Bytes, Better::Lower, false,
      num(base, {"summary", "memory_peak_bytes"}), num(next, {"summary", "memory_peak_bytes"}));
  add("idle_cost_per_day", "idle GPU cost per day", Unit::Money, Better::Lower, false,
      num(base, {"cost", "per_day", "wasted_cost"}), num(next, {"cost", "per_day", "wasted_cost"}));

  compareRecommendations(base, next, diff);
  judge(diff);
  return diff;
}

std::string renderDiffText(const ReportDiff& d) {
  std::string out = "gpuwise diff: ";
  std::string gates;
  for (const auto& m : d.metrics) {
    if (!m.gate) continue;
    gates += (gates.empty() ? "" : ", ") + m.label + " " + format(m.base, m.unit) + " -> " +
             format(m.next, m.unit);
    if (auto t = deltaText(m); !t.empty()) gates += " (" + t + ")";
  }
  switch (d.verdict) {
  case DiffVerdict::Regression: out += "REGRESSION: "; break;
  case DiffVerdict::Improvement: out += "improvement: "; break;
  case DiffVerdict::Unchanged: out += "no regression: "; break;
  case DiffVerdict::NotComparable:
    out += "not comparable (neither step time nor GPU busy is known in both reports): ";
    break;
  }
  out += gates + "; threshold " + formatPercent(d.threshold);
  // The band differs from the threshold only where the runs' own step spread (IQR / median)
  // is larger: a change inside it is within noise.
  if (d.noise_band > d.threshold) out += ", noise band " + formatPercent(d.noise_band);
  out += "\n";

  char line[256];
  std::snprintf(line, sizeof line, "  %-32s %12s %12s %11s  %s\n", "metric", "base", "new", "delta",
                "change");
  out += line;
  for (const auto& m : d.metrics) {
    if (!m.base && !m.next) continue; // unknown in both: nothing to say
    std::string change = toString(m.change);
    if (m.gate) change += m.change == Change::Worse ? " (gate: REGRESSION)" : " (gate)";
    std::snprintf(line, sizeof line, "  %-32s %12s %12s %11s  %s\n", m.label.c_str(),
                  format(m.base, m.unit).c_str(), format(m.next, m.unit).c_str(),
                  deltaText(m).c_str(), change.c_str());
    out += line;
  }
  auto ids = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& id : v)
      s += (s.empty() ? "" : ", ") + id;
    return s.empty() ? std::string("none") : s;
  };
  out += "  recommendations appeared: " + ids(d.appeared) + "\n";
  out += "  recommendations disappeared: " + ids(d.disappeared) + "\n";
  return out;
}

nlohmann::ordered_json diffToJson(const ReportDiff& d, const std::string& base_file,
                                  const std::string& new_file) {
  auto orNull = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
  json j;
  j["schema"] = kDiffSchema;
  j["base"] = base_file;
  j["new"] = new_file;
  j["threshold"] = d.threshold;
  j["noise_band"] = d.noise_band;
  j["steady_state"] = d.steady;
  j["verdict"] = toString(d.verdict);
  j["regressions"] = d.regressions;
  json metrics = json::array();
  for (const auto& m : d.metrics) {
    json mj;
    mj["name"] = m.name;
    mj["label"] = m.label;
    mj["unit"] = toString(m.unit);
    mj["better"] = toString(m.better);
    mj["gate"] = m.gate;
    mj["base"] = orNull(m.base);
    mj["new"] = orNull(m.next);
    mj["delta"] = orNull(m.delta());
    mj["relative_delta"] = orNull(m.relative());
    mj["change"] = toString(m.change);
    metrics.push_back(std::move(mj));
  }
  j["metrics"] = std::move(metrics);
  j["recommendations"] = {
      {"appeared", d.appeared}, {"disappeared", d.disappeared}, {"kept", d.kept}};
  return j;
}

} // namespace gpuwise::advisor
