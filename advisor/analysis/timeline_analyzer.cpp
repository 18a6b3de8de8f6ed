#include "advisor/analysis/timeline_analyzer.h"

#include "advisor/analysis/activity_index.h"
#include "advisor/analysis/interval_union.h"

#include <algorithm>
#include <map>

namespace gpuwise::advisor {
namespace {

std::optional<double> ratio(model::TimeNs part, model::TimeNs whole) {
  if (whole <= 0) return std::nullopt;
  return static_cast<double>(part) / static_cast<double>(whole);
}

void addTotals(TimelineResult& r, const DeviceTimeline& d) {
  r.span_ns += d.spanNs();
  r.busy_ns += d.busy_ns;
  r.kernel_busy_ns += d.kernel_busy_ns;
  r.copy_busy_ns += d.copy_busy_ns;
  r.memset_busy_ns += d.memset_busy_ns;
  r.copy_exposed_ns += d.copy_exposed_ns;
  r.compute_busy_ns += d.compute_busy_ns;
  r.communication_busy_ns += d.communication_busy_ns;
  r.memory_busy_ns += d.memory_busy_ns;
  r.communication_exposed_ns += d.communication_exposed_ns;
  r.idle.add(d.idle);
  r.timed_kernels += d.timed_kernels;
  r.short_kernels += d.short_kernels;
}

// The length of a union of intervals that arrive sorted by start, inside [lo, hi), without
// keeping them: each merged piece is clipped and counted when the next one begins after it. The
// same figure as merging into a list, clipping it and summing (a window's lists held ~10^5
// intervals each, six of them and one per stream, grown by doubling: a tenth of the live ingest).
class ClippedUnion {
public:
  ClippedUnion(model::TimeNs lo, model::TimeNs hi)
      : lo_(lo), hi_(hi), clipped_(lo != WindowBounds::kMin || hi != WindowBounds::kMax) {}
  void add(model::TimeNs start, model::TimeNs end) {
    if (open_ && start <= end_) {
      end_ = std::max(end_, end);
      return;
    }
    close();
    start_ = start;
    end_ = end;
    open_ = true;
  }
  model::TimeNs length() {
    close();
    return total_;
  }
  // Pieces left inside [lo, hi) (unclipped: every piece, empty ones too, as a merged list has).
  uint64_t pieces() {
    close();
    return pieces_;
  }

private:
  void close() {
    if (!open_) return;
    open_ = false;
    const model::TimeNs s = clipped_ ? std::max(start_, lo_) : start_;
    const model::TimeNs e = clipped_ ? std::min(end_, hi_) : end_;
    if (clipped_ && e <= s) return;
    total_ += e - s;
    ++pieces_;
  }

