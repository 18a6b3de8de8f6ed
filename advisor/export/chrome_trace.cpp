#include "advisor/export/chrome_trace.h"

#include "advisor/export/json_writer.h"
#include "advisor/precision/demangle.h"
#include "profiler/model/sync_names.h"

#include <fstream>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace gpuwise::advisor {
namespace {

using namespace model;

// The words Kineto puts in copy and memset names ("Memcpy HtoD (Pageable -> Device)").
const char* copyKindWord(CopyDirection d) {
  switch (d) {
  case CopyDirection::HostToDevice: return "HtoD";
  case CopyDirection::DeviceToHost: return "DtoH";
  case CopyDirection::DeviceToDevice: return "DtoD";
  case CopyDirection::HostToHost: return "HtoH";
  case CopyDirection::PeerToPeer: return "PtoP";
  case CopyDirection::Unknown: break;
  }
  return "Unknown";
}

const char* memoryWord(MemoryKind k) {
  switch (k) {
  case MemoryKind::Pageable: return "Pageable";
  case MemoryKind::Pinned: return "Pinned";
  case MemoryKind::Device: return "Device";
  case MemoryKind::Managed: return "Managed";
  case MemoryKind::Array: return "Array";
  case MemoryKind::Unknown: break;
  }
  return "Unknown";
}

constexpr int64_t kSyntheticPidBase = int64_t{1} << 30;
// Correlation ids given to GPU work recorded without one (a live run on the interposer tier): far
// above CUPTI's and Kineto's 32-bit ids, below the process bits of flowId().
constexpr uint64_t kSyntheticCorrelationBase = uint64_t{1} << 36;

class Exporter {
public:
  Exporter(const Trace& trace, JsonWriter& w, const ChromeTraceOptions& options,
           ChromeTraceStats& stats)
      : trace_(trace), w_(w), options_(options), stats_(stats) {
    const size_t n = trace.processes.size();
    std::set<int64_t> seen;
    for (size_t i = 0; i < n; ++i) {
      const int64_t pid = trace.processes[i].info.pid;
      host_pids_.push_back(
          pid > 0 && seen.insert(pid).second ? pid : kSyntheticPidBase + int64_t(i << 12) + 0xfff);
    }
  }

  void run() {
    w_.raw("{\"schemaVersion\":1,\"displayTimeUnit\":\"ns\",");
    writeIdentity();
    if (trace_.processes.size() == 1) writeDevicesAndRank(trace_.processes[0]);
    w_.raw("\"traceEvents\":[");
    for (size_t i = 0; i < trace_.processes.size(); ++i)
      writeProcess(i);
    w_.raw("\n]}\n");
  }

private:
  int64_t gpuPid(size_t proc, uint32_t device) const {
    // Kineto's convention (pid = device index) when it cannot be mistaken for the host process.
    if (trace_.processes.size() == 1 && int64_t(device) != host_pids_[0] && device < (1u << 20))
      return device;
    return kSyntheticPidBase + int64_t(proc << 12) + (device & 0xfff);
  }
  uint64_t flowId(size_t proc, uint64_t correlation) const {
    return trace_.processes.size() == 1 ? correlation : (uint64_t(proc) << 40) | correlation;
  }

