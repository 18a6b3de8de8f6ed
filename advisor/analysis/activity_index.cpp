#include "advisor/analysis/activity_index.h"

#include <algorithm>
#include <map>

namespace gpuwise::advisor {
namespace {

struct RawThread {
  std::vector<Interval> calls, syncs, launches;
};

// Every thread's raw intervals. Records come in long runs of one thread: the last one found is
// looked at first (a hash lookup per record was a twentieth of a live window's analysis).
// Entries never move, so the pointer stays valid as others are added.
// The first thread seen (usually the one that launches nearly everything) gets room for every
// call and launch of the process at once: grown by doubling, its lists were copied a dozen times
// per live window, on fresh pages. Other threads grow theirs.
struct RawThreads {
  std::unordered_map<uint32_t, RawThread> by_tid;
  RawThread* last = nullptr;
  uint32_t last_tid = 0;
  size_t calls_hint = 0, launches_hint = 0;

  RawThread& at(uint32_t tid) {
    if (last == nullptr || last_tid != tid) {
      const bool first = by_tid.empty();
      last = &by_tid[tid];
      last_tid = tid;
      if (first) {
        last->calls.reserve(calls_hint);
        last->launches.reserve(launches_hint);
      }
    }
    return *last;
  }
};

void addCall(RawThreads& threads, uint32_t tid, model::TimeNs start, model::TimeNs end,
             bool blocking) {
  if (!isTimed(start, end)) return;
  auto& t = threads.at(tid);
  t.calls.push_back({start, end});
  if (blocking) t.syncs.push_back({start, end});
}

// A timed GPU record (kernel, copy, memset) as an activity, with its host call when that was
// timed too.
template <class Record>
GpuActivity timedActivity(ActivityKind kind, const Record& r, model::TimeNs call_start,
                          model::TimeNs call_end) {
  GpuActivity a;
  a.start = r.start;
  a.end = r.end;
  if (isTimed(call_start, call_end)) {
    a.launch_start = call_start;
    a.launch_end = call_end;
  }
  a.thread = r.thread;
  a.stream = r.stream;
  a.kind = kind;
  return a;
}

// Sorts the device's activities by (start, end) and builds their union. A live window's
// activities usually arrive in that order already (one stream, or streams whose records the shim
// sends as they end); std::sort would still spend n log n on them, a twentieth of the live ingest.
void sortAndMergeBusy(DeviceActivity& d) {
  auto earlier = [](const GpuActivity& a, const GpuActivity& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  };
  if (!std::is_sorted(d.activities.begin(), d.activities.end(), earlier))
    std::sort(d.activities.begin(), d.activities.end(), earlier);
  d.busy.reserve(d.activities.size());
  for (const auto& a : d.activities) {
    // Sorted by start: extend the last interval or open a new one (mergeInPlace without a sort).
    if (!d.busy.empty() && a.start <= d.busy.back().end) {
      d.busy.back().end = std::max(d.busy.back().end, a.end);
    } else {
      d.busy.push_back({a.start, a.end});
    }
  }
}

// Each device's activities in one allocation (a live window holds ~10^5).
void reserveActivities(const model::ProcessTrace& p, std::map<uint32_t, DeviceActivity>& devices) {
  std::map<uint32_t, size_t> timed;
  auto count = [&](const auto& column) {
    for (const auto& r : column)
      if (isTimed(r.start, r.end)) ++timed[r.device];
  };
  count(p.kernels);
  count(p.copies);
  count(p.memsets);
  for (const auto& [index, n] : timed) {
    auto& d = devices[index];
    d.device = index;
    d.activities.reserve(n);
  }
}

} // namespace

const ThreadHost* ActivityIndex::thread(uint32_t tid) const {
  auto it = threads.find(tid);
  return it == threads.end() ? nullptr : &it->second;
}

ActivityIndex buildActivityIndex(const model::ProcessTrace& p) {
  ActivityIndex x;
  x.process = &p;
  x.pid = p.info.pid;
  x.rank = p.info.rank;

  std::map<uint32_t, DeviceActivity> devices;
  // Records come in long runs of one device (and one thread): the last one found is looked at
  // first. Map entries never move, so the pointers stay valid as others are added.
  DeviceActivity* last_device = nullptr;
  auto device = [&](uint32_t index) -> DeviceActivity& {
    if (last_device && last_device->device == index) return *last_device;
    auto& d = devices[index];
    d.device = index;
    last_device = &d;
    return d;
  };
  reserveActivities(p, devices);
  RawThreads threads;
  threads.calls_hint =
      p.kernels.size() + p.copies.size() + p.memsets.size() + p.syncs.size() + p.api_calls.size();
  threads.launches_hint = p.kernels.size();

  for (const auto& k : p.kernels) {
    addCall(threads, k.thread, k.launch_start, k.launch_end, false);
    if (isTimed(k.launch_start, k.launch_end))
      threads.at(k.thread).launches.push_back({k.launch_start, k.launch_end});
    auto& d = device(k.device);
    if (!isTimed(k.start, k.end)) {
      ++d.untimed;
      continue;
    }
    GpuActivity a = timedActivity(ActivityKind::Kernel, k, k.launch_start, k.launch_end);
    a.name = k.name;
    a.flags = k.flags;
    d.activities.push_back(a);
  }
  for (const auto& c : p.copies) {
    // A synchronous copy blocks its thread for the whole call (device-to-device excepted: the
    // runtime does not wait for those), as in the sync analyzer.
    bool blocking = !c.async && c.direction != model::CopyDirection::DeviceToDevice &&
                    c.direction != model::CopyDirection::PeerToPeer;
    addCall(threads, c.thread, c.call_start, c.call_end, blocking);
    auto& d = device(c.device);
    if (!isTimed(c.start, c.end)) {
      ++d.untimed;
      continue;
    }
    GpuActivity a = timedActivity(ActivityKind::Copy, c, c.call_start, c.call_end);
    a.direction = c.direction;
    d.activities.push_back(a);
  }
  for (const auto& m : p.memsets) {
    addCall(threads, m.thread, m.call_start, m.call_end, false);
    auto& d = device(m.device);
    if (!isTimed(m.start, m.end)) {
      ++d.untimed;
      continue;
    }
    d.activities.push_back(timedActivity(ActivityKind::Memset, m, m.call_start, m.call_end));
  }
  for (const auto& s : p.syncs)
    addCall(threads, s.thread, s.start, s.end, s.kind != model::SyncKind::StreamWaitEvent);
  for (const auto& a : p.api_calls)
    addCall(threads, a.thread, a.start, a.end, false);

  for (auto& [index, d] : devices) {
    sortAndMergeBusy(d);
    x.devices.push_back(std::move(d));
  }
  x.threads.reserve(threads.by_tid.size());
  for (auto& [tid, t] : threads.by_tid) {
    mergeInPlace(t.calls);
    mergeInPlace(t.syncs);
    mergeInPlace(t.launches);
    x.threads.emplace(tid,
                      ThreadHost{std::move(t.calls), std::move(t.syncs), std::move(t.launches)});
  }
  for (const auto& r : p.ranges) {
    if (!isTimed(r.start, r.end)) continue;
    if (r.kind == model::RangeKind::DataLoader) x.data_loader.push_back({r.start, r.end});
    if (r.kind == model::RangeKind::Step) x.step_ranges.push_back(&r);
  }
  mergeInPlace(x.data_loader);
  std::stable_sort(
      x.step_ranges.begin(), x.step_ranges.end(),
      [](const model::Range* a, const model::Range* b) { return a->start < b->start; });
  return x;
}

namespace {

// First interval whose end is after `t`.
std::vector<Interval>::const_iterator firstEndingAfter(const std::vector<Interval>& merged,
                                                       model::TimeNs t) {
  return std::upper_bound(merged.begin(), merged.end(), t,
                          [](model::TimeNs v, const Interval& i) { return v < i.end; });
}

} // namespace

model::TimeNs coveredLength(const std::vector<Interval>& merged, model::TimeNs lo,
                            model::TimeNs hi) {
  model::TimeNs total = 0;
  for (auto it = firstEndingAfter(merged, lo); it != merged.end() && it->start < hi; ++it)
    total += std::min(hi, it->end) - std::max(lo, it->start);
  return total;
}

bool covers(const std::vector<Interval>& merged, model::TimeNs t) {
  auto it = std::lower_bound(merged.begin(), merged.end(), t,
                             [](const Interval& i, model::TimeNs v) { return i.end < v; });
  return it != merged.end() && it->start <= t;
}

void clip(const std::vector<Interval>& merged, model::TimeNs lo, model::TimeNs hi, bool inside,
          std::vector<Interval>& out) {
  if (hi <= lo) return;
  model::TimeNs cursor = lo;
  for (auto it = firstEndingAfter(merged, lo); it != merged.end() && it->start < hi; ++it) {
    model::TimeNs s = std::max(lo, it->start), e = std::min(hi, it->end);
    if (e <= s) continue;
    if (inside) {
      out.push_back({s, e});
    } else if (s > cursor) {
      out.push_back({cursor, s});
    }
    cursor = e;
  }
  if (!inside && cursor < hi) out.push_back({cursor, hi});
}

} // namespace gpuwise::advisor
