#include "advisor/report/html_sections.h"

#include "advisor/report/format.h"
#include "advisor/report/html_report.h"
#include "advisor/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuwise::advisor {
namespace {

using json = ReportJson;

constexpr size_t kMaxCharts = 8; // per section; a 128-rank job lists the rest in one line
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string esc(const std::string& s) {
  return htmlEscape(s);
}

// "GPU 0 of pid 1234 (rank 3)": which device a series belongs to.
std::string deviceName(const json& s) {
  std::string name = "GPU " + std::to_string(s.value("device", 0u));
  if (auto pid = jsonNumber(s, {"pid"})) name += " of pid " + std::to_string(int64_t(*pid));
  if (auto rank = jsonNumber(s, {"rank"})) name += " (rank " + std::to_string(int64_t(*rank)) + ")";
  return name;
}

std::vector<double> numbers(const json* arr) {
  std::vector<double> v;
  if (!arr || !arr->is_array()) return v;
  for (const auto& x : *arr)
    v.push_back(x.is_number() ? x.get<double>() : kNaN);
  return v;
}

std::string idleCauseColor(const std::string& cause) {
  if (cause.find("input") != std::string::npos || cause.find("data") != std::string::npos)
    return palette::kPurple;
  if (cause.find("launch") != std::string::npos) return palette::kYellow;
  if (cause.find("sync") != std::string::npos) return palette::kRed;
  if (cause.find("host") != std::string::npos || cause.find("cpu") != std::string::npos)
    return palette::kOrange;
  if (cause.find("comm") != std::string::npos) return palette::kTeal;
  return palette::kGrey;
}

std::string readable(std::string key) {
  std::replace(key.begin(), key.end(), '_', ' ');
  return key;
}

void moreLine(std::ostream& o, size_t total, const char* what) {
  if (total > kMaxCharts)
    o << "<p class=\"muted\">" << (total - kMaxCharts) << " more " << what
      << " are in the JSON report (timeline_series).</p>\n";
}

// The energy tile: measured by NVML, or an estimate labelled as one (advisor/cost/energy_cost.h).
template <class Tile> void energyTile(const json& r, Tile& tile) {
  auto joules = jsonNumber(r, {"energy", "joules"});
  if (!joules) return;
  const std::string source = jsonString(r, {"energy", "source"});
  std::string note =
      source == "estimate"     ? "ESTIMATE: board power x GPU busy time (NVML did not measure it)"
      : source == "nvml_power" ? "NVML power readings, integrated (no energy counter)"
                               : "NVML energy counter";
  if (auto per_step = jsonNumber(r, {"energy", "joules_per_step"}))
    note += "; " + formatEnergy(*per_step) + " per step";
  if (auto cost = jsonNumber(r, {"energy", "cost"}))
    note += "; " + formatMoney(*cost) + " at " +
            formatMoney(jsonNumber(r, {"energy", "price_per_kwh"}).value_or(0)) + "/kWh";
  tile(source == "estimate" ? "GPU energy (estimate)" : "GPU energy", formatEnergy(*joules), note);
}

} // namespace

