#include "advisor/analysis/step_inference.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <unordered_map>

namespace gpuwise::advisor {
namespace {

// Tokens: kernel name ids are below 2^24 (NameTable::kMaxNames); the others sit above.
constexpr uint32_t kTokenBase = 1u << 28;
constexpr uint32_t kMemsetToken = kTokenBase + 16;
constexpr uint32_t kSyncToken = kTokenBase + 32;
constexpr uint32_t kH2dToken =
    kTokenBase + static_cast<uint32_t>(model::CopyDirection::HostToDevice);

constexpr size_t kMaxNeighbour = 4;       // k-th next occurrence distances tried
constexpr size_t kMaxFallbackTokens = 64; // least frequent tokens tried when no anchor works
constexpr double kMinCoverage = 0.5;      // share of the sequence the periodic region must hold

struct Element {
  model::TimeNs key = 0;
  // The idle before the element's activity (sequence() finds it); -1 for a host sync, never a cut
  // point.
  model::TimeNs gap = -1;
  uint32_t token = 0;
  int32_t activity = -1; // index into the device's activities; -1 for a host sync
};

uint32_t tokenOf(const GpuActivity& a) {
  switch (a.kind) {
  case ActivityKind::Kernel: return a.name;
  case ActivityKind::Copy: return kTokenBase + static_cast<uint32_t>(a.direction);
  case ActivityKind::Memset: return kMemsetToken;
  }
  return 0;
}

const DeviceActivity* busiestDevice(const ActivityIndex& index) {
  const DeviceActivity* best = nullptr;
  for (const auto& d : index.devices)
    if (!best || d.activities.size() > best->activities.size()) best = &d;
  return best;
}

uint32_t mainThread(const DeviceActivity& dev) {
  // Counted a run of one thread at a time: launches come in long runs from one thread.
  std::unordered_map<uint32_t, size_t> counts;
  uint32_t run_tid = 0;
  size_t run = 0;
  for (const auto& a : dev.activities) {
    if (!a.launchKnown()) continue;
    if (run > 0 && a.thread != run_tid) {
      counts[run_tid] += run;
      run = 0;
    }
    run_tid = a.thread;
    ++run;
  }
  if (run > 0) counts[run_tid] += run;
  uint32_t best = 0;
  size_t most = 0;
  for (const auto& [tid, n] : counts)
    if (n > most || (n == most && tid < best)) best = tid, most = n;
  return best;
}

// The device's activities, with the idle before each (an activity's idle is the gap its start
// ends: the busy interval holding its start begins there, after an earlier one; 0 otherwise),
// and the main thread's host syncs, in launch order. The idle is found in the same pass, over the
// activities and the busy intervals, both sorted by start (a binary search per element was a
// tenth of the live ingest's time; a separate pass with its own per-activity list, a twentieth).
std::vector<Element> sequence(const ActivityIndex& index, const DeviceActivity& dev) {
  std::vector<Element> seq;
  seq.reserve(dev.activities.size());
  bool any_launch = false;
  const auto& busy = dev.busy;
  size_t j = 0; // the last busy interval starting at or before the activity's start
  for (size_t i = 0; i < dev.activities.size(); ++i) {
    const auto& a = dev.activities[i];
    any_launch = any_launch || a.launchKnown();
    while (j + 1 < busy.size() && busy[j + 1].start <= a.start)
      ++j;
    const model::TimeNs gap =
        j > 0 && busy[j].start == a.start ? busy[j].start - busy[j - 1].end : 0;
    seq.push_back({a.launchKnown() ? a.launch_start : a.start, gap, tokenOf(a), int32_t(i)});
  }
  if (any_launch) {
    if (const auto* host = index.thread(mainThread(dev)))
      for (const auto& s : host->syncs)
        seq.push_back({s.start, -1, kSyncToken, -1});
  }
  // Usually in order already (no syncs, launches in GPU order): a stable sort would leave it so.
  auto earlier = [](const Element& a, const Element& b) { return a.key < b.key; };
  if (!std::is_sorted(seq.begin(), seq.end(), earlier))
    std::stable_sort(seq.begin(), seq.end(), earlier);
  return seq;
}

// Most common k-th next occurrence distances of one token's positions, for k = 1..kMaxNeighbour.
void candidatesOf(const std::vector<uint32_t>& positions, size_t max_k, std::vector<size_t>& out) {
  std::unordered_map<size_t, size_t> counts;
  for (size_t k = 1; k <= max_k && k < positions.size(); ++k) {
    // A token that recurs at one distance throughout (a loop that launches the same sequence
    // every step: the usual case) needs no counting.
    const size_t first = positions[k] - positions[0];
    size_t same = 1;
    while (k + same < positions.size() && positions[k + same] - positions[same] == first)
      ++same;
    if (k + same == positions.size()) {
      if (first >= 2) out.push_back(first);
      continue;
    }
    counts.clear();
    for (size_t i = 0; i + k < positions.size(); ++i)
      ++counts[positions[i + k] - positions[i]];
    size_t mode = 0, most = 0;
    for (const auto& [d, n] : counts)
      if (n > most || (n == most && d < mode)) mode = d, most = n;
    if (2 * most >= positions.size() - k && mode >= 2) out.push_back(mode);
  }
}

struct Period {
  size_t p = 0;
  double match = 0;
  size_t begin = 0, end = 0; // the periodic region of the sequence, [begin, end)
};

// seq[i] recurs one period later, give or take one element: a step with one launch more or less
// shifts the comparisons that straddle it by one, and should not count against the period.
bool recurs(const std::vector<Element>& seq, size_t i, size_t p) {
  const uint32_t t = seq[i].token;
  return seq[i + p].token == t || seq[i + p - 1].token == t ||
         (i + p + 1 < seq.size() && seq[i + p + 1].token == t);
}

// The region where seq[i] recurs (recurs()) for at least kMinMatchRate of the positions: the
// maximum-sum run of +(1 - rate) per match and -rate per mismatch (Kadane), so a warm-up
// iteration that differs (cuDNN autotuning, lazy init) or a ragged tail does not hide the period.
std::optional<Period> periodicRegion(const std::vector<Element>& seq, size_t p) {
  const size_t n = seq.size() - p;
  double best = 0, run = 0;
  size_t best_lo = 0, best_hi = 0, lo = 0, same = 0;
  for (size_t i = 0; i < n; ++i) {
    if (run <= 0) {
      run = 0;
      lo = i;
    }
    run += recurs(seq, i, p) ? 1.0 - kMinMatchRate : -kMinMatchRate;
    if (run > best) best = run, best_lo = lo, best_hi = i + 1;
  }
  // The region must hold three periods (two periods of comparisons) and most of the sequence:
  // steps are what a training trace is made of, not a burst of weight uploads at its start.
  if (best <= 0 || best_hi - best_lo < 2 * p) return std::nullopt;
  if (double(best_hi + p - best_lo) < kMinCoverage * double(seq.size())) return std::nullopt;
  bool kernel = false;
  for (size_t i = best_lo; i < best_lo + p && !kernel; ++i)
    kernel = seq[i].token < kTokenBase;
  if (!kernel) return std::nullopt; // a step runs kernels
  for (size_t i = best_lo; i < best_hi; ++i)
    same += recurs(seq, i, p);
  return Period{p, double(same) / double(best_hi - best_lo), best_lo, best_hi + p};
}

std::optional<Period> smallestPeriod(const std::vector<Element>& seq, std::vector<size_t> cands) {
  std::sort(cands.begin(), cands.end());
  cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
  for (size_t p : cands) {
    if (p < 2 || 3 * p > seq.size()) continue;
    if (auto r = periodicRegion(seq, p)) return r;
  }
  return std::nullopt;
}

// Each token's positions in the sequence, by token. Kernel name ids count from 0: the first
// kDenseTokens are a vector's slots (a hash lookup per element was a tenth of step inference);
// the others, and the copy, memset and sync tokens, a map's entries.
class Positions {
public:
  void add(uint32_t token, uint32_t position) { at(token).push_back(position); }
  const std::vector<uint32_t>* find(uint32_t token) const {
    if (token < dense_.size()) return dense_[token].empty() ? nullptr : &dense_[token];
    auto it = sparse_.find(token);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  // f(token, positions) for every token present.
  template <class F> void forEach(F&& f) const {
    for (size_t t = 0; t < dense_.size(); ++t)
      if (!dense_[t].empty()) f(uint32_t(t), dense_[t]);
    for (const auto& [token, positions] : sparse_)
      f(token, positions);
  }

private:
  static constexpr uint32_t kDenseTokens = 1u << 16;
  std::vector<uint32_t>& at(uint32_t token) {
    if (token >= kDenseTokens) return sparse_[token];
    if (token >= dense_.size()) dense_.resize(size_t(token) + 1);
    return dense_[token];
  }
  std::vector<std::vector<uint32_t>> dense_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> sparse_;
};

struct FoundPeriod {
  Period period;
  const char* anchor = ""; // "h2d_copy", "sync" or "sequence"
};

// Stage 2 and 3: the period from the anchor tokens (H2D copies, then host syncs), else from the
// least frequent tokens of the whole sequence.
std::optional<FoundPeriod> findPeriod(const std::vector<Element>& seq, const Positions& positions) {
  for (auto [token, name] : {std::pair{kH2dToken, "h2d_copy"}, std::pair{kSyncToken, "sync"}}) {
    const auto* at = positions.find(token);
    if (at == nullptr || at->size() < 3) continue;
    std::vector<size_t> cands;
    candidatesOf(*at, kMaxNeighbour, cands);
    if (auto period = smallestPeriod(seq, cands)) return FoundPeriod{*period, name};
  }
  std::vector<std::pair<size_t, uint32_t>> by_count; // (count, token)
  positions.forEach([&](uint32_t token, const std::vector<uint32_t>& pos) {
    if (pos.size() >= 3 && 2 * pos.size() <= seq.size()) by_count.push_back({pos.size(), token});
  });
  std::sort(by_count.begin(), by_count.end());
  if (by_count.size() > kMaxFallbackTokens) by_count.resize(kMaxFallbackTokens);
  std::vector<size_t> cands;
  for (const auto& [count, token] : by_count)
    candidatesOf(*positions.find(token), 2, cands);
  if (auto period = smallestPeriod(seq, cands)) return FoundPeriod{*period, "sequence"};
  return std::nullopt;
}

// What stage 4 reads: the sequence, the idle before each of its elements and where a step may
// open.
struct CutSite {
  const DeviceActivity& dev;
  const std::vector<Element>& seq;
  const Period& period;
  bool after_sync = false;   // the period came from the host syncs
  std::vector<bool> allowed; // may open a step
  // The idle before element i; -1 for a host sync (never a cut point).
  model::TimeNs gap(size_t i) const { return seq[i].gap; }
  bool cuttable(size_t i) const { return gap(i) >= 0 && allowed[i]; }
  model::TimeNs startOf(size_t i) const { return dev.activities[size_t(seq[i].activity)].start; }
};

// A period found from the host syncs cuts where the host comes back from its per-step sync: only
// the first GPU element after a sync may open a step. The longest idle alone would wander when
// the host, not the GPU, is the bottleneck (every gap is then alike, and a thread descheduled
// mid-step makes the longest one). A token's first occurrence may open a step too: the loop's
// first step has no sync before it (setup work such as memsets may precede it).
std::vector<bool> stepOpenings(const CutSite& site) {
  const auto& seq = site.seq;
  const size_t n = seq.size();
  std::vector<bool> allowed(n, true);
  if (!site.after_sync) return allowed;
  bool any = false;
  std::unordered_map<uint32_t, bool> seen;
  for (size_t i = 0; i < n; ++i) {
    const bool first = site.gap(i) >= 0 && !seen[seq[i].token];
    seen[seq[i].token] = true;
    allowed[i] = site.gap(i) >= 0 && (first || (i > 0 && seq[i - 1].token == kSyncToken));
    any = any || (allowed[i] && i >= site.period.begin && i < site.period.end);
  }
  if (!any) allowed.assign(n, true);
  return allowed;
}

// The cut token: the one after the longest idle of each period, most consistently. Per token, the
// sum over blocks of one period of its longest preceding idle in the block: the token that opens
// every step after the GPU waited (the batch's copy, the first kernel after a sync) wins over a
// frequent token with many short waits, and a step with an extra launch does not move it.
uint32_t cutToken(const CutSite& site, std::string_view anchor) {
  const auto& seq = site.seq;
  const size_t begin = site.period.begin, end = site.period.end, p = site.period.p;
  struct TokenScore {
    size_t block = SIZE_MAX;
    model::TimeNs current = 0, total = 0;
  };
  // Kernel name ids are dense from 0: their scores are a vector's slots (a hash lookup per
  // element was a tenth of step inference); the copy, memset and sync tokens a map's entries.
  constexpr uint32_t kDenseTokens = 1u << 16;
  std::vector<TokenScore> dense;
  std::unordered_map<uint32_t, TokenScore> sparse;
  auto scoreOf = [&](uint32_t token) -> TokenScore& {
    if (token >= kDenseTokens) return sparse[token];
    if (token >= dense.size()) dense.resize(size_t(token) + 1);
    return dense[token];
  };
  for (size_t i = begin; i < end; ++i) {
    if (!site.cuttable(i)) continue;
    auto& sc = scoreOf(seq[i].token);
    size_t block = (i - begin) / p;
    if (sc.block != block) {
      sc.total += sc.current;
      sc.current = 0;
      sc.block = block;
    }
    sc.current = std::max(sc.current, site.gap(i));
  }
  uint32_t cut_token = 0;
  model::TimeNs best_total = -1;
  auto consider = [&](uint32_t t, const TokenScore& sc) {
    if (sc.block == SIZE_MAX) return; // a dense slot no cuttable element reached
    model::TimeNs total = sc.total + sc.current;
    if (total > best_total || (total == best_total && t < cut_token))
      cut_token = t, best_total = total;
  };
  for (size_t t = 0; t < dense.size(); ++t)
    consider(uint32_t(t), dense[t]);
  for (const auto& [t, sc] : sparse)
    consider(t, sc);
  if (best_total <= 0) {
    // No idle at all: cut at the anchor (the first GPU element for a sequence period).
    uint32_t anchor_token = anchor == "h2d_copy" ? kH2dToken : kSyncToken;
    for (size_t i = begin; i < end; ++i)
      if (site.cuttable(i) && (seq[i].token == anchor_token || anchor != "h2d_copy")) {
        cut_token = seq[i].token;
        break;
      }
  }
  return cut_token;
}

// The first cut: the cut token's occurrence in the first period with the longest idle before it,
// the device's very first activity counting as the longest (nothing ran before it). `end` of the
// period when there is none.
size_t firstCut(const CutSite& site, uint32_t cut_token) {
  const auto& seq = site.seq;
  const size_t begin = site.period.begin, end = site.period.end, p = site.period.p;
  auto openingGap = [&](size_t i) {
    return site.startOf(i) == site.dev.busy.front().start ? INT64_MAX : site.gap(i);
  };
  size_t first = end;
  // (one further with after_sync: the period's sync may be its last element).
  for (size_t i = begin; i < std::min(end, begin + p + (site.after_sync ? 1 : 0)); ++i)
    if (seq[i].token == cut_token && site.cuttable(i) &&
        (first == end || openingGap(i) > openingGap(first)))
      first = i;
  if (first == end) return end;
  // The search above spans one element more than a period (after_sync), so it can pick the
  // second step's opening when the idle before it (a sleep between steps) is longer than the
  // setup before the first: the same cut one period earlier opens the first step, and without it
  // the first step would be lost.
  while (first >= begin + p && seq[first - p].token == cut_token && site.cuttable(first - p))
    first -= p;
  return first;
}

// Every cut from the first: each next one re-found within p/8 positions of the previous cut plus
// p (the longest idle, then the nearest), so a step with an extra or missing launch does not shift
// the rest.
std::vector<size_t> cutPositions(const CutSite& site, uint32_t cut_token, size_t first) {
  const auto& seq = site.seq;
  const size_t end = site.period.end, p = site.period.p;
  const size_t slack = std::max<size_t>(1, p / 8);
  auto distance = [](size_t a, size_t b) { return a > b ? a - b : b - a; };
  std::vector<size_t> cuts;
  for (size_t pos = first; pos < end;) {
    size_t lo = pos > slack ? pos - slack : 0, hi = std::min(end - 1, pos + slack);
    if (!cuts.empty()) lo = std::max(lo, cuts.back() + 1);
    int64_t best = -1;
    for (size_t j = lo; j <= hi; ++j) {
      if (seq[j].token != cut_token || !site.cuttable(j)) continue;
      if (best < 0 || site.gap(j) > site.gap(size_t(best)) ||
          (site.gap(j) == site.gap(size_t(best)) && distance(j, pos) < distance(size_t(best), pos)))
        best = int64_t(j);
    }
    size_t j = best >= 0 ? size_t(best) : pos;
    while (j < end && site.gap(j) < 0)
      ++j; // a host sync: the next GPU element
    if (j >= end) break;
    cuts.push_back(j);
    pos = j + p;
  }
  return cuts;
}

// The windows between consecutive cuts, each from the start of the idle before its cut.
std::vector<Interval> stepWindows(const CutSite& site, const std::vector<size_t>& cuts) {
  const size_t end = site.period.end, p = site.period.p;
  auto cutTime = [&](size_t i) { return site.startOf(i) - site.gap(i); };
  std::vector<Interval> windows;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    model::TimeNs s = cutTime(cuts[k]), e = cutTime(cuts[k + 1]);
    if (e > s) windows.push_back({s, e});
  }
  // The last step has no next cut: it ends with the last GPU work of its period, when the
  // sequence holds the whole period.
  if (!cuts.empty() && cuts.back() + p <= end) {
    model::TimeNs s = cutTime(cuts.back()), e = s;
    for (size_t i = cuts.back(); i < cuts.back() + p; ++i)
      if (site.seq[i].activity >= 0)
        e = std::max(e, site.dev.activities[size_t(site.seq[i].activity)].end);
    if (e > s) windows.push_back({s, e});
  }
  return windows;
}

} // namespace

std::optional<InferredSteps> inferSteps(const ActivityIndex& index) {
  const DeviceActivity* dev = busiestDevice(index);
  if (!dev || dev->activities.size() < 6) return std::nullopt;
  const auto seq = sequence(index, *dev);

  Positions positions;
  for (size_t i = 0; i < seq.size(); ++i)
    positions.add(seq[i].token, uint32_t(i));
  const auto found = findPeriod(seq, positions);
  if (!found) return std::nullopt;

  CutSite site{*dev, seq, found->period, std::string_view(found->anchor) == "sync", {}};
  site.allowed = stepOpenings(site);
  const uint32_t cut_token = cutToken(site, found->anchor);
  const size_t first = firstCut(site, cut_token);
  if (first == found->period.end) return std::nullopt;

  InferredSteps out;
  out.device = dev->device;
  out.period = uint32_t(found->period.p);
  out.match_rate = found->period.match;
  out.anchor = found->anchor;
  out.windows = stepWindows(site, cutPositions(site, cut_token, first));
  if (out.windows.size() < 2) return std::nullopt;
  return out;
}

} // namespace gpuwise::advisor
