#include "advisor/analysis/utilization_analyzer.h"

#include "advisor/analysis/allocation_replay.h"
#include "advisor/analysis/interval_union.h"

#include <algorithm>
#include <limits>
#include <map>

namespace gpuwise::advisor {
namespace {

// Spans and bucket arithmetic in 128 bits: the difference of two int64 times does not always fit
// in 64 (the importers and the ingest keep times within +-2^62, record_limits.h, but these
// functions are exact for any times they are given).
__int128 wide(model::TimeNs t) {
  return static_cast<__int128>(t);
}

// At most one bucket per nanosecond, at least one.
size_t bucketCount(model::TimeNs start, model::TimeNs end, size_t wanted) {
  const __int128 span = std::max<__int128>(wide(end) - wide(start), 0);
  return std::max<size_t>(1, static_cast<size_t>(std::min<__int128>(wanted, span)));
}

// The bucket holding time t; the end of the span belongs to the last bucket.
size_t bucketOf(model::TimeNs start, model::TimeNs end, size_t n, model::TimeNs t) {
  if (end <= start || t <= start) return 0;
  if (t >= end) return n - 1;
  auto i = static_cast<size_t>(((wide(t) - wide(start)) * n) / (wide(end) - wide(start)));
  return std::min(i, n - 1);
}

// Adds the parts of sorted, disjoint intervals to the buckets they fall in. One walk over the
// buckets alongside the intervals (a window holds ~10^5 of them, a series 200 buckets): bucket i
// is [bucketEdge(i), bucketEdge(i + 1)), each edge computed once.
void distribute(const std::vector<Interval>& merged, model::TimeNs start, model::TimeNs end,
                std::vector<model::TimeNs>& out) {
  const size_t n = out.size();
  if (n == 0) return;
  size_t i = 0;
  model::TimeNs bucket_end = bucketEdge(start, end, n, 1);
  for (const auto& iv : merged) {
    model::TimeNs s = std::max(iv.start, start), e = std::min(iv.end, end);
    if (s >= e) continue;
    while (i + 1 < n && bucket_end <= s)
      bucket_end = bucketEdge(start, end, n, ++i + 1);
    while (s < e) {
      const model::TimeNs piece_end = std::min(e, bucket_end);
      if (piece_end > s) out[i] += piece_end - s;
      s = std::max(s, piece_end);
      if (s >= e) break;
      if (i + 1 == n) break; // never: the last bucket ends at `end`
      bucket_end = bucketEdge(start, end, n, ++i + 1);
    }
  }
}

enum Activity { kKernel, kCopy, kMemset, kActivities };

struct DeviceWork {
  std::vector<Interval> by_activity[kActivities];
};

// The recent bucket holding t: floor(t / kRecentBucketNs), for every int64 t.
int64_t bucketIndex(model::TimeNs t) {
  const int64_t q = t / kRecentBucketNs;
  return t % kRecentBucketNs < 0 ? q - 1 : q;
}

// Where recent bucket b starts, saturated to the int64 range: the bucket after the one holding
// INT64_MAX starts "at" INT64_MAX, so a walk over buckets always reaches an interval's end.
model::TimeNs bucketStart(int64_t b) {
  const __int128 t = static_cast<__int128>(b) * kRecentBucketNs;
  return static_cast<model::TimeNs>(std::clamp<__int128>(
      t, std::numeric_limits<model::TimeNs>::min(), std::numeric_limits<model::TimeNs>::max()));
}

// The last kRecentBuckets whole-second buckets of sorted, disjoint intervals [start, end).
RecentBusy recentBusy(const BusySeries& s, const std::vector<Interval>& merged) {
  RecentBusy r;
  r.pid = s.pid;
  r.rank = s.rank;
  r.device = s.device;
  r.start = s.start;
  r.end = s.end;
  const int64_t last = bucketIndex(s.end > s.start ? s.end - 1 : s.start);
  r.first_bucket = std::max(bucketIndex(s.start), last - int64_t(kRecentBuckets) + 1);
  r.busy_ns.assign(size_t(last - r.first_bucket + 1), 0);
  const model::TimeNs from = bucketStart(r.first_bucket);
  for (auto it = merged.rbegin(); it != merged.rend() && it->end > from; ++it) {
    for (model::TimeNs a = std::max(it->start, from); a < it->end;) {
      const int64_t b = bucketIndex(a);
      const model::TimeNs piece_end = std::min(it->end, bucketStart(b + 1));
      if (b <= last) r.busy_ns[size_t(b - r.first_bucket)] += piece_end - a;
      a = piece_end;
    }
  }
  return r;
}

BusySeries busySeries(const model::ProcessInfo& info, uint32_t device, DeviceWork& work,
                      size_t wanted, RecentBusy* recent) {
  auto& by_activity = work.by_activity;
  for (auto& v : by_activity)
    mergeInPlace(v);
  // Kernels alone (the usual live window) are their own union: no copy of the list.
  std::vector<Interval> united;
  const bool kernels_only = by_activity[kCopy].empty() && by_activity[kMemset].empty();
  if (!kernels_only)
    united = unite(unite(by_activity[kKernel], by_activity[kCopy]), by_activity[kMemset]);
  const std::vector<Interval>& all = kernels_only ? by_activity[kKernel] : united;
  BusySeries s;
  s.pid = info.pid;
  s.rank = info.rank;
  s.device = device;
  s.start = all.front().start;
  s.end = all.back().end;
  size_t n = bucketCount(s.start, s.end, wanted);
  s.busy_ns.assign(n, 0);
  s.kernel_ns.assign(n, 0);
  s.copy_ns.assign(n, 0);
  distribute(all, s.start, s.end, s.busy_ns);
  if (kernels_only) {
    s.kernel_ns = s.busy_ns; // the same list
  } else {
    distribute(by_activity[kKernel], s.start, s.end, s.kernel_ns);
  }
  distribute(by_activity[kCopy], s.start, s.end, s.copy_ns);
  *recent = recentBusy(s, all);
  return s;
}

struct Level {
  model::TimeNs time;
  int64_t bytes;
};

// Highest level per bucket; a bucket without a record holds the level the previous one ended at.
std::vector<int64_t> bucketLevels(const std::vector<Level>& levels, model::TimeNs start,
                                  model::TimeNs end, size_t n) {
  std::vector<int64_t> out(n, -1);
  int64_t carry = -1;
  size_t next = 0;
  for (size_t i = 0; i < n; ++i) {
    int64_t high = carry;
    while (next < levels.size() && bucketOf(start, end, n, levels[next].time) == i) {
      high = std::max(high, levels[next].bytes);
      carry = levels[next].bytes;
      ++next;
    }
    out[i] = high;
  }
  return out;
}

// The running sum of device allocations per device, one level per allocation or free.
std::map<uint32_t, std::vector<Level>> allocationLevels(const model::ProcessTrace& p) {
  std::map<uint32_t, std::vector<Level>> levels;
  for (const auto& [device, replay] : replayAllocations(p))
    for (const auto& l : replay.levels)
      levels[device].push_back({l.time, static_cast<int64_t>(l.bytes)});
  return levels;
}

void memorySeries(const model::ProcessTrace& p, size_t wanted, std::vector<MemorySeries>& out) {
  std::map<uint32_t, std::vector<Level>> reserved, allocated;
  for (const auto& s : p.memory_samples) {
    if (s.time == 0) continue;
    if (s.reserved_bytes >= 0) reserved[s.device].push_back({s.time, s.reserved_bytes});
    if (s.allocated_bytes >= 0) allocated[s.device].push_back({s.time, s.allocated_bytes});
  }
  std::map<uint32_t, std::vector<Level>> from_allocations;
  if (reserved.empty() && allocated.empty()) from_allocations = allocationLevels(p);
  std::map<uint32_t, bool> devices;
  for (const auto* m : {&reserved, &allocated, &from_allocations})
    for (const auto& [device, levels] : *m)
      devices[device] = true;

  auto byTime = [](const Level& a, const Level& b) { return a.time < b.time; };
  for (const auto& [device, unused] : devices) {
    MemorySeries s;
    s.pid = p.info.pid;
    s.rank = p.info.rank;
    s.device = device;
    auto& r = reserved[device];
    auto& a = from_allocations.empty() ? allocated[device] : from_allocations[device];
    s.source = !r.empty()                 ? MemorySource::Reserved
               : from_allocations.empty() ? MemorySource::Allocated
                                          : MemorySource::Allocations;
    std::stable_sort(r.begin(), r.end(), byTime);
    std::stable_sort(a.begin(), a.end(), byTime);
    s.start = std::min(r.empty() ? a.front().time : r.front().time,
                       a.empty() ? r.front().time : a.front().time);
    s.end = std::max(r.empty() ? a.back().time : r.back().time,
                     a.empty() ? r.back().time : a.back().time);
    size_t n = bucketCount(s.start, s.end, wanted);
    if (!r.empty()) s.reserved = bucketLevels(r, s.start, s.end, n);
    if (!a.empty()) s.allocated = bucketLevels(a, s.start, s.end, n);
    if (const auto* info = p.device(device)) s.memory_total_bytes = info->memory_total_bytes;
    out.push_back(std::move(s));
  }
}

// Spreads each old bucket's time over the new buckets it overlaps, in proportion to the overlap;
// the last piece takes the rounding remainder so totals stay exact.
void spreadTime(const std::vector<model::TimeNs>& from, model::TimeNs from_start,
                model::TimeNs from_end, model::TimeNs start, model::TimeNs end,
                std::vector<model::TimeNs>& to) {
  size_t n = from.size(), m = to.size();
  for (size_t i = 0; i < n; ++i) {
    if (from[i] == 0) continue;
    model::TimeNs lo = bucketEdge(from_start, from_end, n, i);
    model::TimeNs hi = bucketEdge(from_start, from_end, n, i + 1);
    size_t first = bucketOf(start, end, m, lo),
           last = bucketOf(start, end, m, hi > lo ? hi - 1 : lo);
    model::TimeNs given = 0;
    for (size_t j = first; j <= last; ++j) {
      model::TimeNs part = from[i] - given;
      if (j < last) {
        model::TimeNs overlap = std::min(hi, bucketEdge(start, end, m, j + 1)) -
                                std::max(lo, bucketEdge(start, end, m, j));
        part = static_cast<model::TimeNs>(static_cast<__int128>(from[i]) * overlap / (hi - lo));
      }
      to[j] += part;
      given += part;
    }
  }
}

void spreadLevel(const std::vector<int64_t>& from, model::TimeNs from_start, model::TimeNs from_end,
                 model::TimeNs start, model::TimeNs end, std::vector<int64_t>& to) {
  size_t n = from.size(), m = to.size();
  for (size_t i = 0; i < n; ++i) {
    if (from[i] < 0) continue;
    model::TimeNs lo = bucketEdge(from_start, from_end, n, i);
    model::TimeNs hi = bucketEdge(from_start, from_end, n, i + 1);
    size_t last = bucketOf(start, end, m, hi > lo ? hi - 1 : lo);
    for (size_t j = bucketOf(start, end, m, lo); j <= last; ++j)
      to[j] = std::max(to[j], from[i]);
  }
}

template <typename T> bool sameKey(const T& a, const T& b) {
  return a.pid == b.pid && a.rank == b.rank && a.device == b.device;
}

template <typename T> bool keyLess(const T& a, const T& b) {
  if (a.pid != b.pid) return a.pid < b.pid;
  return a.rank != b.rank ? a.rank < b.rank : a.device < b.device;
}

BusySeries mergeBusy(const BusySeries& a, const BusySeries& b) {
  BusySeries s = a;
  s.start = std::min(a.start, b.start);
  s.end = std::max(a.end, b.end);
  size_t n = bucketCount(s.start, s.end, std::max(a.buckets(), b.buckets()));
  for (auto member : {&BusySeries::busy_ns, &BusySeries::kernel_ns, &BusySeries::copy_ns}) {
    std::vector<model::TimeNs> to(n, 0);
    spreadTime(a.*member, a.start, a.end, s.start, s.end, to);
    spreadTime(b.*member, b.start, b.end, s.start, s.end, to);
    s.*member = std::move(to);
  }
  return s;
}

RecentBusy mergeRecent(const RecentBusy& a, const RecentBusy& b) {
  RecentBusy r = a;
  r.start = std::min(a.start, b.start);
  r.end = std::max(a.end, b.end);
  const int64_t end_a = a.first_bucket + int64_t(a.busy_ns.size());
  const int64_t end_b = b.first_bucket + int64_t(b.busy_ns.size());
  const int64_t last = std::max(end_a, end_b) - 1;
  r.first_bucket =
      std::max(std::min(a.first_bucket, b.first_bucket), last - int64_t(kRecentBuckets) + 1);
  r.busy_ns.assign(size_t(last - r.first_bucket + 1), 0);
  for (const auto* x : {&a, &b})
    for (size_t i = 0; i < x->busy_ns.size(); ++i) {
      const int64_t at = x->first_bucket + int64_t(i) - r.first_bucket;
      if (at < 0) continue; // older than the latest kRecentBuckets
      auto& v = r.busy_ns[size_t(at)];
      // Two windows' records that overlap in time are not united: no bucket is busier than long.
      v = std::min(v + x->busy_ns[i], kRecentBucketNs);
    }
  return r;
}

MemorySeries mergeMemory(const MemorySeries& a, const MemorySeries& b) {
  MemorySeries s = a;
  s.start = std::min(a.start, b.start);
  s.end = std::max(a.end, b.end);
  s.source = std::min(a.source, b.source); // Reserved < Allocated < Allocations: the best source
  s.memory_total_bytes = std::max(a.memory_total_bytes, b.memory_total_bytes);
  size_t n = bucketCount(s.start, s.end, std::max(a.buckets(), b.buckets()));
  for (auto member : {&MemorySeries::reserved, &MemorySeries::allocated}) {
    if ((a.*member).empty() && (b.*member).empty()) continue;
    std::vector<int64_t> to(n, -1);
    spreadLevel(a.*member, a.start, a.end, s.start, s.end, to);
    spreadLevel(b.*member, b.start, b.end, s.start, s.end, to);
    for (size_t i = 1; i < n; ++i) // the gap between two windows keeps the earlier level
      if (to[i] < 0) to[i] = to[i - 1];
    s.*member = std::move(to);
  }
  return s;
}

} // namespace

model::TimeNs bucketEdge(model::TimeNs start, model::TimeNs end, size_t n, size_t i) {
  if (i >= n) return end;
  return static_cast<model::TimeNs>(wide(start) + ((wide(end) - wide(start)) * i) / n);
}

model::TimeNs BusySeries::bucketLength(size_t i) const {
  return bucketEdge(start, end, buckets(), i + 1) - bucketEdge(start, end, buckets(), i);
}

static double fraction(model::TimeNs part, model::TimeNs whole) {
  if (whole <= 0) return 0.0;
  return std::clamp(static_cast<double>(part) / static_cast<double>(whole), 0.0, 1.0);
}

double BusySeries::busyRatio(size_t i) const {
  return fraction(busy_ns[i], bucketLength(i));
}
double BusySeries::kernelRatio(size_t i) const {
  return fraction(kernel_ns[i], bucketLength(i));
}
double BusySeries::copyRatio(size_t i) const {
  return fraction(copy_ns[i], bucketLength(i));
}

model::TimeNs RecentBusy::busyBetween(model::TimeNs from, model::TimeNs to) const {
  model::TimeNs busy = 0;
  for (size_t i = 0; i < busy_ns.size(); ++i) {
    if (busy_ns[i] == 0) continue;
    // The part of the bucket the span covers: busy time lies only there.
    const model::TimeNs lo = std::max(bucketStart(first_bucket + int64_t(i)), start);
    const model::TimeNs hi = std::min(bucketStart(first_bucket + int64_t(i) + 1), end);
    if (hi <= lo) continue;
    const __int128 in = wide(std::min(hi, to)) - wide(std::max(lo, from));
    if (in <= 0) continue;
    busy += in >= wide(hi) - wide(lo)
                ? busy_ns[i]
                : model::TimeNs(static_cast<__int128>(busy_ns[i]) * in / (wide(hi) - wide(lo)));
  }
  return busy;
}

uint64_t MemorySeries::peak() const {
  int64_t high = 0;
  for (auto v : reserved)
    high = std::max(high, v);
  for (auto v : allocated)
    high = std::max(high, v);
  return static_cast<uint64_t>(high);
}

UtilizationResult analyzeUtilization(const model::Trace& trace, size_t buckets) {
  UtilizationResult r;
  for (const auto& p : trace.processes) {
    std::map<uint32_t, DeviceWork> devices;
    // Records come in long runs of one device: the last one found is looked at first (map entries
    // never move).
    DeviceWork* last = nullptr;
    uint32_t last_device = 0;
    auto add = [&](Activity a, model::TimeNs start, model::TimeNs end, uint32_t device) {
      if (!isTimed(start, end)) return;
      if (last == nullptr || last_device != device) {
        last = &devices[device];
        last_device = device;
      }
      // One that overlaps or touches the last, starting no earlier, extends it: the union is
      // the same (busySeries merges the list), the list a fraction of the records.
      auto& v = last->by_activity[a];
      if (!v.empty() && start >= v.back().start && start <= v.back().end) {
        v.back().end = std::max(v.back().end, end);
      } else {
        v.push_back({start, end});
      }
    };
    for (const auto& k : p.kernels)
      add(kKernel, k.start, k.end, k.device);
    for (const auto& c : p.copies)
      add(kCopy, c.start, c.end, c.device);
    for (const auto& m : p.memsets)
      add(kMemset, m.start, m.end, m.device);
    for (auto& [device, work] : devices) {
      RecentBusy recent;
      r.busy.push_back(busySeries(p.info, device, work, buckets, &recent));
      r.recent.push_back(std::move(recent));
    }
    memorySeries(p, buckets, r.memory);
  }
  return r;
}

namespace {

// Folds each series of `later` into the one of `mine` with the same key, or appends it.
template <typename T, typename Merge>
void mergeByKey(std::vector<T>& mine, const std::vector<T>& later, Merge merge) {
  for (const auto& s : later) {
    auto it = std::find_if(mine.begin(), mine.end(), [&](const T& x) { return sameKey(x, s); });
    if (it == mine.end())
      mine.push_back(s);
    else
      *it = merge(*it, s);
  }
}

} // namespace

void UtilizationResult::merge(const UtilizationResult& o) {
  mergeByKey(busy, o.busy, mergeBusy);
  mergeByKey(memory, o.memory, mergeMemory);
  mergeByKey(recent, o.recent, mergeRecent);
  std::sort(busy.begin(), busy.end(), keyLess<BusySeries>);
  std::sort(recent.begin(), recent.end(), keyLess<RecentBusy>);
  std::sort(memory.begin(), memory.end(), keyLess<MemorySeries>);
}

} // namespace gpuwise::advisor
