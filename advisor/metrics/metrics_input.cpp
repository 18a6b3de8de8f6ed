#include "advisor/metrics/metrics_input.h"

#include "advisor/rules/rule_set.h"

#include <algorithm>

namespace gpuwise::advisor::metrics {

namespace {

constexpr model::TimeNs kBusyWindowNs = 60'000'000'000;

// Busy share of the last 60 s of the device's span (the whole span when shorter), from the
// recent series of 1 s buckets (see the header for its precision).
// `u` is one stream's: its series are told apart by device only (a rank learnt from a late Hello
// makes two keys for one device; both count).
std::optional<double> busyRatio60s(const UtilizationResult& u, const DeviceTimeline& t) {
  model::TimeNs end = t.span_end;
  model::TimeNs start = std::max(t.span_start, end - kBusyWindowNs);
  if (end <= start) return std::nullopt;
  model::TimeNs busy = 0;
  for (const auto& r : u.recent)
    if (r.device == t.device) busy += r.busyBetween(start, end);
  return std::clamp(double(busy) / double(end - start), 0.0, 1.0);
}

ProcessFigures processFigures(StreamAnalysis& s) {
  const JobAnalysis& a = s.analysis;
  ProcessFigures f;
  f.info = s.info;
  f.devices = s.devices;
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
  const bool single = s.gpus.devices.size() == 1 || !s.gpus.split;
  for (auto& [d, agg] : s.gpus.devices) {
    DeviceFigures g;
    g.device = d;
    for (const auto& t : a.timeline.devices)
      if (t.device == d) {
        g.timeline = t;
        g.busy_ratio_60s = busyRatio60s(a.utilization, t);
      }
    if (single) {
      g.kernels = a.kernels;
      g.copies = a.copies;
    } else {
      g.kernels = std::move(agg.kernels);
      g.copies = agg.copies;
    }
    for (const auto& info : s.devices)
      if (info.index == d) {
        g.info = info;
        break;
      }
    g.memory_used_bytes = agg.memoryUsedBytes();
    for (const auto& m : a.memory.devices)
      if (m.device == d) g.memory_peak_bytes = m.peak_bytes;
    for (const auto& n : a.nvml.devices)
      if (n.device == d) g.energy_joules = n.energy.joules();
    f.gpus.push_back(std::move(g));
  }
  return f;
}

} // namespace

const std::vector<Recommendation>& JobFigures::recommendationsOf(const std::string& ns,
                                                                 const std::string& pod) const {
  static const std::vector<Recommendation> kNone;
  for (const auto& p : pods)
    if (p.ns == ns && p.pod == pod) return p.recommendations;
  return kNone;
}

JobFigures buildMetricsInput(std::vector<StreamAnalysis> streams) {
  JobFigures job;
  // Each pod's processes merged apart from the others': the rules see one pod at a time.
  std::vector<std::pair<PodRecommendations, JobAnalysis>> pods;
  for (auto& s : streams) {
    job.processes.push_back(processFigures(s));
    job.simulated = job.simulated || s.simulated || s.analysis.simulated();
    auto it = std::find_if(pods.begin(), pods.end(), [&](const auto& p) {
      return p.first.ns == s.info.ns && p.first.pod == s.info.pod;
    });
    if (it == pods.end())
      pods.emplace_back(PodRecommendations{s.info.ns, s.info.pod, {}}, std::move(s.analysis));
    else
      it->second.merge(s.analysis);
  }
  for (auto& [pod, merged] : pods) {
    pod.recommendations = recommend(merged, nullptr);
    job.pods.push_back(std::move(pod));
  }
  return job;
}

JobFigures buildMetricsInput(model::Trace trace, const IngestHealth* health) {
  std::vector<StreamAnalysis> streams;
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    model::Trace one;
    one.source = trace.source;
    one.processes.push_back(std::move(trace.processes[i]));
    IngestHealth h;
    if (health && i < health->streams.size()) h.streams.push_back(health->streams[i]);
    AnalysisOptions ao;
    ao.ingest = health ? &h : nullptr;
    StreamAnalysis s;
    s.analysis = analyzeJob(one, ao);
    auto& p = one.processes.front();
    s.info = p.info;
    s.devices = p.devices;
    s.simulated = trace.source.simulated;
    s.gpus = aggregateDevices(p);
    streams.push_back(std::move(s));
  }
  return buildMetricsInput(std::move(streams));
}

} // namespace gpuwise::advisor::metrics