void htmlVerdictSection(std::ostream& o, const ReportJson& r) {
  auto idle_ratio = jsonNumber(r, {"summary", "gpu_idle_ratio"});
  auto span = jsonNumber(r, {"summary", "gpu_span_seconds"});
  auto busy = jsonNumber(r, {"summary", "gpu_busy_seconds"});
  const json* recs = jsonAt(r, {"recommendations"});
  size_t rec_count = recs && recs->is_array() ? recs->size() : 0;

  o << "<section class=\"verdict\" aria-labelledby=\"verdict-h\">\n<h2 "
       "id=\"verdict-h\">Verdict</h2>\n";
  std::string headline;
  if (idle_ratio && span) {
    headline = "GPU busy " + formatPercent(1.0 - *idle_ratio) + " of a " + formatSeconds(*span) +
               " GPU span; idle " + formatSeconds(*span - busy.value_or(0)) + ".";
  } else {
    headline = "GPU busy time unknown: the collection had no GPU timestamps (tier " +
               jsonString(r, {"collection", "tier"}) + ").";
  }
  o << "<p class=\"headline\">" << esc(headline) << "</p>\n<div class=\"tiles\">\n";
  auto tile = [&](const std::string& label, const std::string& value, const std::string& note,
                  const char* cls = "") {
    o << "<div class=\"tile " << cls << "\"><div class=\"tile-label\">" << esc(label)
      << "</div><div class=\"tile-value\">" << esc(value) << "</div><div class=\"tile-note\">"
      << esc(note) << "</div></div>\n";
  };
  tile("GPU busy", idle_ratio ? formatPercent(1.0 - *idle_ratio) : "unknown",
       span ? "of the GPU span (" + formatSeconds(*span) + ")" : "no GPU timestamps",
       idle_ratio && *idle_ratio > 0.5   ? "bad"
       : idle_ratio && *idle_ratio > 0.2 ? "warn"
                                         : "good");
  tile("GPU idle", span && busy ? formatSeconds(*span - *busy) : "unknown",
       idle_ratio ? formatPercent(*idle_ratio) + " of the span" : "");
  auto cost = jsonNumber(r, {"cost", "wasted_cost"});
  auto per_day = jsonNumber(r, {"cost", "per_day", "wasted_cost"});
  auto price = jsonNumber(r, {"cost", "gpu_hour_price"});
  if (cost && per_day && price) {
    tile("Cost of idle GPU time", formatMoney(*per_day) + " / day",
         formatMoney(*cost) + " in this run, at " + formatMoney(*price) + " per GPU-hour", "warn");
  } else {
    tile("Cost of idle GPU time", "unknown",
         price ? "idle time not measured" : "GPU model not priced: use --gpu-hour-price");
  }
  energyTile(r, tile);
  std::string best;
  if (rec_count > 0)
    best = "best saves ~" + formatPercent((*recs)[0].value("expected_saving_ratio", 0.0));
  tile("Recommendations", std::to_string(rec_count), rec_count ? best : "nothing worth changing",
       rec_count ? "warn" : "good");
  o << "</div>\n";

  if (auto causes = idleCauses(r)) {
    double total = 0;
    for (const auto& [c, s] : *causes)
      total += s;
    std::string waited = "The GPU waited mostly for ";
    for (size_t i = 0; i < causes->size() && i < 3; ++i) {
      const auto& [cause, s] = (*causes)[i];
      waited += (i ? ", then " : "") + readable(cause) + " (" + formatSeconds(s) + ", " +
                formatPercent(total > 0 ? s / total : 0) + " of idle time)";
    }
    o << "<p>" << esc(waited + ".") << "</p>\n";
  } else if (idle_ratio) {
    o << "<p>What the GPU waited for: <span class=\"muted\">not measured in this report (idle-time "
         "causes are not broken down by this build)</span>.</p>\n";
  }
  if (rec_count > 0) {
    o << "<ol class=\"top-recs\">\n";
    for (size_t i = 0; i < rec_count && i < 3; ++i) {
      const auto& rec = (*recs)[i];
      std::string saving = "saves ~" + formatPercent(rec.value("expected_saving_ratio", 0.0));
      if (auto c = jsonNumber(rec, {"cost", "per_day", "wasted_cost"}))
        saving += ", about " + formatMoney(*c) + " per day";
      o << "<li><strong>" << esc(jsonString(rec, {"title"})) << "</strong> <span class=\"saving\">"
        << esc(saving) << "</span></li>\n";
    }
    o << "</ol>\n";
  }
  o << "</section>\n";
}

