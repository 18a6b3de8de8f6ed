#include "advisor/analysis/interval_union.h"

#include <algorithm>

namespace gpuwise::advisor {

namespace {

bool earlier(const Interval& a, const Interval& b) {
  return a.start != b.start ? a.start < b.start : a.end < b.end;
}

// At most this many sorted runs are merged rather than sorted.
constexpr size_t kMaxMergedRuns = 8;

// Sorts `v` by (start, end). The lists the analyzers build are a few sorted runs one after the
// other (a thread's launch intervals, then its copies' and syncs' calls; a live window's records,
// then the context carried from before them): those are merged in linear time. std::sort alone
// is slow on them: its median-of-three pivot falls on a run's edge, and on a long run followed by
// a short earlier one it degrades to heapsort. The order is total on an interval's value, so the
// result is the one any sort gives.
void sortIntervals(std::vector<Interval>& v) {
  std::vector<size_t> runs{0}; // where each sorted run begins
  for (size_t i = 1; i < v.size(); ++i) {
    if (!earlier(v[i], v[i - 1])) continue;
    if (runs.size() == kMaxMergedRuns) {
      std::sort(v.begin(), v.end(), earlier);
      return;
    }
    runs.push_back(i);
  }
  // Each run into the sorted prefix before it.
  for (size_t r = 1; r < runs.size(); ++r) {
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(runs[r]);
    const auto end =
        r + 1 < runs.size() ? v.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]) : v.end();
    std::inplace_merge(v.begin(), mid, end, earlier);
  }
}

// True when `v` is already its own union: each interval starts after the previous one ends (and
// so after it starts). The lists the analyzers build usually are (one stream's kernels, one
// thread's calls, each ending before the next begins): one read-only pass instead of a sort check,
// a merge pass and a write of every interval (a twentieth of the live ingest's instructions).
bool alreadyMerged(const std::vector<Interval>& v) {
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i].start <= v[i - 1].end || v[i].start <= v[i - 1].start) return false;
  return true;
}

} // namespace

void mergeInPlace(std::vector<Interval>& v) {
  if (v.empty() || alreadyMerged(v)) return;
  sortIntervals(v);
  size_t out = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].start <= v[out].end) {
      v[out].end = std::max(v[out].end, v[i].end);
    } else {
      v[++out] = v[i];
    }
  }
  v.resize(out + 1);
}

model::TimeNs totalLength(const std::vector<Interval>& merged) {
  model::TimeNs total = 0;
  for (const auto& i : merged)
    total += i.length();
  return total;
}

model::TimeNs unionLength(std::vector<Interval> intervals) {
  mergeInPlace(intervals);
  return totalLength(intervals);
}

model::TimeNs overlapLength(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  model::TimeNs total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    model::TimeNs lo = std::max(a[i].start, b[j].start);
    model::TimeNs hi = std::min(a[i].end, b[j].end);
    if (hi > lo) total += hi - lo;
    // Advance whichever ends first; the other may still overlap the next one.
    if (a[i].end < b[j].end)
      ++i;
    else
      ++j;
  }
  return total;
}

std::vector<Interval> unite(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  // Both inputs are sorted and disjoint: one linear merge, coalescing as it goes.
  std::vector<Interval> out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const Interval& next =
        (j == b.size() || (i < a.size() && a[i].start <= b[j].start)) ? a[i++] : b[j++];
    if (!out.empty() && next.start <= out.back().end) {
      out.back().end = std::max(out.back().end, next.end);
    } else {
      out.push_back(next);
    }
  }
  return out;
}

} // namespace gpuwise::advisor
