#include "advisor/metrics/exposition_builder.h"

#include "advisor/cost/waste_cost.h"
#include "advisor/precision/precision.h"
#include "advisor/report/report_json.h"
#include "transport/codec.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace gpuwise::advisor::metrics {

namespace {

constexpr double kNsPerSecond = 1e9;

// docs/metrics.md, verbatim (tests/advisor/metrics_contract_test.cpp compares the two).
constexpr Family kBusyRatio{
    "gpuwise_gpu_busy_ratio", "gauge",
    "Share of the last 60 seconds in which the GPU ran work of this process "
    "(union of its kernel, memcpy and memset intervals)."};
constexpr Family kBusySeconds{"gpuwise_gpu_busy_seconds_total", "counter",
                              "Time the GPU ran work of this process: length of the union of its "
                              "kernel, memcpy and memset intervals."};
constexpr Family kIdleSeconds{
    "gpuwise_gpu_idle_seconds_total", "counter",
    "Time between the first and the last GPU activity of this process in which the GPU ran none of "
    "its work, by the cause the advisor attributes it to."};
constexpr Family kKernelSeconds{
    "gpuwise_kernel_seconds_total", "counter",
    "GPU time of the kernels of this process, by numeric precision and tensor core use (summed per "
    "kernel, so concurrent kernels each count)."};
constexpr Family kKernels{"gpuwise_kernels_total", "counter",
                          "Kernels this process ran on the GPU."};
constexpr Family kCopyBytes{"gpuwise_copy_bytes_total", "counter",
                            "Bytes this process copied with memcpy operations, by direction and by "
                            "the kind of host memory involved."};
constexpr Family kCopySeconds{"gpuwise_copy_seconds_total", "counter",
                              "Time of the memcpy operations of this process (GPU duration when "
                              "known, else the host call), by direction and host memory kind."};
constexpr Family kInputStall{"gpuwise_input_stall_seconds_total", "counter",
                             "Time the training steps of this process waited for input (the data "
                             "loader) while its GPUs were idle."};
constexpr Family kHostSync{"gpuwise_host_sync_seconds_total", "counter",
                           "Time the threads of this process spent blocked in synchronising CUDA "
                           "calls (union per thread, summed over threads)."};
constexpr Family kMemoryUsed{"gpuwise_memory_used_bytes", "gauge",
                             "Device memory this process has reserved on the GPU now."};
constexpr Family kMemoryPeak{"gpuwise_memory_peak_bytes", "gauge",
                             "Highest device memory this process has reserved on the GPU since it "
                             "connected."};
constexpr Family kDeviceMemory{"gpuwise_device_memory_bytes", "gauge",
                               "Memory of the GPU or MIG instance this process uses."};
constexpr Family kEnergy{"gpuwise_energy_joules_total", "counter",
                         "Energy the GPU used since this process connected, from NVML's total "
                         "energy counter (or its power readings, integrated, where the GPU has no "
                         "counter); the whole GPU's, other processes on it included."};
constexpr Family kStepDuration{"gpuwise_step_duration_seconds", "histogram",
                               "Duration of the training steps of this process; the step source "
                               "is in gpuwise_info."};
constexpr Family kEvents{"gpuwise_events_total", "counter",
                         "Events the advisor received from this process."};
constexpr Family kEventsDropped{
    "gpuwise_events_dropped_total", "counter",
    "Events this process recorded that never reached the analysis (shim ring full, send would "
    "have blocked, rejected by the advisor, or lost in transit with a dropped connection); "
    "figures built on them undercount."};
constexpr Family kProcesses{"gpuwise_processes", "gauge",
                            "Processes of this pod connected to the advisor now."};
constexpr Family kSaving{"gpuwise_recommendation_expected_saving_ratio", "gauge",
                         "Expected share of step time (or GPU time) saved by following this "
                         "recommendation; present only while the recommendation is active."};
constexpr Family kInfo{"gpuwise_info", "gauge",
                       "Always 1: the advisor version and how the data of this pod was collected."};
constexpr Family kGpuInfo{"gpuwise_gpu_info", "gauge",
                          "Always 1: the model, UUID and MIG profile of a GPU a process uses."};

// What the recording rules of containers/kubernetes/monitoring/waste-rules.yaml turn idle seconds
// into money with: the report's price of each GPU (waste_cost.h).
constexpr Family kGpuHourPrice{"gpuwise_gpu_hour_price_dollars", "gauge",
                               "Price of an hour of this GPU in US dollars, as the advisor prices "
                               "idle time: --gpu-hour-price when given, else its class's "
                               "--gpu-price / --gpu-prices, else the list price of its model; "
                               "absent for a model without a price."};

// The advisor itself, from its start: what the alert on a pod whose processes never connect and
// the operator of the sidecar read. Labelled by the advisor's own pod.
constexpr Family kBuildInfo{"gpuwise_build_info", "gauge",
                            "Always 1: the version of the gpuwise advisor serving these metrics "
                            "and the formats it speaks."};
constexpr Family kStartTime{"gpuwise_advisor_start_time_seconds", "gauge",
                            "Unix time the advisor started, in seconds."};
constexpr Family kReceivedBatches{"gpuwise_advisor_received_batches_total", "counter",
                                  "Batches of events the advisor received from the processes it "
                                  "serves."};
constexpr Family kReceivedEvents{"gpuwise_advisor_received_events_total", "counter",
                                 "Events the advisor received from the processes it serves, those "
                                 "that exited included."};
constexpr Family kReceivedBytes{"gpuwise_advisor_received_bytes_total", "counter",
                                "Bytes of the messages the advisor received from the processes it "
                                "serves."};
constexpr Family kRejectedMessages{
    "gpuwise_advisor_rejected_messages_total", "counter",
    "Messages the advisor could not use: undecodable, for no known process, or shed because its "
    "receive queue was full."};

// Per rank of a distributed job, labelled by job_name and rank: what the straggler alert and the
// per-rank dashboard panel read.
constexpr Family kRankStepP50{"gpuwise_rank_step_p50_seconds", "gauge",
                              "Median duration of the steady training steps of this rank (after "
                              "the warm-up)."};
constexpr Family kRankCommunication{
    "gpuwise_rank_communication_seconds_total", "counter",
    "Time the collective kernels (NCCL, RCCL) of this rank ran: union of their intervals, summed "
    "over its GPUs."};
constexpr Family kRankCommunicationExposed{
    "gpuwise_rank_communication_exposed_seconds_total", "counter",
    "Part of the collective kernels' time of this rank that no compute kernel overlapped."};

double seconds(model::TimeNs ns) {
  return double(ns) / kNsPerSecond;
}

const char* directionLabel(model::CopyDirection d) {
  switch (d) {
  case model::CopyDirection::HostToDevice: return "h2d";
  case model::CopyDirection::DeviceToHost: return "d2h";
  case model::CopyDirection::DeviceToDevice:
  case model::CopyDirection::PeerToPeer: return "d2d";
  default: return nullptr; // host-to-host and unknown copies are no GPU transfer the contract names
  }
}

const char* hostMemoryLabel(model::CopyDirection d, model::MemoryKind host) {
  if (d == model::CopyDirection::DeviceToDevice || d == model::CopyDirection::PeerToPeer)
    return "none";
  if (host == model::MemoryKind::Pinned) return "pinned";
  if (host == model::MemoryKind::Pageable) return "pageable";
  return nullptr; // managed, array or unknown host side: the contract has no value for it
}

Labels processLabels(const ProcessFigures& p) {
  // Sanitised here already (not only when written) so that the counter floors are not keyed by
  // kilobytes of forged name per series.
  return Labels{{"namespace", sanitizeLabelValue(p.info.ns)},
                {"pod", sanitizeLabelValue(p.info.pod)},
                {"container", sanitizeLabelValue(p.info.container)},
                {"job_name", sanitizeLabelValue(p.info.job)},
                {"rank", rankLabel(p.info)}};
}

// The per-rank families: the process's labels, which name its job and rank.
Labels rankLabels(const ProcessFigures& p) {
  return processLabels(p);
}

// The GPU's identity under dcgm-exporter's label names, so that a query joins the two with
// `on (UUID)` or `on (Hostname, gpu)`: the node (GPUWISE_NODE, else the host name), the node's
// index of the GPU (NVML's; empty without NVML), the CUDA ordinal the process used, and the UUID.
Labels gpuLabels(const ProcessFigures& p, const DeviceFigures& g) {
  const std::string& node = p.info.node.empty() ? p.info.host : p.info.node;
  const bool nvml = g.info && g.info->nvml_index >= 0;
  return withLabels(processLabels(p),
                    {{"Hostname", sanitizeLabelValue(node)},
                     {"gpu", nvml ? std::to_string(g.info->nvml_index) : std::string()},
                     {"cuda_device", std::to_string(g.device)},
                     {"UUID", g.info ? sanitizeLabelValue(g.info->uuid) : std::string()}});
}

// What every family group writes with: the job, the text, and the counter floors kept between
// builds.
class Exposition {
public:
  Exposition(const JobFigures& job, std::string& out, std::map<std::string, double>& floors)
      : job_(job), out_(out), floors_(floors) {}

