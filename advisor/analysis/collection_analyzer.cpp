#include "advisor/analysis/collection_analyzer.h"

#include <algorithm>
#include <optional>

namespace gpuwise::advisor {
namespace {

uint64_t sumValues(const std::map<std::string, uint64_t>& m) {
  uint64_t n = 0;
  for (const auto& [k, v] : m)
    n += v;
  return n;
}

// The GPU's identity (collection_analyzer.h): its UUID, else (host, index, name), else (rank,
// index, name) when the host is unknown.
std::string gpuKey(const model::DeviceInfo& d, const std::string& host, int32_t rank) {
  std::string k;
  if (!d.uuid.empty()) return k.append("u").append(d.uuid);
  k.reserve(host.size() + d.name.size() + 24);
  if (!host.empty())
    k.append("h").append(host);
  else if (rank >= 0)
    k.append("r").append(std::to_string(rank));
  k.push_back('\0');
  k.append(std::to_string(d.index)).push_back('\0');
  k.append(d.name);
  return k;
}

std::string gpuKey(const GpuEntry& g) {
  return gpuKey(g.info, g.host, g.rank);
}

std::string processKey(int64_t pid, int32_t rank) {
  return std::to_string(pid) + "/" + std::to_string(rank);
}

// The position of `key` in r.gpus, through r.gpu_index (rebuilt when stale).
GpuEntry* findGpu(CollectionResult& r, const std::string& key) {
  auto lookup = [&]() -> std::optional<size_t> {
    auto it = r.gpu_index.find(key);
    if (it == r.gpu_index.end()) return std::nullopt;
    return it->second;
  };
  const bool stale = r.gpus_indexed != r.gpus.size();
  auto at = stale ? std::nullopt : lookup();
  if (stale || (at && (*at >= r.gpus.size() || gpuKey(r.gpus[*at]) != key))) {
    r.gpu_index.clear();
    for (size_t i = 0; i < r.gpus.size(); ++i)
      r.gpu_index.emplace(gpuKey(r.gpus[i]), i);
    r.gpus_indexed = r.gpus.size();
    at = lookup();
  }
  return at ? &r.gpus[*at] : nullptr;
}

void addGpu(CollectionResult& r, const model::DeviceInfo& d, const std::string& host, int32_t rank,
            int64_t pid) {
  const std::string key = gpuKey(d, host, rank);
  GpuEntry* g = findGpu(r, key);
  if (!g) {
    r.gpus.push_back({d, host, rank, {}});
    r.gpu_index.emplace(key, r.gpus.size() - 1);
    r.gpus_indexed = r.gpus.size();
    g = &r.gpus.back();
  }
  if (g->rank < 0) g->rank = rank;
  if (std::find(g->pids.begin(), g->pids.end(), pid) == g->pids.end()) g->pids.push_back(pid);
  r.simulated_device = r.simulated_device || d.simulated;
}

void addLimits(model::LimitsApplied& to, const model::LimitsApplied& from) {
  to.absurd_times += from.absurd_times;
  to.devices_dropped += from.devices_dropped;
  to.names_truncated += from.names_truncated;
  to.processes_dropped += from.processes_dropped;
  to.process_events_dropped += from.process_events_dropped;
}

// The process (pid, rank) of r.processes, through r.process_index (rebuilt when stale).
ProcessCollection* findProcess(CollectionResult& r, int64_t pid, int32_t rank) {
  const std::string key = processKey(pid, rank);
  auto matches = [&](size_t i) {
    return i < r.processes.size() && r.processes[i].pid == pid && r.processes[i].rank == rank;
  };
  auto it = r.process_index.find(key);
  if (r.processes_indexed != r.processes.size() ||
      (it != r.process_index.end() && !matches(it->second))) {
    r.process_index.clear();
    // The first of equal keys wins, as the linear search this replaces found it.
    for (size_t i = 0; i < r.processes.size(); ++i)
      r.process_index.emplace(processKey(r.processes[i].pid, r.processes[i].rank), i);
    r.processes_indexed = r.processes.size();
    it = r.process_index.find(key);
  }
  return it == r.process_index.end() ? nullptr : &r.processes[it->second];
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
    for (size_t k = 0; k < p.api_calls.size() && !r.hip_api; ++k)
      r.hip_api = p.names.get(p.api_calls[k].name).rfind("hip", 0) == 0;
    for (const auto& d : p.devices) {
      c.devices.push_back(d.index);
      addGpu(r, d, p.info.host, p.info.rank, p.info.pid);
    }
    if (ingest && i < ingest->streams.size() && ingest->streams[i]) {
      c.stream = ingest->streams[i];
      r.undecodable_events += c.stream->undecodable_events;
      r.lost_batches += c.stream->lost_batches;
      r.events_lost += c.stream->events_lost;
      c.events_dropped += c.stream->events_lost; // the profile misses them like any drop
    }
    r.events += c.events;
    r.events_dropped += c.events_dropped;
    addLimits(r.limits, p.limits);
    r.processes.push_back(std::move(c));
  }
  if (ingest) {
    r.messages = ingest->messages;
    r.rejected_by_reason = ingest->rejected_by_reason;
    r.shed_by_reason = ingest->shed_by_reason;
  }
  return r;
}

std::string gpuLabel(const GpuEntry& gpu) {
  const std::string index = "GPU " + std::to_string(gpu.info.index);
  std::string s = gpu.info.name.empty() ? index : gpu.info.name + " (" + index + ")";
  if (gpu.rank >= 0) s += " of rank " + std::to_string(gpu.rank);
  return s;
}

uint64_t JobRanks::missingCount() const {
  uint64_t n = 0;
  for (const auto& [first, last] : missing)
    n += uint64_t(int64_t(last) - first + 1);
  return n;
}

JobRanks CollectionResult::jobRanks() const {
  JobRanks j;
  for (const auto& p : processes) {
    if (p.rank >= 0) j.ranks.push_back(p.rank);
    j.world_size = std::max(j.world_size, p.world_size);
  }
  std::sort(j.ranks.begin(), j.ranks.end());
  j.ranks.erase(std::unique(j.ranks.begin(), j.ranks.end()), j.ranks.end());
  if (j.world_size < 0) return j;
  // Walk [0, world_size) past the ranks seen: each gap between them is one missing run.
  int32_t next = 0;
  for (int32_t rank : j.ranks) {
    if (rank >= j.world_size) break;
    if (rank > next) j.missing.emplace_back(next, rank - 1);
    next = rank + 1;
  }
  if (next < j.world_size) j.missing.emplace_back(next, j.world_size - 1);
  return j;
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
  events_lost += o.events_lost;
  simulated_device = simulated_device || o.simulated_device;
  hip_api = hip_api || o.hip_api;
  if (o.messages) messages = messages.value_or(0) + *o.messages;
  for (const auto& [k, v] : o.rejected_by_reason)
    rejected_by_reason[k] += v;
  for (const auto& [k, v] : o.shed_by_reason)
    shed_by_reason[k] += v;
  for (const auto& p : o.processes) {
    ProcessCollection* it = findProcess(*this, p.pid, p.rank);
    if (!it) {
      processes.push_back(p);
      process_index.emplace(processKey(p.pid, p.rank), processes.size() - 1);
      processes_indexed = processes.size();
      continue;
    }
    it->events += p.events;
    it->kernels += p.kernels;
    it->events_dropped += p.events_dropped;
    if (p.shim_cost.session_ns > it->shim_cost.session_ns)
      it->shim_cost = p.shim_cost; // cumulative
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
        it->stream->events_lost += p.stream->events_lost;
        it->stream->undecodable_events += p.stream->undecodable_events;
      }
    }
  }
  for (const auto& g : o.gpus) {
    for (auto pid : g.pids)
      addGpu(*this, g.info, g.host, g.rank, pid);
  }
}

} // namespace gpuwise::advisor
