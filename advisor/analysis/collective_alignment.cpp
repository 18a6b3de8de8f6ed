#include "advisor/analysis/collective_alignment.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace gpuwise::advisor {
namespace {

using model::TimeNs;
using Ops = std::vector<const CollectiveTiming*>;

// A process's channels, each in time order, the channels by their first collective's start.
std::vector<Ops> channelsOf(const ProcessCollectiveTimings& p) {
  std::map<uint64_t, Ops> by_id;
  for (const auto& k : p.kernels)
    by_id[k.channel].push_back(&k);
  std::vector<Ops> out;
  for (auto& [id, ops] : by_id) {
    std::stable_sort(ops.begin(), ops.end(),
                     [](const auto* a, const auto* b) { return a->start < b->start; });
    out.push_back(std::move(ops));
  }
  std::sort(out.begin(), out.end(),
            [](const Ops& a, const Ops& b) { return a.front()->start < b.front()->start; });
  return out;
}

bool compatible(const CollectiveTiming& a, const CollectiveTiming& b) {
  using model::CollectiveKind;
  if (a.kind != CollectiveKind::Unknown && b.kind != CollectiveKind::Unknown && a.kind != b.kind)
    return false;
  if (a.bytes != 0 && b.bytes != 0 && a.bytes != b.bytes) return false;
  return a.sequence == 0 || b.sequence == 0 || a.sequence == b.sequence;
}

TimeNs median(std::vector<TimeNs> v) {
  auto mid = v.begin() + std::ptrdiff_t(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

struct Pairing {
  int shift = 0;
  std::vector<TimeNs> diffs; // end_q - end_ref of the compatible pairs
  TimeNs spread = 0;         // their median absolute deviation
  TimeNs offset = 0;         // their median
};

// The shift that matches q's channel to the reference's best (step 2 of the header).
std::optional<Pairing> bestShift(const Ops& ref, const Ops& q) {
  std::optional<Pairing> best;
  for (int s = -kMaxShift; s <= kMaxShift; ++s) {
    Pairing p;
    p.shift = s;
    size_t pairs = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const auto j = std::ptrdiff_t(i) + s;
      if (j < 0 || j >= std::ptrdiff_t(q.size())) continue;
      ++pairs;
      if (compatible(*ref[i], *q[size_t(j)])) p.diffs.push_back(q[size_t(j)]->end - ref[i]->end);
    }
    // Most pairs must agree in kind and size (a shift that mismatches them is not this one), and
    // cover most of the shorter channel (one pair always agrees with itself).
    if (p.diffs.empty() || p.diffs.size() * 10 < pairs * 9) continue;
    if (p.diffs.size() * 2 < std::min(ref.size(), q.size())) continue;
    const TimeNs m = median(p.diffs);
    std::vector<TimeNs> deviation;
    deviation.reserve(p.diffs.size());
    for (auto d : p.diffs)
      deviation.push_back(std::llabs(d - m));
    p.spread = median(std::move(deviation));
    p.offset = m;
    const bool better =
        !best || p.spread < best->spread ||
        (p.spread == best->spread &&
         (p.diffs.size() > best->diffs.size() ||
          (p.diffs.size() == best->diffs.size() && std::llabs(m) < std::llabs(best->offset))));
    if (better) best = std::move(p);
  }
  return best;
}

} // namespace

model::CollectiveKind collectiveKindOfKernelName(std::string_view name) {
  using model::CollectiveKind;
  // Longer names first: "AllReduce" and "ReduceScatter" both contain "Reduce".
  static constexpr std::pair<std::string_view, CollectiveKind> kNames[] = {
      {"AllReduce", CollectiveKind::AllReduce}, {"ReduceScatter", CollectiveKind::ReduceScatter},
      {"AllGather", CollectiveKind::AllGather}, {"AllToAll", CollectiveKind::AllToAll},
      {"Broadcast", CollectiveKind::Broadcast}, {"SendRecv", CollectiveKind::Send},
      {"Reduce", CollectiveKind::Reduce},       {"Send", CollectiveKind::Send},
      {"Recv", CollectiveKind::Recv},
  };
  for (const auto& [text, kind] : kNames)
    if (name.find(text) != std::string_view::npos) return kind;
  return CollectiveKind::Unknown;
}

std::vector<RankAlignment> alignCollectives(const std::vector<ProcessCollectiveTimings>& processes,
                                            const std::vector<CollectiveCountWindow>& windows) {
  std::vector<RankAlignment> out(processes.size());
  size_t ref = processes.size();
  for (size_t i = 0; i < processes.size(); ++i)
    if (!processes[i].kernels.empty() &&
        (ref == processes.size() || processes[i].kernels.size() > processes[ref].kernels.size()))
      ref = i;
  if (ref == processes.size()) return out;
  std::vector<std::vector<Ops>> channels;
  channels.reserve(processes.size());
  for (const auto& p : processes)
    channels.push_back(channelsOf(p));

  // Per reference collective (channel c, index i): the matched kernel of each process.
  struct Member {
    size_t process;
    const CollectiveTiming* op;
  };
  std::vector<std::vector<std::vector<Member>>> groups(channels[ref].size());
  for (size_t c = 0; c < channels[ref].size(); ++c) {
    groups[c].resize(channels[ref][c].size());
    for (size_t i = 0; i < channels[ref][c].size(); ++i)
      groups[c][i].push_back({ref, channels[ref][c][i]});
  }
  out[ref].offset_ns = 0;
  for (size_t q = 0; q < processes.size(); ++q) {
    if (q == ref) continue;
    std::vector<TimeNs> diffs;
    std::vector<std::optional<Pairing>> pairings;
    for (size_t c = 0; c < channels[ref].size() && c < channels[q].size(); ++c) {
      pairings.push_back(bestShift(channels[ref][c], channels[q][c]));
      if (pairings.back())
        diffs.insert(diffs.end(), pairings.back()->diffs.begin(), pairings.back()->diffs.end());
    }
    if (diffs.empty()) continue;
    out[q].offset_ns = median(std::move(diffs));
    for (size_t c = 0; c < pairings.size(); ++c) {
      if (!pairings[c]) continue;
      const auto& r = channels[ref][c];
      const auto& mine = channels[q][c];
      for (size_t i = 0; i < r.size(); ++i) {
        const auto j = std::ptrdiff_t(i) + pairings[c]->shift;
        if (j < 0 || j >= std::ptrdiff_t(mine.size()) || !compatible(*r[i], *mine[size_t(j)]))
          continue;
        groups[c][i].push_back({q, mine[size_t(j)]});
      }
    }
  }

  std::vector<TimeNs> waits(processes.size(), 0), all_waits(processes.size(), 0);
  std::vector<std::vector<TimeNs>> step_waits(processes.size());
  for (size_t p = 0; p < processes.size() && p < windows.size(); ++p)
    step_waits[p].assign(windows[p].steps.size(), 0);
  for (const auto& channel : groups)
    for (const auto& group : channel) {
      if (group.size() < 2) continue;
      TimeNs latest = INT64_MIN;
      for (const auto& m : group)
        latest = std::max(latest, m.op->start - *out[m.process].offset_ns);
      for (const auto& m : group) {
        ++out[m.process].matched;
        const TimeNs wait = std::clamp<TimeNs>(latest - (m.op->start - *out[m.process].offset_ns),
                                               0, std::max<TimeNs>(0, m.op->end - m.op->start));
        all_waits[m.process] += wait;
        if (step_waits[m.process].empty()) continue;
        const auto& steps = windows[m.process].steps;
        auto it = std::upper_bound(steps.begin(), steps.end(), m.op->start,
                                   [](TimeNs t, const auto& s) { return t < s.first; });
        if (it == steps.begin() || m.op->start >= std::prev(it)->second) continue;
        step_waits[m.process][size_t(std::prev(it) - steps.begin())] += wait;
      }
    }
  for (size_t p = 0; p < processes.size(); ++p)
    waits[p] =
        step_waits[p].empty() ? all_waits[p] : median(step_waits[p]) * TimeNs(step_waits[p].size());
  for (size_t p = 0; p < processes.size(); ++p) {
    const auto kept = processes[p].kernels.size();
    const auto total = std::max<uint64_t>(processes[p].total, kept);
    const double scale = kept == 0 ? 0.0 : double(total) / double(kept);
    out[p].wait_ns = TimeNs(double(waits[p]) * scale);
    out[p].all_wait_ns = TimeNs(double(all_waits[p]) * scale);
    if (out[p].matched == 0) out[p].offset_ns.reset();
  }
  return out;
}

} // namespace gpuwise::advisor
