#include "profiler/model/record_limits.h"

#include "profiler/model/text_bytes.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <type_traits>

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

// A span's start, an instant's time.
template <typename R> TimeNs startOf(const R& r) {
  if constexpr (requires { r.start; })
    return r.start;
  else
    return r.time;
}

// Absurd: an absurd time, or a span (the record's, and the host call's it carries) that is.
template <typename R> bool absurd(const TimeJudge& judge, const R& r) {
  if constexpr (requires { r.start; }) {
    if (judge.badSpan(r.start, r.end)) return true;
    if constexpr (requires { r.launch_start; }) return judge.badSpan(r.launch_start, r.launch_end);
    if constexpr (requires { r.call_start; }) return judge.badSpan(r.call_start, r.call_end);
    return false;
  } else {
    return judge.badTime(r.time);
  }
}

// The device a record names, where it names one: ranges only as GPU annotations, API calls none.
template <typename R> std::optional<uint32_t> deviceOf(const R& r) {
  if constexpr (std::is_same_v<R, Range>) {
    if (r.kind != RangeKind::GpuAnnotation) return std::nullopt;
    return r.device;
  } else if constexpr (requires { r.device; }) {
    return r.device;
  } else {
    return std::nullopt;
  }
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

RecordMarks RecordMarks::of(const RecordSet& t) {
  RecordMarks m;
  size_t column = 0;
  t.forEachColumn([&](const auto& v) { m.sizes[column++] = v.size(); });
  return m;
}

void RecordMarks::restore(RecordSet& t) const {
  size_t column = 0;
  t.forEachColumn([&](auto& v) { v.resize(std::min(v.size(), sizes[column++])); });
}

uint64_t dropAbsurdTimes(ProcessTrace& t, const RecordMarks& from) {
  StartSpan starts;
  size_t column = 0;
  t.forEachColumn([&](const auto& v) {
    forEachFrom(v, from.sizes[column++], [&](const auto& r) { starts.add(startOf(r)); });
  });

  const TimeJudge judge(starts.width());
  uint64_t n = 0;
  column = 0;
  t.forEachColumn([&](auto& v) {
    n += eraseFrom(v, from.sizes[column++], [&](const auto& r) { return absurd(judge, r); });
  });
  t.events_dropped += n;
  t.limits.absurd_times += n;
  return n;
}

uint64_t boundDevices(std::span<ProcessTrace> processes) {
  std::set<uint32_t> used;
  for (const auto& p : processes) {
    p.forEachColumn([&](const auto& v) {
      for (const auto& r : v)
        if (auto d = deviceOf(r)) used.insert(*d);
    });
  }
  if (used.size() <= kMaxDevicesPerTrace) return 0;
  // The lowest indices: the real devices of a process are numbered from 0.
  const uint32_t highest_kept = *std::next(used.begin(), std::ptrdiff_t(kMaxDevicesPerTrace - 1));
  auto off = [&](const auto& r) {
    auto d = deviceOf(r);
    return d && *d > highest_kept;
  };
  for (auto& p : processes) {
    uint64_t n = 0;
    p.forEachColumn([&](auto& v) { n += eraseFrom(v, 0, off); });
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
