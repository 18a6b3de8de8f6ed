#include "advisor/analysis/communication_analyzer.h"

#include "advisor/analysis/collective_kernel_name.h"
#include "advisor/analysis/interval_union.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

namespace gpuwise::advisor {
namespace {

using model::CollectiveKind;

std::optional<double> ratio(model::TimeNs part, model::TimeNs whole) {
  if (whole <= 0) return std::nullopt;
  return double(part) / double(whole);
}

CollectiveKindStats& statsFor(std::vector<CollectiveKindStats>& list, CollectiveKind kind) {
  for (auto& s : list)
    if (s.kind == kind) return s;
  list.push_back({});
  list.back().kind = kind;
  return list.back();
}

void sortByKind(std::vector<CollectiveKindStats>& list) {
  std::sort(list.begin(), list.end(),
            [](const auto& a, const auto& b) { return uint8_t(a.kind) < uint8_t(b.kind); });
}

// One kernel's collective: the joined record's kind, size and group where there is one, else what
// the kernel's name says.
void countKernel(const model::KernelExec& k, const model::Collective* joined,
                 const CollectiveKernelName& named, std::vector<CollectiveKindStats>& into) {
  CollectiveKind kind = named.kind;
  if (joined && joined->kind != CollectiveKind::Unknown) kind = joined->kind;
  auto& s = statsFor(into, kind);
  const model::TimeNs ns = isTimed(k.start, k.end) ? k.end - k.start : 0;
  ++s.count;
  s.kernel_ns += ns;
  if (s.algorithm.empty() && !named.algorithm.empty()) s.algorithm = std::string(named.algorithm);
  if (!joined) return;
  if (joined->group_size > s.group_size) s.group_size = joined->group_size;
  if (const uint64_t bytes = joined->bytes(); bytes > 0 && ns > 0) {
    s.bytes += bytes;
    ++s.sized;
    s.sized_ns += ns;
  }
}

// Collective calls that carry no kernel correlation (the shim's NCCL hooks) and the collective
// kernels no record joined: each call launches its one kernel while it runs, so in issue order
// (the call's start; the kernel's launch, or its GPU start where the launch is unknown) the n-th
// kernel is the next call that began before it. A kernel with no such call counts by its name.
void joinInIssueOrder(
    std::vector<const model::Collective*>& calls,
    std::vector<std::pair<const model::KernelExec*, CollectiveKernelName>>& kernels,
    std::vector<CollectiveKindStats>& into) {
  auto issued = [](const model::KernelExec& k) {
    return k.launch_start != 0 ? k.launch_start : k.start;
  };
  std::stable_sort(calls.begin(), calls.end(),
                   [](const auto* a, const auto* b) { return a->start < b->start; });
  std::stable_sort(kernels.begin(), kernels.end(), [&](const auto& a, const auto& b) {
    return issued(*a.first) < issued(*b.first);
  });
  size_t next = 0;
  for (const auto& [k, named] : kernels) {
    const model::Collective* joined = nullptr;
    if (next < calls.size() && calls[next]->start <= issued(*k)) joined = calls[next++];
    countKernel(*k, joined, named, into);
  }
}

ProcessCommunication countProcess(const model::ProcessTrace& p) {
  ProcessCommunication out;
  out.pid = p.info.pid;
  out.rank = p.info.rank;
  std::unordered_map<uint64_t, const model::Collective*> by_correlation;
  std::vector<const model::Collective*> uncorrelated;
  for (const auto& c : p.collectives) {
    if (c.correlation != 0)
      by_correlation.emplace(c.correlation, &c);
    else
      uncorrelated.push_back(&c);
  }
  std::vector<std::pair<const model::KernelExec*, CollectiveKernelName>> unjoined;
  // Names are ids: each is parsed once, not once per launch (a window holds ~10^5 launches of a
  // few hundred names).
  std::vector<std::optional<CollectiveKernelName>> parsed(p.names.size());
  auto nameOf = [&](model::NameId id) {
    if (id >= parsed.size()) return parseCollectiveKernelName(p.names.get(id));
    auto& slot = parsed[id];
    if (!slot) slot = parseCollectiveKernelName(p.names.get(id));
    return *slot;
  };
  for (const auto& k : p.kernels) {
    const auto named = nameOf(k.name);
    if ((k.flags & model::kKernelCommunication) == 0 && !named.collective) continue;
    const model::Collective* joined = nullptr;
    if (k.correlation != 0)
      if (auto it = by_correlation.find(k.correlation); it != by_correlation.end())
        joined = it->second;
    if (joined || uncorrelated.empty())
      countKernel(k, joined, named, out.by_kind);
    else
      unjoined.emplace_back(&k, named);
  }
  joinInIssueOrder(uncorrelated, unjoined, out.by_kind);
  sortByKind(out.by_kind);
  for (auto& s : out.by_kind)
    s.computeBandwidths();
  return out;
}

} // namespace

std::optional<double> busBandwidthFactor(CollectiveKind kind, int32_t ranks) {
  if (ranks < 1) return std::nullopt;
  const double n = ranks;
  switch (kind) {
  case CollectiveKind::AllReduce: return 2.0 * (n - 1) / n;
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter: return (n - 1) / n;
  default: return 1.0;
  }
}

void CollectiveKindStats::computeBandwidths() {
  algorithm_bytes_per_second.reset();
  bus_bytes_per_second.reset();
  if (sized == 0 || sized_ns <= 0) return;
  algorithm_bytes_per_second = double(bytes) / (double(sized_ns) * 1e-9);
  if (auto factor = busBandwidthFactor(kind, group_size))
    bus_bytes_per_second = *algorithm_bytes_per_second * *factor;
}

void CollectiveKindStats::merge(const CollectiveKindStats& other) {
  count += other.count;
  kernel_ns += other.kernel_ns;
  bytes += other.bytes;
  sized += other.sized;
  sized_ns += other.sized_ns;
  group_size = std::max(group_size, other.group_size);
  if (algorithm.empty()) algorithm = other.algorithm;
  computeBandwidths();
}

void CommunicationResult::attachTimeline(const TimelineResult& timeline) {
  std::map<std::pair<int64_t, int32_t>, std::pair<model::TimeNs, model::TimeNs>> times;
  for (const auto& d : timeline.devices) {
    if (d.communication_busy_ns <= 0) continue;
    auto& t = times[{d.pid, d.rank}];
    t.first += d.communication_busy_ns;
    t.second += d.communication_exposed_ns;
  }
  for (auto& p : processes) {
    auto it = times.find({p.pid, p.rank});
    p.busy_ns = it == times.end() ? 0 : it->second.first;
    p.exposed_ns = it == times.end() ? 0 : it->second.second;
    if (it != times.end()) times.erase(it);
  }
  for (const auto& [key, t] : times) { // time without a counted kernel (a window's context)
    ProcessCommunication p;
    p.pid = key.first;
    p.rank = key.second;
    p.busy_ns = t.first;
    p.exposed_ns = t.second;
    processes.push_back(std::move(p));
  }
  busy_ns = exposed_ns = 0;
  for (auto& p : processes) {
    p.overlap_ratio = ratio(p.busy_ns - p.exposed_ns, p.busy_ns);
    busy_ns += p.busy_ns;
    exposed_ns += p.exposed_ns;
  }
  overlap_ratio = ratio(busy_ns - exposed_ns, busy_ns);
}

void CommunicationResult::merge(const CommunicationResult& other) {
  for (const auto& o : other.processes) {
    auto it = std::find_if(processes.begin(), processes.end(),
                           [&](const auto& p) { return p.pid == o.pid && p.rank == o.rank; });
    if (it == processes.end()) {
      processes.push_back(o);
      continue;
    }
    for (const auto& s : o.by_kind)
      statsFor(it->by_kind, s.kind).merge(s);
    sortByKind(it->by_kind);
  }
  for (const auto& s : other.by_kind)
    statsFor(by_kind, s.kind).merge(s);
  sortByKind(by_kind);
}

CommunicationResult analyzeCommunication(const model::Trace& trace,
                                         const TimelineResult& timeline) {
  CommunicationResult r;
  for (const auto& p : trace.processes) {
    auto counted = countProcess(p);
    if (counted.by_kind.empty()) continue;
    for (const auto& s : counted.by_kind)
      statsFor(r.by_kind, s.kind).merge(s);
    r.processes.push_back(std::move(counted));
  }
  sortByKind(r.by_kind);
  r.attachTimeline(timeline);
  return r;
}

CommunicationResult analyzeCommunication(const model::Trace& trace) {
  TimelineResult timeline;
  for (const auto& p : trace.processes)
    timeline.append(analyzeTimeline(p));
  return analyzeCommunication(trace, timeline);
}

} // namespace gpuwise::advisor
