#include "advisor/analysis/distributed_analyzer.h"

#include "advisor/analysis/collective_alignment.h"
#include "advisor/analysis/interval_union.h"
#include "advisor/analysis/job_analysis.h"
#include "advisor/analysis/straggler.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace gpuwise::advisor {
namespace {

using model::TimeNs;

double seconds(TimeNs ns) {
  return double(ns) / 1e9;
}

template <typename T> bool sameProcess(const T& x, int64_t pid, int32_t rank) {
  return x.pid == pid && x.rank == rank;
}

CollectiveTiming timingOf(const model::ProcessTrace& p, const model::KernelExec& k,
                          const model::Collective* call) {
  CollectiveTiming t;
  t.start = k.start;
  t.end = k.end;
  t.channel = (uint64_t(k.device) << 32) | k.stream;
  if (call) {
    t.kind = call->kind;
    t.bytes = call->bytes();
    t.sequence = call->sequence;
    if (call->communicator != 0) t.channel = call->communicator;
  }
  if (t.kind == model::CollectiveKind::Unknown)
    t.kind = collectiveKindOfKernelName(p.names.get(k.name));
  return t;
}

// The host causes of idle: the GPU waited for the host to launch, or for a sync it asked for.
TimeNs hostIdle(const auto& idle_at) {
  return idle_at(IdleCause::HostBound) + idle_at(IdleCause::LaunchOverhead) +
         idle_at(IdleCause::Sync);
}

// The figures of one process's devices on the timeline.
void addTimeline(const TimelineResult& timeline, RankSummary& r, TimeNs& span, TimeNs& busy,
                 TimeNs& input, TimeNs& host) {
  TimeNs most_busy = -1;
  for (const auto& d : timeline.devices) {
    if (!sameProcess(d, r.pid, r.rank)) continue;
    r.compute_seconds += seconds(d.compute_busy_ns);
    r.communication_seconds += seconds(d.communication_busy_ns);
    r.communication_exposed_seconds += seconds(d.communication_exposed_ns);
    span += d.spanNs();
    busy += d.busy_ns;
    input += d.idle.at(IdleCause::Input);
    host += hostIdle([&](IdleCause c) { return d.idle.at(c); });
    if (d.busy_ns > most_busy) {
      most_busy = d.busy_ns;
      r.device = d.device;
    }
  }
}

// Steps, their durations and per-step figures over the steady steps; false without steps.
bool addSteps(const StepResult& steps, RankSummary& r, CollectiveCountWindow& window) {
  auto p = std::find_if(steps.processes.begin(), steps.processes.end(),
                        [&](const ProcessSteps& x) { return sameProcess(x, r.pid, r.rank); });
  if (p == steps.processes.end() || p->steadySteps().empty()) return false;
  const auto steady = p->steadySteps();
  std::vector<TimeNs> durations;
  TimeNs device_ns = 0, busy = 0, input = 0, host = 0;
  for (const auto& s : steady) {
    durations.push_back(s.durationNs());
    device_ns += s.durationNs() * std::max<uint32_t>(1, p->devices);
    busy += s.gpu_busy_ns;
    input += s.inputStallNs();
    host += hostIdle([&](IdleCause c) { return s.idle(c); });
  }
  const auto stats = stepStats(std::move(durations));
  r.steps = steady.size();
  r.step_mean_seconds = seconds(stats.mean_ns);
  r.step_p50_seconds = seconds(stats.p50_ns);
  if (device_ns > 0) {
    r.gpu_busy_ratio = double(busy) / double(device_ns);
    r.input_stall_ratio = double(input) / double(device_ns);
  }
  r.host_seconds = seconds(host);
  for (const auto& s : steady)
    window.steps.emplace_back(s.start, s.end);
  return true;
}

// Where the communication analyzer measured the process, its figures replace the timeline's.
void addCommunication(const CommunicationResult& communication, RankSummary& r) {
  for (const auto& c : communication.processes) {
    if (!sameProcess(c, r.pid, r.rank)) continue;
    r.communication_seconds = seconds(c.busy_ns);
    r.communication_exposed_seconds = seconds(c.exposed_ns);
  }
  if (r.communication_seconds > 0)
    r.communication_overlap_ratio =
        (r.communication_seconds - r.communication_exposed_seconds) / r.communication_seconds;
}

RankSummary summarize(const JobAnalysis& a, int64_t pid, int32_t rank,
                      CollectiveCountWindow& window) {
  RankSummary r;
  r.pid = pid;
  r.rank = rank;
  TimeNs span = 0, busy = 0, input = 0, host = 0;
  addTimeline(a.timeline, r, span, busy, input, host);
  for (const auto& p : a.collection.processes)
    if (sameProcess(p, pid, rank)) r.host = p.host;
  for (const auto& g : a.collection.gpus)
    if (g.info.index == r.device && g.host == r.host &&
        std::find(g.pids.begin(), g.pids.end(), pid) != g.pids.end())
      r.gpu = g.info.name;
  if (!addSteps(a.steps, r, window) && span > 0) {
    r.gpu_busy_ratio = double(busy) / double(span);
    r.input_stall_ratio = double(input) / double(span);
    r.host_seconds = seconds(host);
  }
  addCommunication(a.communication, r);
  return r;
}

// Every process with GPU work: on the timeline, with steps, or with kernels counted.
std::vector<std::pair<int64_t, int32_t>> processesOf(const JobAnalysis& a) {
  std::set<std::pair<int64_t, int32_t>> seen;
  for (const auto& d : a.timeline.devices)
    seen.insert({d.pid, d.rank});
  for (const auto& p : a.steps.processes)
    seen.insert({p.pid, p.rank});
  for (const auto& p : a.collection.processes)
    if (p.kernels > 0) seen.insert({p.pid, p.rank});
  std::vector<std::pair<int64_t, int32_t>> out(seen.begin(), seen.end());
  // By rank, the processes without one after them, each by pid.
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    if ((x.second < 0) != (y.second < 0)) return x.second >= 0;
    return x.second != y.second ? x.second < y.second : x.first < y.first;
  });
  return out;
}

