#include "advisor/ingest/window_aggregator.h"

#include "advisor/import/heap_tuning.h"

#include <algorithm>
#include <type_traits>
#include <unordered_map>

namespace gpuwise::advisor {
namespace {

using model::TimeNs;

// When a record happens for ownership (the window whose time holds it counts it): GPU records by
// their GPU start (the host call's when untimed), step ranges by their end (a step is analysed
// whole, in the window where it ends), the rest by their start.
TimeNs keyOf(const model::KernelExec& k) {
  return k.start != 0 ? k.start : k.launch_start;
}
TimeNs keyOf(const model::Copy& c) {
  return c.start != 0 ? c.start : c.call_start;
}
TimeNs keyOf(const model::Memset& m) {
  return m.start != 0 ? m.start : m.call_start;
}
TimeNs keyOf(const model::HostSync& s) {
  return s.start;
}
TimeNs keyOf(const model::ApiCall& a) {
  return a.start;
}
TimeNs keyOf(const model::Allocation& a) {
  return a.time;
}
TimeNs keyOf(const model::MemorySample& m) {
  return m.time;
}
TimeNs keyOf(const model::Range& r) {
  return r.kind == model::RangeKind::Step ? r.end : r.start;
}
TimeNs keyOf(const model::DeviceSample& s) {
  return s.time;
}
TimeNs keyOf(const model::PowerSample& s) {
  return s.time;
}
// A cuBLAS call with the kernels it launched: the kernels are owned by their GPU start, shortly
// after the call; one cut between them (rare: a window holds ~250k events) loses that call's
// comparison, not its count.
TimeNs keyOf(const model::BlasCall& b) {
  return b.start;
}
// A collective call with its kernel: as a cuBLAS call, owned by its host call's start.
TimeNs keyOf(const model::Collective& c) {
  return c.start;
}

// The last time a record reaches: what decides whether the next window needs it as context.
TimeNs endOf(const model::KernelExec& k) {
  return std::max(k.end, k.launch_end);
}
TimeNs endOf(const model::Copy& c) {
  return std::max(c.end, c.call_end);
}
TimeNs endOf(const model::Memset& m) {
  return std::max(m.end, m.call_end);
}
TimeNs endOf(const model::HostSync& s) {
  return s.end;
}
TimeNs endOf(const model::ApiCall& a) {
  return a.end;
}
TimeNs endOf(const model::Range& r) {
  return r.end;
}

// Moves the records of `from` with key < until to the end of `to`, widening `span` by them; `from`
// keeps the others in order, and its capacity (the next windows refill it).
template <typename T>
uint64_t takeBefore(std::vector<T>& from, std::vector<T>& to, TimeNs until, TimeNs late_before,
                    size_t context, RecordSpanAccumulator& span) {
  // Room for them at once, and for the `context` records analyse() puts before them: grown by
  // doubling, the window's column (~10^5 records) was copied a dozen times and touched twice its
  // size; without the context's room, prepending it moved the whole column to fresh pages (a
  // third of the live ingest's time, page faults included). Room for all of `from` (about 4/3
  // of what is taken; the pages not written stay untouched) rather than a pass to count them.
  to.reserve(to.size() + from.size() + context);
  uint64_t late = 0;
  size_t w = 0;
  for (size_t i = 0; i < from.size(); ++i) {
    const TimeNs k = keyOf(from[i]);
    if (k < until) {
      if (k != 0 && k < late_before) ++late;
      span.add(from[i]);
      to.push_back(std::move(from[i]));
    } else {
      if (w != i) from[w] = std::move(from[i]);
      ++w;
    }
  }
  from.erase(from.begin() + static_cast<std::ptrdiff_t>(w), from.end());
  return late;
}

// Copies the records of `from` that reach `from_time` or later to the end of `to`, while
// `reaching` (counted across columns) stays within `cap`; counts them all.
template <typename T>
void keepReaching(const std::vector<T>& from, std::vector<T>& to, TimeNs from_time,
                  size_t& reaching, size_t cap) {
  for (const auto& r : from) {
    if (endOf(r) < from_time) continue;
    if (++reaching <= cap) to.push_back(r);
  }
}

// The context before the window's records: it arrived before them, so the columns stay in time
// order, as in the whole trace (the analyzers' sorts are fast on sorted records; after them, the
// context made a sorted column end in a short earlier run, std::sort's worst input: ~5x the time).
template <typename T> void prependAll(std::vector<T>& to, const std::vector<T>& from) {
  if (from.empty()) return;
  to.insert(to.begin(), from.begin(), from.end());
}

template <typename T> void addEnds(const std::vector<T>& v, std::vector<TimeNs>& ends) {
  for (const auto& r : v)
    ends.push_back(endOf(r));
}

// The kinds the next window keeps as context when they reach into it: those with an endOf().
template <typename T>
concept KeptAsContext = requires(const T& r) {
  endOf(r);
};
template <typename Column> using ColumnRecord = typename std::decay_t<Column>::value_type;

} // namespace

size_t recordBytes(const model::ProcessTrace& t) {
  // By capacity: what a vector once held stays touched (resident) after a cut moved it out.
  auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  // A name costs its text and about 64 bytes of string and index entry.
  size_t n = t.names.textBytes() + 64 * t.names.count();
  t.forEachColumn([&](const auto& v) { n += bytes(v); });
  return n;
}

size_t WindowAggregator::heldBytes() const {
  return recordBytes(context_) + carried_allocations_.capacity() * sizeof(model::Allocation);
}

WindowAggregator::WindowAggregator(size_t window_events)
    : window_events_(std::max<size_t>(window_events, 16)) {
  tuneAdvisorHeap();
}

bool WindowAggregator::maybeCut(model::ProcessTrace& pending) {
  if (pending.eventCount() < window_events_) return false;
  // The cut: three quarters of the way through the pending GPU activities (they lag the host
  // records, which are therefore all in by then); the host records' times without GPU records.
  std::vector<TimeNs> keys;
  keys.reserve(pending.kernels.size() + pending.copies.size() + pending.memsets.size());
  for (const auto& k : pending.kernels)
    if (k.start != 0) keys.push_back(k.start);
  for (const auto& c : pending.copies)
    if (c.start != 0) keys.push_back(c.start);
  for (const auto& m : pending.memsets)
    if (m.start != 0) keys.push_back(m.start);
  if (keys.size() < 16) {
    keys.clear();
    for (const auto& s : pending.syncs)
      keys.push_back(keyOf(s));
    for (const auto& a : pending.api_calls)
      keys.push_back(keyOf(a));
    for (const auto& r : pending.ranges)
      keys.push_back(keyOf(r));
    for (const auto& k : pending.kernels)
      keys.push_back(keyOf(k));
    std::erase(keys, TimeNs{0});
  }
  if (keys.empty()) return false;
  auto at = keys.begin() + static_cast<std::ptrdiff_t>(keys.size() * 3 / 4);
  std::nth_element(keys.begin(), at, keys.end());
  TimeNs until = *at;
  // Nor past the host records (they arrive as they end, ranges at their end): where the GPU runs
  // far behind its launches, host records of the GPU's time are still to come.
  std::vector<TimeNs> host;
  for (const auto& s : pending.syncs)
    host.push_back(s.end);
  for (const auto& a : pending.api_calls)
    host.push_back(a.end);
  for (const auto& r : pending.ranges)
    host.push_back(r.end);
  std::erase(host, TimeNs{0});
  if (host.size() >= 16) {
    auto h = host.begin() + static_cast<std::ptrdiff_t>(host.size() * 3 / 4);
    std::nth_element(host.begin(), h, host.end());
    if (*h > bounds_.owned_from) until = std::min(until, *h);
  }
  if (until <= bounds_.owned_from) {
    const TimeNs last = *std::max_element(keys.begin(), keys.end());
    until = last < WindowBounds::kMax ? last + 1 : last; // never past the int64 range
  }
  cut(pending, until);
  return true;
}

void WindowAggregator::cut(model::ProcessTrace& pending, TimeNs until) {
  model::ProcessTrace owned;
  owned.info = pending.info;
  owned.devices = pending.devices;
  owned.names = pending.names;
  const TimeNs late = bounds_.owned_from;
  RecordSpanAccumulator owned_span; // recordSpanOf(owned), found as the records move
  model::RecordSet::forEachColumnPair(pending, owned, [&](auto& from, auto& to) {
    const size_t context = context_.column<ColumnRecord<decltype(from)>>().size();
    const uint64_t late_records = takeBefore(from, to, until, late, context, owned_span);
    // Only spans count as late; samples and allocations are instants, not work of the window.
    if constexpr (requires { from.front().start; }) late_events_ += late_records;
  });
  // A step that began before the cut but ends after it waits for the next window: keep its
  // records from its start.
  TimeNs deferred_step_start = WindowBounds::kMax;
  for (const auto& r : pending.ranges)
    if (r.kind == model::RangeKind::Step && r.start < until)
      deferred_step_start = std::min(deferred_step_start, r.start);

  if (auto span = owned_span.span()) {
    span_lo_ = std::min(span_lo_.value_or(span->start), span->start);
    span_hi_ = std::max(span_hi_.value_or(span->end), span->end);
  }

  WindowBounds bounds = bounds_;
  bounds.until = until;
  // Annotated steps: GPU time up to the end of the last complete step (its host ranges are in).
  TimeNs last_step_end = WindowBounds::kMin;
  for (const auto* v : {&owned.ranges, &context_.ranges})
    for (const auto& r : *v)
      if (r.kind == model::RangeKind::Step) last_step_end = std::max(last_step_end, r.end);
  if (bounds_.annotated_steps || last_step_end != WindowBounds::kMin)
    bounds.count_until = std::min(until, std::max(last_step_end, bounds_.steps_from));
  DeviceAggregates window_devices;
  JobAnalysis window = analyse(owned, bounds, nullptr, &window_devices);
  mergeDevices(devices_done_, window_devices);
  carryAllocations(owned);
  keepContext(owned, window, until, deferred_step_start);
  if (done_) {
    done_->fold(window); // finished when read: analysis()
  } else {
    done_ = std::move(window);
  }
  ++windows_cut_;
}

void WindowAggregator::mergeDevices(DeviceAggregates& into, const DeviceAggregates& window) const {
  // The first split window: every window before was on the one device seen so far.
  if (window.split && !into.split) {
    static const KernelResult kNoKernels;
    static const CopyResult kNoCopies;
    into.promote(done_ ? done_->kernels : kNoKernels, done_ ? done_->copies : kNoCopies);
  }
  into.merge(window);
}

JobAnalysis WindowAggregator::analyse(model::ProcessTrace& owned, const WindowBounds& bounds,
                                      const IngestHealth* health, DeviceAggregates* devices) const {
  model::Trace t;
  t.source.kind = model::SourceKind::Live;
  t.processes.push_back(std::move(owned));
  auto& p = t.processes.front();
  if (devices) {
    // The window's own records (before the carried allocations and the context join them).
    *devices = aggregateDevices(p, devices_done_);
  }
  JobAnalysis a;
  a.source = t.source;
  // The same analyzers as analyzeJob(): per record, from the window's own records (the carried
  // allocations are not events), then the memory level with the allocations live at the start.
  analyzeRecords(t, health, a);
  p.allocations.insert(p.allocations.begin(), carried_allocations_.begin(),
                       carried_allocations_.end());
  analyzeMemoryLevels(t, a);
  // In time, with the context.
  model::RecordSet::forEachColumnPair(p, context_,
                                      [](auto& to, const auto& from) { prependAll(to, from); });
  auto index = buildActivityIndex(p);
  std::vector<DeviceIdle> idle;
  a.timeline = analyzeTimeline(index, {}, &idle, &bounds);
  a.communication.attachTimeline(a.timeline);
  if (auto steps = analyzeSteps(index, idle, {}, &bounds))
    a.steps.processes.push_back(std::move(*steps));
  analyzeSummary(t, a);
  owned = std::move(p);
  return a;
}

void WindowAggregator::carryAllocations(const model::ProcessTrace& owned) {
  // The same running sum as the memory analyzer, up to the cut.
  std::vector<const model::Allocation*> order;
  for (const auto& a : owned.allocations)
    order.push_back(&a);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) { return a->time < b->time; });
  std::map<uint32_t, uint64_t> current;
  std::map<uint32_t, model::Allocation> last; // device -> a record of it (kind, time)
  std::unordered_map<uint64_t, const model::Allocation*> live;
  for (const auto* a : order) {
    auto& cur = current[a->device];
    last[a->device] = *a;
    if (!a->is_free) {
      cur += a->bytes;
      if (a->address != 0) live[a->address] = a;
      continue;
    }
    uint64_t bytes = a->bytes;
    if (auto it = live.find(a->address); a->address != 0 && it != live.end()) {
      if (bytes == 0) bytes = it->second->bytes;
      live.erase(it);
    }
    cur -= std::min(cur, bytes);
  }
  std::vector<model::Allocation> carried;
  std::map<uint32_t, uint64_t> addressed;
  for (const auto& [address, a] : live) {
    carried.push_back(*a);
    addressed[a->device] += a->bytes;
  }
  for (const auto& [device, cur] : current) {
    const uint64_t rest = cur - std::min(cur, addressed[device]);
    if (rest == 0) continue;
    model::Allocation net = last[device];
    net.address = 0;
    net.bytes = rest;
    net.is_free = false;
    carried.push_back(net);
  }
  carried_allocations_ = std::move(carried);
}