  const JobFigures& job() const { return job_; }
  std::string& out() { return out_; }

  // The value a counter series may export: never below what it exported before.
  double floor(const std::string& series, double value) {
    auto [it, inserted] = floors_.try_emplace(series, value);
    if (!inserted) it->second = std::max(it->second, value);
    return it->second;
  }
  void counter(FamilyWriter& w, const Family& f, const Labels& l, double v) {
    w.sample("", l, floor(seriesKey(f, l), v));
  }

  // One family at a time, over every (process, GPU): the format wants a family's lines together.
  template <class Emit> void perGpu(const Family& f, Emit&& emit) {
    FamilyWriter w(f, out_);
    for (const auto& p : job_.processes)
      for (const auto& g : p.gpus)
        emit(w, p, g, gpuLabels(p, g));
  }
  template <class Emit> void perProcess(const Family& f, Emit&& emit) {
    FamilyWriter w(f, out_);
    for (const auto& p : job_.processes)
      emit(w, p, processLabels(p));
  }

private:
  const JobFigures& job_;
  std::string& out_;
  std::map<std::string, double>& floors_;
};

// GPU time by (precision, tensor core), in the contract's precision order; absent without GPU
// timing (unknown, not zero).
void writeKernelSeconds(Exposition& e, FamilyWriter& w, const DeviceFigures& g, const Labels& l) {
  if (g.kernels.timed_count == 0) return;
  std::map<std::pair<size_t, bool>, model::TimeNs> ns;
  for (const auto& k : g.kernels.by_name) {
    if (k.timed_count == 0) continue;
    ns[{static_cast<size_t>(k.kernel_class.precision), k.kernel_class.tensor_core}] += k.total_ns;
  }
  for (auto p : profiler::kAllPrecisions)
    for (bool tc : {false, true}) {
      auto it = ns.find({static_cast<size_t>(p), tc});
      if (it == ns.end()) continue;
      e.counter(w, kKernelSeconds,
                withLabels(l, {{"precision", std::string(profiler::precisionName(p))},
                               {"tensor_core", tc ? "true" : "false"}}),
                seconds(it->second));
    }
}

// Busy ratio and seconds, idle seconds by cause, kernel seconds and kernel counts, per GPU.
void writeGpuTime(Exposition& e) {
  e.perGpu(kBusyRatio,
           [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
             if (g.busy_ratio_60s) w.sample("", l, *g.busy_ratio_60s);
           });
  e.perGpu(kBusySeconds,
           [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
             if (g.timeline) e.counter(w, kBusySeconds, l, seconds(g.timeline->busy_ns));
           });
  e.perGpu(kIdleSeconds,
           [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
             if (!g.timeline) return;
             for (size_t c = 0; c < kIdleCauses; ++c) {
               auto cause = static_cast<IdleCause>(c);
               e.counter(w, kIdleSeconds, withLabels(l, {{"cause", toString(cause)}}),
                         seconds(g.timeline->idle.at(cause)));
             }
           });
  e.perGpu(kKernelSeconds, [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g,
                               const Labels& l) { writeKernelSeconds(e, w, g, l); });
  e.perGpu(kKernels, [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g,
                         const Labels& l) { e.counter(w, kKernels, l, double(g.kernels.count)); });
}

// Copies: one series per (direction, host memory) the process used; unknown host kinds are left
// out rather than guessed. `bytes`: the bytes family, else the seconds family.
void writeCopies(Exposition& e, const Family& f, bool bytes) {
  e.perGpu(f, [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
    std::map<std::pair<std::string, std::string>, std::pair<double, bool>> sums;
    for (size_t d = 0; d < kCopyDirections; ++d)
      for (size_t h = 0; h < kMemoryKinds; ++h) {
        const CopyStats& s = g.copies.by_direction_host[d][h];
        if (s.count == 0) continue;
        auto dir = static_cast<model::CopyDirection>(d);
        const char* dl = directionLabel(dir);
        const char* hl = hostMemoryLabel(dir, static_cast<model::MemoryKind>(h));
        if (!dl || !hl) continue;
        auto& [value, known] = sums[{dl, hl}];
        if (bytes) {
          value += double(s.bytes);
          known = true;
        } else if (s.gpu_timed_count + s.call_timed_count > 0) {
          value += seconds(s.time_ns);
          known = true;
        }
      }
    for (const auto& [key, v] : sums)
      if (v.second)
        e.counter(w, f, withLabels(l, {{"direction", key.first}, {"host_memory", key.second}}),
                  v.first);
  });
}

// Time the process's steps and threads waited on the host side: input stalls and blocking syncs.
void writeHostWaits(Exposition& e) {
  e.perProcess(kInputStall, [&](FamilyWriter& w, const ProcessFigures& p, const Labels& l) {
    if (p.timeline_known) e.counter(w, kInputStall, l, seconds(p.input_stall_ns));
  });
  e.perProcess(kHostSync, [&](FamilyWriter& w, const ProcessFigures& p, const Labels& l) {
    // Blocking calls without host timestamps leave the time unknown.
    if (p.syncs.calls > 0 && p.syncs.untimed_calls == p.syncs.calls) return;
    e.counter(w, kHostSync, l, seconds(p.syncs.blocked_ns));
  });
}

// Device memory: the process's reservation now and at its peak, and the GPU's (or MIG slice's)
// total.
void writeMemory(Exposition& e) {
  e.perGpu(kMemoryUsed,
           [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
             if (g.memory_used_bytes) w.sample("", l, double(*g.memory_used_bytes));
           });
  e.perGpu(kMemoryPeak,
           [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
             if (g.memory_peak_bytes) w.sample("", l, double(*g.memory_peak_bytes));
           });
  e.perGpu(kDeviceMemory,
           [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
             if (g.info && g.info->memory_total_bytes > 0)
               w.sample("", l, double(g.info->memory_total_bytes));
           });
}

// GPU energy, where NVML measured it (absent, not zero, without NVML power readings).
void writeEnergy(Exposition& e) {
  e.perGpu(kEnergy,
           [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
             if (g.energy_joules) e.counter(w, kEnergy, l, *g.energy_joules);
           });
}

// The step duration histogram, once steps are recognised.
void writeStepDurations(Exposition& e) {
  e.perProcess(kStepDuration, [&](FamilyWriter& w, const ProcessFigures& p, const Labels& l) {
    if (!p.steps) return;
    std::vector<uint64_t> counts(std::size(kStepBuckets), 0);
    double sum = 0;
    for (const auto& s : p.steps->steps) {
      double d = seconds(s.durationNs());
      sum += d;
      for (size_t b = 0; b < std::size(kStepBuckets); ++b)
        if (d <= kStepBuckets[b]) ++counts[b];
    }
    // Histogram parts are counters too: floored like the rest, so a re-inferred step list cannot
    // make rate() see a reset.
    for (size_t b = 0; b < std::size(kStepBuckets); ++b) {
      Labels bl = withLabels(l, {{"le", formatValue(kStepBuckets[b])}});
      w.sample("_bucket", bl, e.floor(seriesKey(kStepDuration, bl), double(counts[b])));
    }
    double n = double(p.steps->steps.size());
    Labels inf = withLabels(l, {{"le", "+Inf"}});
    w.sample("_bucket", inf, e.floor(seriesKey(kStepDuration, inf), n));
    w.sample("_sum", l, e.floor("sum\x1f" + seriesKey(kStepDuration, l), sum));
    w.sample("_count", l, e.floor("count\x1f" + seriesKey(kStepDuration, l), n));
  });
}

// The median of the steady steps (all steps while none is steady yet).
std::optional<double> stepP50Seconds(const ProcessSteps& steps) {
  auto span = steps.steadySteps();
  if (span.empty()) span = {steps.steps.data(), steps.steps.size()};
  if (span.empty()) return std::nullopt;
  std::vector<model::TimeNs> d;
  d.reserve(span.size());
  for (const auto& s : span)
    d.push_back(s.durationNs());
  const size_t mid = d.size() / 2;
  std::nth_element(d.begin(), d.begin() + ptrdiff_t(mid), d.end());
  if (d.size() % 2) return seconds(d[mid]);
  const model::TimeNs upper = d[mid];
  const model::TimeNs lower = *std::max_element(d.begin(), d.begin() + ptrdiff_t(mid));
  return (seconds(lower) + seconds(upper)) / 2;
}

void writeRankFigures(Exposition& e) {
  {
    FamilyWriter w(kRankStepP50, e.out());
    for (const auto& p : e.job().processes)
      if (auto p50 = p.steps ? stepP50Seconds(*p.steps) : std::nullopt)
        w.sample("", rankLabels(p), *p50);
  }
  for (bool exposed : {false, true}) {
    const Family& f = exposed ? kRankCommunicationExposed : kRankCommunication;
    FamilyWriter w(f, e.out());
    for (const auto& p : e.job().processes) {
      if (!p.timeline_known) continue; // without GPU timestamps the figure is unknown, not 0
      model::TimeNs ns = 0;
      for (const auto& g : p.gpus)
        if (g.timeline)
          ns += exposed ? g.timeline->communication_exposed_ns : g.timeline->communication_busy_ns;
      e.counter(w, f, rankLabels(p), seconds(ns));
    }
  }
}

void writeEventCounts(Exposition& e) {
  e.perProcess(kEvents, [&](FamilyWriter& w, const ProcessFigures& p, const Labels& l) {
    e.counter(w, kEvents, l, double(p.events));
  });
  e.perProcess(kEventsDropped, [&](FamilyWriter& w, const ProcessFigures& p, const Labels& l) {
    e.counter(w, kEventsDropped, l, double(p.events_dropped));
  });
}

using Pod = std::pair<std::string, std::string>; // namespace, pod

// The pods of the job in order of first contact.
std::vector<Pod> podsOf(const JobFigures& job) {
  std::vector<Pod> pods;
  for (const auto& p : job.processes) {
    Pod key{p.info.ns, p.info.pod};
    if (std::find(pods.begin(), pods.end(), key) == pods.end()) pods.push_back(key);
  }
  return pods;
}

// The advisor's own figures: its build, its start and what its ingest received.
void writeAdvisor(Exposition& e, const AdvisorFigures& a) {
  const Labels l{{"namespace", sanitizeLabelValue(a.ns)}, {"pod", sanitizeLabelValue(a.pod)}};
  FamilyWriter(kBuildInfo, e.out())
      .sample("",
              withLabels(l, {{"version", gpuwiseVersion()},
                             {"report_schema", kReportSchema},
                             {"wire_protocol", std::to_string(transport::kProtocolVersion)}}),
              1);
  FamilyWriter(kStartTime, e.out()).sample("", l, a.start_time_seconds);
  for (auto [f, v] : {std::pair<const Family*, uint64_t>{&kReceivedBatches, a.batches},
                      {&kReceivedEvents, a.events},
                      {&kReceivedBytes, a.bytes},
                      {&kRejectedMessages, a.rejected}}) {
    FamilyWriter w(*f, e.out());
    e.counter(w, *f, l, double(v));
  }
}

// Processes connected now, per pod. The advisor's own pod is always listed, with 0 before its
// first process connects (what GpuwiseNoProcessConnected fires on); an advisor outside a pod (no
// identity of its own) lists the unlabelled 0 only while no process connected at all.
void writeProcessCounts(Exposition& e, std::vector<Pod> pods, const AdvisorFigures& a) {
  const Pod own{a.ns, a.pod};
  if ((!own.first.empty() || !own.second.empty() || pods.empty()) &&
      std::find(pods.begin(), pods.end(), own) == pods.end())
    pods.insert(pods.begin(), own);
  FamilyWriter w(kProcesses, e.out());
  for (const auto& [ns, pod] : pods) {
    size_t n = 0;
    for (const auto& p : e.job().processes)
      if (p.info.ns == ns && p.info.pod == pod && p.connected) ++n;
    w.sample("", {{"namespace", ns}, {"pod", pod}}, double(n));
  }
}

// Each pod its own recommendations (JobFigures::pods): an advisor several pods reach keeps them
// apart.
void writeSavings(Exposition& e, const std::vector<Pod>& pods) {
  FamilyWriter w(kSaving, e.out());
  for (const auto& [ns, pod] : pods)
    for (const auto& r : e.job().recommendationsOf(ns, pod))
      w.sample(
          "",
          {{"namespace", ns}, {"pod", pod}, {"id", r.id}, {"confidence", toString(r.confidence)}},
          r.expected_saving_ratio);
}

// Per pod: the versions, the collection tier (cupti only when every process had it) and the best
// step source among its processes.
void writeInfo(Exposition& e, const std::vector<Pod>& pods) {
  FamilyWriter w(kInfo, e.out());
  for (const auto& [ns, pod] : pods) {
    bool cupti = true;
    StepSource best = StepSource::None;
    for (const auto& p : e.job().processes) {
      if (p.info.ns != ns || p.info.pod != pod) continue;
      cupti = cupti && p.info.tier == model::CollectionTier::Cupti;
      if (p.steps && p.steps->source > best) best = p.steps->source;
    }
    const char* source = toString(best);
    w.sample("",
             {{"namespace", ns},
              {"pod", pod},
              {"version", gpuwiseVersion()},
              {"report_schema", kReportSchema},
              {"wire_protocol", std::to_string(transport::kProtocolVersion)},
              {"collection", cupti ? "cupti" : "interposer"},
              {"simulated", e.job().simulated ? "true" : "false"},
              {"step_source", source ? source : "none"}},
             1);
  }
}

void writeGpuInfo(Exposition& e) {
  e.perGpu(kGpuInfo, [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g,
                         const Labels& l) {
    std::string cc;
    if (g.info && g.info->compute_major > 0)
      cc = std::to_string(g.info->compute_major) + "." + std::to_string(g.info->compute_minor);
    // dcgm-exporter's names: modelName, and on a MIG slice GPU_I_PROFILE and GPU_I_ID (empty
    // without MIG, or when NVML could not say).
    const bool mig = g.info && !g.info->mig_profile.empty();
    w.sample("",
             withLabels(l, {{"modelName", g.info ? g.info->name : ""},
                            {"GPU_I_PROFILE", mig ? g.info->mig_profile : ""},
                            {"GPU_I_ID", mig && g.info->gpu_instance >= 0
                                             ? std::to_string(g.info->gpu_instance)
                                             : std::string()},
                            {"compute_capability", cc}}),
             1);
  });
}

// The price the report puts on each GPU a process uses (devicePrice: --gpu-hour-price, the class's
// --gpu-price, the table); absent where it has none, never 0.
void writeGpuHourPrice(Exposition& e, const AdvisorFigures& a) {
  CostOptions options;
  options.gpu_hour_price = a.gpu_hour_price;
  options.class_prices = a.gpu_class_prices;
  e.perGpu(kGpuHourPrice,
           [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
             if (auto price = devicePrice(g.info ? &*g.info : nullptr, options))
               w.sample("", l, *price);
           });
}

} // namespace