void addWaits(DistributedResult& d, const std::vector<CollectiveCountWindow>& windows) {
  std::vector<CollectiveCountWindow> aligned_windows;
  for (const auto& p : d.collectives) {
    auto it = std::find_if(d.ranks.begin(), d.ranks.end(),
                           [&](const RankSummary& r) { return sameProcess(r, p.pid, p.rank); });
    aligned_windows.push_back(it == d.ranks.end() ? CollectiveCountWindow{}
                                                  : windows[size_t(it - d.ranks.begin())]);
  }
  const auto alignment = alignCollectives(d.collectives, aligned_windows);
  for (const auto& x : alignment)
    d.collective_wait_all_seconds += seconds(x.all_wait_ns);
  for (size_t i = 0; i < d.collectives.size(); ++i)
    for (auto& r : d.ranks)
      if (sameProcess(r, d.collectives[i].pid, d.collectives[i].rank))
        r.collective_wait_seconds = seconds(alignment[i].wait_ns);
}

void addWorldSize(const JobAnalysis& a, DistributedResult& d) {
  std::set<int32_t> present;
  for (const auto& p : a.collection.processes) {
    if (p.world_size > 0) d.world_size = std::max(d.world_size.value_or(0), p.world_size);
    if (p.rank >= 0) present.insert(p.rank);
  }
  for (const auto& r : d.ranks)
    if (r.rank >= 0) present.insert(r.rank);
  if (!d.world_size) return;
  for (int32_t rank = 0; rank < *d.world_size; ++rank)
    if (!present.count(rank)) d.missing_ranks.push_back(rank);
}

} // namespace

std::vector<ProcessCollectiveTimings> collectCollectiveTimings(const model::Trace& trace) {
  std::vector<ProcessCollectiveTimings> out;
  for (const auto& p : trace.processes) {
    ProcessCollectiveTimings timings;
    timings.pid = p.info.pid;
    timings.rank = p.info.rank;
    std::unordered_map<uint64_t, const model::Collective*> calls;
    for (const auto& c : p.collectives)
      if (c.correlation != 0) calls.emplace(c.correlation, &c);
    for (const auto& k : p.kernels) {
      if (!(k.flags & model::kKernelCommunication) || !isTimed(k.start, k.end)) continue;
      ++timings.total;
      if (timings.kernels.size() >= kMaxCollectiveTimings) continue;
      auto call = k.correlation ? calls.find(k.correlation) : calls.end();
      timings.kernels.push_back(timingOf(p, k, call == calls.end() ? nullptr : call->second));
    }
    if (timings.total > 0) out.push_back(std::move(timings));
  }
  return out;
}

void mergeCollectiveTimings(std::vector<ProcessCollectiveTimings>& into,
                            const std::vector<ProcessCollectiveTimings>& other) {
  for (const auto& p : other) {
    auto it = std::find_if(into.begin(), into.end(), [&](const ProcessCollectiveTimings& x) {
      return sameProcess(x, p.pid, p.rank);
    });
    if (it == into.end()) {
      into.push_back(p);
      continue;
    }
    it->total += p.total;
    const size_t room = kMaxCollectiveTimings - std::min(kMaxCollectiveTimings, it->kernels.size());
    it->kernels.insert(it->kernels.end(), p.kernels.begin(),
                       p.kernels.begin() + std::ptrdiff_t(std::min(room, p.kernels.size())));
  }
}

void summarizeRanks(JobAnalysis& a) {
  auto& d = a.distributed;
  d.ranks.clear();
  d.missing_ranks.clear();
  d.world_size.reset();
  d.straggler.reset();
  d.collective_wait_all_seconds = 0;
  std::vector<CollectiveCountWindow> windows;
  for (const auto& [pid, rank] : processesOf(a)) {
    windows.emplace_back();
    d.ranks.push_back(summarize(a, pid, rank, windows.back()));
  }
  if (d.collectives.size() > 1) addWaits(d, windows);
  addWorldSize(a, d);
  d.straggler = findStraggler(d.ranks);
}

} // namespace gpuwise::advisor
