#include "advisor/analysis/step_analyzer.h"

#include "advisor/analysis/step_inference.h"
#include "advisor/analysis/timeline_analyzer.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace gpuwise::advisor {
namespace {

bool isProfilerStep(std::string_view name) {
  return name.rfind("ProfilerStep#", 0) == 0;
}

// Annotated step windows: ProfilerStep#N when any, else the other Step ranges; outermost only.
std::vector<const model::Range*> annotatedSteps(const ActivityIndex& index, StepSource* source) {
  std::vector<const model::Range*> profiler, other;
  for (const auto* r : index.step_ranges) {
    bool ps = index.process && isProfilerStep(index.process->names.get(r->name));
    (ps ? profiler : other).push_back(r);
  }
  auto& chosen = profiler.empty() ? other : profiler;
  *source = chosen.empty()     ? StepSource::None
            : profiler.empty() ? StepSource::Nvtx
                               : StepSource::ProfilerStep;
  std::vector<const model::Range*> out;
  for (const auto* r : chosen) {
    if (!out.empty() && r->start < out.back()->end) continue; // nested in, or overlapping, the last
    out.push_back(r);
  }
  return out;
}

// Every timed idle segment overlapping [lo, hi) adds its overlap to its cause.
void addIdle(const std::vector<IdleSegment>& segs, model::TimeNs lo, model::TimeNs hi,
             std::array<model::TimeNs, kIdleCauses>& out) {
  auto it = std::upper_bound(segs.begin(), segs.end(), lo,
                             [](model::TimeNs t, const IdleSegment& s) { return t < s.end; });
  for (; it != segs.end() && it->start < hi; ++it) {
    model::TimeNs s = std::max(lo, it->start), e = std::min(hi, it->end);
    if (e > s) out[static_cast<size_t>(it->cause)] += e - s;
  }
}

double percentile(const std::vector<model::TimeNs>& sorted, double q) {
  // Linear interpolation between closest ranks (numpy's default), so p50 of two values is their
  // mean.
  double pos = q * double(sorted.size() - 1);
  size_t lo = size_t(pos);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - double(lo);
  return double(sorted[lo]) + (double(sorted[hi]) - double(sorted[lo])) * frac;
}

} // namespace

const char* toString(StepSource s) {
  switch (s) {
  case StepSource::ProfilerStep: return "profiler_step";
  case StepSource::Nvtx: return "nvtx";
  case StepSource::Inferred: return "inferred";
  case StepSource::None: break;
  }
  return nullptr;
}

StepStats stepStats(std::vector<model::TimeNs> d) {
  StepStats s;
  if (d.empty()) return s;
  std::sort(d.begin(), d.end());
  s.count = d.size();
  for (auto v : d)
    s.total_ns += v;
  double mean = double(s.total_ns) / double(d.size());
  s.mean_ns = model::TimeNs(std::llround(mean));
  auto at = [&](double q) { return model::TimeNs(std::llround(percentile(d, q))); };
  s.p10_ns = at(0.1);
  s.p25_ns = at(0.25);
  s.p50_ns = at(0.5);
  s.p75_ns = at(0.75);
  s.p90_ns = at(0.9);
  s.min_ns = d.front();
  s.max_ns = d.back();
  const double n = double(d.size()), half_width = 1.96 * std::sqrt(n) / 2.0;
  const auto rank = [&](double r) { return size_t(std::clamp(r, 1.0, n)) - 1; }; // 1-based in
  s.p50_ci_low_ns = d[rank(std::floor(n / 2.0 - half_width))];
  s.p50_ci_high_ns = d[rank(std::ceil(n / 2.0 + half_width + 1.0))];
  double var = 0;
  for (auto v : d)
    var += (double(v) - mean) * (double(v) - mean);
  s.stddev_ns = std::sqrt(var / double(d.size()));
  return s;
}

size_t countWarmupSteps(const std::vector<StepRecord>& steps) {
  const size_t n = steps.size();
  const size_t cap = size_t(double(n) * kMaxWarmupShare);
  if (cap == 0) return 0;
  std::vector<model::TimeNs> after;
  after.reserve(n - cap);
  for (size_t i = cap; i < n; ++i)
    after.push_back(steps[i].durationNs());
  std::sort(after.begin(), after.end());
  const double reference = percentile(after, 0.5);
  const double limit = (1.0 + kWarmupBand) * reference;
  size_t run = 0;
  for (size_t i = 0; i < n && i < cap + kSettledRun; ++i) {
    run = double(steps[i].durationNs()) <= limit ? run + 1 : 0;
    if (run == kSettledRun) return std::min(cap, i + 1 - kSettledRun);
  }
  return cap;
}

void markWarmup(ProcessSteps& p) {
  p.warmup = countWarmupSteps(p.steps);
}

