// `gpuwise diff BASE.json NEW.json`: what changed between two gpuwise.report/v1 reports, and
// whether it is a regression a CI gate should fail on.
//
// Metrics compared (each base, new, delta, relative delta and whether the change is better or
// worse): step time, GPU busy share, GPU busy/span/wall seconds, idle seconds by cause, input
// stall, launch overhead, host sync seconds, precision shares, tensor-core share, occupancy,
// pageable copy time, peak memory, the daily cost of idle time; recommendations that appeared or
// disappeared (by id).
//
// The gate: a regression is step time growing, or GPU busy share shrinking, by more than the
// noise band relative to the base. Both gate metrics are the steady state's when both reports
// have it (summary.steps.steady, after the warm-up, step_analyzer.h): the median step time and
// the median step's GPU busy share. A mean, or a share of the whole span, moves with how long the
// warm-up took and with a few host-starved steps, so two identical runs would "regress".
//
// Noise band: the larger of `threshold` (default 5%: 100 ms -> 105 ms is not a regression,
// 105.1 ms is) and noise_spread (default 3) standard errors of the difference of the two steady
// medians, sqrt(se_base^2 + se_new^2), each se the median's relative standard error: half the
// width of its distribution-free 95% interval over 1.96 (summary.steps.steady.p50_ci95_seconds,
// order statistics, so host-starved steps widen it only as far as they move the median: a run
// whose quarter of steps stalled keeps a tight median), or, in a report without the interval,
// 0.93 x IQR/median / sqrt(steady steps) (iqr_ratio and count). Why: a median of steps that vary
// moves from run to run with nothing changed, the less the more steps it has; a change inside the
// band is "within noise", not a regression, and a slowdown well beyond its own runs' uncertainty
// always shows (a 20% slower step regresses unless the runs are too short or too noisy to tell).
// Two runs whose steady medians' 95% intervals lie apart by more than `threshold` differ even
// when the band is wider (a run a busy host stretched has a wide interval that can still lie
// wholly above the base's): the new interval's low end above the base's high end x (1 +
// threshold) is a regression, its high end below the base's low end x (1 - threshold) better.
// Reports without the steady figures (older ones, traces without steps) compare the mean step
// time and the span's busy share against `threshold` alone.
//
// Metrics unknown in either report are listed as unknown and gate nothing; when neither gate
// metric is comparable the verdict says so (and it is not a regression). Other metrics are
// reported as better or worse but never fail the gate.
//
// Pure; any thread. Throws nothing; invalid input is reported by validateReport().
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

inline constexpr double kDefaultDiffThreshold = 0.05;
inline constexpr double kDefaultNoiseSpread = 3.0; // standard errors
inline constexpr const char* kDiffSchema = "gpuwise.diff/v1";

struct DiffOptions {
  double threshold = kDefaultDiffThreshold;  // the least relative change that counts, >= 0
  double noise_spread = kDefaultNoiseSpread; // standard errors of the medians' difference, >= 0
};

enum class Better : uint8_t { Lower, Higher, Neither };
enum class Change : uint8_t { Same, Better, Worse, Changed, Unknown };
const char* toString(Change);

enum class Unit : uint8_t { Seconds, Ratio, Bytes, Money };

struct MetricDelta {
  std::string name;  // stable key: "step_seconds", "gpu_busy_ratio", "idle_seconds.input", ...
  std::string label; // for people: "step time (mean)"
  Unit unit = Unit::Seconds;
  Better better = Better::Lower;
  bool gate = false; // decides the exit status
  std::optional<double> base, next;
  Change change = Change::Unknown;

  std::optional<double> delta() const;
  // (next - base) / |base|; nullopt when unknown or base is 0.
  std::optional<double> relative() const;
};

enum class DiffVerdict : uint8_t { Regression, Improvement, Unchanged, NotComparable };
const char* toString(DiffVerdict);

struct ReportDiff {
  double threshold = kDefaultDiffThreshold;
  double noise_band = kDefaultDiffThreshold; // the band the gate used (see above)
  bool steady = false;                       // the gate compared steady-state figures
  std::vector<MetricDelta> metrics;
  std::vector<std::string> appeared, disappeared, kept; // recommendation ids
  DiffVerdict verdict = DiffVerdict::NotComparable;
  std::vector<std::string> regressions; // names of the gate metrics that regressed

  bool regressed() const { return verdict == DiffVerdict::Regression; }
};

// Empty when `report` is a gpuwise.report/v1 document the diff can read; otherwise the problem in
// a few words ("schema is 'x', not gpuwise.report/v1", "no summary object").
std::string validateReport(const nlohmann::ordered_json& report);

ReportDiff diffReports(const nlohmann::ordered_json& base, const nlohmann::ordered_json& next,
                       const DiffOptions& options = {});

// The diff for people: the verdict on the first line ("gpuwise diff: REGRESSION: ..."), then one
// line per metric, then the recommendations that appeared and disappeared.
std::string renderDiffText(const ReportDiff& diff);

// The diff as JSON (schema gpuwise.diff/v1) for CI systems, with the two files' names.
nlohmann::ordered_json diffToJson(const ReportDiff& diff, const std::string& base_file,
                                  const std::string& new_file);

} // namespace gpuwise::advisor
