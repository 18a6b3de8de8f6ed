#include "advisor/analysis/collection_analyzer.h"

#include <algorithm>

namespace gpuwise::advisor {
namespace {

uint64_t sumValues(const std::map<std::string, uint64_t>& m) {
  uint64_t n = 0;
  for (const auto& [k, v] : m)
    n += v;
  return n;
}

void addGpu(CollectionResult& r, const model::DeviceInfo& d, const std::string& host, int64_t pid) {
  auto it = std::find_if(r.gpus.begin(), r.gpus.end(), [&](const GpuEntry& g) {
    return g.host == host && g.info.index == d.index && g.info.name == d.name;
  });
  if (it == r.gpus.end()) {
    r.gpus.push_back({d, host, {}});
    it = r.gpus.end() - 1;
  }
  if (std::find(it->pids.begin(), it->pids.end(), pid) == it->pids.end()) it->pids.push_back(pid);
  r.simulated_device = r.simulated_device || d.simulated;
}

void addLimits(model::LimitsApplied& to, const model::LimitsApplied& from) {
  to.absurd_times += from.absurd_times;
  to.devices_dropped += from.devices_dropped;
  to.names_truncated += from.names_truncated;
  to.processes_dropped += from.processes_dropped;
  to.process_events_dropped += from.process_events_dropped;
}

} // namespace

uint64_t IngestHealth::rejectedMessages() const {
  return sumValues(rejected_by_reason);
}
uint64_t CollectionResult::rejectedMessages() const {
  return sumValues(rejected_by_reason);
}

CollectionResult analyzeCollection(const model::Trace& trace, const IngestHealth* ingest) {
  CollectionResult r;
  for (size_t i = 0; i < trace.processes.size(); ++i) {
    const auto& p = trace.processes[i];
    ProcessCollection c;
    c.pid = p.info.pid;
    c.rank = p.info.rank;
    c.local_rank = p.info.local_rank;
    c.world_size = p.info.world_size;
    c.host = p.info.host;
    c.command = p.info.command;
    c.tier = p.info.tier;
    c.tier_reason = p.info.tier_reason;
    c.events = p.eventCount();
    c.kernels = p.kernels.size();
    c.events_dropped = p.events_dropped;
    c.shim_cost = p.shim_cost;
    for (const auto& d : p.devices) {
      c.devices.push_back(d.index);
      addGpu(r, d, p.info.host, p.info.pid);
    }
    if (ingest && i < ingest->streams.size() && ingest->streams[i]) {
      c.stream = ingest->streams[i];
      r.undecodable_events += c.stream->undecodable_events;
      r.lost_batches += c.stream->lost_batches;
    }
    r.events += c.events;
    r.events_dropped += c.events_dropped;
    addLimits(r.limits, p.limits);
    r.processes.push_back(std::move(c));
  }
  if (ingest) {
    r.messages = ingest->messages;
    r.rejected_by_reason = ingest->rejected_by_reason;
  }
  return r;
}

model::ShimCost CollectionResult::shimCostTotal() const {
  model::ShimCost t;
  for (const auto& p : processes) {
    const model::ShimCost& c = p.shim_cost;
    t.events_recorded += c.events_recorded;
    t.launches_counted += c.launches_counted;
    t.cupti_launch_records += c.cupti_launch_records;
    t.overhead_ns += c.overhead_ns;
    t.session_ns += c.session_ns;
    t.shed_ns += c.shed_ns;
    t.cupti_overhead_ns += c.cupti_overhead_ns;
    t.full_call_ns = std::max(t.full_call_ns, c.full_call_ns);
    t.counted_call_ns = std::max(t.counted_call_ns, c.counted_call_ns);
    t.budget_ratio = std::max(t.budget_ratio, c.budget_ratio);
  }
  return t;
}

std::optional<double> CollectionResult::shimOverheadRatio() const {
  model::ShimCost t = shimCostTotal();
  if (t.session_ns == 0) return std::nullopt;
  return double(t.overhead_ns) / double(t.session_ns);
}

void CollectionResult::merge(const CollectionResult& o) {
  addLimits(limits, o.limits);
  events += o.events;
  events_dropped += o.events_dropped;
  undecodable_events += o.undecodable_events;
  lost_batches += o.lost_batches;
  simulated_device = simulated_device || o.simulated_device;
  if (o.messages) messages = messages.value_or(0) + *o.messages;
  for (const auto& [k, v] : o.rejected_by_reason)
    rejected_by_reason[k] += v;
  for (const auto& p : o.processes) {
    auto it = std::find_if(processes.begin(), processes.end(), [&](const ProcessCollection& x) {
      return x.pid == p.pid && x.rank == p.rank;
    });
    if (it == processes.end()) {
      processes.push_back(p);
      continue;
    }
    it->events += p.events;
    it->kernels += p.kernels;
    it->events_dropped += p.events_dropped;
    if (p.shim_cost.session_ns > it->shim_cost.session_ns) it->shim_cost = p.shim_cost; // cumulative
    if (p.tier != model::CollectionTier::Unknown) {
      it->tier = p.tier;
      it->tier_reason = p.tier_reason;
    }
    if (p.stream) {
      if (!it->stream) {
        it->stream = p.stream;
      } else {
        it->stream->hello_received = it->stream->hello_received || p.stream->hello_received;
        it->stream->final_received = it->stream->final_received || p.stream->final_received;
        it->stream->batches += p.stream->batches;
        it->stream->lost_batches += p.stream->lost_batches;
        it->stream->undecodable_events += p.stream->undecodable_events;
      }
    }
  }
  for (const auto& g : o.gpus) {
    for (auto pid : g.pids)
      addGpu(*this, g.info, g.host, pid);
  }
}

} // namespace gpuwise::advisor
