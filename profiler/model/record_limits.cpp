#include "profiler/model/record_limits.h"

#include "profiler/model/text_bytes.h"

#include <algorithm>
#include <limits>
#include <set>

namespace gpuwise::model {
namespace {

// "...#" and 16 hex digits.
constexpr size_t kNameHashSuffix = 20;

void cut(std::string_view name, std::string& out) {
  size_t keep = kMaxNameBytes - kNameHashSuffix;
  // Never split a UTF-8 sequence: the reports are JSON and HTML, which must stay valid UTF-8.
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80)
    --keep;
  static constexpr char kHex[] = "0123456789abcdef";
  const uint64_t h = fnv1a64(name);
  out.assign(name.substr(0, keep));
  out += "...#";
  for (int shift = 60; shift >= 0; shift -= 4)
    out += kHex[(h >> shift) & 0xF];
}

// The judge of one set of records: the longest duration it accepts comes from their starts.
class TimeJudge {
public:
  explicit TimeJudge(TimeNs start_span) {
    max_duration_ = start_span > std::numeric_limits<TimeNs>::max() / kAbsurdDurationFactor
                        ? std::numeric_limits<TimeNs>::max()
                        : std::max(start_span * kAbsurdDurationFactor, kAbsurdDurationFloorNs);
  }
  bool badTime(TimeNs t) const { return !plausibleTime(t); }
  bool badSpan(TimeNs start, TimeNs end) const {
    if (!plausibleTime(start) || !plausibleTime(end)) return true;
    if (start == 0 || end == 0) return false; // one end unknown: not an interval, not absurd
    return end < start || end - start > max_duration_;
  }

private:
  TimeNs max_duration_ = 0;
};

struct StartSpan {
  TimeNs lo = std::numeric_limits<TimeNs>::max(), hi = std::numeric_limits<TimeNs>::min();
  void add(TimeNs t) {
    if (t == 0 || !plausibleTime(t)) return;
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  }
  TimeNs width() const { return hi >= lo ? hi - lo : 0; }
};

template <typename T, typename Fn> void forEachFrom(const std::vector<T>& v, size_t from, Fn fn) {
  for (size_t i = from; i < v.size(); ++i)
    fn(v[i]);
}

template <typename T, typename Bad> uint64_t eraseFrom(std::vector<T>& v, size_t from, Bad bad) {
  auto first = v.begin() + std::ptrdiff_t(std::min(from, v.size()));
  auto kept_end = std::remove_if(first, v.end(), bad);
  const auto n = uint64_t(v.end() - kept_end);
  v.erase(kept_end, v.end());
  return n;
}

} // namespace

std::string_view boundedName(std::string_view name, std::string& storage) {
  if (name.size() <= kMaxNameBytes) return name;
  cut(name, storage);
  return storage;
}

bool boundName(std::string& name) {
  if (name.size() <= kMaxNameBytes) return false;
  std::string out;
  cut(name, out);
  name = std::move(out);
  return true;
}

RecordMarks RecordMarks::of(const ProcessTrace& t) {
  return {t.kernels.size(),        t.copies.size(),      t.memsets.size(),        t.syncs.size(),
          t.api_calls.size(),      t.allocations.size(), t.memory_samples.size(), t.ranges.size(),
          t.device_samples.size(), t.blas_calls.size()};
}