void WindowAggregator::keepContext(model::ProcessTrace& all, const JobAnalysis& window,
                                   TimeNs until, TimeNs deferred_step_start) {
  TimeNs context_from = WindowBounds::kMax;
  for (const auto& d : window.timeline.devices) {
    bounds_.device_from[d.device] = d.span_end;
    context_from = std::min(context_from, d.span_end);
  }
  if (context_from == WindowBounds::kMax) context_from = until;
  bool annotated = false;
  for (const auto& p : window.steps.processes) {
    if (p.source == StepSource::Nvtx || p.source == StepSource::ProfilerStep) annotated = true;
    if (p.source == StepSource::Inferred && !p.steps.empty())
      bounds_.steps_from = p.steps.back().end;
  }
  // Annotated steps: the next one began where the last one seen ended (its range arrives when it
  // ends), so its records are kept from there.
  TimeNs last_step_end = WindowBounds::kMin;
  for (const auto& r : all.ranges)
    if (r.kind == model::RangeKind::Step) last_step_end = std::max(last_step_end, r.end);
  if (annotated || last_step_end != WindowBounds::kMin || deferred_step_start != WindowBounds::kMax)
    bounds_.annotated_steps = true;
  if (bounds_.annotated_steps && last_step_end != WindowBounds::kMin)
    bounds_.steps_from = std::max(bounds_.steps_from, last_step_end);
  context_from = std::min({context_from, bounds_.steps_from, deferred_step_start});

  // Bounded context: half a window, or eight windows for an annotated step still open (a step is
  // analysed whole; one longer than that loses its start and its figures cover only the rest). A
  // process whose steps cannot be inferred does not keep its whole run.
  // Until the first step is known (the first step range arrives when that step ends), the first
  // eight windows keep as much, so the first step is analysed whole too.
  const bool first_step_open = bounds_.steps_from == WindowBounds::kMin && windows_cut_ < 8;
  const size_t cap =
      bounds_.annotated_steps || first_step_open ? window_events_ * 8 : window_events_ / 2;
  // Kept in one pass over the window, as long as they fit the cap (usually a few records); over
  // it, the ends are gathered to find where the cap falls, and the context taken again from there.
  model::ProcessTrace next;
  size_t reaching = 0;
  auto keep = [&](size_t cap_now) {
    model::RecordSet::forEachColumnPair(all, next, [&](const auto& from, auto& to) {
      if constexpr (KeptAsContext<ColumnRecord<decltype(from)>>)
        keepReaching(from, to, context_from, reaching, cap_now);
    });
  };
  keep(cap);
  if (reaching > cap) { // then more records than the cap are of the kinds kept
    size_t kept_kinds = 0;
    all.forEachColumn([&](const auto& v) {
      if constexpr (KeptAsContext<ColumnRecord<decltype(v)>>) kept_kinds += v.size();
    });
    std::vector<TimeNs> ends;
    ends.reserve(kept_kinds);
    all.forEachColumn([&](const auto& v) {
      if constexpr (KeptAsContext<ColumnRecord<decltype(v)>>) addEnds(v, ends);
    });
    auto at = ends.end() - static_cast<std::ptrdiff_t>(cap);
    std::nth_element(ends.begin(), at, ends.end());
    context_from = std::max(context_from, *at);
    bounds_.steps_from = std::max(bounds_.steps_from, context_from);
    next = model::ProcessTrace{};
    reaching = 0;
    keep(SIZE_MAX);
  }
  context_ = std::move(next);
  bounds_.owned_from = until;
}

