#include "advisor/report/report_json.h"

#include "advisor/cost/energy_cost.h"
#include "advisor/precision/precision.h"
#include "advisor/report/format.h"
#include "advisor/report/gpu_types_json.h"
#include "advisor/report/ranks_json.h"
#include "advisor/report/series_json.h"
#include "advisor/rules/pinned_bandwidth.h"

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
    j["uuid"] = d.uuid.empty() ? json(nullptr) : json(d.uuid);
    j["host"] = g.host;
    j["rank"] = g.rank >= 0 ? json(g.rank) : json(nullptr);
    j["label"] = gpuLabel(g);
    j["simulated"] = d.simulated;
    j["pids"] = g.pids;
    arr.push_back(std::move(j));
  }
  return arr;
}

// The job the processes are ranks of: missing ranks as [first, last] runs (JobRanks).
json job(const CollectionResult& c) {
  const JobRanks ranks = c.jobRanks();
  json j;
  j["world_size"] = ranks.world_size >= 0 ? json(ranks.world_size) : json(nullptr);
  j["ranks"] = ranks.ranks;
  json missing = json::array();
  for (const auto& [first, last] : ranks.missing)
    missing.push_back({first, last});
  j["missing_ranks"] = std::move(missing);
  j["missing_rank_count"] = ranks.missingCount();
  return j;
}

json processes(const CollectionResult& c) {
  json arr = json::array();
  for (const auto& p : c.processes) {
    json j;
    j["pid"] = p.pid;
    j["rank"] = p.rank >= 0 ? json(p.rank) : json(nullptr);
    j["command"] = p.command;
    j["events"] = p.events;
    j["kernel_count"] = p.kernels;
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
      j["events_lost"] = p.stream->events_lost;
      j["undecodable_events"] = p.stream->undecodable_events;
    } else {
      j["session_id"] = nullptr;
      j["hello_received"] = nullptr;
      j["final_received"] = nullptr;
      j["batches"] = nullptr;
      j["lost_batches"] = nullptr;
      j["events_lost"] = nullptr;
      j["undecodable_events"] = nullptr;
    }
    arr.push_back(std::move(j));
  }
  return arr;
}

json sourceName(StepSource source) {
  const char* name = toString(source);
  return name ? json(name) : json(nullptr);
}

json idleSeconds(const std::array<model::TimeNs, kIdleCauses>& ns) {
  json j;
  for (size_t c = 0; c < kIdleCauses; ++c)
    j[toString(static_cast<IdleCause>(c))] = seconds(ns[c]);
  return j;
}

json precisionRatios(const PrecisionResult& p) {
  if (p.kernel_ns <= 0) return nullptr;
  json j;
  for (auto prec : profiler::kAllPrecisions)
    j[std::string(profiler::precisionName(prec))] = *p.share(prec);
  return j;
}

// summary.steps.warmup: the steps before the steady state (step_analyzer.h), on their own.
json warmupJson(const StepResult& r) {
  const char* limiter = r.warmupLimiter();
  json j;
  j["count"] = r.warmupCount();
  j["seconds"] = seconds(r.warmupNs());
  j["input_stall_seconds"] = seconds(r.warmupIdleNs(IdleCause::Input));
  j["limiter"] = limiter ? json(limiter) : json(nullptr);
  return j;
}

// summary.steps.steady: the distribution of the steady steps' durations, which `gpuwise diff`
// compares (its median, with a noise band from the spread).
json steadyJson(const StepResult& r) {
  const auto st = r.steadyStats();
  json j;
  j["count"] = st.count;
  j["seconds"] = seconds(st.total_ns);
  j["p10_seconds"] = seconds(st.p10_ns);
  j["p25_seconds"] = seconds(st.p25_ns);
  j["p50_seconds"] = seconds(st.p50_ns);
  j["p75_seconds"] = seconds(st.p75_ns);
  j["p90_seconds"] = seconds(st.p90_ns);
  j["iqr_ratio"] = st.iqrRatio(); // (p75 - p25) / p50
  // The median's distribution-free 95% interval (order statistics): `gpuwise diff`'s noise band.
  j["p50_ci95_seconds"] = json::array({seconds(st.p50_ci_low_ns), seconds(st.p50_ci_high_ns)});
  j["gpu_busy_ratio"] = orNull(r.busyRatio());
  j["gpu_busy_ratio_p50"] = orNull(r.busyRatioP50()); // the median step's busy share
  return j;
}