uint64_t dropAbsurdTimes(ProcessTrace& t, const RecordMarks& from) {
  StartSpan starts;
  auto spanStart = [&](const auto& r) { starts.add(r.start); };
  auto instant = [&](const auto& r) { starts.add(r.time); };
  forEachFrom(t.kernels, from.kernels, spanStart);
  forEachFrom(t.copies, from.copies, spanStart);
  forEachFrom(t.memsets, from.memsets, spanStart);
  forEachFrom(t.syncs, from.syncs, spanStart);
  forEachFrom(t.api_calls, from.api_calls, spanStart);
  forEachFrom(t.ranges, from.ranges, spanStart);
  forEachFrom(t.blas_calls, from.blas_calls, spanStart);
  forEachFrom(t.allocations, from.allocations, instant);
  forEachFrom(t.memory_samples, from.memory_samples, instant);
  forEachFrom(t.device_samples, from.device_samples, instant);

  const TimeJudge judge(starts.width());
  auto span = [&](const auto& r) { return judge.badSpan(r.start, r.end); };
  auto at = [&](const auto& r) { return judge.badTime(r.time); };
  uint64_t n = 0;
  n += eraseFrom(t.kernels, from.kernels, [&](const KernelExec& k) {
    return span(k) || judge.badSpan(k.launch_start, k.launch_end);
  });
  n += eraseFrom(t.copies, from.copies,
                 [&](const Copy& c) { return span(c) || judge.badSpan(c.call_start, c.call_end); });
  n += eraseFrom(t.memsets, from.memsets, [&](const Memset& m) {
    return span(m) || judge.badSpan(m.call_start, m.call_end);
  });
  n += eraseFrom(t.syncs, from.syncs, span);
  n += eraseFrom(t.api_calls, from.api_calls, span);
  n += eraseFrom(t.ranges, from.ranges, span);
  n += eraseFrom(t.blas_calls, from.blas_calls, span);
  n += eraseFrom(t.allocations, from.allocations, at);
  n += eraseFrom(t.memory_samples, from.memory_samples, at);
  n += eraseFrom(t.device_samples, from.device_samples, at);
  t.events_dropped += n;
  t.limits.absurd_times += n;
  return n;
}

uint64_t boundDevices(std::span<ProcessTrace> processes) {
  std::set<uint32_t> used;
  auto note = [&](const auto& v) {
    for (const auto& r : v)
      used.insert(r.device);
  };
  for (const auto& p : processes) {
    note(p.kernels);
    note(p.copies);
    note(p.memsets);
    note(p.syncs);
    note(p.allocations);
    note(p.memory_samples);
    note(p.device_samples);
    note(p.blas_calls);
    for (const auto& r : p.ranges)
      if (r.kind == RangeKind::GpuAnnotation) used.insert(r.device);
  }
  if (used.size() <= kMaxDevicesPerTrace) return 0;
  // The lowest indices: the real devices of a process are numbered from 0.
  const uint32_t highest_kept = *std::next(used.begin(), std::ptrdiff_t(kMaxDevicesPerTrace - 1));
  auto off = [&](const auto& r) { return r.device > highest_kept; };
  for (auto& p : processes) {
    uint64_t n = 0;
    n += eraseFrom(p.kernels, 0, off);
    n += eraseFrom(p.copies, 0, off);
    n += eraseFrom(p.memsets, 0, off);
    n += eraseFrom(p.syncs, 0, off);
    n += eraseFrom(p.allocations, 0, off);
    n += eraseFrom(p.memory_samples, 0, off);
    n += eraseFrom(p.device_samples, 0, off);
    n += eraseFrom(p.blas_calls, 0, off);
    n += eraseFrom(p.ranges, 0, [&](const Range& r) {
      return r.kind == RangeKind::GpuAnnotation && r.device > highest_kept;
    });
    p.events_dropped += n;
  }
  const uint64_t dropped = used.size() - kMaxDevicesPerTrace;
  if (!processes.empty()) processes.front().limits.devices_dropped += dropped;
  return dropped;
}

uint64_t boundIdentity(ProcessTrace& t) {
  uint64_t n = 0;
  for (std::string* s : {&t.info.command, &t.info.host, &t.info.pod, &t.info.ns, &t.info.container,
                         &t.info.tier_reason})
    n += boundName(*s);
  for (auto& d : t.devices)
    n += boundName(d.name) + boundName(d.uuid) + boundName(d.mig_profile);
  t.limits.names_truncated += n + t.names.truncated();
  return n;
}

} // namespace gpuwise::model
