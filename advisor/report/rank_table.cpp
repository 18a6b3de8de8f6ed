#include "advisor/report/rank_table.h"

#include "advisor/report/format.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string_view>

namespace gpuwise::advisor {
namespace {

constexpr size_t kTerminalMaxRanks = 8, kTerminalSlowest = 4, kTerminalFastest = 2;

std::string durationOrDash(const std::optional<double>& seconds) {
  return seconds ? formatDuration(static_cast<model::TimeNs>(*seconds * 1e9)) : "-";
}

std::string percentOrDash(const std::optional<double>& ratio) {
  return ratio ? formatPercent(*ratio) : "-";
}

std::string clip(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 1) + "~";
}

// "NVIDIA A100-SXM4-80GB" reads as "A100-SXM4-80GB" in a narrow column.
std::string shortGpuName(const std::string& name) {
  constexpr std::string_view kVendor = "NVIDIA ";
  if (name.empty()) return "-";
  return name.rfind(kVendor, 0) == 0 ? name.substr(kVendor.size()) : name;
}

std::string row(const RankSummary& r, bool straggler) {
  char buf[256];
  const std::string rank = (r.rank >= 0 ? std::to_string(r.rank) : "pid" + std::to_string(r.pid)) +
                           (straggler ? "*" : "");
  std::snprintf(buf, sizeof buf, "  %-6s %-12s %-16s %6llu %9s %6s %7.2f %8.2f %7.2f %6s\n",
                clip(rank, 6).c_str(), clip(r.host.empty() ? "-" : r.host, 12).c_str(),
                clip(shortGpuName(r.gpu), 16).c_str(), static_cast<unsigned long long>(r.steps),
                durationOrDash(r.step_p50_seconds).c_str(), percentOrDash(r.gpu_busy_ratio).c_str(),
                r.communication_seconds, r.communication_exposed_seconds, r.collective_wait_seconds,
                percentOrDash(r.input_stall_ratio).c_str());
  return buf;
}

} // namespace

RankSelection selectRanks(const std::vector<RankSummary>& ranks,
                          const std::optional<StragglerFinding>& straggler, size_t max_shown,
                          size_t slowest, size_t fastest) {
  RankSelection sel;
  std::vector<size_t> order(ranks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (ranks.size() <= max_shown) {
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return ranks[a].rank < ranks[b].rank; });
    sel.shown = std::move(order);
    return sel;
  }
  // Slowest first; a rank without a step p50 sorts last, ties by rank.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const double pa = ranks[a].step_p50_seconds.value_or(-1.0);
    const double pb = ranks[b].step_p50_seconds.value_or(-1.0);
    if (pa != pb) return pa > pb;
    return ranks[a].rank < ranks[b].rank;
  });
  slowest = std::min(slowest, order.size());
  fastest = std::min(fastest, order.size() - slowest);
  sel.shown.assign(order.begin(), order.begin() + static_cast<ptrdiff_t>(slowest));
  if (straggler) {
    auto is_straggler = [&](size_t i) { return ranks[i].rank == straggler->rank; };
    const bool shown_already = std::any_of(sel.shown.begin(), sel.shown.end(), is_straggler);
    auto tail_begin = order.end() - static_cast<ptrdiff_t>(fastest);
    const bool in_fastest = std::any_of(tail_begin, order.end(), is_straggler);
    if (!shown_already && !in_fastest) {
      auto it = std::find_if(order.begin(), tail_begin, is_straggler);
      if (it != tail_begin) sel.shown.push_back(*it);
    }
  }
  sel.shown.insert(sel.shown.end(), order.end() - static_cast<ptrdiff_t>(fastest), order.end());
  sel.hidden = ranks.size() - sel.shown.size();
  return sel;
}

std::string stragglerSentence(const StragglerFinding& straggler) {
  return "rank " + std::to_string(straggler.rank) + " is the straggler (" +
         toString(straggler.cause) + "): the other ranks wait " +
         formatDuration(static_cast<model::TimeNs>(straggler.others_wait_seconds * 1e9)) +
         " for it in their collectives";
}

std::string stragglerLine(const std::optional<StragglerFinding>& straggler) {
  if (!straggler) return {};
  return "  " + stragglerSentence(*straggler) + "\n";
}

std::string renderRankTable(const std::vector<RankSummary>& ranks,
                            const std::optional<StragglerFinding>& straggler) {
  if (ranks.size() <= 1) return {};
  const auto sel =
      selectRanks(ranks, straggler, kTerminalMaxRanks, kTerminalSlowest, kTerminalFastest);
  std::string out = "  per rank" +
                    std::string(sel.hidden ? " (the slowest and fastest by step p50)" : "") + ":\n";
  char head[256];
  std::snprintf(head, sizeof head, "  %-6s %-12s %-16s %6s %9s %6s %7s %8s %7s %6s\n", "rank",
                "host", "GPU", "steps", "step p50", "busy", "comm s", "exposed", "wait s", "input");
  out += head;
  for (size_t i : sel.shown)
    out += row(ranks[i], straggler && ranks[i].rank == straggler->rank);
  if (sel.hidden)
    out +=
        "  \xE2\x80\xA6 " + std::to_string(sel.hidden) + " more ranks (all in the JSON report)\n";
  out += stragglerLine(straggler);
  return out;
}

} // namespace gpuwise::advisor
