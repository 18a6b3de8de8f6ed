// The HTML report's "Ranks" section (html_sections.h): per-rank step time and where each rank's
// time went, from ranks[] and summary.straggler of the report JSON.
#include "advisor/report/html_report.h"
#include "advisor/report/html_sections.h"
#include "advisor/report/rank_table.h"
#include "advisor/report/ranks_json.h"
#include "advisor/report/svg_chart.h"

#include <algorithm>

namespace gpuwise::advisor {
namespace {

using json = ReportJson;

// At most this many bars per chart: the slowest ranks and the fastest, the rest in a note.
constexpr size_t kMaxRankBars = 64, kSlowestBars = 48, kFastestBars = 16;

std::string rankName(const RankSummary& r) {
  return r.rank >= 0 ? "rank " + std::to_string(r.rank) : "pid " + std::to_string(r.pid);
}

double medianStepP50(const std::vector<RankSummary>& ranks) {
  std::vector<double> v;
  for (const auto& r : ranks)
    if (r.step_p50_seconds) v.push_back(*r.step_p50_seconds);
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string stepChart(const std::vector<RankSummary>& ranks, const RankSelection& sel,
                      const std::optional<StragglerFinding>& straggler) {
  BarChartSpec spec;
  spec.id = "rank-steps";
  spec.title = "Step time per rank (p50)";
  spec.description = "Median steady step time of each rank";
  spec.label_width = 140;
  const double median = medianStepP50(ranks);
  if (median > 0) {
    spec.marker = median;
    spec.marker_label = "job median " + formatSeconds(median);
  }
  for (size_t i : sel.shown) {
    const auto& r = ranks[i];
    const bool is_straggler = straggler && r.rank == straggler->rank;
    Bar b;
    b.label = rankName(r) + (is_straggler ? " (straggler)" : "");
    b.full_label = b.label + (r.host.empty() ? "" : " on " + r.host);
    b.value = r.step_p50_seconds.value_or(0);
    b.value_text = r.step_p50_seconds ? formatSeconds(*r.step_p50_seconds) : "not measured";
    b.color = is_straggler ? palette::kRed : palette::kBlue;
    spec.bars.push_back(std::move(b));
  }
  return renderBarChart(spec);
}

std::string timeChart(const std::vector<RankSummary>& ranks, const RankSelection& sel) {
  StackedRowsSpec spec;
  spec.id = "rank-time";
  spec.title = "Compute and communication per rank";
  spec.description = "Seconds of each rank's GPU time by kind";
  spec.parts = {{"compute", palette::kBlue},
                {"communication overlapped", palette::kTeal},
                {"communication exposed", palette::kOrange},
                {"collective wait", palette::kRed}};
  for (size_t i : sel.shown) {
    const auto& r = ranks[i];
    // The wait is part of the collectives' time: shown on its own, out of the exposed part first.
    const double exposed = std::max(0.0, r.communication_exposed_seconds);
    const double wait = std::min(std::max(0.0, r.collective_wait_seconds),
                                 std::max(exposed, r.communication_seconds));
    const double overlapped = std::max(0.0, r.communication_seconds - exposed);
    const double exposed_no_wait = std::max(0.0, exposed - wait);
    spec.rows.push_back({rankName(r), {r.compute_seconds, overlapped, exposed_no_wait, wait}});
  }
  return renderStackedRows(spec);
}

} // namespace

void htmlRanksSection(std::ostream& o, const ReportJson& r) {
  const json* arr = jsonAt(r, {"ranks"});
  if (!arr || !arr->is_array() || arr->size() < 2) return; // one rank: the rest of the page is it
  std::vector<RankSummary> ranks;
  for (const json& j : *arr) {
    RankSummary rank;
    std::string ignored;
    if (rankFromJson(j, &rank, &ignored)) ranks.push_back(std::move(rank));
  }
  const json* s = jsonAt(r, {"summary", "straggler"});
  const auto straggler = s ? stragglerFromJson(*s) : std::nullopt;
  const auto sel = selectRanks(ranks, straggler, kMaxRankBars, kSlowestBars, kFastestBars);
  o << "<section aria-labelledby=\"ranks-h\">\n<h2 id=\"ranks-h\">Ranks</h2>\n<p>" << ranks.size()
    << " ranks";
  if (straggler) o << "; " << htmlEscape(stragglerSentence(*straggler));
  o << ".</p>\n" << stepChart(ranks, sel, straggler) << "\n" << timeChart(ranks, sel) << "\n";
  if (sel.hidden)
    o << "<p class=\"muted\">The " << sel.shown.size()
      << " slowest and fastest ranks by step p50 are shown; " << sel.hidden
      << " more ranks are in the JSON report (ranks[]).</p>\n";
  o << "</section>\n";
}

} // namespace gpuwise::advisor