void htmlUtilizationSection(std::ostream& o, const ReportJson& r) {
  o << "<section aria-labelledby=\"util-h\">\n<h2 id=\"util-h\">GPU utilisation over time</h2>\n";
  const json* busy = jsonAt(r, {"timeline_series", "busy"});
  if (!busy || !busy->is_array() || busy->empty()) {
    o << "<p class=\"muted\">Not measured: no GPU activity with GPU timestamps.</p>\n</section>\n";
    return;
  }
  o << "<p>Share of each time slice in which the GPU was busy (kernels, copies or memsets on any "
       "stream). Gaps are idle GPU time.</p>\n";
  for (size_t i = 0; i < busy->size() && i < kMaxCharts; ++i) {
    const auto& s = (*busy)[i];
    double span = (s.value("end_ns", 0.0) - s.value("start_ns", 0.0)) / 1e9;
    LineChartSpec spec;
    spec.id = "util-" + std::to_string(i);
    spec.title = "Busy share over time, " + deviceName(s);
    spec.description = "Busy share of each " + formatSeconds(s.value("bucket_seconds", 0.0)) +
                       " slice of the " + formatSeconds(span) + " GPU span.";
    spec.x_end = span;
    spec.y_max = 1.0;
    spec.series.push_back(
        {"busy (any work)", palette::kBlue, numbers(jsonAt(s, {"busy_ratio"})), true, false});
    spec.series.push_back(
        {"copies", palette::kOrange, numbers(jsonAt(s, {"copy_ratio"})), false, false});
    o << "<figure><figcaption>" << esc(deviceName(s)) << "</figcaption>" << renderLineChart(spec)
      << "</figure>\n";
  }
  moreLine(o, busy->size(), "devices");
  o << "</section>\n";
}

void htmlIdleSection(std::ostream& o, const ReportJson& r) {
  o << "<section aria-labelledby=\"idle-h\">\n<h2 id=\"idle-h\">Where the GPU time went</h2>\n";
  auto span = jsonNumber(r, {"timeline", "span_seconds"});
  auto busy = jsonNumber(r, {"timeline", "busy_seconds"});
  if (!span || !busy) {
    o << "<p class=\"muted\">Not measured: no GPU timestamps.</p>\n</section>\n";
    return;
  }
  double kernels = jsonNumber(r, {"timeline", "kernel_busy_seconds"}).value_or(0);
  double exposed = jsonNumber(r, {"timeline", "copy_exposed_seconds"}).value_or(0);
  double other = std::max(0.0, *busy - kernels - exposed);
  StackedBarSpec spec;
  spec.id = "span-bar";
  spec.title = "GPU span by activity";
  spec.description = "How the " + formatSeconds(*span) + " GPU span divides.";
  spec.segments = {
      {"kernels", kernels, formatSeconds(kernels), palette::kBlue},
      {"copies not overlapped by kernels", exposed, formatSeconds(exposed), palette::kOrange},
      {"memsets alone", other, formatSeconds(other), palette::kTeal},
      {"idle", *span - *busy, formatSeconds(*span - *busy), palette::kGrey},
  };
  o << renderStackedBar(spec) << "\n<h3>Idle time by cause</h3>\n";
  if (auto causes = idleCauses(r)) {
    StackedBarSpec idle;
    idle.id = "idle-bar";
    idle.title = "Idle GPU time by cause";
    idle.description = "What the GPU was waiting for while idle.";
    for (const auto& [cause, seconds] : *causes)
      idle.segments.push_back(
          {readable(cause), seconds, formatSeconds(seconds), idleCauseColor(cause)});
    o << renderStackedBar(idle) << "\n";
  } else {
    o << "<p class=\"muted\">Not measured: this report does not break idle time down by cause "
         "(host-bound, launch overhead, synchronisation, input). Idle in all: "
      << esc(formatSeconds(*span - *busy)) << ".</p>\n";
  }
  if (auto stall = jsonNumber(r, {"summary", "input_stall_ratio"}))
    o << "<p>Input stalls: " << esc(formatPercent(*stall)) << " of step time.</p>\n";
  if (auto launch = jsonNumber(r, {"summary", "launch_overhead_ratio"}))
    o << "<p>Launch overhead: " << esc(formatPercent(*launch)) << " of idle time.</p>\n";
  o << "</section>\n";
}