// summary.communication: the collective kernels' time, its part no compute kernel hid, and the
// share hidden (HTA's comm/compute overlap), with each collective kind's size and bandwidth; null
// when the job ran no collective kernel.
json communicationJson(const CommunicationResult& c) {
  if (!c.any()) return nullptr;
  json j;
  j["seconds"] = seconds(c.busy_ns);
  j["exposed_seconds"] = seconds(c.exposed_ns);
  j["overlap_ratio"] = orNull(c.overlap_ratio);
  json kinds = json::array();
  auto gbps = [](const std::optional<double>& bytes_per_second) {
    return bytes_per_second ? json(*bytes_per_second / 1e9) : json(nullptr);
  };
  for (const auto& k : c.by_kind) {
    json e;
    e["kind"] = model::toString(k.kind);
    e["count"] = k.count;
    e["seconds"] = seconds(k.kernel_ns);
    e["bytes"] = k.sized > 0 ? json(k.bytes) : json(nullptr);
    e["group_size"] = k.group_size > 0 ? json(k.group_size) : json(nullptr);
    e["algorithm"] = k.algorithm.empty() ? json(nullptr) : json(k.algorithm);
    e["algorithm_bandwidth_gbps"] = gbps(k.algorithm_bytes_per_second);
    e["bus_bandwidth_gbps"] = gbps(k.bus_bytes_per_second);
    kinds.push_back(std::move(e));
  }
  j["by_kind"] = std::move(kinds);
  return j;
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
  s["precision_time_ratio"] = precisionRatios(a.precision);
  s["tensor_core_time_ratio"] = orNull(a.precision.tensorCoreShare());
  s["occupancy_theoretical"] = orNull(a.kernels.occupancy.occupancy());
  s["input_stall_ratio"] = orNull(a.inputStallRatio());
  s["host_sync_seconds"] = secondsOrNull(
      a.syncs.calls == 0 || a.syncs.untimed_calls < a.syncs.calls, a.syncs.blocked_ns);
  s["launch_overhead_ratio"] = orNull(a.launchOverheadRatio());
  auto pageable = a.copies.hostTransfers(MemoryKind::Pageable);
  json m;
  m["h2d_bytes"] = a.copies.at(CopyDirection::HostToDevice).bytes;
  m["d2h_bytes"] = a.copies.at(CopyDirection::DeviceToHost).bytes;
  m["d2d_bytes"] = a.copies.at(CopyDirection::DeviceToDevice).bytes;
  m["pageable_bytes"] = pageable.bytes;
  m["pageable_seconds"] = seconds(pageable.time_ns);
  s["memcpy"] = std::move(m);
  s["memory_peak_bytes"] = orNull(a.memory.peakBytes());
  // The shim's estimated cost on the application's threads, per wall second (live runs).
  s["shim_overhead_ratio"] = orNull(a.collection.shimOverheadRatio());
  const auto stats = a.steps.stats();
  const bool have_steps = stats.count > 0;
  json steps;
  steps["count"] = have_steps ? json(stats.count) : json(nullptr);
  steps["mean_seconds"] = secondsOrNull(have_steps, stats.mean_ns);
  steps["source"] = sourceName(a.steps.source());
  steps["p50_seconds"] = secondsOrNull(have_steps, stats.p50_ns);
  steps["p90_seconds"] = secondsOrNull(have_steps, stats.p90_ns);
  steps["cv"] = have_steps ? json(stats.cv()) : json(nullptr);
  // Beyond the contract's fields: the warm-up on its own and the steady state the advice and
  // `gpuwise diff` read (step_analyzer.h says where one ends and the other begins).
  steps["warmup"] = have_steps ? warmupJson(a.steps) : json(nullptr);
  steps["steady"] = have_steps ? steadyJson(a.steps) : json(nullptr);
  s["steps"] = std::move(steps);
  // Beyond the contract: the figures the rules read, in one place.
  s["input_stall_seconds"] = secondsOrNull(t.known(), a.inputStallNs());
  s["idle_seconds_by_cause"] = t.known() ? idleSeconds(t.idle.ns) : json(nullptr);
  s["host_sync_seconds_per_step"] = orNull(a.hostSyncSecondsPerStep());
  s["occupancy_achieved"] = orNull(a.kernels.occupancy.achieved());
  s["sm_fill"] = orNull(a.kernels.occupancy.smFill());
  s["tail_wave_loss"] = orNull(a.kernels.occupancy.tailLoss());
  s["communication"] = communicationJson(a.communication);
  s["straggler"] = stragglerJson(a.distributed.straggler);
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
    // The part of the breakdown the finding explains, and its share of the reference time: the
    // bound on expected_saving_ratio.
    j["explains"] = {{"part", r.explains.part},
                     {"seconds", r.explains.seconds},
                     {"reference_seconds", r.explains.reference_seconds},
                     {"share", r.explains.isTime() ? json(r.explains.share()) : json(nullptr)}};
    arr.push_back(std::move(j));
  }
  return arr;
}

