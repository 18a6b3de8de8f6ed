#include "advisor/report/report_json.h"

#include "advisor/analysis/format.h"
#include "advisor/report/series_json.h"

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;
using model::CopyDirection;
using model::MemoryKind;

template <typename T> json orNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json seconds(model::TimeNs ns) {
  return toSeconds(ns);
}

json secondsOrNull(bool known, model::TimeNs ns) {
  return known ? seconds(ns) : json(nullptr);
}

json gbps(const std::optional<double>& bytes_per_second) {
  return bytes_per_second ? json(*bytes_per_second / 1e9) : json(nullptr);
}

json copyStats(const CopyStats& s) {
  json j;
  j["count"] = s.count;
  j["bytes"] = s.bytes;
  j["seconds"] = seconds(s.time_ns);
  j["gpu_seconds"] = secondsOrNull(s.gpu_timed_count > 0, s.gpu_ns);
  j["host_call_seconds"] = secondsOrNull(s.call_timed_count > 0, s.call_ns);
  j["bandwidth_gbps"] = gbps(s.bandwidthBytesPerSecond());
  return j;
}

json source(const JobAnalysis& a) {
  json j;
  j["kind"] = model::toString(a.source.kind);
  j["simulated"] = a.simulated();
  j["files"] = a.source.files;
  return j;
}

json gpus(const CollectionResult& c) {
  json arr = json::array();
  for (const auto& g : c.gpus) {
    const auto& d = g.info;
    json j;
    j["index"] = d.index;
    j["name"] = d.name;
    j["sm_count"] = d.sm_count ? json(d.sm_count) : json(nullptr);
    j["memory_total_bytes"] = d.memory_total_bytes ? json(d.memory_total_bytes) : json(nullptr);
    j["compute_capability"] =
        d.compute_major
            ? json(std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor))
            : json(nullptr);
    j["mig_profile"] = d.mig_profile.empty() ? json(nullptr) : json(d.mig_profile);
    j["host"] = g.host;
    j["simulated"] = d.simulated;
    j["pids"] = g.pids;
    arr.push_back(std::move(j));
  }
  return arr;
}

json processes(const CollectionResult& c) {
  json arr = json::array();
  for (const auto& p : c.processes) {
    json j;
    j["pid"] = p.pid;
    j["rank"] = p.rank >= 0 ? json(p.rank) : json(nullptr);
    j["command"] = p.command;
    j["events"] = p.events;
    j["events_dropped"] = p.events_dropped;
    j["host"] = p.host;
    j["local_rank"] = p.local_rank >= 0 ? json(p.local_rank) : json(nullptr);
    j["world_size"] = p.world_size >= 0 ? json(p.world_size) : json(nullptr);
    j["tier"] = model::toString(p.tier);
    j["tier_reason"] = p.tier_reason;
    j["devices"] = p.devices;
    if (p.stream) {
      j["session_id"] = p.stream->session_id;
      j["hello_received"] = p.stream->hello_received;
      j["final_received"] = p.stream->final_received;
      j["batches"] = p.stream->batches;
      j["lost_batches"] = p.stream->lost_batches;
      j["undecodable_events"] = p.stream->undecodable_events;
    } else {
      j["session_id"] = nullptr;
      j["hello_received"] = nullptr;
      j["final_received"] = nullptr;
      j["batches"] = nullptr;
      j["lost_batches"] = nullptr;
      j["undecodable_events"] = nullptr;
    }
    arr.push_back(std::move(j));
  }
  return arr;
}

json summary(const JobAnalysis& a) {
  const auto& t = a.timeline;
  json s;
  s["wall_seconds"] = a.wall_ns ? seconds(*a.wall_ns) : json(nullptr);
  s["gpu_span_seconds"] = secondsOrNull(t.known(), t.span_ns);
  s["gpu_busy_seconds"] = secondsOrNull(t.known(), t.busy_ns);
  s["gpu_idle_ratio"] = orNull(t.idleRatio());
  s["kernel_count"] = a.kernels.count;
  // Kernels that ran without GPU timestamps have an unknown duration.
  s["kernel_seconds"] =
      secondsOrNull(a.kernels.count == 0 || a.kernels.timed_count > 0, a.kernels.total_ns);
  // Filled by the precision and occupancy classifiers, the input-stall, launch and step
  // analyzers when they land; unknown until then.
  s["precision_time_ratio"] = nullptr;
  s["tensor_core_time_ratio"] = nullptr;
  s["occupancy_theoretical"] = nullptr;
  s["input_stall_ratio"] = nullptr;
  s["host_sync_seconds"] = secondsOrNull(
      a.syncs.calls == 0 || a.syncs.untimed_calls < a.syncs.calls, a.syncs.blocked_ns);
  s["launch_overhead_ratio"] = nullptr;
  auto pageable = a.copies.hostTransfers(MemoryKind::Pageable);
  json m;
  m["h2d_bytes"] = a.copies.at(CopyDirection::HostToDevice).bytes;
  m["d2h_bytes"] = a.copies.at(CopyDirection::DeviceToHost).bytes;
  m["d2d_bytes"] = a.copies.at(CopyDirection::DeviceToDevice).bytes;
  m["pageable_bytes"] = pageable.bytes;
  m["pageable_seconds"] = seconds(pageable.time_ns);
  s["memcpy"] = std::move(m);
  s["memory_peak_bytes"] = orNull(a.memory.peakBytes());
  json steps;
  steps["count"] = nullptr;
  steps["mean_seconds"] = nullptr;
  steps["source"] = nullptr;
  s["steps"] = std::move(steps);
  return s;
}