// Training steps: the steady state's figures (what the advice and `gpuwise diff` read) and the
// warm-up on its own, which they leave out (step_analyzer.h says where one ends).
void htmlStepsSection(std::ostream& o, const ReportJson& r) {
  o << "<section aria-labelledby=\"steps-h\">\n<h2 id=\"steps-h\">Training steps</h2>\n";
  auto count = jsonNumber(r, {"summary", "steps", "count"});
  if (!count || *count <= 0) {
    o << "<p class=\"muted\">Not measured: no training steps were found (no ProfilerStep ranges "
         "and no repeating launch pattern), so no per-step figure is shown.</p>\n</section>\n";
    return;
  }
  const std::string source = jsonString(r, {"summary", "steps", "source"});
  auto steady = [&](std::string_view key) {
    return jsonNumber(r, {"summary", "steps", "steady", key});
  };
  o << "<table class=\"steps\">\n<tr><th scope=\"row\">Steps</th><td>"
    << esc(std::to_string(int64_t(*count)) + (source.empty() ? "" : " (" + source + ")"))
    << "</td></tr>\n";
  if (auto n = steady("count"); n && steady("p50_seconds")) {
    o << "<tr><th scope=\"row\">Steady state</th><td>"
      << esc(std::to_string(int64_t(*n)) + " steps: median " +
             formatSeconds(*steady("p50_seconds")) + ", p10-p90 " +
             formatSeconds(steady("p10_seconds").value_or(0)) + " - " +
             formatSeconds(steady("p90_seconds").value_or(0)) + ", variation " +
             formatPercent(steady("iqr_ratio").value_or(0)) + " (IQR/median)")
      << "</td></tr>\n";
  }
  auto warm = jsonNumber(r, {"summary", "steps", "warmup", "count"});
  o << "<tr><th scope=\"row\">Warm-up</th><td>";
  if (warm && *warm > 0) {
    std::string text =
        std::to_string(int64_t(*warm)) + (*warm == 1 ? " step, " : " steps, ") +
        formatSeconds(jsonNumber(r, {"summary", "steps", "warmup", "seconds"}).value_or(0));
    const std::string limiter = jsonString(r, {"summary", "steps", "warmup", "limiter"});
    if (!limiter.empty()) text += ", mostly " + readable(limiter);
    if (auto stall = jsonNumber(r, {"summary", "steps", "warmup", "input_stall_seconds"});
        stall && *stall > 0)
      text += "; waited " + formatSeconds(*stall) + " for input";
    o << esc(text) << ". Left out of the step figures and the advice.";
  } else {
    o << "none: every step counts as steady.";
  }
  o << "</td></tr>\n</table>\n</section>\n";
}

void htmlPrecisionSection(std::ostream& o, const ReportJson& r) {
  o << "<section aria-labelledby=\"prec-h\">\n<h2 id=\"prec-h\">Precision mix</h2>\n";
  const json* mix = jsonAt(r, {"summary", "precision_time_ratio"});
  if (!mix || !mix->is_object()) {
    o << "<p class=\"muted\">Not measured: kernel precision is not classified in this "
         "report.</p>\n</section>\n";
    return;
  }
  static const std::vector<std::pair<std::string, const char*>> kColors = {
      {"fp64", palette::kRed},  {"fp32", palette::kOrange}, {"tf32", palette::kYellow},
      {"fp16", palette::kBlue}, {"bf16", palette::kTeal},   {"fp8", palette::kGreen},
      {"fp4", palette::kPink},  {"int8", palette::kPurple}, {"other", palette::kGrey}};
  StackedBarSpec spec;
  spec.id = "precision-bar";
  spec.title = "Kernel time by numeric precision";
  spec.description = "Share of kernel time in each precision.";
  auto kernel_seconds = jsonNumber(r, {"summary", "kernel_seconds"});
  for (const auto& [name, v] : mix->items()) {
    if (!v.is_number()) continue;
    const char* color = palette::kGrey;
    for (const auto& [k, c] : kColors)
      if (k == name) color = c;
    double share = v.get<double>();
    spec.segments.push_back({name, share,
                             kernel_seconds ? formatSeconds(share * *kernel_seconds)
                                            : formatPercent(share) + " of kernel time",
                             color});
  }
  o << renderStackedBar(spec) << "\n";
  if (auto tc = jsonNumber(r, {"summary", "tensor_core_time_ratio"}))
    o << "<p>Tensor cores: " << esc(formatPercent(*tc)) << " of kernel time ran in kernels that "
      << "use them.</p>\n";
  // The cuBLAS probe (live LD_PRELOAD runs): the calls' types against their kernels' names.
  if (const json* b = jsonAt(r, {"precision", "blas_probe"}); b && b->is_object()) {
    auto n = [&](const char* key) { return std::to_string(b->value(key, uint64_t{0})); };
    o << "<p>cuBLAS calls: " << esc(n("calls")) << " recorded, " << esc(n("agreeing_calls"))
      << " ran kernels whose names agree with the types they asked for, "
      << esc(n("disagreeing_calls")) << " did not.</p>\n";
    const json* kernels = jsonAt(*b, {"kernels"});
    if (kernels && kernels->is_array())
      for (const auto& k : *kernels) {
        const bool disagrees =
            k.contains("agrees") && k["agrees"].is_boolean() && !k["agrees"].get<bool>();
        if (!disagrees) continue;
        o << "<p>Disagreement: " << esc(jsonString(k, {"api"})) << " with "
          << esc(jsonString(k, {"types"})) << " asked for "
          << esc(jsonString(k, {"requested_precision"})) << "; its kernel "
          << esc(jsonString(k, {"kernel"})) << " is " << esc(jsonString(k, {"kernel_precision"}))
          << " (" << esc(std::to_string(k.value("calls", uint64_t{0}))) << " calls).</p>\n";
      }
  }
  o << "</section>\n";
}

