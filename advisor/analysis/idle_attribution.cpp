#include "advisor/analysis/idle_attribution.h"

#include <algorithm>

namespace gpuwise::advisor {
namespace {

struct Piece {
  Interval span;
  IdleCause cause;
  bool inferred_input = false;
};

class Emitter {
public:
  explicit Emitter(DeviceIdle& out) : out_(out) {}

  // Gaps of a live window's context (counted by the previous window) still give segments (the
  // steps need them) but add nothing to the breakdown.
  void setCounting(bool counting) { counting_ = counting; }
  IdleBreakdown& counts() { return counting_ ? out_.breakdown : discarded_; }

  void add(model::TimeNs start, model::TimeNs end, IdleCause cause, bool inferred_input = false) {
    if (end <= start) return;
    auto& b = counts();
    b.ns[static_cast<size_t>(cause)] += end - start;
    if (cause == IdleCause::Input)
      (inferred_input ? b.input_inferred_ns : b.input_data_loader_ns) += end - start;
    auto& segs = out_.segments;
    if (!segs.empty() && segs.back().end == start && segs.back().cause == cause &&
        segs.back().inferred_input == inferred_input) {
      segs.back().end = end;
    } else {
      segs.push_back({start, end, cause, inferred_input});
    }
  }

private:
  DeviceIdle& out_;
  IdleBreakdown discarded_;
  bool counting_ = true;
};

// The activity that ends the gap at g1: of those starting exactly then, the one launched first.
const GpuActivity& nextActivity(const std::vector<GpuActivity>& acts, size_t i) {
  const GpuActivity* best = &acts[i];
  for (size_t j = i + 1; j < acts.size() && acts[j].start == acts[i].start; ++j) {
    const auto& c = acts[j];
    if (c.launchKnown() && (!best->launchKnown() || c.launch_start < best->launch_start)) best = &c;
  }
  return *best;
}

// The host had not launched N when the gap began: split W = [g0, w1) by what thread T did.
void splitHostWindow(const ActivityIndex& index, const GpuActivity& next, model::TimeNs g0,
                     model::TimeNs w1, std::vector<Piece>& pieces) {
  static const ThreadHost kNoHost;
  const ThreadHost* host = index.thread(next.thread);
  if (!host) host = &kNoHost;
  // DataLoader ranges, where the trace has them, are the evidence for input: the host's time
  // outside them is its own work, not the loader's.
  const bool ends_in_h2d = next.isHostToDeviceCopy() && !index.hasDataLoader();
  const bool drained_by_sync = covers(host->syncs, g0);

  std::vector<Interval> in_loader, rest, scratch, scratch2;
  clip(index.data_loader, g0, w1, true, in_loader);
  for (const auto& i : in_loader)
    pieces.push_back({i, IdleCause::Input, false});
  clip(index.data_loader, g0, w1, false, rest);

  for (const auto& r : rest) {
    scratch.clear();
    if (ends_in_h2d) {
      // Outside every CUDA call before the next batch's copy: the host preparing input.
      std::vector<Interval> outside;
      clip(host->calls, r.start, r.end, false, outside);
      for (const auto& o : outside)
        pieces.push_back({o, IdleCause::Input, true});
      clip(host->calls, r.start, r.end, true, scratch);
    } else {
      scratch.push_back(r);
    }
    for (const auto& s : scratch) {
      if (drained_by_sync) {
        pieces.push_back({s, IdleCause::Sync});
        continue;
      }
      scratch2.clear();
      clip(host->syncs, s.start, s.end, true, scratch2);
      for (const auto& x : scratch2)
        pieces.push_back({x, IdleCause::Sync});
      scratch2.clear();
      clip(host->syncs, s.start, s.end, false, scratch2);
      for (const auto& x : scratch2)
        pieces.push_back({x, IdleCause::HostBound});
    }
  }
  std::sort(pieces.begin(), pieces.end(),
            [](const Piece& a, const Piece& b) { return a.span.start < b.span.start; });
}

} // namespace

const char* toString(IdleCause c) {
  switch (c) {
  case IdleCause::HostBound: return "host_bound";
  case IdleCause::LaunchOverhead: return "launch_overhead";
  case IdleCause::Sync: return "sync";
  case IdleCause::Input: return "input";
  case IdleCause::Other: break;
  }
  return "other";
}

model::TimeNs IdleBreakdown::total() const {
  model::TimeNs t = 0;
  for (auto v : ns)
    t += v;
  return t;
}

void IdleBreakdown::add(const IdleBreakdown& o) {
  for (size_t i = 0; i < kIdleCauses; ++i)
    ns[i] += o.ns[i];
  input_data_loader_ns += o.input_data_loader_ns;
  input_inferred_ns += o.input_inferred_ns;
  gaps += o.gaps;
  launch_overhead_gaps += o.launch_overhead_gaps;
  host_bound_gaps += o.host_bound_gaps;
}

namespace {

// The host was only launching during W = [g0, w1): a gap between two kernels in which the
// launching thread made no call but kernel launches, spent less than
// host_launch_max_outside_ns outside them (the loop between two launches), no sync, and no
// DataLoader range overlaps. Time inside launch calls counts whatever its length: a host
// descheduled inside the launch path still kept the GPU waiting for a launch.
bool onlyLaunching(const ActivityIndex& index, const GpuActivity* prev, const GpuActivity& next,
                   model::TimeNs g0, model::TimeNs w1, const IdleOptions& options) {
  if (!prev || prev->kind != ActivityKind::Kernel || next.kind != ActivityKind::Kernel)
    return false;
  const ThreadHost* host = index.thread(next.thread);
  if (!host || covers(host->syncs, g0) || coveredLength(host->syncs, g0, w1) > 0) return false;
  if (coveredLength(index.data_loader, g0, w1) > 0) return false;
  const model::TimeNs in_calls = coveredLength(host->calls, g0, w1);
  if (w1 - g0 - in_calls >= options.host_launch_max_outside_ns) return false;
  return in_calls == coveredLength(host->launches, g0, w1);
}

// Splits one gap [g0, g1) ended by `next` (opened by `prev`, nullptr before the first activity).
void classifyGap(const ActivityIndex& index, const GpuActivity* prev, const GpuActivity& next,
                 model::TimeNs g0, model::TimeNs g1, const IdleOptions& options, Emitter& emit,
                 IdleBreakdown& counts) {
  ++counts.gaps;
  const bool queued = !next.launchKnown() || next.launch_start < g0;
  if (queued && prev && prev->kind == ActivityKind::Kernel && next.kind == ActivityKind::Kernel &&
      g1 - g0 < options.launch_overhead_max_gap_ns) {
    ++counts.launch_overhead_gaps;
    emit.add(g0, g1, IdleCause::LaunchOverhead);
  } else if (!next.launchKnown()) {
    // Nothing is known of the host's side, except what the DataLoader ranges say.
    model::TimeNs cursor = g0;
    std::vector<Interval> loader;
    clip(index.data_loader, g0, g1, true, loader);
    for (const auto& l : loader) {
      emit.add(cursor, l.start, IdleCause::Other);
      emit.add(l.start, l.end, IdleCause::Input);
      cursor = l.end;
    }
    emit.add(cursor, g1, IdleCause::Other);
  } else if (next.launch_start <= g0) {
    emit.add(g0, g1, IdleCause::Other);
  } else {
    const model::TimeNs w1 = std::min(next.launch_start, g1);
    if (onlyLaunching(index, prev, next, g0, w1, options)) {
      ++counts.launch_overhead_gaps;
      emit.add(g0, g1, IdleCause::LaunchOverhead);
      return;
    }
    std::vector<Piece> pieces;
    splitHostWindow(index, next, g0, w1, pieces);
    bool host_bound = false;
    for (const auto& p : pieces) {
      emit.add(p.span.start, p.span.end, p.cause, p.inferred_input);
      host_bound = host_bound || p.cause == IdleCause::HostBound;
    }
    if (w1 < g1) {
      const Piece* tail = pieces.empty() ? nullptr : &pieces.back();
      emit.add(w1, g1, tail ? tail->cause : IdleCause::HostBound, tail && tail->inferred_input);
      host_bound = host_bound || !tail;
    }
    if (host_bound) ++counts.host_bound_gaps;
  }
}

} // namespace

DeviceIdle attributeIdle(const ActivityIndex& index, const DeviceActivity& device,
                         const IdleOptions& options, model::TimeNs count_from,
                         model::TimeNs count_until) {
  DeviceIdle out;
  out.device = device.device;
  Emitter emit(out);
  const auto& acts = device.activities;
  if (acts.empty()) return out;
  // At most a segment or two per gap; a live window's device has ~10^5 gaps, whose segments
  // were grown by doubling on fresh pages. Room for one per activity (pages never written are
  // never touched).
  out.segments.reserve(acts.size());
  model::TimeNs busy_end = acts[0].end;
  size_t last = 0; // the activity whose end is busy_end
  for (size_t i = 1; i < acts.size(); ++i) {
    const auto& a = acts[i];
    if (a.start > busy_end) {
      emit.setCounting(busy_end >= count_from && busy_end < count_until);
      classifyGap(index, &acts[last], nextActivity(acts, i), busy_end, a.start, options, emit,
                  emit.counts());
    }
    if (a.end > busy_end) {
      busy_end = a.end;
      last = i;
    }
  }
  return out;
}

std::vector<IdleSegment> attributeIdleBefore(const ActivityIndex& index,
                                             const DeviceActivity& device, model::TimeNs from,
                                             const IdleOptions& options) {
  DeviceIdle out;
  if (device.activities.empty() || from >= device.activities.front().start) return {};
  Emitter emit(out);
  classifyGap(index, nullptr, nextActivity(device.activities, 0), from,
              device.activities.front().start, options, emit, out.breakdown);
  return std::move(out.segments);
}

} // namespace gpuwise::advisor