  // `{"ph":"X","cat":...,"name":...,"pid":...,"tid":...,"ts":...` (the caller closes it).
  void begin(char ph, std::string_view cat, std::string_view name, int64_t pid, int64_t tid,
             TimeNs ts) {
    w_.raw(first_ ? "\n{\"ph\":\"" : ",\n{\"ph\":\"").raw(ph).raw('"');
    first_ = false;
    ++stats_.events;
    if (!cat.empty()) w_.raw(",\"cat\":").str(cat);
    w_.raw(",\"name\":")
        .str(name)
        .raw(",\"pid\":")
        .num(pid)
        .raw(",\"tid\":")
        .num(tid)
        .raw(",\"ts\":")
        .micros(ts);
  }
  void span(char ph, std::string_view cat, std::string_view name, int64_t pid, int64_t tid,
            TimeNs start, TimeNs end) {
    begin(ph, cat, name, pid, tid, start);
    w_.raw(",\"dur\":").micros(end > start ? end - start : 0);
  }
  void metadata(std::string_view what, int64_t pid, int64_t tid, std::string_view argKey,
                std::string_view value) {
    w_.raw(first_ ? "\n{\"name\":" : ",\n{\"name\":")
        .str(what)
        .raw(",\"ph\":\"M\",\"ts\":0,\"pid\":")
        .num(pid);
    w_.raw(",\"tid\":").num(tid).raw(",\"args\":{").key(argKey).str(value).raw("}}");
    first_ = false;
    ++stats_.events;
  }
  void sortIndex(int64_t pid, int64_t index) {
    w_.raw(",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"ts\":0,\"pid\":").num(pid);
    w_.raw(",\"tid\":0,\"args\":{\"sort_index\":").num(index).raw("}}");
    ++stats_.events;
  }
  void flow(char ph, size_t proc, uint64_t correlation, int64_t pid, int64_t tid, TimeNs ts) {
    w_.raw(",\n{\"ph\":\"").raw(ph).raw("\",\"id\":").num(flowId(proc, correlation));
    w_.raw(",\"pid\":").num(pid).raw(",\"tid\":").num(tid).raw(",\"ts\":").micros(ts);
    w_.raw(",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
    if (ph == 'f') w_.raw(",\"bp\":\"e\"");
    w_.raw('}');
    ++stats_.events;
    if (ph == 'f') ++stats_.flows;
  }

  void writeIdentity() {
    const char* source = model::toString(trace_.source.kind);
    w_.raw("\"gpuwise\":{\"exporter\":\"gpuwise chrome trace\",\"source\":").str(source);
    w_.raw(",\"simulated\":").raw(trace_.source.simulated ? "true" : "false").raw(",\"files\":[");
    for (size_t i = 0; i < trace_.source.files.size(); ++i)
      (i ? w_.raw(',') : w_).str(trace_.source.files[i]);
    w_.raw("],\"processes\":[");
    for (size_t i = 0; i < trace_.processes.size(); ++i) {
      const auto& p = trace_.processes[i];
      const auto& in = p.info;
      w_.raw(i ? ",{" : "{").key("pid").num(in.pid).raw(',').key("ppid").num(in.ppid);
      w_.raw(',').key("row_pid").num(host_pids_[i]);
      w_.raw(',').key("command").str(in.command).raw(',').key("host").str(in.host);
      w_.raw(',').key("rank").num(in.rank).raw(',').key("local_rank").num(in.local_rank);
      w_.raw(',').key("world_size").num(in.world_size).raw(',').key("pod").str(in.pod);
      w_.raw(',').key("namespace").str(in.ns).raw(',').key("container").str(in.container);
      w_.raw(',')
          .key("tier")
          .str(toString(in.tier))
          .raw(',')
          .key("tier_reason")
          .str(in.tier_reason);
      w_.raw(',').key("events_dropped").num(p.events_dropped);
      w_.raw(',')
          .key("wall_start_ns")
          .num(p.wall_start)
          .raw(',')
          .key("wall_end_ns")
          .num(p.wall_end)
          .raw('}');
    }
    w_.raw("]},");
  }

  void writeDevicesAndRank(const ProcessTrace& p) {
    w_.raw("\"deviceProperties\":[");
    for (size_t i = 0; i < p.devices.size(); ++i) {
      const auto& d = p.devices[i];
      w_.raw(i ? ",{" : "{").key("id").num(d.index).raw(',').key("name").str(d.name);
      w_.raw(',').key("totalGlobalMem").num(d.memory_total_bytes);
      w_.raw(',')
          .key("computeMajor")
          .num(d.compute_major)
          .raw(',')
          .key("computeMinor")
          .num(d.compute_minor);
      w_.raw(',').key("numSms").num(d.sm_count);
      w_.raw(',').key("maxThreadsPerMultiprocessor").num(d.max_threads_per_sm);
      w_.raw(',').key("maxBlocksPerMultiprocessor").num(d.max_blocks_per_sm);
      w_.raw(',').key("regsPerMultiprocessor").num(d.registers_per_sm);
      w_.raw(',').key("sharedMemPerMultiprocessor").num(d.shared_memory_per_sm);
      w_.raw(',').key("sharedMemPerBlockOptin").num(d.max_shared_memory_per_block);
      w_.raw(',').key("warpSize").num(d.warp_size);
      if (!d.mig_profile.empty()) w_.raw(',').key("migProfile").str(d.mig_profile);
      if (d.simulated) w_.raw(',').key("simulated").raw("true");
      w_.raw('}');
    }
    w_.raw("],");
    if (p.info.rank >= 0 || p.info.world_size >= 0) {
      w_.raw("\"distributedInfo\":{")
          .key("rank")
          .num(p.info.rank)
          .raw(',')
          .key("world_size")
          .num(p.info.world_size);
      w_.raw("},");
    }
  }

  void writeRows(size_t i) {
    const auto& p = trace_.processes[i];
    const int64_t host = host_pids_[i];
    const bool multi = trace_.processes.size() > 1;
    std::string label =
        p.info.command.empty() ? "process " + std::to_string(p.info.pid) : p.info.command;
    if (p.info.rank >= 0) label = "rank " + std::to_string(p.info.rank) + ": " + label;
    metadata("process_name", host, 0, "name", label);
    metadata("process_labels", host, 0, "labels", "CPU");
    sortIndex(host, int64_t(i) * 1000);

    std::set<std::pair<uint32_t, uint32_t>> streams; // (device, stream)
    std::set<uint32_t> threads;
    for (const auto& k : p.kernels)
      streams.emplace(k.device, k.stream);
    for (const auto& c : p.copies)
      streams.emplace(c.device, c.stream);
    for (const auto& m : p.memsets)
      streams.emplace(m.device, m.stream);
    for (const auto& a : p.api_calls)
      threads.insert(a.thread);
    for (const auto& r : p.ranges) {
      if (r.kind == RangeKind::GpuAnnotation)
        streams.emplace(r.device, r.stream);
      else
        threads.insert(r.thread);
    }
    std::set<uint32_t> devices;
    for (const auto& [d, s] : streams)
      devices.insert(d);
    for (const auto& d : p.devices)
      devices.insert(d.index);
    for (uint32_t d : devices) {
      const DeviceInfo* info = p.device(d);
      std::string name = "GPU " + std::to_string(d);
      if (info && !info->name.empty()) name += ": " + info->name;
      if (multi && p.info.rank >= 0) name.insert(0, "rank " + std::to_string(p.info.rank) + " ");
      metadata("process_name", gpuPid(i, d), 0, "name", name);
      metadata("process_labels", gpuPid(i, d), 0, "labels",
               info && !info->name.empty() ? info->name : "GPU");
      sortIndex(gpuPid(i, d), int64_t(i) * 1000 + 1 + d);
    }
    for (const auto& [d, s] : streams)
      metadata("thread_name", gpuPid(i, d), s, "name", "stream " + std::to_string(s));
    for (uint32_t t : threads)
      metadata("thread_name", host, t, "name", "thread " + std::to_string(t));
  }

  // What the event writers of one process share: its index, its host row, the correlations its
  // API calls already show on the host row, and the ids given to GPU work recorded without one.
  struct ProcessScope {
    size_t index;
    int64_t host;
    std::unordered_set<uint64_t> api_correlations;
    uint64_t next_synthetic = kSyntheticCorrelationBase;
    // A blocking copy or memset's call by the call's (thread, start): the live shim's HostSync
    // for that call carries no correlation, and shown with the call's it re-imports as the same
    // wait instead of a second one.
    struct BlockingCall {
      TimeNs end;
      uint64_t correlation;
      uint32_t stream; // of the copy or memset
    };
    std::map<std::pair<uint32_t, TimeNs>, BlockingCall> blocking_calls;
    // The flows started: one start per call, one end per piece of its work (a graph launch's
    // kernels share their call's id).
    std::unordered_set<uint64_t> flow_starts;
  };

  void writeProcess(size_t i) {
    const auto& p = trace_.processes[i];
    writeRows(i);
    demangled_.clear(); // name ids are per process
    ProcessScope scope{i, host_pids_[i], {}};
    writeApiCalls(p, scope);
    writeKernels(p, scope);
    writeCopies(p, scope);
    writeMemsets(p, scope);
    writeSyncs(p, scope);
    writeRanges(p, scope);
    writeMemoryEvents(p, scope.host);
  }

  void writeApiCalls(const ProcessTrace& p, ProcessScope& scope) {
    scope.api_correlations.reserve(p.api_calls.size());
    for (const auto& a : p.api_calls) {
      if (a.correlation) scope.api_correlations.insert(a.correlation);
      const std::string_view name = p.names.get(a.name);
      const bool driver = name.starts_with("cu") && !name.starts_with("cuda");
      span('X', driver ? "cuda_driver" : "cuda_runtime", name, scope.host, a.thread, a.start,
           a.end);
      w_.raw(",\"args\":{\"correlation\":").num(a.correlation).raw("}}");
      ++stats_.api_spans;
    }
  }

  // The correlation a GPU record is shown with: its own, or, for one recorded without (a live run
  // on the interposer tier has none) whose host call is known, a synthetic id, so that the flow
  // and a re-import pair the call with its work.
  static uint64_t shownCorrelation(ProcessScope& scope, uint64_t correlation, TimeNs call_start) {
    if (correlation || call_start == 0) return correlation;
    return scope.next_synthetic++;
  }

  // The host side of GPU work the trace has no API call for (a live trace records launches on
  // the GPU record itself): a runtime event, so the viewer shows the launch and re-import joins.
  // Once per correlation (a graph launch's kernels share their call's).
  void hostCall(ProcessScope& scope, std::string_view name, uint64_t corr, uint32_t thread,
                TimeNs start, TimeNs end) {
    if (!corr || start == 0 || !scope.api_correlations.insert(corr).second) return;
    span('X', "cuda_runtime", name, scope.host, thread, start, end);
    w_.raw(",\"args\":{\"correlation\":").num(corr).raw(",\"gpuwise.synthesized\":1}}");
    ++stats_.api_spans;
  }

  void launchFlow(ProcessScope& scope, uint64_t corr, uint32_t thread, TimeNs launch, int64_t gpu,
                  uint32_t stream, TimeNs start) {
    if (!options_.flows || !corr || launch == 0 || start == 0) return;
    if (scope.flow_starts.insert(corr).second)
      flow('s', scope.index, corr, scope.host, thread, launch);
    flow('f', scope.index, corr, gpu, stream, start);
  }

  // The readable name of a kernel (demangled once per distinct name; advisor/precision's
  // demangler, as the report uses), and its mangled form when it differs.
  std::pair<std::string_view, std::string_view> kernelName(const ProcessTrace& p, NameId id) {
    const std::string_view name = p.names.get(id);
    if (!options_.demangle || !profiler::isMangled(name)) return {name, {}};
    auto [it, added] = demangled_.try_emplace(id);
    if (added) it->second = profiler::demangle(name);
    if (it->second == name) return {name, {}};
    return {it->second, name};
  }

  void writeKernelArgs(const KernelExec& k, uint64_t corr, std::string_view mangled) {
    w_.raw(",\"args\":{").key("device").num(k.device).raw(',').key("stream").num(k.stream);
    w_.raw(',').key("correlation").num(corr);
    w_.raw(',').key("grid").raw('[').num(k.grid.x).raw(',').num(k.grid.y).raw(',');
    w_.num(k.grid.z).raw(']');
    w_.raw(',').key("block").raw('[').num(k.block.x).raw(',').num(k.block.y).raw(',');
    w_.num(k.block.z).raw(']');
    if (k.registers_per_thread) w_.raw(',').key("registers per thread").num(k.registers_per_thread);
    w_.raw(',').key("shared memory").num(uint64_t(k.static_shared_bytes) + k.dynamic_shared_bytes);
    w_.raw(',').key("static shared memory").num(k.static_shared_bytes);
    w_.raw(',').key("dynamic shared memory").num(k.dynamic_shared_bytes);
    if (k.achieved_occupancy >= 0)
      w_.raw(',').key("est. achieved occupancy %").num(double(k.achieved_occupancy) * 100.0);
    if (k.graph_id) w_.raw(',').key("graph id").num(k.graph_id);
    if (k.flags & kKernelCooperative) w_.raw(',').key("cooperative").num(1);
    if (!mangled.empty()) w_.raw(',').key("mangled name").str(mangled);
    if (corr != k.correlation) w_.raw(',').key("gpuwise.synthesized").num(1);
    w_.raw("}}");
  }

  void writeKernels(const ProcessTrace& p, ProcessScope& scope) {
    for (const auto& k : p.kernels) {
      const int64_t gpu = gpuPid(scope.index, k.device);
      const uint64_t corr = shownCorrelation(scope, k.correlation, k.launch_start);
      const auto [name, mangled] = kernelName(p, k.name);
      span('X', "kernel", name, gpu, k.stream, k.start, k.end);
      writeKernelArgs(k, corr, mangled);
      hostCall(scope, "cudaLaunchKernel", corr, k.thread, k.launch_start, k.launch_end);
      launchFlow(scope, corr, k.thread, k.launch_start, gpu, k.stream, k.start);
    }
  }

  // A copy's or memset's args, its host call and its flow.
  void writeTransferTail(ProcessScope& scope, uint64_t own, uint64_t corr, uint64_t bytes,
                         std::string_view call, uint32_t thread, TimeNs call_start, TimeNs call_end,
                         int64_t gpu, uint32_t stream, TimeNs start) {
    w_.raw(',').key("correlation").num(corr).raw(',').key("bytes").num(bytes);
    if (corr != own) w_.raw(',').key("gpuwise.synthesized").num(1);
    w_.raw("}}");
    hostCall(scope, call, corr, thread, call_start, call_end);
    launchFlow(scope, corr, thread, call_start, gpu, stream, start);
    if (corr != own && !call.ends_with("Async"))
      scope.blocking_calls.emplace(std::pair{thread, call_start},
                                   ProcessScope::BlockingCall{call_end, corr, stream});
  }

  void writeCopies(const ProcessTrace& p, ProcessScope& scope) {
    for (const auto& c : p.copies) {
      const int64_t gpu = gpuPid(scope.index, c.device);
      const uint64_t corr = shownCorrelation(scope, c.correlation, c.call_start);
      std::string name = std::string("Memcpy ") + copyKindWord(c.direction) + " (" +
                         memoryWord(c.src) + " -> " + memoryWord(c.dst) + ")";
      span('X', "gpu_memcpy", name, gpu, c.stream, c.start, c.end);
      w_.raw(",\"args\":{").key("device").num(c.device).raw(',').key("stream").num(c.stream);
      writeTransferTail(scope, c.correlation, corr, c.bytes,
                        c.async ? "cudaMemcpyAsync" : "cudaMemcpy", c.thread, c.call_start,
                        c.call_end, gpu, c.stream, c.start);
    }
  }

  void writeMemsets(const ProcessTrace& p, ProcessScope& scope) {
    for (const auto& m : p.memsets) {
      const int64_t gpu = gpuPid(scope.index, m.device);
      const uint64_t corr = shownCorrelation(scope, m.correlation, m.call_start);
      span('X', "gpu_memset", std::string("Memset (") + memoryWord(m.dst) + ")", gpu, m.stream,
           m.start, m.end);
      w_.raw(",\"args\":{").key("device").num(m.device).raw(',').key("stream").num(m.stream);
      writeTransferTail(scope, m.correlation, corr, m.bytes,
                        m.async ? "cudaMemsetAsync" : "cudaMemset", m.thread, m.call_start,
                        m.call_end, gpu, m.stream, m.start);
    }
  }

  // The blocking call a synchronous copy's wait (recorded without an id) is the host side of:
  // the call on its thread that it overlaps (the hook and CUPTI time one call a few microseconds
  // apart; a thread's calls do not overlap one another). Null when none.
  static const ProcessScope::BlockingCall* blockingCallOf(const ProcessScope& scope,
                                                          const HostSync& s) {
    auto it = scope.blocking_calls.upper_bound({s.thread, s.end});
    if (it == scope.blocking_calls.begin()) return nullptr;
    --it;
    const auto& [thread, start] = it->first;
    const bool same = thread == s.thread && start <= s.end && it->second.end >= s.start;
    return same ? &it->second : nullptr;
  }

  void writeSyncs(const ProcessTrace& p, const ProcessScope& scope) {
    for (const auto& s : p.syncs) {
      uint64_t corr = s.correlation;
      uint32_t row = s.stream;
      if (!corr && s.kind == SyncKind::SyncCopy)
        if (const auto* call = blockingCallOf(scope, s)) {
          corr = call->correlation;
          row = call->stream;
        }
      // With its API call on the host row, the CUPTI-style record goes on the GPU row (Kineto's
      // place for it); alone, it is the host's wait and goes on the waiting thread.
      const bool onGpu =
          corr && (corr != s.correlation || scope.api_correlations.count(s.correlation));
      span('X', "cuda_sync", kinetoSyncName(s.kind),
           onGpu ? gpuPid(scope.index, s.device) : scope.host, onGpu ? row : s.thread, s.start,
           s.end);
      w_.raw(",\"args\":{")
          .key("cuda_sync_kind")
          .str(kinetoSyncName(s.kind))
          .raw(',')
          .key("device")
          .num(s.device);
      w_.raw(',').key("stream").num(s.stream).raw(',').key("correlation").num(corr).raw("}}");
    }
  }

  void writeRanges(const ProcessTrace& p, const ProcessScope& scope) {
    for (const auto& r : p.ranges) {
      const std::string_view name = p.names.get(r.name);
      if (r.kind == RangeKind::GpuAnnotation) {
        span('X', "gpu_user_annotation", name, gpuPid(scope.index, r.device), r.stream, r.start,
             r.end);
        w_.raw(",\"args\":{").key("device").num(r.device).raw("}}");
        continue;
      }
      span('X', r.kind == RangeKind::Operator ? "cpu_op" : "user_annotation", name, scope.host,
           r.thread, r.start, r.end);
      w_.raw(",\"args\":{").key("gpuwise.kind").str(toString(r.kind));
      if (r.step >= 0) w_.raw(',').key("gpuwise.step").num(r.step);
      w_.raw("}}");
    }
  }

  // Memory samples and allocations as Kineto's "[memory]" instants on the host row, and with
  // counters on, one counter track per device.
  void writeMemoryEvents(const ProcessTrace& p, int64_t host) {
    for (const auto& m : p.memory_samples) {
      begin('i', "cpu_instant_event", "[memory]", host, 0, m.time);
      w_.raw(",\"s\":\"t\",\"args\":{\"Device Type\":1,\"Device Id\":").num(m.device);
      if (m.allocated_bytes >= 0) w_.raw(",\"Total Allocated\":").num(m.allocated_bytes);
      if (m.reserved_bytes >= 0) w_.raw(",\"Total Reserved\":").num(m.reserved_bytes);
      w_.raw("}}");
      if (options_.counters) {
        begin('C', "", "GPU " + std::to_string(m.device) + " memory", host, 0, m.time);
        w_.raw(",\"args\":{");
        if (m.allocated_bytes >= 0)
          w_.raw("\"allocated\":").num(m.allocated_bytes).raw(m.reserved_bytes >= 0 ? "," : "");
        if (m.reserved_bytes >= 0) w_.raw("\"reserved\":").num(m.reserved_bytes);
        w_.raw("}}");
      }
    }
    for (const auto& a : p.allocations) {
      begin('i', "cpu_instant_event", "[memory]", host, 0, a.time);
      w_.raw(",\"s\":\"t\",\"args\":{\"Device Type\":1,\"Device Id\":").num(a.device);
      w_.raw(",\"Bytes\":").num(a.is_free ? -int64_t(a.bytes) : int64_t(a.bytes));
      if (a.address) w_.raw(",\"Addr\":").num(a.address);
      w_.raw(",\"gpuwise.kind\":").str(toString(a.kind)).raw("}}");
    }
  }

  const Trace& trace_;
  JsonWriter& w_;
  ChromeTraceOptions options_;
  ChromeTraceStats& stats_;
  std::unordered_map<NameId, std::string> demangled_;
  std::vector<int64_t> host_pids_;
  bool first_ = true;
};

} // namespace

bool writeChromeTrace(const model::Trace& trace, std::ostream& out, std::string* error,
                      const ChromeTraceOptions& options, ChromeTraceStats* stats) {
  JsonWriter w(out);
  ChromeTraceStats counted;
  Exporter(trace, w, options, counted).run();
  if (stats) *stats = counted;
  if (!w.flush() || !out.flush()) {
    if (error) *error = "write error";
    return false;
  }
  return true;
}

bool writeChromeTraceFile(const model::Trace& trace, const std::string& path, std::string* error,
                          const ChromeTraceOptions& options) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    if (error) *error = path + ": cannot create the file";
    return false;
  }
  std::string why;
  if (!writeChromeTrace(trace, out, &why, options)) {
    if (error) *error = path + ": " + why + " (disk full?)";
    return false;
  }
  out.close();
  if (!out) {
    if (error) *error = path + ": write error on close";
    return false;
  }
  return true;
}

} // namespace gpuwise::advisor
