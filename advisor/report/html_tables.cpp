// The table-led sections of the HTML report (see html_sections.h).
#include "advisor/precision/demangle.h"
#include "advisor/report/format.h"
#include "advisor/report/html_report.h"
#include "advisor/report/html_sections.h"
#include "advisor/report/svg_chart.h"

#include <cmath>

namespace gpuwise::advisor {
namespace {

using json = ReportJson;

constexpr size_t kChartKernels = 10;

std::string esc(const std::string& s) {
  return htmlEscape(s);
}

const char* kUnknown = "<td class=\"muted\">unknown</td>";

// A table cell for any JSON value: numbers right-aligned, null as "unknown".
std::string cell(const json* v) {
  if (!v || v->is_null()) return kUnknown;
  if (v->is_number_float())
    return "<td class=\"num\">" + formatSignificant(v->get<double>(), 4) + "</td>";
  if (v->is_number()) return "<td class=\"num\">" + v->dump() + "</td>";
  if (v->is_boolean()) return std::string("<td>") + (v->get<bool>() ? "yes" : "no") + "</td>";
  if (v->is_string()) return "<td>" + esc(v->get<std::string>()) + "</td>";
  return "<td class=\"mono\">" + esc(v->dump()) + "</td>";
}

std::string textCell(const std::string& s, const char* cls = "") {
  return std::string("<td class=\"") + cls + "\">" + esc(s) + "</td>";
}

std::string secondsCell(const json& j, std::initializer_list<std::string_view> path) {
  auto v = jsonNumber(j, path);
  return v ? "<td class=\"num\">" + esc(formatSeconds(*v)) + "</td>" : kUnknown;
}

std::string percentCell(const json& j, std::initializer_list<std::string_view> path) {
  auto v = jsonNumber(j, path);
  return v ? "<td class=\"num\">" + esc(formatPercent(*v)) + "</td>" : kUnknown;
}

std::string bytesCell(const json& j, std::initializer_list<std::string_view> path) {
  auto v = jsonNumber(j, path);
  return v ? "<td class=\"num\">" + esc(formatBytes(uint64_t(std::max(0.0, *v)))) + "</td>"
           : kUnknown;
}

std::string dims(const json* d) {
  if (!d || !d->is_array() || d->size() != 3) return "?";
  return std::to_string((*d)[0].get<uint64_t>()) + "," + std::to_string((*d)[1].get<uint64_t>()) +
         "," + std::to_string((*d)[2].get<uint64_t>());
}

std::string hostMemoryColor(const std::string& kind) {
  if (kind == "pageable") return palette::kRed;
  if (kind == "pinned") return palette::kGreen;
  return palette::kBlue;
}

std::string upper(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

} // namespace

void htmlKernelsSection(std::ostream& o, const ReportJson& r) {
  o << "<section aria-labelledby=\"kern-h\">\n<h2 id=\"kern-h\">Top kernels</h2>\n";
  const json* top = jsonAt(r, {"top_kernels"});
  if (!top || !top->is_array() || top->empty()) {
    o << "<p class=\"muted\">No kernels recorded.</p>\n</section>\n";
    return;
  }
  BarChartSpec chart;
  chart.id = "kernels-chart";
  chart.title = "GPU time of the top kernels";
  chart.description = "Total GPU time per kernel name, largest first.";
  for (size_t i = 0; i < top->size() && i < kChartKernels; ++i) {
    const auto& k = (*top)[i];
    auto seconds = jsonNumber(k, {"seconds"});
    if (!seconds) continue;
    std::string name = jsonString(k, {"name"});
    std::string text = formatSeconds(*seconds);
    if (auto share = jsonNumber(k, {"kernel_time_share"}))
      text += " (" + formatPercent(*share) + ")";
    // Ranked, because short names repeat (templates of one kernel differ only in their arguments).
    chart.bars.push_back({"#" + std::to_string(i + 1) + " " + profiler::shortKernelName(name), name,
                          *seconds, text, palette::kBlue});
  }
  if (!chart.bars.empty()) o << renderBarChart(chart) << "\n";

  o << "<div class=\"scroll\"><table class=\"kernels\">\n<caption>Kernels by total GPU time, the "
       "full name under each; occupancy is the theoretical occupancy (and the trace's achieved "
       "occupancy where it has one); grid / block of the most frequent launch.</caption>\n"
       "<thead><tr><th scope=\"col\">kernel</th><th scope=\"col\">calls</th><th "
       "scope=\"col\">total</th><th scope=\"col\">share</th><th scope=\"col\">mean</th><th "
       "scope=\"col\">precision</th><th scope=\"col\">tensor cores</th><th "
       "scope=\"col\">occupancy</th><th scope=\"col\">grid / block</th></tr></thead>\n<tbody>\n";
  size_t rank = 0;
  for (const auto& k : *top) {
    std::string name = jsonString(k, {"name"});
    std::string short_name = profiler::shortKernelName(name);
    std::string launch;
    if (const json* c = jsonAt(k, {"launch_configs"}); c && c->is_array() && !c->empty())
      launch = dims(jsonAt((*c)[0], {"grid"})) + " / " + dims(jsonAt((*c)[0], {"block"}));
    std::string occupancy;
    if (auto occ = jsonNumber(k, {"occupancy_theoretical"})) occupancy = formatPercent(*occ);
    if (auto achieved = jsonNumber(k, {"achieved_occupancy"}))
      occupancy +=
          (occupancy.empty() ? "" : "; ") + std::string("achieved ") + formatPercent(*achieved);
    o << "<tr><td class=\"mono kernel\" title=\"" << esc(name) << "\">#" << ++rank << " "
      << esc(short_name);
    if (short_name != name) o << "<span class=\"signature\">" << esc(name) << "</span>";
    o << "</td>" << cell(jsonAt(k, {"count"})) << secondsCell(k, {"seconds"})
      << percentCell(k, {"kernel_time_share"}) << secondsCell(k, {"mean_seconds"})
      << cell(jsonAt(k, {"precision"})) << cell(jsonAt(k, {"tensor_core"}))
      << (occupancy.empty() ? std::string(kUnknown) : textCell(occupancy, "num"))
      << textCell(launch, "mono launch") << "</tr>\n";
  }
  o << "</tbody></table></div>\n</section>\n";
}

void htmlCopiesSection(std::ostream& o, const ReportJson& r) {
  o << "<section aria-labelledby=\"copy-h\">\n<h2 id=\"copy-h\">Copies</h2>\n";
  const json* by_dir = jsonAt(r, {"copies", "by_direction"});
  if (!by_dir || !by_dir->is_object() || by_dir->empty()) {
    o << "<p class=\"muted\">No copies recorded.</p>\n</section>\n";
    return;
  }
  BarChartSpec chart;
  chart.id = "copies-chart";
  chart.title = "Copy time by direction and host memory";
  chart.description = "Time spent copying, by direction and by whether host memory was pageable "
                      "(staged by the driver, blocks overlap) or pinned.";
  chart.label_width = 200;
  o << "<table>\n<thead><tr><th scope=\"col\">direction</th><th scope=\"col\">host memory</th>"
       "<th scope=\"col\">count</th><th scope=\"col\">bytes</th><th scope=\"col\">time</th><th "
       "scope=\"col\">GB/s</th></tr></thead>\n<tbody>\n";
  for (const auto& [dir, d] : by_dir->items()) {
    o << "<tr><th scope=\"row\">" << esc(upper(dir)) << "</th><td>all</td>"
      << cell(jsonAt(d, {"count"})) << bytesCell(d, {"bytes"}) << secondsCell(d, {"seconds"})
      << cell(jsonAt(d, {"bandwidth_gbps"})) << "</tr>\n";
    const json* kinds = jsonAt(d, {"by_host_memory"});
    bool split = kinds && kinds->is_object() && !kinds->empty();
    if (split) {
      for (const auto& [kind, k] : kinds->items()) {
        o << "<tr><td></td><td class=\"" << (kind == "pageable" ? "bad" : "") << "\">" << esc(kind)
          << "</td>" << cell(jsonAt(k, {"count"})) << bytesCell(k, {"bytes"})
          << secondsCell(k, {"seconds"}) << cell(jsonAt(k, {"bandwidth_gbps"})) << "</tr>\n";
        if (auto s = jsonNumber(k, {"seconds"}))
          chart.bars.push_back({upper(dir) + " " + kind, "", *s,
                                formatSeconds(*s) + ", " +
                                    formatBytes(uint64_t(jsonNumber(k, {"bytes"}).value_or(0))),
                                hostMemoryColor(kind)});
      }
    } else if (auto s = jsonNumber(d, {"seconds"})) {
      chart.bars.push_back(
          {upper(dir), "", *s,
           formatSeconds(*s) + ", " + formatBytes(uint64_t(jsonNumber(d, {"bytes"}).value_or(0))),
           palette::kBlue});
    }
  }
  o << "</tbody></table>\n";
  if (!chart.bars.empty()) o << renderBarChart(chart) << "\n";
  if (auto sync = jsonNumber(r, {"copies", "synchronous", "count"}); sync && *sync > 0)
    o << "<p>" << static_cast<uint64_t>(*sync) << " synchronous copies made the host wait ("
      << esc(formatSeconds(jsonNumber(r, {"copies", "synchronous", "seconds"}).value_or(0)))
      << ").</p>\n";
  o << "</section>\n";
}

void htmlSyncsSection(std::ostream& o, const ReportJson& r) {
  const json* kinds = jsonAt(r, {"host_syncs", "by_kind"});
  if (!kinds || !kinds->is_object() || kinds->empty()) return;
  o << "<section aria-labelledby=\"sync-h\">\n<h2 id=\"sync-h\">Host synchronisation</h2>\n<p>"
    << "The host was blocked waiting for the GPU for "
    << esc(formatSeconds(jsonNumber(r, {"host_syncs", "seconds"}).value_or(0)))
    << " in all.</p>\n<table><thead><tr><th scope=\"col\">kind</th><th scope=\"col\">calls</th>"
       "<th scope=\"col\">blocked</th></tr></thead><tbody>\n";
  for (const auto& [kind, k] : kinds->items())
    o << "<tr>" << textCell(kind) << cell(jsonAt(k, {"calls"})) << secondsCell(k, {"seconds"})
      << "</tr>\n";
  o << "</tbody></table>\n</section>\n";
}

// Findings that are not advice (under the advice floor, or transient): one line each, id,
// saving and title.
void htmlNotes(std::ostream& o, const ReportJson& r) {
  const json* notes = jsonAt(r, {"notes"});
  if (!notes || !notes->is_array() || notes->empty()) return;
  o << "<h3>Notes (findings that are not advice)</h3>\n<ul class=\"notes\">\n";
  for (const auto& n : *notes)
    o << "<li><code>" << esc(jsonString(n, {"id"})) << "</code> saves ~"
      << esc(formatPercent(n.value("expected_saving_ratio", 0.0))) << ": "
      << esc(jsonString(n, {"title"})) << "</li>\n";
  o << "</ul>\n";
}

void htmlRecommendationsSection(std::ostream& o, const ReportJson& r) {
  o << "<section aria-labelledby=\"recs-h\">\n<h2 id=\"recs-h\">Recommendations</h2>\n";
  const json* recs = jsonAt(r, {"recommendations"});
  if (!recs || !recs->is_array() || recs->empty()) {
    o << "<p>None: no rule found a change worth making.</p>\n";
    htmlNotes(o, r);
    o << "</section>\n";
    return;
  }
  size_t i = 0;
  for (const auto& rec : *recs) {
    std::string id = jsonString(rec, {"id"});
    o << "<article class=\"rec\" id=\"rec-" << esc(id) << "\"><h3>" << ++i << ". "
      << esc(jsonString(rec, {"title"})) << "</h3>\n<p class=\"badges\"><span class=\"saving\">"
      << "expected saving ~" << esc(formatPercent(rec.value("expected_saving_ratio", 0.0)))
      << "</span> <span class=\"badge\">confidence " << esc(jsonString(rec, {"confidence"}))
      << "</span> <code>" << esc(id) << "</code></p>\n";
    if (const json* cost = jsonAt(rec, {"cost"})) {
      auto hours = jsonNumber(*cost, {"wasted_gpu_hours"});
      auto day_hours = jsonNumber(*cost, {"per_day", "wasted_gpu_hours"});
      auto money = jsonNumber(*cost, {"wasted_cost"});
      auto day_money = jsonNumber(*cost, {"per_day", "wasted_cost"});
      auto price = jsonNumber(*cost, {"gpu_hour_price"});
      if (hours && day_hours) {
        std::string line = "Worth " + formatGpuHours(*hours);
        if (money) line += " (" + formatMoney(*money) + ")";
        line += " in this run and " + formatGpuHours(*day_hours);
        if (day_money) line += " (" + formatMoney(*day_money) + ")";
        line += " per day of such work";
        line += price ? " at " + formatMoney(*price) + " per GPU-hour." : "; GPU model not priced.";
        o << "<p class=\"cost\">" << esc(line) << "</p>\n";
      }
    }
    if (auto joules = jsonNumber(rec, {"energy_saving_joules"})) {
      std::string line = "Energy share: " + formatEnergy(*joules);
      if (auto money = jsonNumber(rec, {"energy_saving_cost"}))
        line += " (" + formatMoney(*money) + ")";
      o << "<p class=\"cost\">" << esc(line) << " of this run's GPU energy.</p>\n";
    }
    if (auto share = jsonNumber(rec, {"explains", "share"}))
      o << "<p>Explains <code>" << esc(jsonString(rec, {"explains", "part"}))
        << "</code>: " << esc(formatPercent(*share))
        << " of the reference time, the most it can save.</p>\n";
    o << "<pre><code>" << esc(jsonString(rec, {"action"})) << "</code></pre>\n";
    o << "<table class=\"evidence\"><caption>Evidence</caption><thead><tr><th "
         "scope=\"col\">metric</th><th scope=\"col\">value</th></tr></thead><tbody>\n";
    if (const json* ev = jsonAt(rec, {"evidence"}); ev && ev->is_object())
      for (const auto& [k, v] : ev->items())
        o << "<tr><td><code>" << esc(k) << "</code></td>" << cell(&v) << "</tr>\n";
    o << "</tbody></table>\n";
    if (const json* p = jsonAt(rec, {"parameters"}); p && p->is_object() && !p->empty()) {
      o << "<p>Parameters: ";
      bool first = true;
      for (const auto& [k, v] : p->items()) {
        o << (first ? "" : ", ") << "<code>" << esc(k) << " = "
          << esc(v.dump(-1, ' ', false, json::error_handler_t::replace)) << "</code>";
        first = false;
      }
      o << "</p>\n";
    }
    o << "</article>\n";
  }
  htmlNotes(o, r);
  o << "</section>\n";
}

void htmlCollectionSection(std::ostream& o, const ReportJson& r) {
  o << "<section aria-labelledby=\"coll-h\">\n<h2 id=\"coll-h\">Collection</h2>\n";
  auto dropped = jsonNumber(r, {"collection", "events_dropped"}).value_or(0);
  o << "<p>Collection tier <strong>" << esc(jsonString(r, {"collection", "tier"})) << "</strong>; "
    << uint64_t(jsonNumber(r, {"collection", "events"}).value_or(0)) << " events, <span class=\""
    << (dropped > 0 ? "bad" : "") << "\">" << uint64_t(dropped) << " dropped</span>, "
    << uint64_t(jsonNumber(r, {"collection", "undecodable_events"}).value_or(0)) << " undecodable, "
    << uint64_t(jsonNumber(r, {"collection", "lost_batches"}).value_or(0)) << " batches lost";
  if (auto lost = uint64_t(jsonNumber(r, {"collection", "events_lost"}).value_or(0)); lost > 0)
    o << " (" << lost << " of the dropped events lost in transit)";
  o << ".</p>\n";
  // What the input bounds left out (profiler/model/record_limits.h); said only when something was.
  auto bound = [&](const char* key) {
    return uint64_t(jsonNumber(r, {"collection", "input_bounds", key}).value_or(0));
  };
  const uint64_t absurd = bound("absurd_time_records_dropped"), devices = bound("devices_dropped"),
                 processes = bound("processes_dropped"), names = bound("names_truncated");
  if (absurd + devices + processes + names > 0)
    o << "<p class=\"bad\">The input exceeds gpuwise's bounds: " << absurd
      << " records with absurd times dropped, " << devices << " device ids and " << processes
      << " processes beyond the bounds dropped, " << names << " overlong names truncated.</p>\n";
  o << "<table><caption>Processes</caption><thead><tr><th scope=\"col\">pid</th><th "
       "scope=\"col\">rank</th><th scope=\"col\">command</th><th scope=\"col\">tier</th><th "
       "scope=\"col\">events</th><th scope=\"col\">dropped</th></tr></thead><tbody>\n";
  if (const json* ps = jsonAt(r, {"processes"}); ps && ps->is_array()) {
    for (const auto& p : *ps) {
      std::string tier = jsonString(p, {"tier"});
      const std::string reason = jsonString(p, {"tier_reason"});
      if (!reason.empty()) tier += " (" + reason + ")";
      o << "<tr>" << cell(jsonAt(p, {"pid"})) << cell(jsonAt(p, {"rank"}))
        << textCell(jsonString(p, {"command"}), "mono") << textCell(tier)
        << cell(jsonAt(p, {"events"})) << cell(jsonAt(p, {"events_dropped"})) << "</tr>\n";
    }
  }
  o << "</tbody></table>\n<table><caption>GPUs</caption><thead><tr><th scope=\"col\">index</th>"
       "<th scope=\"col\">name</th><th scope=\"col\">SMs</th><th scope=\"col\">memory</th><th "
       "scope=\"col\">compute capability</th><th scope=\"col\">MIG</th></tr></thead><tbody>\n";
  if (const json* gs = jsonAt(r, {"gpus"}); gs && gs->is_array()) {
    for (const auto& g : *gs)
      o << "<tr>" << cell(jsonAt(g, {"index"})) << cell(jsonAt(g, {"name"}))
        << cell(jsonAt(g, {"sm_count"})) << bytesCell(g, {"memory_total_bytes"})
        << cell(jsonAt(g, {"compute_capability"})) << cell(jsonAt(g, {"mig_profile"})) << "</tr>\n";
  }
  o << "</tbody></table>\n";
  if (const json* files = jsonAt(r, {"source", "files"});
      files && files->is_array() && !files->empty()) {
    o << "<p>Source files: ";
    bool first = true;
    for (const auto& f : *files) {
      o << (first ? "" : ", ") << "<code>"
        << esc(f.is_string() ? f.get<std::string>()
                             : f.dump(-1, ' ', false, json::error_handler_t::replace))
        << "</code>";
      first = false;
    }
    o << "</p>\n";
  }
  o << "</section>\n";
}

} // namespace gpuwise::advisor
