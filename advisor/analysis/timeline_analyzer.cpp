#include "advisor/analysis/timeline_analyzer.h"

#include "advisor/analysis/interval_union.h"

#include <algorithm>
#include <map>

namespace gpuwise::advisor {
namespace {

enum Activity { kKernel, kCopy, kMemset, kActivities };

struct StreamWork {
  std::vector<Interval> intervals;
  uint64_t counts[kActivities] = {};
};

struct DeviceWork {
  std::vector<Interval> by_activity[kActivities];
  std::map<uint32_t, StreamWork> streams;
};

std::optional<double> ratio(model::TimeNs idle, model::TimeNs span) {
  if (span <= 0) return std::nullopt;
  return static_cast<double>(idle) / static_cast<double>(span);
}

void addTotals(TimelineResult& r, const DeviceTimeline& d) {
  r.span_ns += d.spanNs();
  r.busy_ns += d.busy_ns;
  r.kernel_busy_ns += d.kernel_busy_ns;
  r.copy_busy_ns += d.copy_busy_ns;
  r.memset_busy_ns += d.memset_busy_ns;
  r.copy_exposed_ns += d.copy_exposed_ns;
}

DeviceTimeline summarise(const model::ProcessInfo& info, uint32_t device, DeviceWork& w) {
  DeviceTimeline d;
  d.pid = info.pid;
  d.rank = info.rank;
  d.device = device;
  for (auto& v : w.by_activity)
    mergeInPlace(v);
  auto all = unite(unite(w.by_activity[kKernel], w.by_activity[kCopy]), w.by_activity[kMemset]);
  d.span_start = all.front().start;
  d.span_end = all.back().end;
  d.busy_ns = totalLength(all);
  d.kernel_busy_ns = totalLength(w.by_activity[kKernel]);
  d.copy_busy_ns = totalLength(w.by_activity[kCopy]);
  d.memset_busy_ns = totalLength(w.by_activity[kMemset]);
  d.copy_exposed_ns = d.copy_busy_ns - overlapLength(w.by_activity[kCopy], w.by_activity[kKernel]);
  for (auto& [id, s] : w.streams) {
    StreamBusy b;
    b.stream = id;
    b.busy_ns = unionLength(std::move(s.intervals));
    b.kernels = s.counts[kKernel];
    b.copies = s.counts[kCopy];
    b.memsets = s.counts[kMemset];
    d.streams.push_back(b);
  }
  return d;
}

} // namespace

std::optional<double> DeviceTimeline::idleRatio() const {
  return ratio(idleNs(), spanNs());
}

std::optional<double> TimelineResult::idleRatio() const {
  if (!known()) return std::nullopt;
  return ratio(span_ns - busy_ns, span_ns);
}

TimelineResult analyzeTimeline(const model::ProcessTrace& p) {
  TimelineResult r;
  std::map<uint32_t, DeviceWork> devices;
  auto add = [&](Activity a, model::TimeNs start, model::TimeNs end, uint32_t device,
                 uint32_t stream) {
    if (!isTimed(start, end)) {
      ++r.untimed_events;
      return;
    }
    auto& dev = devices[device];
    dev.by_activity[a].push_back({start, end});
    auto& s = dev.streams[stream];
    s.intervals.push_back({start, end});
    ++s.counts[a];
  };
  for (const auto& k : p.kernels)
    add(kKernel, k.start, k.end, k.device, k.stream);
  for (const auto& c : p.copies)
    add(kCopy, c.start, c.end, c.device, c.stream);
  for (const auto& m : p.memsets)
    add(kMemset, m.start, m.end, m.device, m.stream);

  for (auto& [index, work] : devices) {
    r.devices.push_back(summarise(p.info, index, work));
    addTotals(r, r.devices.back());
  }
  return r;
}

TimelineResult analyzeTimeline(const model::Trace& trace) {
  TimelineResult r;
  for (const auto& p : trace.processes) {
    auto one = analyzeTimeline(p);
    r.untimed_events += one.untimed_events;
    for (auto& d : one.devices) {
      addTotals(r, d);
      r.devices.push_back(std::move(d));
    }
  }
  return r;
}

void TimelineResult::merge(const TimelineResult& other) {
  untimed_events += other.untimed_events;
  for (const auto& d : other.devices) {
    auto it = std::find_if(devices.begin(), devices.end(), [&](const DeviceTimeline& x) {
      return x.pid == d.pid && x.rank == d.rank && x.device == d.device;
    });
    if (it == devices.end()) {
      devices.push_back(d);
      continue;
    }
    it->span_start = std::min(it->span_start, d.span_start);
    it->span_end = std::max(it->span_end, d.span_end);
    it->busy_ns += d.busy_ns;
    it->kernel_busy_ns += d.kernel_busy_ns;
    it->copy_busy_ns += d.copy_busy_ns;
    it->memset_busy_ns += d.memset_busy_ns;
    it->copy_exposed_ns += d.copy_exposed_ns;
    for (const auto& s : d.streams) {
      auto sit = std::find_if(it->streams.begin(), it->streams.end(),
                              [&](const StreamBusy& x) { return x.stream == s.stream; });
      if (sit == it->streams.end()) {
        it->streams.push_back(s);
      } else {
        sit->busy_ns += s.busy_ns;
        sit->kernels += s.kernels;
        sit->copies += s.copies;
        sit->memsets += s.memsets;
      }
    }
    std::sort(it->streams.begin(), it->streams.end(),
              [](const StreamBusy& a, const StreamBusy& b) { return a.stream < b.stream; });
  }
  std::sort(devices.begin(), devices.end(), [](const DeviceTimeline& a, const DeviceTimeline& b) {
    if (a.pid != b.pid) return a.pid < b.pid;
    return a.rank != b.rank ? a.rank < b.rank : a.device < b.device;
  });
  span_ns = busy_ns = kernel_busy_ns = copy_busy_ns = memset_busy_ns = copy_exposed_ns = 0;
  for (const auto& d : devices)
    addTotals(*this, d);
}

} // namespace gpuwise::advisor