json recommendations(const std::vector<Recommendation>& recs) {
  json arr = json::array();
  for (const auto& r : recs) {
    json j;
    j["id"] = r.id;
    j["title"] = r.title;
    j["evidence"] = r.evidence;
    j["expected_saving_ratio"] = r.expected_saving_ratio;
    j["confidence"] = toString(r.confidence);
    j["action"] = r.action;
    j["parameters"] = r.parameters;
    arr.push_back(std::move(j));
  }
  return arr;
}

json dim(const model::Dim3& d) {
  return json::array({d.x, d.y, d.z});
}

json topKernels(const KernelResult& k, size_t n) {
  json arr = json::array();
  for (size_t i = 0; i < k.by_name.size() && i < n; ++i) {
    const auto& s = k.by_name[i];
    json j;
    j["name"] = s.display_name;
    j["count"] = s.count;
    j["seconds"] = secondsOrNull(s.timed_count > 0, s.total_ns);
    j["precision"] = nullptr; // precision classifier pending
    j["tensor_core"] = nullptr;
    j["occupancy_theoretical"] = nullptr; // occupancy calculator pending
    j["mangled_name"] = s.name;
    j["mean_seconds"] = orNull(s.meanSeconds());
    j["min_seconds"] = secondsOrNull(s.timed_count > 0, s.min_ns);
    j["max_seconds"] = secondsOrNull(s.timed_count > 0, s.max_ns);
    j["kernel_time_share"] =
        k.total_ns > 0 && s.timed_count > 0
            ? json(static_cast<double>(s.total_ns) / static_cast<double>(k.total_ns))
            : json(nullptr);
    j["communication"] = (s.flags & model::kKernelCommunication) != 0;
    j["from_graph"] = (s.flags & model::kKernelFromGraph) != 0;
    json configs = json::array();
    for (const auto& c : s.configs) {
      json cj;
      cj["grid"] = dim(c.grid);
      cj["block"] = dim(c.block);
      cj["registers_per_thread"] =
          c.registers_per_thread ? json(c.registers_per_thread) : json(nullptr);
      cj["static_shared_bytes"] = c.static_shared_bytes;
      cj["dynamic_shared_bytes"] = c.dynamic_shared_bytes;
      cj["count"] = c.count;
      configs.push_back(std::move(cj));
    }
    j["launch_configs"] = std::move(configs);
    j["other_launch_config_count"] = s.other_config_count;
    arr.push_back(std::move(j));
  }
  return arr;
}

json timeline(const TimelineResult& t) {
  json j;
  j["span_seconds"] = secondsOrNull(t.known(), t.span_ns);
  j["busy_seconds"] = secondsOrNull(t.known(), t.busy_ns);
  j["idle_seconds"] = secondsOrNull(t.known(), t.span_ns - t.busy_ns);
  j["idle_ratio"] = orNull(t.idleRatio());
  j["kernel_busy_seconds"] = secondsOrNull(t.known(), t.kernel_busy_ns);
  j["copy_busy_seconds"] = secondsOrNull(t.known(), t.copy_busy_ns);
  j["memset_busy_seconds"] = secondsOrNull(t.known(), t.memset_busy_ns);
  j["copy_exposed_seconds"] = secondsOrNull(t.known(), t.copy_exposed_ns);
  j["untimed_events"] = t.untimed_events;
  json devices = json::array();
  for (const auto& d : t.devices) {
    json dj;
    dj["pid"] = d.pid;
    dj["rank"] = d.rank >= 0 ? json(d.rank) : json(nullptr);
    dj["device"] = d.device;
    dj["span_start_ns"] = d.span_start;
    dj["span_end_ns"] = d.span_end;
    dj["span_seconds"] = seconds(d.spanNs());
    dj["busy_seconds"] = seconds(d.busy_ns);
    dj["idle_seconds"] = seconds(d.idleNs());
    dj["idle_ratio"] = orNull(d.idleRatio());
    dj["kernel_busy_seconds"] = seconds(d.kernel_busy_ns);
    dj["copy_busy_seconds"] = seconds(d.copy_busy_ns);
    dj["memset_busy_seconds"] = seconds(d.memset_busy_ns);
    dj["copy_exposed_seconds"] = seconds(d.copy_exposed_ns);
    json streams = json::array();
    for (const auto& s : d.streams) {
      json sj;
      sj["stream"] = s.stream;
      sj["busy_seconds"] = seconds(s.busy_ns);
      sj["kernels"] = s.kernels;
      sj["copies"] = s.copies;
      sj["memsets"] = s.memsets;
      streams.push_back(std::move(sj));
    }
    dj["streams"] = std::move(streams);
    devices.push_back(std::move(dj));
  }
  j["devices"] = std::move(devices);
  return j;
}