std::string rankLabel(const model::ProcessInfo& info) {
  return info.rank >= 0 ? std::to_string(info.rank) : "pid-" + std::to_string(info.pid);
}

ExpositionBuilder::ExpositionBuilder(AdvisorFigures advisor) : advisor_(std::move(advisor)) {
  if (advisor_.start_time_seconds <= 0)
    advisor_.start_time_seconds =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string ExpositionBuilder::build(const JobFigures& job) {
  return build(job, advisor_);
}

std::string ExpositionBuilder::build(const JobFigures& job, const AdvisorFigures& advisor) {
  AdvisorFigures a = advisor;
  if (a.ns.empty() && a.pod.empty()) {
    a.ns = advisor_.ns;
    a.pod = advisor_.pod;
  }
  if (a.start_time_seconds <= 0) a.start_time_seconds = advisor_.start_time_seconds;
  if (!a.gpu_hour_price) a.gpu_hour_price = advisor_.gpu_hour_price;
  if (a.gpu_class_prices.empty()) a.gpu_class_prices = advisor_.gpu_class_prices;
  std::string out;
  out.reserve(4096 + job.processes.size() * 8192);
  Exposition e(job, out, counters_);
  writeAdvisor(e, a);
  writeGpuTime(e);
  writeCopies(e, kCopyBytes, true);
  writeCopies(e, kCopySeconds, false);
  writeHostWaits(e);
  writeMemory(e);
  writeEnergy(e);
  writeStepDurations(e);
  writeRankFigures(e);
  writeEventCounts(e);
  const std::vector<Pod> pods = podsOf(job);
  writeProcessCounts(e, pods, a);
  writeSavings(e, pods);
  writeInfo(e, pods);
  writeGpuInfo(e);
  writeGpuHourPrice(e, a);
  return out;
}

} // namespace gpuwise::advisor::metrics