void htmlMemorySection(std::ostream& o, const ReportJson& r) {
  o << "<section aria-labelledby=\"mem-h\">\n<h2 id=\"mem-h\">Device memory over time</h2>\n";
  const json* series = jsonAt(r, {"timeline_series", "memory"});
  if (!series || !series->is_array() || series->empty()) {
    o << "<p class=\"muted\">Not measured: no memory samples or allocations recorded.</p>\n"
      << "</section>\n";
    return;
  }
  for (size_t i = 0; i < series->size() && i < kMaxCharts; ++i) {
    const auto& s = (*series)[i];
    double span = (s.value("end_ns", 0.0) - s.value("start_ns", 0.0)) / 1e9;
    std::string source = jsonString(s, {"source"});
    LineChartSpec spec;
    spec.id = "mem-" + std::to_string(i);
    spec.title = "Device memory over time, " + deviceName(s);
    spec.description = "Highest device memory level in each slice (source: " + source + ").";
    spec.x_end = span;
    spec.x_label = "time since the first memory record";
    spec.y_format = AxisFormat::Bytes;
    auto reserved = numbers(jsonAt(s, {"reserved_bytes"}));
    auto allocated = numbers(jsonAt(s, {"allocated_bytes"}));
    double peak = 0;
    for (double v : reserved)
      if (std::isfinite(v)) peak = std::max(peak, v);
    for (double v : allocated)
      if (std::isfinite(v)) peak = std::max(peak, v);
    if (!reserved.empty())
      spec.series.push_back({"reserved", palette::kBlue, reserved, true, false});
    if (!allocated.empty())
      spec.series.push_back({source == "allocations" ? "allocated (running sum)" : "allocated",
                             palette::kGreen, allocated, reserved.empty(), false});
    std::string caption = deviceName(s) + ": peak " + formatBytes(uint64_t(peak));
    if (auto total = jsonNumber(s, {"memory_total_bytes"}); total && *total > 0) {
      caption += " of " + formatBytes(uint64_t(*total)) + " (" + formatPercent(peak / *total) + ")";
      // The capacity line only where it matters; otherwise it would flatten the curve.
      if (peak > 0.5 * *total)
        spec.marks.push_back({*total, "capacity " + formatBytes(uint64_t(*total))});
    }
    o << "<figure><figcaption>" << esc(caption) << "</figcaption>" << renderLineChart(spec)
      << "</figure>\n";
  }
  moreLine(o, series->size(), "memory series");
  o << "</section>\n";
}

} // namespace gpuwise::advisor