std::optional<ProcessSteps> analyzeSteps(const ActivityIndex& index,
                                         const std::vector<DeviceIdle>& idle,
                                         const IdleOptions& options, const WindowBounds* bounds) {
  ProcessSteps out;
  out.pid = index.pid;
  out.rank = index.rank;
  std::vector<Interval> windows;
  std::vector<int64_t> numbers;
  for (const auto* r : annotatedSteps(index, &out.source)) {
    // A live window counts the steps that end in it (earlier ones are context).
    if (bounds && r->end <= bounds->owned_from) continue;
    windows.push_back({r->start, r->end});
    numbers.push_back(r->step);
  }
  if (windows.empty() && out.source != StepSource::None) return out; // all counted already
  if (windows.empty() && bounds && bounds->annotated_steps) return std::nullopt;
  if (windows.empty()) {
    auto inferred = inferSteps(index);
    if (!inferred) return std::nullopt;
    out.source = StepSource::Inferred;
    out.inferred_period = inferred->period;
    out.inferred_match_rate = inferred->match_rate;
    out.inferred_anchor = inferred->anchor;
    windows = std::move(inferred->windows);
    // A live window counts the inferred steps that start after the previous window's last one.
    if (bounds)
      std::erase_if(windows, [&](const Interval& w) { return w.start < bounds->steps_from; });
    if (windows.empty()) return out;
    numbers.assign(windows.size(), -1);
  }

  // Per device: kernel start times (to count kernels per window) and the idle segments of the
  // whole step range, the span's gaps plus the time steps spend before the device's first
  // activity (attributed like a gap) and after its last (other: nothing came next).
  // The idle segments are three lists in time order, read in place (a live window's gaps are
  // ~10^5 segments: copying them into one list was a fresh allocation per window).
  struct DeviceView {
    const DeviceActivity* activity;
    std::vector<model::TimeNs> kernel_starts;
    std::vector<IdleSegment> before, after; // before the first activity, after the last
    std::vector<const std::vector<IdleSegment>*> gaps;
  };
  std::vector<DeviceView> views;
  const model::TimeNs first = windows.front().start, last = windows.back().end;
  for (const auto& d : index.devices) {
    if (d.activities.empty()) continue;
    ++out.devices;
    auto& v = views.emplace_back();
    v.activity = &d;
    v.kernel_starts.reserve(d.activities.size());
    for (const auto& a : d.activities)
      if (a.kind == ActivityKind::Kernel) v.kernel_starts.push_back(a.start);
    v.before = attributeIdleBefore(index, d, first, options);
    for (const auto& di : idle)
      if (di.device == d.device) v.gaps.push_back(&di.segments);
    if (last > d.spanEnd()) v.after.push_back({d.spanEnd(), last, IdleCause::Other});
  }

  out.steps.reserve(windows.size());
  for (size_t i = 0; i < windows.size(); ++i) {
    StepRecord s;
    s.number = numbers[i] >= 0 ? numbers[i] : int64_t(i);
    s.start = windows[i].start;
    s.end = windows[i].end;
    for (const auto& v : views) {
      s.gpu_busy_ns += coveredLength(v.activity->busy, s.start, s.end);
      addIdle(v.before, s.start, s.end, s.idle_ns);
      for (const auto* gaps : v.gaps)
        addIdle(*gaps, s.start, s.end, s.idle_ns);
      addIdle(v.after, s.start, s.end, s.idle_ns);
      s.kernels +=
          uint64_t(std::lower_bound(v.kernel_starts.begin(), v.kernel_starts.end(), s.end) -
                   std::lower_bound(v.kernel_starts.begin(), v.kernel_starts.end(), s.start));
    }
    for (const auto& [tid, t] : index.threads)
      s.host_sync_ns += coveredLength(t.syncs, s.start, s.end);
    s.data_loader_ns = coveredLength(index.data_loader, s.start, s.end);
    out.steps.push_back(s);
  }
  markWarmup(out);
  return out;
}

StepResult analyzeSteps(const model::Trace& trace, const IdleOptions& options) {
  StepResult r;
  for (const auto& p : trace.processes) {
    auto index = buildActivityIndex(p);
    std::vector<DeviceIdle> idle;
    analyzeTimeline(index, options, &idle);
    if (auto steps = analyzeSteps(index, idle, options)) r.processes.push_back(std::move(*steps));
  }
  return r;
}

StepSource StepResult::source() const {
  StepSource best = StepSource::None;
  for (const auto& p : processes)
    if (!p.steps.empty() && p.source > best) best = p.source;
  return best;
}

uint64_t StepResult::count() const {
  uint64_t n = 0;
  for (const auto& p : processes)
    n += p.steps.size();
  return n;
}

StepStats StepResult::stats() const {
  std::vector<model::TimeNs> d;
  d.reserve(count());
  for (const auto& p : processes)
    for (const auto& s : p.steps)
      d.push_back(s.durationNs());
  return stepStats(std::move(d));
}

StepStats StepResult::steadyStats() const {
  std::vector<model::TimeNs> d;
  d.reserve(steadyCount());
  for (const auto& p : processes)
    for (const auto& s : p.steadySteps())
      d.push_back(s.durationNs());
  return stepStats(std::move(d));
}

uint64_t StepResult::steadyCount() const {
  return count() - warmupCount();
}

uint64_t StepResult::warmupCount() const {
  uint64_t n = 0;
  for (const auto& p : processes)
    n += p.warmup;
  return n;
}