json dim(const model::Dim3& d) {
  return json::array({d.x, d.y, d.z});
}

json limiterOrNull(const OccupancyStats& o) {
  auto l = o.limiter();
  return l == profiler::OccupancyLimiter::None ? json(nullptr)
                                               : json(std::string(profiler::limiterName(l)));
}

json topKernels(const KernelResult& k, size_t n) {
  json arr = json::array();
  for (size_t i = 0; i < k.by_name.size() && i < n; ++i) {
    const auto& s = k.by_name[i];
    json j;
    j["name"] = s.display_name;
    j["count"] = s.count;
    j["seconds"] = secondsOrNull(s.timed_count > 0, s.total_ns);
    j["precision"] = std::string(profiler::precisionName(s.kernel_class.precision));
    j["tensor_core"] = s.kernel_class.tensor_core;
    j["occupancy_theoretical"] = orNull(s.occupancy.occupancy());
    j["mangled_name"] = s.name;
    j["mean_seconds"] = orNull(s.meanSeconds());
    j["min_seconds"] = secondsOrNull(s.timed_count > 0, s.min_ns);
    j["max_seconds"] = secondsOrNull(s.timed_count > 0, s.max_ns);
    j["kernel_time_share"] =
        k.total_ns > 0 && s.timed_count > 0
            ? json(static_cast<double>(s.total_ns) / static_cast<double>(k.total_ns))
            : json(nullptr);
    j["precision_known"] = s.kernel_class.known;
    j["precision_rule"] = std::string(s.kernel_class.rule);
    j["matmul"] = s.matmul_like;
    j["occupancy_limiter"] = limiterOrNull(s.occupancy);
    j["active_blocks_per_sm"] = orNull(s.occupancy.activeBlocksPerSm());
    j["sm_fill"] = orNull(s.occupancy.smFill());
    j["tail_wave_loss"] = orNull(s.occupancy.tailLoss());
    j["waves"] = orNull(s.occupancy.waves());
    j["occupancy_achieved"] = orNull(s.occupancy.achieved());
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
  j["compute_seconds"] = secondsOrNull(t.known(), t.compute_busy_ns);
  j["communication_seconds"] = secondsOrNull(t.known(), t.communication_busy_ns);
  j["communication_exposed_seconds"] = secondsOrNull(t.known(), t.communication_exposed_ns);
  j["memory_seconds"] = secondsOrNull(t.known(), t.memory_busy_ns);
  j["idle_seconds_by_cause"] = t.known() ? idleSeconds(t.idle.ns) : json(nullptr);
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
    dj["compute_seconds"] = seconds(d.compute_busy_ns);
    dj["communication_seconds"] = seconds(d.communication_busy_ns);
    dj["communication_exposed_seconds"] = seconds(d.communication_exposed_ns);
    dj["memory_seconds"] = seconds(d.memory_busy_ns);
    dj["idle_seconds_by_cause"] = idleSeconds(d.idle.ns);
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

// The host link of the job's first GPU (rules/pinned_bandwidth.h) and how much of it the pinned
// copies reached.
json link(const CopyResult& c, const CollectionResult& collection) {
  if (collection.gpus.empty()) return nullptr;
  auto l = pinnedLinkFor(collection.gpus.front().info.name);
  json j;
  j["name"] = l.link;
  j["known_model"] = l.known_model;
  j["pinned_gbps"] = l.bytes_per_second / 1e9;
  for (auto [d, key] : {std::pair{CopyDirection::HostToDevice, "h2d_pinned_utilisation"},
                        std::pair{CopyDirection::DeviceToHost, "d2h_pinned_utilisation"}}) {
    auto bw = c.at(d, MemoryKind::Pinned).gpuBandwidthBytesPerSecond();
    j[key] = bw ? json(*bw / l.bytes_per_second) : json(nullptr);
  }
  return j;
}

json idleDetail(const TimelineResult& t, const IdleOptions& options) {
  json j;
  j["known"] = t.known();
  j["seconds"] = secondsOrNull(t.known(), t.idle.total());
  j["seconds_by_cause"] = t.known() ? idleSeconds(t.idle.ns) : json(nullptr);
  json share;
  for (size_t c = 0; c < kIdleCauses; ++c)
    share[toString(static_cast<IdleCause>(c))] = orNull(t.idleShare(static_cast<IdleCause>(c)));
  j["share_by_cause"] = std::move(share);
  j["input_data_loader_seconds"] = seconds(t.idle.input_data_loader_ns);
  j["input_inferred_seconds"] = seconds(t.idle.input_inferred_ns);
  j["gaps"] = t.idle.gaps;
  j["launch_overhead_gaps"] = t.idle.launch_overhead_gaps;
  j["host_bound_gaps"] = t.idle.host_bound_gaps;
  j["timed_kernels"] = t.timed_kernels;
  j["short_kernels"] = t.short_kernels;
  j["short_kernel_max_us"] = double(kShortKernelNs) / 1e3;
  j["launch_overhead_max_gap_us"] = double(options.launch_overhead_max_gap_ns) / 1e3;
  return j;
}

json stepsDetail(const JobAnalysis& a, size_t max_listed) {
  const auto& r = a.steps;
  const auto stats = r.stats();
  const bool have = stats.count > 0;
  json j;
  j["source"] = sourceName(r.source());
  j["count"] = stats.count;
  j["total_seconds"] = secondsOrNull(have, stats.total_ns);
  j["mean_seconds"] = secondsOrNull(have, stats.mean_ns);
  j["p50_seconds"] = secondsOrNull(have, stats.p50_ns);
  j["p90_seconds"] = secondsOrNull(have, stats.p90_ns);
  j["min_seconds"] = secondsOrNull(have, stats.min_ns);
  j["max_seconds"] = secondsOrNull(have, stats.max_ns);
  j["stddev_seconds"] = have ? json(stats.stddev_ns / 1e9) : json(nullptr);
  j["cv"] = have ? json(stats.cv()) : json(nullptr);
  j["input_stall_seconds"] = secondsOrNull(have, r.inputStallNs());
  j["input_stall_ratio"] = orNull(r.inputStallRatio());
  j["host_sync_seconds"] = secondsOrNull(have, r.hostSyncNs());
  j["host_sync_seconds_per_step"] = orNull(a.hostSyncSecondsPerStep());
  std::array<model::TimeNs, kIdleCauses> idle{};
  for (size_t c = 0; c < kIdleCauses; ++c)
    idle[c] = r.idleNs(static_cast<IdleCause>(c));
  j["idle_seconds_by_cause"] = have ? idleSeconds(idle) : json(nullptr);
  json processes = json::array();
  for (const auto& p : r.processes) {
    json pj;
    pj["pid"] = p.pid;
    pj["rank"] = p.rank >= 0 ? json(p.rank) : json(nullptr);
    pj["source"] = sourceName(p.source);
    pj["devices"] = p.devices;
    if (p.source == StepSource::Inferred) {
      pj["inferred"] = {{"period", p.inferred_period},
                        {"match_rate", p.inferred_match_rate},
                        {"anchor", p.inferred_anchor}};
    } else {
      pj["inferred"] = nullptr;
    }
    pj["count"] = p.steps.size();
    pj["warmup_steps"] = p.warmup;
    json list = json::array();
    for (size_t i = 0; i < p.steps.size() && i < max_listed; ++i) {
      const auto& st = p.steps[i];
      json sj;
      sj["number"] = st.number;
      sj["start_ns"] = st.start;
      sj["seconds"] = seconds(st.durationNs());
      sj["gpu_busy_seconds"] = seconds(st.gpu_busy_ns);
      sj["idle_seconds_by_cause"] = idleSeconds(st.idle_ns);
      sj["input_stall_seconds"] = seconds(st.inputStallNs());
      sj["host_sync_seconds"] = seconds(st.host_sync_ns);
      sj["data_loader_seconds"] = seconds(st.data_loader_ns);
      sj["kernels"] = st.kernels;
      list.push_back(std::move(sj));
    }
    pj["steps"] = std::move(list);
    pj["steps_listed"] = std::min(p.steps.size(), max_listed);
    processes.push_back(std::move(pj));
  }
  j["processes"] = std::move(processes);
  return j;
}

// precision.blas_probe: present only when the shim recorded cuBLAS calls (live LD_PRELOAD runs).
json blasProbe(const BlasPrecisionResult& b) {
  json j;
  j["calls"] = b.calls;
  j["calls_with_kernels"] = b.calls_with_kernels;
  j["agreeing_calls"] = b.agreeing_calls;
  j["disagreeing_calls"] = b.disagreeing_calls;
  j["unclassified_calls"] = b.unclassified_calls;
  j["disagreeing_kernel_seconds"] = seconds(b.disagreeing_kernel_ns);
  json list = json::array();
  for (const auto& m : b.matches) {
    json e;
    e["api"] = m.api;
    e["types"] = m.types;
    e["requested_precision"] = std::string(profiler::precisionName(m.requested));
    e["kernel"] = m.kernel;
    e["kernel_precision"] = m.classified
                                ? json(std::string(profiler::precisionName(m.kernel_precision)))
                                : json(nullptr);
    e["agrees"] = m.classified ? json(m.agrees) : json(nullptr);
    e["calls"] = m.calls;
    e["kernel_seconds"] = seconds(m.kernel_ns);
    list.push_back(std::move(e));
  }
  j["kernels"] = std::move(list);
  return j;
}

json precisionDetail(const PrecisionResult& p) {
  const bool known = p.kernel_ns > 0;
  json j;
  j["kernel_seconds"] = seconds(p.kernel_ns);
  json by = json::object();
  for (auto prec : profiler::kAllPrecisions)
    by[std::string(profiler::precisionName(prec))] = seconds(p.at(prec));
  j["seconds_by_precision"] = std::move(by);
  j["time_ratio"] = precisionRatios(p);
  j["tensor_core_seconds"] = seconds(p.tensor_core_ns);
  j["tensor_core_time_ratio"] = orNull(p.tensorCoreShare());
  j["fp32_matmul_seconds"] = seconds(p.fp32_matmul_ns);
  j["fp32_matmul_time_ratio"] = orNull(p.fp32MatmulShare());
  j["fp32_matmul_share_of_fp32"] = orNull(p.fp32MatmulShareOfFp32());
  j["unknown_kernel_names"] = p.unknown_names;
  j["unknown_kernel_seconds"] = secondsOrNull(known || p.unknown_names == 0, p.unknown_ns);
  json unknown = json::array();
  for (const auto& u : p.unknown)
    unknown.push_back({{"name", u.name}, {"count", u.count}, {"seconds", seconds(u.total_ns)}});
  j["unknown_kernels"] = std::move(unknown);
  return j;
}

json occupancyDetail(const OccupancyStats& o) {
  json j;
  j["theoretical"] = orNull(o.occupancy());
  j["achieved"] = orNull(o.achieved());
  j["active_blocks_per_sm"] = orNull(o.activeBlocksPerSm());
  j["sm_fill"] = orNull(o.smFill());
  j["tail_wave_loss"] = orNull(o.tailLoss());
  j["waves"] = orNull(o.waves());
  j["limiter"] = limiterOrNull(o);
  json limiters = json::object();
  for (size_t l = 1; l < kOccupancyLimiters; ++l) {
    auto lim = static_cast<profiler::OccupancyLimiter>(l);
    limiters[std::string(profiler::limiterName(lim))] = orNull(o.limiterShare(lim));
  }
  j["limiter_time_ratio"] = std::move(limiters);
  j["theoretical_kernel_seconds"] = seconds(o.timed_ns);
  j["achieved_kernel_seconds"] = seconds(o.achieved_timed_ns);
  j["launches_known"] = o.known;
  j["launches_unknown"] = o.unknown;
  j["registers_unknown"] = o.registers_unknown;
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
  j["events_lost"] = c.events_lost;
  j["messages"] = orNull(c.messages);
  j["rejected_messages"] = c.messages ? json(c.rejectedMessages()) : json(nullptr);
  json reasons = json::object();
  for (const auto& [k, v] : c.rejected_by_reason)
    reasons[k] = v;
  j["rejected_by_reason"] = std::move(reasons);
  // What the input bounds left out (profiler/model/record_limits.h); all zero for a sane input.
  json bounds;
  bounds["absurd_time_records_dropped"] = c.limits.absurd_times;
  bounds["devices_dropped"] = c.limits.devices_dropped;
  bounds["processes_dropped"] = c.limits.processes_dropped;
  bounds["process_events_dropped"] = c.limits.process_events_dropped;
  bounds["names_truncated"] = c.limits.names_truncated;
  j["input_bounds"] = std::move(bounds);
  // Only when the ingest shed anything (its bounds on Hellos and names, its memory budget).
  if (!c.shed_by_reason.empty()) {
    json shed = json::object();
    for (const auto& [k, v] : c.shed_by_reason)
      shed[k] = v;
    j["shed_by_reason"] = std::move(shed);
  }
  // What the shim cost and how it kept that cost down (live runs; null for imported traces).
  if (auto ratio = c.shimOverheadRatio()) {
    model::ShimCost t = c.shimCostTotal();
    json shim;
    shim["overhead_ratio"] = *ratio;
    shim["overhead_seconds"] = seconds(int64_t(t.overhead_ns));
    shim["estimated"] = true; // calibrated per-call cost x calls, not timed per call
    shim["budget_ratio"] = t.budget_ratio;
    shim["recorded_calls"] = t.events_recorded;
    shim["counted_launches"] = t.launches_counted;
    shim["cupti_launch_records"] = t.cupti_launch_records;
    shim["recorded_call_ns"] = t.full_call_ns;
    shim["counted_launch_ns"] = t.counted_call_ns;
    shim["detail_shed_seconds"] = seconds(int64_t(t.shed_ns));
    // What CUPTI itself reported spending (its OVERHEAD records); not part of overhead_ratio.
    shim["cupti_overhead_seconds"] = seconds(int64_t(t.cupti_overhead_ns));
    j["shim"] = std::move(shim);
  } else {
    j["shim"] = nullptr;
  }
  return j;
}

// summary.energy_*: the job's GPU energy (advisor/cost/energy_cost.h); null when unknown.
void addEnergySummary(json& summary, const JobEnergy& e) {
  auto orNull = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  summary["energy_joules"] = orNull(e.joules);
  summary["energy_source"] = e.joules ? json(e.source) : json(nullptr);
  summary["energy_joules_per_step"] = orNull(e.joules_per_step);
  summary["energy_cost"] = orNull(e.cost);
}

// A recommendation's share of the energy beside its share of time.
void addEnergySaving(json& recommendation, const FindingEnergy& f) {
  recommendation["energy_saving_joules"] = f.saving_joules ? json(*f.saving_joules) : json(nullptr);
  recommendation["energy_saving_cost"] = f.saving_cost ? json(*f.saving_cost) : json(nullptr);
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
  r["job"] = job(a.collection);
  r["ranks"] = ranksJson(a.distributed.ranks);
  r["summary"] = summary(a);
  r["recommendations"] = recommendations(in.recommendations);
  auto job_cost = computeJobCost(a, options.cost);
  auto job_energy = computeJobEnergy(a, options.cost);
  addEnergySummary(r["summary"], job_energy);
  for (size_t i = 0; i < in.recommendations.size(); ++i) {
    r["recommendations"][i]["cost"] = toJson(costOf(in.recommendations[i], job_cost));
    addEnergySaving(r["recommendations"][i], energyOf(in.recommendations[i], job_energy));
  }
  r["notes"] = recommendations(in.notes ? *in.notes : std::vector<Recommendation>{});
  if (in.notes)
    for (size_t i = 0; i < in.notes->size(); ++i) {
      r["notes"][i]["cost"] = toJson(costOf((*in.notes)[i], job_cost));
      addEnergySaving(r["notes"][i], energyOf((*in.notes)[i], job_energy));
    }
  r["top_kernels"] = topKernels(a.kernels, options.top_kernels);
  r["collection"] = collection(a.collection);
  r["timeline"] = timeline(a.timeline);
  r["copies"] = copies(a.copies);
  r["copies"]["link"] = link(a.copies, a.collection);
  r["host_syncs"] = hostSyncs(a.syncs);
  r["memory"] = memory(a.memory);
  r["cost"] = toJson(job_cost);
  r["energy"] = toJson(job_energy);
  r["gpu_types"] = gpuTypesJson(compareGpuTypes(a, options.gpu_types));
  r["timeline_series"] = timelineSeriesJson(a.utilization);
  r["idle"] = idleDetail(a.timeline, options.idle);
  r["steps"] = stepsDetail(a, options.max_steps_listed);
  r["precision"] = precisionDetail(a.precision);
  if (a.blas.probed()) r["precision"]["blas_probe"] = blasProbe(a.blas);
  if (a.nvml.sampled()) {
    // device_samples: NVML's figures per (process, device); present only when the shim sampled.
    json arr = json::array();
    auto bytes = [](int64_t v) { return v < 0 ? json(nullptr) : json(v); };
    auto clock = [](int32_t v) { return v < 0 ? json(nullptr) : json(v); };
    auto optionalJson = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
    for (const auto& d : a.nvml.devices)
      arr.push_back(
          {{"pid", d.pid},
           {"rank", d.rank >= 0 ? json(d.rank) : json(nullptr)},
           {"device", d.device},
           {"samples", d.samples},
           {"process_used_peak_bytes", bytes(d.process_used_peak_bytes)},
           {"device_used_peak_bytes", bytes(d.device_used_peak_bytes)},
           {"device_total_bytes", bytes(d.device_total_bytes)},
           {"gpu_utilization_ratio",
            d.gpu_utilization_mean < 0 ? json(nullptr) : json(d.gpu_utilization_mean / 100.0)},
           {"mean_power_watts", optionalJson(d.energy.meanPowerWatts())},
           {"sm_clock_max_mhz", clock(d.energy.sm_clock_max_mhz)},
           {"memory_clock_max_mhz", clock(d.energy.memory_clock_max_mhz)}});
    r["device_samples"] = std::move(arr);
  }
  r["occupancy"] = occupancyDetail(a.kernels.occupancy);
  return r;
}

json recommendationsJson(const std::vector<Recommendation>& recs) {
  return recommendations(recs);
}

} // namespace gpuwise::advisor
