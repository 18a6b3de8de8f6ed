#include "advisor/metrics/metrics_input.h"

#include "advisor/analysis/interval_union.h"
#include "advisor/rules/rule_set.h"

#include <algorithm>
#include <set>

namespace gpuwise::advisor::metrics {

namespace {

constexpr model::TimeNs kBusyWindowNs = 60'000'000'000;

template <typename T> void keepDevice(std::vector<T>& v, uint32_t device) {
  std::erase_if(v, [device](const T& r) { return r.device != device; });
}

// Busy share of the last 60 s of the device's span (the whole span when shorter).
std::optional<double> busyRatio60s(const model::ProcessTrace& p, const DeviceTimeline& t) {
  model::TimeNs end = t.span_end;
  model::TimeNs start = std::max(t.span_start, end - kBusyWindowNs);
  if (end <= start) return std::nullopt;
  std::vector<Interval> busy;
  auto add = [&](model::TimeNs s, model::TimeNs e, uint32_t device) {
    if (device != t.device || !isTimed(s, e) || e <= start || s >= end) return;
    busy.push_back({std::max(s, start), std::min(e, end)});
  };
  for (const auto& k : p.kernels)
    add(k.start, k.end, k.device);
  for (const auto& c : p.copies)
    add(c.start, c.end, c.device);
  for (const auto& m : p.memsets)
    add(m.start, m.end, m.device);
  return double(unionLength(std::move(busy))) / double(end - start);
}

// Device memory reserved now: the latest allocator sample, else what the process allocated and
// has not freed; nullopt when the trace says nothing about the device's memory.
std::optional<uint64_t> memoryUsed(const model::ProcessTrace& p, uint32_t device) {
  const model::MemorySample* latest = nullptr;
  for (const auto& s : p.memory_samples)
    if (s.device == device && s.reserved_bytes >= 0 && (!latest || s.time >= latest->time))
      latest = &s;
  if (latest) return uint64_t(latest->reserved_bytes);
  bool any = false;
  int64_t net = 0;
  for (const auto& a : p.allocations) {
    if (a.device != device || a.kind != model::MemoryKind::Device) continue;
    any = true;
    net += a.is_free ? -int64_t(a.bytes) : int64_t(a.bytes);
  }
  if (!any) return std::nullopt;
  return uint64_t(std::max<int64_t>(net, 0));
}

std::set<uint32_t> activeDevices(const model::ProcessTrace& p) {
  std::set<uint32_t> d;
  for (const auto& k : p.kernels)
    d.insert(k.device);
  for (const auto& c : p.copies)
    d.insert(c.device);
  for (const auto& m : p.memsets)
    d.insert(m.device);
  for (const auto& a : p.allocations)
    if (a.kind == model::MemoryKind::Device) d.insert(a.device);
  for (const auto& s : p.memory_samples)
    d.insert(s.device);
  return d;
}

} // namespace

JobFigures buildMetricsInput(model::Trace trace, const IngestHealth* health) {
  JobFigures job;
  JobAnalysis merged;
  bool first = true;
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    model::Trace one;
    one.source = trace.source;
    one.processes.push_back(std::move(trace.processes[i]));
    IngestHealth h;
    if (health && i < health->streams.size()) h.streams.push_back(health->streams[i]);
    AnalysisOptions ao;
    ao.ingest = health ? &h : nullptr;
    JobAnalysis a = analyzeJob(one, ao);
    const model::ProcessTrace& p = one.processes.front();

    ProcessFigures f;
    f.info = p.info;
    f.devices = p.devices;
    f.timeline_known = a.timeline.known();
    f.input_stall_ns = a.inputStallNs();
    f.syncs = a.syncs;
    if (!a.steps.processes.empty() && !a.steps.processes.front().steps.empty())
      f.steps = a.steps.processes.front();
    if (!a.collection.processes.empty()) {
      const auto& pc = a.collection.processes.front();
      f.events = pc.events;
      f.events_dropped = pc.events_dropped + (pc.stream ? pc.stream->undecodable_events : 0);
      if (pc.stream) f.connected = !pc.stream->final_received;
    }
    std::set<uint32_t> devices = activeDevices(p);
    for (uint32_t d : devices) {
      DeviceFigures g;
      g.device = d;
      for (const auto& t : a.timeline.devices)
        if (t.device == d) {
          g.timeline = t;
          g.busy_ratio_60s = busyRatio60s(p, t);
        }
      if (devices.size() == 1) {
        g.kernels = a.kernels;
        g.copies = a.copies;
      } else {
        // Only the device records are filtered: the analyzers used here read nothing else.
        model::Trace dev;
        dev.processes.emplace_back();
        auto& q = dev.processes.back();
        q.info = p.info;
        q.names = p.names;
        q.kernels = p.kernels;
        q.copies = p.copies;
        keepDevice(q.kernels, d);
        keepDevice(q.copies, d);
        g.kernels = analyzeKernels(dev);
        g.copies = analyzeCopies(dev);
      }
      if (const model::DeviceInfo* info = p.device(d)) g.info = *info;
      g.memory_used_bytes = memoryUsed(p, d);
      for (const auto& m : a.memory.devices)
        if (m.device == d) g.memory_peak_bytes = m.peak_bytes;
      f.gpus.push_back(std::move(g));
    }
    job.simulated = job.simulated || a.simulated();
    if (first)
      merged = std::move(a);
    else
      merged.merge(a);
    first = false;
    job.processes.push_back(std::move(f));
  }
  if (!first) job.recommendations = recommend(merged, nullptr);
  return job;
}

} // namespace gpuwise::advisor::metrics