model::TimeNs StepResult::warmupNs() const {
  model::TimeNs t = 0;
  for (const auto& p : processes)
    for (const auto& s : p.warmupSteps())
      t += s.durationNs();
  return t;
}

model::TimeNs StepResult::warmupDeviceStepNs() const {
  model::TimeNs t = 0;
  for (const auto& p : processes)
    for (const auto& s : p.warmupSteps())
      t += s.durationNs() * std::max<uint32_t>(1, p.devices);
  return t;
}

model::TimeNs StepResult::warmupIdleNs(IdleCause cause) const {
  model::TimeNs t = 0;
  for (const auto& p : processes)
    for (const auto& s : p.warmupSteps())
      t += s.idle(cause);
  return t;
}

model::TimeNs StepResult::warmupBusyNs() const {
  model::TimeNs t = 0;
  for (const auto& p : processes)
    for (const auto& s : p.warmupSteps())
      t += s.gpu_busy_ns;
  return t;
}

const char* StepResult::warmupLimiter() const {
  const model::TimeNs total = warmupDeviceStepNs();
  if (warmupCount() == 0 || total <= 0) return nullptr;
  if (2 * warmupBusyNs() > total) return "gpu_busy";
  for (size_t c = 0; c < kIdleCauses; ++c)
    if (2 * warmupIdleNs(static_cast<IdleCause>(c)) > total)
      return toString(static_cast<IdleCause>(c));
  return "mixed";
}

model::TimeNs StepResult::deviceStepNs() const {
  model::TimeNs t = 0;
  for (const auto& p : processes)
    for (const auto& s : p.steadySteps())
      t += s.durationNs() * std::max<uint32_t>(1, p.devices);
  return t;
}

model::TimeNs StepResult::inputStallNs() const {
  return idleNs(IdleCause::Input);
}

model::TimeNs StepResult::idleNs(IdleCause cause) const {
  model::TimeNs t = 0;
  for (const auto& p : processes)
    for (const auto& s : p.steadySteps())
      t += s.idle(cause);
  return t;
}

model::TimeNs StepResult::hostSyncNs() const {
  model::TimeNs t = 0;
  for (const auto& p : processes)
    for (const auto& s : p.steadySteps())
      t += s.host_sync_ns;
  return t;
}

model::TimeNs StepResult::busyNs() const {
  model::TimeNs t = 0;
  for (const auto& p : processes)
    for (const auto& s : p.steadySteps())
      t += s.gpu_busy_ns;
  return t;
}

std::optional<double> StepResult::busyRatio() const {
  model::TimeNs total = deviceStepNs();
  if (total <= 0) return std::nullopt;
  return double(busyNs()) / double(total);
}

std::optional<double> StepResult::busyRatioP50() const {
  std::vector<double> shares;
  for (const auto& p : processes)
    for (const auto& s : p.steadySteps())
      if (s.durationNs() > 0)
        shares.push_back(double(s.gpu_busy_ns) /
                         double(s.durationNs() * std::max<uint32_t>(1, p.devices)));
  if (shares.empty()) return std::nullopt;
  std::sort(shares.begin(), shares.end());
  const size_t mid = shares.size() / 2;
  return shares.size() % 2 ? shares[mid] : (shares[mid - 1] + shares[mid]) / 2;
}

std::optional<double> StepResult::inputStalledStepShare(double min_share) const {
  uint64_t steps = 0, stalled = 0;
  for (const auto& p : processes)
    for (const auto& s : p.steadySteps()) {
      if (s.durationNs() <= 0) continue;
      ++steps;
      const double device_ns = double(s.durationNs()) * std::max<uint32_t>(1, p.devices);
      if (double(s.inputStallNs()) >= min_share * device_ns) ++stalled;
    }
  if (steps == 0) return std::nullopt;
  return double(stalled) / double(steps);
}

std::optional<double> StepResult::inputStallRatio() const {
  model::TimeNs total = deviceStepNs();
  if (total <= 0) return std::nullopt;
  return double(inputStallNs()) / double(total);
}

void StepResult::merge(const StepResult& o) {
  fold(o);
  markWarmup();
}

void StepResult::markWarmup() {
  for (auto& p : processes)
    advisor::markWarmup(p);
}

void StepResult::fold(const StepResult& o) {
  for (const auto& p : o.processes) {
    auto it = std::find_if(processes.begin(), processes.end(), [&](const ProcessSteps& x) {
      return x.pid == p.pid && x.rank == p.rank;
    });
    if (it == processes.end()) {
      processes.push_back(p);
      continue;
    }
    // The best source wins, as in one analysis of the whole process: windows that inferred steps
    // before the first annotated step arrived give way to the annotations.
    if (p.source < it->source) continue;
    if (p.source > it->source) {
      const auto devices = it->devices;
      *it = p;
      it->devices = std::max(devices, p.devices);
      continue;
    }
    it->steps.insert(it->steps.end(), p.steps.begin(), p.steps.end());
    it->devices = std::max(it->devices, p.devices);
  }
}

} // namespace gpuwise::advisor