json copies(const CopyResult& c) {
  json j;
  j["total"] = copyStats(c.total);
  json by_direction;
  for (size_t d = 1; d < kCopyDirections; ++d) {
    const auto& stats = c.by_direction[d];
    if (stats.count == 0) continue;
    json dj = copyStats(stats);
    json by_host;
    for (size_t k = 0; k < kMemoryKinds; ++k) {
      const auto& hs = c.by_direction_host[d][k];
      if (hs.count > 0) by_host[model::toString(static_cast<MemoryKind>(k))] = copyStats(hs);
    }
    dj["by_host_memory"] = std::move(by_host);
    by_direction[model::toString(static_cast<CopyDirection>(d))] = std::move(dj);
  }
  if (c.by_direction[0].count > 0) by_direction["unknown"] = copyStats(c.by_direction[0]);
  j["by_direction"] = by_direction.is_null() ? json::object() : std::move(by_direction);
  j["pageable"] = copyStats(c.hostTransfers(MemoryKind::Pageable));
  j["pinned"] = copyStats(c.hostTransfers(MemoryKind::Pinned));
  j["synchronous"] = copyStats(c.synchronous);
  return j;
}

json hostSyncs(const SyncResult& s) {
  json j;
  j["seconds"] = seconds(s.blocked_ns);
  j["calls"] = s.calls;
  j["threads"] = s.threads;
  j["untimed_calls"] = s.untimed_calls;
  json by_kind = json::object();
  for (size_t k = 0; k < kSyncKinds; ++k) {
    if (s.by_kind[k].calls == 0) continue;
    json kj;
    kj["calls"] = s.by_kind[k].calls;
    kj["seconds"] = seconds(s.by_kind[k].blocked_ns);
    by_kind[model::toString(static_cast<model::SyncKind>(k))] = std::move(kj);
  }
  j["by_kind"] = std::move(by_kind);
  return j;
}

json memory(const MemoryResult& m) {
  json j;
  j["peak_bytes"] = orNull(m.peakBytes());
  json devices = json::array();
  for (const auto& d : m.devices) {
    json dj;
    dj["pid"] = d.pid;
    dj["rank"] = d.rank >= 0 ? json(d.rank) : json(nullptr);
    dj["device"] = d.device;
    dj["peak_bytes"] = d.peak_bytes;
    dj["source"] = toString(d.source);
    dj["memory_total_bytes"] = d.memory_total_bytes ? json(d.memory_total_bytes) : json(nullptr);
    dj["peak_ratio"] = d.memory_total_bytes
                           ? json(static_cast<double>(d.peak_bytes) / d.memory_total_bytes)
                           : json(nullptr);
    devices.push_back(std::move(dj));
  }
  j["devices"] = std::move(devices);
  return j;
}

json collection(const CollectionResult& c) {
  json j;
  j["tier"] = jobTier(c);
  j["events"] = c.events;
  j["events_dropped"] = c.events_dropped;
  j["undecodable_events"] = c.undecodable_events;
  j["lost_batches"] = c.lost_batches;
  j["messages"] = orNull(c.messages);
  j["rejected_messages"] = c.messages ? json(c.rejectedMessages()) : json(nullptr);
  json reasons = json::object();
  for (const auto& [k, v] : c.rejected_by_reason)
    reasons[k] = v;
  j["rejected_by_reason"] = std::move(reasons);
  return j;
}

} // namespace

const char* gpuwiseVersion() {
  return GPUWISE_VERSION;
}

std::string jobTier(const CollectionResult& c) {
  if (c.processes.empty()) return "unknown";
  auto tier = c.processes.front().tier;
  for (const auto& p : c.processes)
    if (p.tier != tier) return "mixed";
  return model::toString(tier);
}

nlohmann::ordered_json buildReportJson(const ReportInput& in, const ReportOptions& options) {
  const auto& a = in.analysis;
  json r;
  r["schema"] = kReportSchema;
  r["generated_by"] = {{"tool", "gpuwise"}, {"version", gpuwiseVersion()}};
  r["source"] = source(a);
  r["gpus"] = gpus(a.collection);
  r["processes"] = processes(a.collection);
  r["summary"] = summary(a);
  r["recommendations"] = recommendations(in.recommendations);
  auto job_cost = computeJobCost(a, options.cost);
  for (size_t i = 0; i < in.recommendations.size(); ++i)
    r["recommendations"][i]["cost"] = toJson(costOf(in.recommendations[i], job_cost));
  r["top_kernels"] = topKernels(a.kernels, options.top_kernels);
  r["collection"] = collection(a.collection);
  r["timeline"] = timeline(a.timeline);
  r["copies"] = copies(a.copies);
  r["host_syncs"] = hostSyncs(a.syncs);
  r["memory"] = memory(a.memory);
  r["cost"] = toJson(job_cost);
  r["timeline_series"] = timelineSeriesJson(a.utilization);
  return r;
}

} // namespace gpuwise::advisor