JobAnalysis WindowAggregator::analysis(model::ProcessTrace pending, const StreamHealth* health,
                                       DeviceAggregates* devices) const {
  // Every pending record belongs to the open window.
  IngestHealth one;
  if (health) one.streams.push_back(*health);
  DeviceAggregates open_devices;
  JobAnalysis a =
      analyse(pending, bounds_, health ? &one : nullptr, devices ? &open_devices : nullptr);
  if (devices) {
    *devices = devices_done_;
    mergeDevices(*devices, open_devices);
  }
  if (!done_) return a;
  JobAnalysis all = *done_;
  all.merge(a); // the open window brings the stream's cumulative drops, shim cost and health
  return all;
}

std::optional<TimeNs> WindowAggregator::wallNs(const model::ProcessTrace& pending) const {
  if (pending.wall_start != 0 && pending.wall_end != 0 && pending.wall_end >= pending.wall_start)
    return pending.wall_end - pending.wall_start;
  auto lo = span_lo_, hi = span_hi_;
  if (auto span = recordSpanOf(pending)) {
    lo = std::min(lo.value_or(span->start), span->start);
    hi = std::max(hi.value_or(span->end), span->end);
  }
  if (!lo || !hi) return std::nullopt;
  return *hi - *lo;
}

} // namespace gpuwise::advisor
