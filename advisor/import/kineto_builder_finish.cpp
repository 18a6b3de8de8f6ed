// KinetoProcessBuilder::finish(): what can only be done once every event of the file is known:
// correlation joins, host syncs, the process identity, the devices, and the top-level metadata.
#include "advisor/import/kineto_builder.h"

#include "advisor/import/api_join.h"
#include "advisor/import/kineto_text.h"
#include "profiler/model/record_limits.h"

#include <simdjson.h>

#include <algorithm>
#include <set>

namespace gpuwise::advisor {
namespace {

// Optional members of a DOM object, tolerant of absent keys and of numbers written as strings.
struct Obj {
  simdjson::dom::object o;

  bool has(std::string_view key) const {
    simdjson::dom::element e;
    return !o.at_key(key).get(e);
  }
  int64_t num(std::string_view key, int64_t fallback) const {
    simdjson::dom::element e;
    if (o.at_key(key).get(e)) return fallback;
    int64_t i;
    if (!e.get_int64().get(i)) return i;
    uint64_t u;
    if (!e.get_uint64().get(u)) return int64_t(std::min<uint64_t>(u, INT64_MAX));
    double d;
    if (!e.get_double().get(d)) return int64_t(d);
    std::string_view s;
    if (!e.get_string().get(s) && parseLooseInt(s, &i)) return i;
    return fallback;
  }
  int64_t num(std::string_view a, std::string_view b, int64_t fallback) const {
    return num(a, num(b, fallback));
  }
  std::string str(std::string_view key) const {
    simdjson::dom::element e;
    std::string_view s;
    if (o.at_key(key).get(e) || e.get_string().get(s)) return {};
    return std::string(s);
  }
  bool flag(std::string_view key) const {
    simdjson::dom::element e;
    bool b = false;
    if (o.at_key(key).get(e)) return false;
    if (!e.get_bool().get(b)) return b;
    return num(key, 0) != 0;
  }
};

uint32_t u32(int64_t v) {
  return v < 0 ? 0 : uint32_t(std::min<int64_t>(v, UINT32_MAX));
}

model::DeviceInfo parseDevice(const Obj& d) {
  model::DeviceInfo info;
  info.index = u32(d.num("id", 0));
  info.name = d.str("name");
  info.memory_total_bytes = uint64_t(std::max<int64_t>(0, d.num("totalGlobalMem", 0)));
  // Two spellings: Kineto's deviceProperties and the older tb_plugin computeProperties.
  info.compute_major = int(d.num("computeMajor", "major", 0));
  info.compute_minor = int(d.num("computeMinor", "minor", 0));
  info.sm_count = u32(d.num("numSms", "multiProcessorCount", 0));
  info.max_threads_per_sm =
      u32(d.num("maxThreadsPerMultiprocessor", "maxThreadsPerMultiProcessor", 0));
  info.max_blocks_per_sm = u32(d.num("maxBlocksPerMultiprocessor", 0));
  info.registers_per_sm = u32(d.num("regsPerMultiprocessor", 0));
  info.shared_memory_per_sm =
      u32(d.num("sharedMemPerMultiprocessor", "maxSharedMemoryPerMultiProcessor", 0));
  info.max_shared_memory_per_block = u32(d.num("sharedMemPerBlockOptin", "sharedMemPerBlock", 0));
  info.warp_size = u32(d.num("warpSize", 0));
  info.mig_profile = d.str("migProfile");
  info.simulated = d.flag("simulated");
  return info;
}

bool contains(std::string_view s, std::string_view what) {
  return s.find(what) != std::string_view::npos;
}

} // namespace

model::ProcessTrace KinetoProcessBuilder::finish(std::string_view meta_json) {
  applyMetadata(meta_json);

  // The host process: the one Kineto labels "CPU"; else the pid most host-side events carry.
  if (host_row_pid_ == 0) {
    auto eventsOf = [&](int64_t pid) -> uint64_t {
      for (const auto& [p, n] : host_pids_)
        if (p == pid) return n;
      return 0;
    };
    // Several "CPU" processes (data-loader workers traced too): the busiest, then the lowest pid.
    bool labelled = false;
    for (const auto& [pid, label] : process_labels_) {
      if (label != "CPU") continue;
      if (!labelled || eventsOf(pid) > eventsOf(host_row_pid_) ||
          (eventsOf(pid) == eventsOf(host_row_pid_) && pid < host_row_pid_))
        host_row_pid_ = pid;
      labelled = true;
    }
    if (!labelled && !host_pids_.empty())
      host_row_pid_ =
          std::max_element(host_pids_.begin(), host_pids_.end(), [](const auto& x, const auto& y) {
            return x.second < y.second;
          })->first;
  }
  if (!identity_from_meta_) {
    trace_.info.pid = host_row_pid_;
    if (auto it = process_names_.find(host_row_pid_); it != process_names_.end())
      trace_.info.command = it->second;
  }

  joinCorrelations();
  joinCollectives();
  if (!saw_dataloader_)
    trace_.ranges.insert(trace_.ranges.end(), python_dataloader_.begin(), python_dataloader_.end());
  // The input bounds (record_limits.h), each counted in the report: absurd times, too many
  // devices, overlong identity strings (names are cut by the name table).
  model::dropAbsurdTimes(trace_);
  model::boundDevices(std::span(&trace_, 1));
  resolveDevices();
  model::boundIdentity(trace_);
  if (!identity_from_meta_ && wall_set_) {
    trace_.wall_start = wall_min_;
    trace_.wall_end = wall_max_;
  }
  trace_.sortByTime();
  return std::move(trace_);
}

// A record_param_comms operator and the collective kernel it launched share an External id; an
// operator whose kernel is not in the trace (or described itself) adds nothing.
void KinetoProcessBuilder::joinCollectives() {
  for (auto& [external, c] : pending_collectives_) {
    auto it = collective_kernels_by_external_.find(external);
    if (it == collective_kernels_by_external_.end()) continue;
    c.correlation = it->second;
    trace_.collectives.push_back(c);
  }
  pending_collectives_.clear();
  collective_kernels_by_external_.clear();
}

void KinetoProcessBuilder::joinCorrelations() {
  // A cuda_sync without a call of its own is on the thread Kineto put it on, when that is a
  // thread of the host process.
  std::vector<model::HostSync> records;
  records.reserve(pending_syncs_.size());
  for (auto& p : pending_syncs_) {
    if (p.pid == host_row_pid_) p.sync.thread = u32(p.tid);
    records.push_back(p.sync);
  }
  joinApiCalls(trace_, std::move(records), SyncRecordMerge::SameKind);
}

void KinetoProcessBuilder::applyMetadata(std::string_view meta_json) {
  auto& info = trace_.info;
  info.tier = model::CollectionTier::Imported;
  info.tier_reason = "PyTorch profiler (Kineto) trace";
  if (meta_json.empty()) return; // Chrome's bare-array form carries no metadata
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const simdjson::padded_string padded(meta_json);
  if (auto err = parser.parse(padded).get(root))
    throw KinetoParseError(std::string("malformed JSON outside traceEvents (") +
                           simdjson::error_message(err) + ")");
  simdjson::dom::object top;
  if (root.get_object().get(top))
    throw KinetoParseError("the top-level JSON value is not an object");
  const Obj meta{top};

  simdjson::dom::array devices;
  if (!top["deviceProperties"].get_array().get(devices) ||
      !top["computeProperties"].get_array().get(devices)) {
    for (simdjson::dom::element d : devices) {
      simdjson::dom::object o;
      if (!d.get_object().get(o)) trace_.devices.push_back(parseDevice(Obj{o}));
    }
  }
  simdjson::dom::object dist;
  if (!top["distributedInfo"].get_object().get(dist)) {
    const Obj d{dist};
    info.rank = int32_t(d.num("rank", -1));
    info.world_size = int32_t(d.num("world_size", -1));
    info.local_rank = int32_t(d.num("local_rank", -1));
  }
  info.host = meta.str("host_name");
  if (meta.has("schemaVersion"))
    info.tier_reason += ", schemaVersion " + std::to_string(meta.num("schemaVersion", 0));
  amd_ = meta.has("roctracer_version") || meta.has("hip_runtime_version") ||
         meta.has("hip_driver_version");

  // Identity our exporter writes (advisor/export/chrome_trace.h), so a trace survives export and
  // re-import unchanged. Only for a file holding one process: otherwise the rows are merged.
  simdjson::dom::array processes;
  if (!top["gpuwise"]["processes"].get_array().get(processes) && processes.size() == 1) {
    simdjson::dom::object ours;
    if (processes.at(0).get_object().get(ours)) return;
    const Obj g{ours};
    identity_from_meta_ = true;
    host_row_pid_ = g.num("row_pid", 0);
    info.pid = g.num("pid", 0);
    info.ppid = g.num("ppid", 0);
    info.command = g.str("command");
    info.host = g.str("host");
    info.rank = int32_t(g.num("rank", -1));
    info.local_rank = int32_t(g.num("local_rank", -1));
    info.world_size = int32_t(g.num("world_size", -1));
    info.pod = g.str("pod");
    info.ns = g.str("namespace");
    info.container = g.str("container");
    if (g.has("tier_reason")) info.tier_reason = g.str("tier_reason");
    trace_.events_dropped += uint64_t(std::max<int64_t>(0, g.num("events_dropped", 0)));
    const model::TimeNs wall_start = g.num("wall_start_ns", 0), wall_end = g.num("wall_end_ns", 0);
    if (model::plausibleTime(wall_start) && model::plausibleTime(wall_end)) {
      trace_.wall_start = wall_start;
      trace_.wall_end = wall_end;
    }
  }
}

void KinetoProcessBuilder::resolveDevices() {
  // Kineto lists every visible device; the report wants the ones this process used.
  std::set<uint32_t> used = trace_.activeDevices();
  for (const auto& a : trace_.allocations)
    used.insert(a.device); // pinned host memory's device too
  for (const auto& r : trace_.ranges)
    if (r.kind == model::RangeKind::GpuAnnotation) used.insert(r.device);

  std::vector<model::DeviceInfo> devices;
  for (uint32_t index : used) {
    auto it = std::find_if(trace_.devices.begin(), trace_.devices.end(),
                           [&](const model::DeviceInfo& d) { return d.index == index; });
    model::DeviceInfo d = it != trace_.devices.end() ? *it : model::DeviceInfo{.index = index};
    // Name the vendor where the trace says it and the device name does not.
    if (saw_mtia_ && !d.name.starts_with("MTIA"))
      d.name = d.name.empty() ? "MTIA" : "MTIA " + d.name;
    if (amd_ && !contains(d.name, "AMD")) d.name = d.name.empty() ? "AMD GPU" : "AMD " + d.name;
    devices.push_back(std::move(d));
  }
  trace_.devices = std::move(devices);
}

} // namespace gpuwise::advisor
