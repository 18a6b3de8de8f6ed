#include "advisor/report/html_report.h"

#include "advisor/report/format.h"
#include "advisor/report/html_sections.h"

#include <sstream>

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;

// Nothing may be fetched: no scripts run, styles and images only inline. A violation shows up as
// a console error, which the browser test catches.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'";

constexpr const char* kStyle = R"(
:root{--ink:#1d2330;--muted:#646d80;--line:#e2e6ee;--soft:#f5f7fa;--accent:#2f66c8;--good:#1f7a45;--warn:#a35c00;--bad:#b3261e}
*{box-sizing:border-box}
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:var(--ink);background:#fff}
main{max-width:1100px;margin:0 auto;padding:1.5em 1.2em 3em}
header.top{background:#17233b;color:#fff;padding:1.1em 0}
header.top div{max-width:1100px;margin:0 auto;padding:0 1.2em}
header.top h1{margin:0;font-size:1.45em;font-weight:650;letter-spacing:.01em}
header.top p{margin:.2em 0 0;color:#c5cde0;font-size:.92em}
h2{font-size:1.2em;margin:1.9em 0 .6em;padding-bottom:.25em;border-bottom:2px solid var(--line)}
h3{font-size:1.02em;margin:1.2em 0 .4em}
section{break-inside:avoid-page}
.sim{background:#fff4d6;border:1px solid #e0b400;border-left:6px solid #e0b400;padding:.6em .9em;font-weight:650;margin:1em 0;border-radius:4px}
.verdict h2{margin-top:.6em}
.headline{font-size:1.22em;font-weight:600;margin:.3em 0 .8em}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:.8em;margin:.6em 0 1em}
.tile{border:1px solid var(--line);border-top:4px solid var(--accent);border-radius:6px;padding:.6em .9em;background:#fff}
.tile.good{border-top-color:var(--good)}.tile.warn{border-top-color:#e08a00}.tile.bad{border-top-color:var(--bad)}
.tile-label{color:var(--muted);font-size:.85em;text-transform:uppercase;letter-spacing:.04em}
.tile-value{font-size:1.7em;font-weight:650;line-height:1.25;font-variant-numeric:tabular-nums}
.tile-note{color:var(--muted);font-size:.88em}
.top-recs li{margin:.25em 0}
.saving{color:var(--good);font-weight:650}
.badge{display:inline-block;background:var(--soft);border:1px solid var(--line);border-radius:10px;padding:0 .55em;font-size:.88em}
figure{margin:.6em 0 1.2em}figcaption{font-weight:600;margin-bottom:.2em}
svg.chart{display:block;max-width:100%;height:auto;overflow:visible}
svg.chart text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;fill:#4a5263}
svg.chart text.on-bar{fill:#fff;font-weight:600}
svg.chart text.mark{fill:#b3261e}
svg.chart text.axis-label{fill:#7a8396;font-style:italic}
svg.chart text.bar-label{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:11.5px}
table{border-collapse:collapse;width:100%;margin:.5em 0 1em}
caption{text-align:left;color:var(--muted);font-size:.9em;padding:.2em 0}
th,td{text-align:left;padding:.3em .6em;border-bottom:1px solid var(--line);vertical-align:top}
thead th{background:var(--soft);font-weight:600;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.kernels td{font-size:.93em}
td.kernel{max-width:330px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
td.kernel .signature{display:block;color:var(--muted);font-size:.85em;overflow:hidden;text-overflow:ellipsis}
td.launch{font-size:.85em;white-space:normal}
.scroll{overflow-x:auto}
.rec{border:1px solid var(--line);border-left:5px solid var(--accent);border-radius:6px;padding:.7em 1em;margin:1em 0;break-inside:avoid}
.rec h3{margin:.1em 0 .3em}.cost{color:var(--warn);font-weight:600}
pre{background:#f2f4f8;border:1px solid var(--line);border-radius:4px;padding:.7em;white-space:pre-wrap;overflow-wrap:anywhere}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.92em}
.muted{color:var(--muted)}.bad{color:var(--bad);font-weight:600}
footer{margin-top:2.5em;padding-top:.8em;border-top:1px solid var(--line);color:var(--muted);font-size:.88em}
@media print{
 body{font-size:11pt;-webkit-print-color-adjust:exact;print-color-adjust:exact}
 header.top{background:none;color:#000;border-bottom:2px solid #000}header.top p{color:#333}
 main{max-width:none;padding:0}
 h2{break-after:avoid}figure,table,.tile,.rec{break-inside:avoid}
 .scroll{overflow:visible}td.kernel{white-space:normal;max-width:none;overflow-wrap:anywhere}
}
)";

// JSON inside <script> must not contain "</" (it would close the element) nor "<!--" or "<script"
// (they change how the HTML parser reads the element). '<' only occurs inside JSON strings, where
// \u003c means the same character.
std::string embeddable(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
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

void footer(std::ostream& o, const json& r) {
  o << "<footer>\n<p><strong>Definitions.</strong> GPU busy is the length of the union of kernel, "
       "copy and memset intervals on a device; the GPU span runs from its first to its last GPU "
       "activity; idle is span minus busy (the definition HTA and TraceLens use). Job figures "
       "are sums over processes and devices. A figure the collection could not see reads "
       "&ldquo;unknown&rdquo; or &ldquo;not measured&rdquo;.</p>\n<p><strong>Costs.</strong> ";
  auto price = jsonNumber(r, {"cost", "gpu_hour_price"});
  std::string source = jsonString(r, {"cost", "price_source"});
  if (price && source == "option") {
    o << "Priced at " << htmlEscape(formatMoney(*price)) << " per GPU-hour (--gpu-hour-price).";
  } else if (price) {
    o << "Priced at " << htmlEscape(formatMoney(*price))
      << " per GPU-hour: an on-demand list-price estimate for the GPU model (price table "
      << htmlEscape(jsonString(r, {"cost", "price_table_date"}))
      << "); real prices vary, pass --gpu-hour-price with yours.";
  } else {
    o << "Not priced: the GPU model is not in the price table; pass --gpu-hour-price.";
  }
  o << " Idle cost counts idle GPU time within the GPU span; a recommendation's cost is its "
       "expected saving applied to the GPU-hours of this run and of a day of such work.</p>\n"
    << "<p>" << htmlEscape(jsonString(r, {"schema"})) << " &middot; gpuwise "
    << htmlEscape(jsonString(r, {"generated_by", "version"}))
    << " &middot; the full JSON report is embedded in this file (element "
       "<code>gpuwise-report</code>).</p>\n</footer>\n";
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
  return renderHtmlReport(buildReportJson(in, options));
}

std::string renderHtmlReport(const nlohmann::ordered_json& r) {
  bool simulated = jsonAt(r, {"source", "simulated"}) && r["source"]["simulated"].is_boolean() &&
                   r["source"]["simulated"].get<bool>();
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"" << kContentSecurityPolicy
    << "\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>" << (simulated ? "[SIMULATED] " : "") << "gpuwise efficiency report</title>\n"
    << "<style>" << kStyle << "</style></head><body>\n<header class=\"top\"><div><h1>gpuwise "
    << "efficiency report</h1><p>source " << htmlEscape(jsonString(r, {"source", "kind"}));
  if (const json* gpus = jsonAt(r, {"gpus"}); gpus && gpus->is_array() && !gpus->empty()) {
    // The model name; where the trace names none, which GPU of which rank it is.
    std::string name = jsonString((*gpus)[0], {"name"});
    if (name.empty()) name = jsonString((*gpus)[0], {"label"});
    o << " &middot; " << gpus->size() << (gpus->size() == 1 ? " GPU: " : " GPUs: ")
      << htmlEscape(name) << (gpus->size() > 1 ? ", ..." : "");
  }
  if (auto wall = jsonNumber(r, {"summary", "wall_seconds"}))
    o << " &middot; wall time " << htmlEscape(formatSeconds(*wall));
  o << "</p></div></header>\n<main>\n";
  if (simulated)
    o << "<div class=\"sim\" role=\"note\">SIMULATED DEVICE: this run used gpuwise's simulated "
         "GPU; timings come from its cost model, not from real hardware.</div>\n";
  htmlVerdictSection(o, r);
  htmlUtilizationSection(o, r);
  htmlIdleSection(o, r);
  htmlStepsSection(o, r);
  htmlRanksSection(o, r);
  htmlPrecisionSection(o, r);
  htmlKernelsSection(o, r);
  htmlCopiesSection(o, r);
  htmlMemorySection(o, r);
  htmlSyncsSection(o, r);
  htmlRecommendationsSection(o, r);
  htmlGpuTypesSection(o, r);
  htmlCollectionSection(o, r);
  footer(o, r);
  o << "</main>\n<script type=\"application/json\" id=\"gpuwise-report\">" << embeddable(r)
    << "</script>\n</body></html>\n";
  return o.str();
}

} // namespace gpuwise::advisor
