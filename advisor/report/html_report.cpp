#include "advisor/report/html_report.h"

#include "advisor/analysis/format.h"
#include "profiler/precision/demangle.h"

#include <sstream>

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1100px;color:#1d2330;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.8em;border-bottom:1px solid #dde2ea;padding-bottom:.2em}
table{border-collapse:collapse;width:100%;margin:.5em 0}th,td{text-align:left;padding:.25em .6em;border-bottom:1px solid #eceff4;vertical-align:top}
th{background:#f5f7fa;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.verdict{font-size:1.15em;padding:.6em .8em;background:#f1f5fb;border-left:4px solid #3a6fd8}
.sim{background:#fff4d6;border:1px solid #e0b400;padding:.5em .8em;font-weight:600;margin:.8em 0}
.rec{border:1px solid #dde2ea;border-radius:6px;padding:.6em .9em;margin:.8em 0}
.rec h3{margin:.1em 0 .4em;font-size:1.05em}.saving{color:#0b7a3b;font-weight:600}
pre{background:#f5f7fa;padding:.6em;white-space:pre-wrap;font-size:.92em}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.92em}
.muted{color:#6b7385}
)";

std::string esc(const std::string& s) {
  return htmlEscape(s);
}

std::string cell(const json& v) {
  if (v.is_null()) return "<td class=\"muted\">unknown</td>";
  if (v.is_number_float())
    return "<td class=\"num\">" + formatSignificant(v.get<double>(), 4) + "</td>";
  if (v.is_number()) return "<td class=\"num\">" + v.dump() + "</td>";
  if (v.is_boolean()) return std::string("<td>") + (v.get<bool>() ? "yes" : "no") + "</td>";
  if (v.is_string()) return "<td>" + esc(v.get<std::string>()) + "</td>";
  return "<td class=\"mono\">" + esc(v.dump()) + "</td>";
}

std::string row(const std::string& label, const std::string& value) {
  return "<tr><th>" + esc(label) + "</th><td>" + value + "</td></tr>\n";
}

std::string orUnknown(bool known, const std::string& s) {
  return known ? esc(s) : "<span class=\"muted\">unknown</span>";
}

void summaryTable(std::ostringstream& o, const JobAnalysis& a) {
  const auto& t = a.timeline;
  o << "<h2>Summary</h2>\n<table>\n";
  o << row("Wall time",
           orUnknown(a.wall_ns.has_value(), a.wall_ns ? formatDuration(*a.wall_ns) : ""));
  o << row("GPU span", orUnknown(t.known(), formatDuration(t.span_ns)));
  o << row("GPU busy",
           orUnknown(t.known(), formatDuration(t.busy_ns) + " (" +
                                    formatPercent(t.span_ns ? double(t.busy_ns) / t.span_ns : 0) +
                                    ")"));
  o << row("GPU idle", orUnknown(t.known(), formatDuration(t.span_ns - t.busy_ns) + " (" +
                                                formatPercent(t.idleRatio().value_or(0)) + ")"));
  o << row("Kernels", esc(std::to_string(a.kernels.count) + " launches, " +
                          formatDuration(a.kernels.total_ns)));
  auto pageable = a.copies.hostTransfers(model::MemoryKind::Pageable);
  o << row("Copies", esc(std::to_string(a.copies.total.count) + " copies, " +
                         formatBytes(a.copies.total.bytes) + " in " +
                         formatDuration(a.copies.total.time_ns) + "; pageable " +
                         formatBytes(pageable.bytes) + " in " + formatDuration(pageable.time_ns)));
  o << row("Host blocked in syncs", esc(formatDuration(a.syncs.blocked_ns) + " in " +
                                        std::to_string(a.syncs.calls) + " calls"));
  auto peak = a.memory.peakBytes();
  o << row("Peak device memory", orUnknown(peak.has_value(), peak ? formatBytes(*peak) : ""));
  o << row("Collection",
           esc("tier " + jobTier(a.collection) + "; " + std::to_string(a.collection.events) +
               " events, " + std::to_string(a.collection.events_dropped) + " dropped, " +
               std::to_string(a.collection.undecodable_events) + " undecodable"));
  o << "</table>\n";
}

void recommendationsSection(std::ostringstream& o, const std::vector<Recommendation>& recs) {
  o << "<h2>Recommendations</h2>\n";
  if (recs.empty()) {
    o << "<p>None: no rule found a change worth making.</p>\n";
    return;
  }
  for (size_t i = 0; i < recs.size(); ++i) {
    const auto& r = recs[i];
    o << "<div class=\"rec\" id=\"rec-" << esc(r.id) << "\"><h3>" << (i + 1) << ". " << esc(r.title)
      << "</h3>\n<p><span class=\"saving\">expected saving ~"
      << formatPercent(r.expected_saving_ratio) << "</span> &middot; confidence "
      << toString(r.confidence) << " &middot; <code>" << esc(r.id) << "</code></p>\n<pre>"
      << esc(r.action) << "</pre>\n<table><tr><th>evidence</th><th>value</th></tr>\n";
    for (const auto& [k, v] : r.evidence.items())
      o << "<tr><td><code>" << esc(k) << "</code></td>" << cell(v) << "</tr>\n";
    o << "</table></div>\n";
  }
}

void kernelsSection(std::ostringstream& o, const json& top) {
  o << "<h2>Top kernels</h2>\n";
  if (top.empty()) {
    o << "<p class=\"muted\">No kernels recorded.</p>\n";
    return;
  }
  o << "<table><tr><th>kernel</th><th>count</th><th>seconds</th><th>share</th><th>mean</"
       "th><th>launch (grid / block)</th></tr>\n";
  for (const auto& k : top) {
    std::string launch;
    if (!k["launch_configs"].empty()) {
      const auto& c = k["launch_configs"][0];
      launch = c["grid"].dump() + " / " + c["block"].dump();
    }
    // The short name in the table, the full demangled one on hover.
    o << "<tr><td class=\"mono\" title=\"" << esc(k["name"].get<std::string>()) << "\">"
      << esc(profiler::shortKernelName(k["name"].get<std::string>())) << "</td>" << cell(k["count"])
      << cell(k["seconds"]) << cell(k["kernel_time_share"]) << cell(k["mean_seconds"])
      << "<td class=\"mono\">" << esc(launch) << "</td></tr>\n";
  }
  o << "</table>\n";
}

void copiesSection(std::ostringstream& o, const json& copies) {
  o << "<h2>Copies</h2>\n";
  if (copies["by_direction"].empty()) {
    o << "<p class=\"muted\">No copies recorded.</p>\n";
    return;
  }
  o << "<table><tr><th>direction</th><th>host "
       "memory</th><th>count</th><th>bytes</th><th>seconds</th><th>GB/s</th></tr>\n";
  for (const auto& [dir, d] : copies["by_direction"].items()) {
    o << "<tr><td>" << esc(dir) << "</td><td>all</td>" << cell(d["count"]) << cell(d["bytes"])
      << cell(d["seconds"]) << cell(d["bandwidth_gbps"]) << "</tr>\n";
    if (!d.contains("by_host_memory")) continue;
    for (const auto& [kind, k] : d["by_host_memory"].items()) {
      o << "<tr><td></td><td>" << esc(kind) << "</td>" << cell(k["count"]) << cell(k["bytes"])
        << cell(k["seconds"]) << cell(k["bandwidth_gbps"]) << "</tr>\n";
    }
  }
  o << "</table>\n";
}

void processesSection(std::ostringstream& o, const json& report) {
  o << "<h2>Processes and "
       "GPUs</h2>\n<table><tr><th>pid</th><th>rank</th><th>command</th><th>tier</th><th>events</"
       "th><th>dropped</th></tr>\n";
  for (const auto& p : report["processes"]) {
    o << "<tr>" << cell(p["pid"]) << cell(p["rank"]) << "<td class=\"mono\">"
      << esc(p["command"].get<std::string>()) << "</td>" << cell(p["tier"]) << cell(p["events"])
      << cell(p["events_dropped"]) << "</tr>\n";
  }
  o << "</table>\n<table><tr><th>index</th><th>name</th><th>SMs</th><th>memory</th><th>compute "
       "capability</th><th>MIG</th></tr>\n";
  for (const auto& g : report["gpus"]) {
    o << "<tr>" << cell(g["index"]) << cell(g["name"]) << cell(g["sm_count"])
      << cell(g["memory_total_bytes"]) << cell(g["compute_capability"]) << cell(g["mig_profile"])
      << "</tr>\n";
  }
  o << "</table>\n";
}

// JSON inside <script> must not contain "</" (it would close the element) nor "<!--" or "<script"
// (they change how the HTML parser reads the element). '<' only occurs inside JSON strings, where
// \u003c means the same character.
std::string embeddable(const json& j) {
  std::string s = j.dump();
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

} // namespace

std::string htmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

std::string renderHtmlReport(const ReportInput& in, const ReportOptions& options) {
  const auto& a = in.analysis;
  json report = buildReportJson(in, options);
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>gpuwise report</title>\n<style>" << kStyle << "</style></head><body>\n"
    << "<h1>gpuwise report</h1>\n<p class=\"muted\">" << kReportSchema << " &middot; gpuwise "
    << gpuwiseVersion() << " &middot; source " << esc(model::toString(a.source.kind)) << "</p>\n";
  if (a.simulated())
    o << "<div class=\"sim\">SIMULATED DEVICE: timings come from the simulated device's cost "
         "model, not a real GPU.</div>\n";
  std::string first_line =
      report["summary"]["gpu_idle_ratio"].is_null()
          ? "GPU busy time unknown (no GPU timestamps)"
          : "GPU busy " + formatPercent(1.0 - report["summary"]["gpu_idle_ratio"].get<double>()) +
                " of the GPU span";
  o << "<p class=\"verdict\">" << esc(first_line) << "; " << in.recommendations.size()
    << (in.recommendations.size() == 1 ? " recommendation" : " recommendations") << "</p>\n";
  summaryTable(o, a);
  recommendationsSection(o, in.recommendations);
  kernelsSection(o, report["top_kernels"]);
  copiesSection(o, report["copies"]);
  processesSection(o, report);
  o << "<script type=\"application/json\" id=\"gpuwise-report\">" << embeddable(report)
    << "</script>\n</body></html>\n";
  return o.str();
}

} // namespace gpuwise::advisor