  model::TimeNs lo_, hi_;
  bool clipped_;
  bool open_ = false;
  model::TimeNs start_ = 0, end_ = 0, total_ = 0;
  uint64_t pieces_ = 0;
};

struct StreamWork {
  explicit StreamWork(model::TimeNs lo, model::TimeNs hi) : busy(lo, hi) {}
  ClippedUnion busy;
  uint64_t kernels = 0, copies = 0, memsets = 0;
};

DeviceTimeline summarise(const ActivityIndex& index, const DeviceActivity& dev,
                         const WindowBounds& w) {
  DeviceTimeline d;
  d.pid = index.pid;
  d.rank = index.rank;
  d.device = dev.device;
  const model::TimeNs lo = w.deviceFrom(dev.device), hi = std::min(w.until, w.count_until);
  d.span_start = std::max(lo, dev.spanStart());
  d.span_end = std::min(hi, dev.spanEnd());
  d.busy_ns = coveredLength(dev.busy, lo, hi); // the busy union inside [lo, hi), uncopied

  // Activities are sorted by start, so each union below receives its intervals in order. The
  // overlaps come from unions: compute and communication together are the kernels, so exposed
  // communication (communication - its overlap with compute) is kernels - compute; exposed copy
  // time is |copies u kernels| - kernels.
  ClippedUnion kernels(lo, hi), copies(lo, hi), memsets(lo, hi), compute(lo, hi),
      communication(lo, hi), memory(lo, hi), copies_or_kernels(lo, hi);
  std::map<uint32_t, StreamWork> streams;
  // Activities come in long runs of one stream: the last one found is looked at first (map
  // entries never move).
  StreamWork* last_stream = nullptr;
  uint32_t last_stream_id = 0;
  for (const auto& a : dev.activities) {
    if (last_stream == nullptr || last_stream_id != a.stream) {
      last_stream = &streams.try_emplace(a.stream, lo, hi).first->second;
      last_stream_id = a.stream;
    }
    auto& s = *last_stream;
    s.busy.add(a.start, a.end);
    const uint64_t owned = a.start >= w.owned_from ? 1 : 0; // else the previous window's
    switch (a.kind) {
    case ActivityKind::Kernel:
      s.kernels += owned;
      d.timed_kernels += owned;
      if (owned && a.end - a.start < kShortKernelNs) ++d.short_kernels;
      kernels.add(a.start, a.end);
      copies_or_kernels.add(a.start, a.end);
      (a.isCommunication() ? communication : compute).add(a.start, a.end);
      break;
    case ActivityKind::Copy:
      s.copies += owned;
      copies.add(a.start, a.end);
      copies_or_kernels.add(a.start, a.end);
      memory.add(a.start, a.end);
      break;
    case ActivityKind::Memset:
      s.memsets += owned;
      memsets.add(a.start, a.end);
      memory.add(a.start, a.end);
      break;
    }
  }
  d.kernel_busy_ns = kernels.length();
  d.copy_busy_ns = copies.length();
  d.memset_busy_ns = memsets.length();
  d.copy_exposed_ns = copies_or_kernels.length() - d.kernel_busy_ns;
  d.compute_busy_ns = compute.length();
  d.communication_busy_ns = communication.length();
  d.memory_busy_ns = memory.length();
  d.communication_exposed_ns = d.kernel_busy_ns - d.compute_busy_ns;
  for (auto& [id, s] : streams) {
    if (s.busy.pieces() == 0 && s.kernels + s.copies + s.memsets == 0) continue;
    StreamBusy b;
    b.stream = id;
    b.busy_ns = s.busy.length();
    b.kernels = s.kernels;
    b.copies = s.copies;
    b.memsets = s.memsets;
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

std::optional<double> TimelineResult::idleShare(IdleCause cause) const {
  if (!known()) return std::nullopt;
  model::TimeNs total = idle.total();
  if (total <= 0) return 0.0;
  return ratio(idle.at(cause), total);
}

TimelineResult analyzeTimeline(const ActivityIndex& index, const IdleOptions& options,
                               std::vector<DeviceIdle>* idle_segments, const WindowBounds* bounds) {
  static const WindowBounds kWhole;
  const WindowBounds& w = bounds ? *bounds : kWhole;
  TimelineResult r;
  for (const auto& dev : index.devices) {
    r.untimed_events += dev.untimed;
    if (dev.activities.empty()) continue;
    auto d = summarise(index, dev, w);
    auto idle = attributeIdle(index, dev, options, w.deviceFrom(dev.device), w.count_until);
    d.idle = idle.breakdown;
    if (idle_segments) idle_segments->push_back(std::move(idle));
    // Only context here (its time was the previous window's): nothing to count.
    if (d.span_end <= d.span_start && d.timed_kernels == 0 && d.streams.empty()) continue;
    d.span_end = std::max(d.span_end, d.span_start);
    addTotals(r, d);
    r.devices.push_back(std::move(d));
  }
  return r;
}

TimelineResult analyzeTimeline(const model::ProcessTrace& p, const IdleOptions& options) {
  return analyzeTimeline(buildActivityIndex(p), options, nullptr);
}

TimelineResult analyzeTimeline(const model::Trace& trace, const IdleOptions& options) {
  TimelineResult r;
  for (const auto& p : trace.processes)
    r.append(analyzeTimeline(p, options));
  return r;
}

void TimelineResult::append(TimelineResult&& other) {
  untimed_events += other.untimed_events;
  for (auto& d : other.devices) {
    addTotals(*this, d);
    devices.push_back(std::move(d));
  }
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
    // Windows of one device: the idle between them is not known to either window, so it is
    // counted as "other" to keep the causes summing to span - busy.
    model::TimeNs idle_before = it->idleNs() + d.idleNs();
    it->span_start = std::min(it->span_start, d.span_start);
    it->span_end = std::max(it->span_end, d.span_end);
    it->busy_ns += d.busy_ns;
    it->kernel_busy_ns += d.kernel_busy_ns;
    it->copy_busy_ns += d.copy_busy_ns;
    it->memset_busy_ns += d.memset_busy_ns;
    it->copy_exposed_ns += d.copy_exposed_ns;
    it->compute_busy_ns += d.compute_busy_ns;
    it->communication_busy_ns += d.communication_busy_ns;
    it->memory_busy_ns += d.memory_busy_ns;
    it->communication_exposed_ns += d.communication_exposed_ns;
    it->timed_kernels += d.timed_kernels;
    it->short_kernels += d.short_kernels;
    it->idle.add(d.idle);
    model::TimeNs between = it->idleNs() - idle_before;
    if (between > 0) it->idle.ns[static_cast<size_t>(IdleCause::Other)] += between;
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
  compute_busy_ns = communication_busy_ns = memory_busy_ns = communication_exposed_ns = 0;
  idle = {};
  timed_kernels = short_kernels = 0;
  for (const auto& d : devices)
    addTotals(*this, d);
}

} // namespace gpuwise::advisor
