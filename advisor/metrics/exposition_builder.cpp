#include "advisor/metrics/exposition_builder.h"

#include "advisor/precision/precision.h"
#include "advisor/report/report_json.h"
#include "transport/codec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <utility>
#include <vector>

namespace gpuwise::advisor::metrics {

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

constexpr double kNsPerSecond = 1e9;

struct Family {
  const char* name;
  const char* type;
  const char* help;
};

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
constexpr Family kStepDuration{"gpuwise_step_duration_seconds", "histogram",
                               "Duration of the training steps of this process; the step source "
                               "is in gpuwise_info."};
constexpr Family kEvents{"gpuwise_events_total", "counter",
                         "Events the advisor received from this process."};
constexpr Family kEventsDropped{
    "gpuwise_events_dropped_total", "counter",
    "Events this process recorded that never reached the analysis (shim ring full, send would "
    "have blocked, or rejected by the advisor); figures built on them undercount."};
constexpr Family kProcesses{"gpuwise_processes", "gauge",
                            "Processes of this pod connected to the advisor now."};
constexpr Family kSaving{"gpuwise_recommendation_expected_saving_ratio", "gauge",
                         "Expected share of step time (or GPU time) saved by following this "
                         "recommendation; present only while the recommendation is active."};
constexpr Family kInfo{"gpuwise_info", "gauge",
                       "Always 1: the advisor version and how the data of this pod was collected."};
constexpr Family kGpuInfo{"gpuwise_gpu_info", "gauge",
                          "Always 1: the model, UUID and MIG profile of a GPU a process uses."};

std::string escapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// One metric family's lines; written only when it has a series.
class FamilyWriter {
public:
  FamilyWriter(const Family& f, std::string& out) : family_(f), out_(out) {}
  void sample(std::string_view suffix, const Labels& labels, double value) {
    if (!header_) {
      out_ += "# HELP ";
      out_ += family_.name;
      out_ += ' ';
      out_ += escapeHelp(family_.help);
      out_ += "\n# TYPE ";
      out_ += family_.name;
      out_ += ' ';
      out_ += family_.type;
      out_ += '\n';
      header_ = true;
    }
    out_ += family_.name;
    out_ += suffix;
    out_ += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i) out_ += ',';
      out_ += labels[i].first;
      out_ += "=\"";
      out_ += escapeLabelValue(sanitizeLabelValue(labels[i].second));
      out_ += '"';
    }
    out_ += "} ";
    out_ += formatValue(value);
    out_ += '\n';
  }

private:
  const Family& family_;
  std::string& out_;
  bool header_ = false;
};

Labels with(Labels l, std::initializer_list<std::pair<std::string, std::string>> more) {
  l.insert(l.end(), more.begin(), more.end());
  return l;
}

std::string seriesKey(const Family& f, const Labels& labels) {
  std::string key = f.name;
  for (const auto& [k, v] : labels)
    key += '\x1f' + k + '=' + v;
  return key;
}

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

// The length of the valid UTF-8 sequence at the start of `s` (1-4), or 0 when it is not one:
// a stray continuation byte, a truncated sequence, an overlong form, a surrogate or a code
// point above U+10FFFF.
size_t utf8SequenceLength(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t length = 0;
  unsigned char min1 = 0x80, max1 = 0xBF; // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) min1 = 0xA0; // overlong
    if (b0 == 0xED) max1 = 0x9F; // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) min1 = 0x90; // overlong
    if (b0 == 0xF4) max1 = 0x8F; // above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < length) return 0;
  if (byte(1) < min1 || byte(1) > max1) return 0;
  for (size_t i = 2; i < length; ++i)
    if ((byte(i) & 0xC0) != 0x80) return 0;
  return length;
}

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

} // namespace

std::string sanitizeLabelValue(std::string_view value) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD"; // U+FFFD
  constexpr size_t kSuffixBytes = 1 + 16;                   // "~" and 16 hex digits
  std::string out;
  out.reserve(std::min(value.size(), kMaxLabelValueBytes));
  bool changed = false;
  // Characters are copied while they fit the bound less the suffix, so a value that turns out
  // too long can take its suffix without cutting a character in two.
  size_t fits_with_suffix = 0;
  for (size_t i = 0; i < value.size();) {
    size_t n = utf8SequenceLength(value.substr(i));
    std::string_view piece = n ? value.substr(i, n) : kReplacement;
    changed = changed || n == 0;
    i += n ? n : 1;
    if (out.size() + piece.size() > kMaxLabelValueBytes) {
      changed = true;
      break;
    }
    out += piece;
    if (out.size() <= kMaxLabelValueBytes - kSuffixBytes) fits_with_suffix = out.size();
  }
  if (!changed) return out;
  out.resize(std::min(out.size(), fits_with_suffix));
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a64(value)));
  out += '~';
  out += hash;
  return out;
}

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string formatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

std::string rankLabel(const model::ProcessInfo& info) {
  return info.rank >= 0 ? std::to_string(info.rank) : "pid-" + std::to_string(info.pid);
}

double ExpositionBuilder::floorCounter(const std::string& series, double value) {
  auto [it, inserted] = counters_.try_emplace(series, value);
  if (!inserted) it->second = std::max(it->second, value);
  return it->second;
}

std::string ExpositionBuilder::build(const JobFigures& job) {
  std::string out;
  out.reserve(4096 + job.processes.size() * 8192);
  auto counter = [&](FamilyWriter& w, const Family& f, const Labels& l, double v) {
    w.sample("", l, floorCounter(seriesKey(f, l), v));
  };
  auto processLabels = [](const ProcessFigures& p) {
    // Sanitised here already (not only when written) so that the counter floors are not keyed
    // by kilobytes of forged name per series.
    return Labels{{"namespace", sanitizeLabelValue(p.info.ns)},
                  {"pod", sanitizeLabelValue(p.info.pod)},
                  {"container", sanitizeLabelValue(p.info.container)},
                  {"rank", rankLabel(p.info)}};
  };
  auto gpuLabels = [&](const ProcessFigures& p, const DeviceFigures& g) {
    return with(processLabels(p), {{"gpu", std::to_string(g.device)}});
  };
  // One family at a time, over every (process, GPU): the format wants a family's lines together.
  auto perGpu = [&](const Family& f, auto&& emit) {
    FamilyWriter w(f, out);
    for (const auto& p : job.processes)
      for (const auto& g : p.gpus)
        emit(w, p, g, gpuLabels(p, g));
  };
  auto perProcess = [&](const Family& f, auto&& emit) {
    FamilyWriter w(f, out);
    for (const auto& p : job.processes)
      emit(w, p, processLabels(p));
  };

  perGpu(kBusyRatio,
         [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
           if (g.busy_ratio_60s) w.sample("", l, *g.busy_ratio_60s);
         });
  perGpu(kBusySeconds,
         [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
           if (g.timeline) counter(w, kBusySeconds, l, seconds(g.timeline->busy_ns));
         });
  perGpu(kIdleSeconds,
         [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
           if (!g.timeline) return;
           for (size_t c = 0; c < kIdleCauses; ++c) {
             auto cause = static_cast<IdleCause>(c);
             counter(w, kIdleSeconds, with(l, {{"cause", toString(cause)}}),
                     seconds(g.timeline->idle.at(cause)));
           }
         });
  perGpu(kKernelSeconds, [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g,
                             const Labels& l) {
    if (g.kernels.timed_count == 0) return; // no GPU timing: unknown, not zero
    // (precision, tensor core) -> ns, in the contract's precision order.
    std::map<std::pair<size_t, bool>, model::TimeNs> ns;
    for (const auto& k : g.kernels.by_name) {
      if (k.timed_count == 0) continue;
      ns[{static_cast<size_t>(k.kernel_class.precision), k.kernel_class.tensor_core}] += k.total_ns;
    }
    for (auto p : profiler::kAllPrecisions)
      for (bool tc : {false, true}) {
        auto it = ns.find({static_cast<size_t>(p), tc});
        if (it == ns.end()) continue;
        counter(w, kKernelSeconds,
                with(l, {{"precision", std::string(profiler::precisionName(p))},
                         {"tensor_core", tc ? "true" : "false"}}),
                seconds(it->second));
      }
  });
  perGpu(kKernels, [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g,
                       const Labels& l) { counter(w, kKernels, l, double(g.kernels.count)); });

  // Copies: one series per (direction, host memory) the process used; unknown host kinds are left
  // out rather than guessed.
  auto copies = [&](const Family& f, bool bytes) {
    perGpu(f, [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
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
          counter(w, f, with(l, {{"direction", key.first}, {"host_memory", key.second}}), v.first);
    });
  };
  copies(kCopyBytes, true);
  copies(kCopySeconds, false);

  perProcess(kInputStall, [&](FamilyWriter& w, const ProcessFigures& p, const Labels& l) {
    if (p.timeline_known) counter(w, kInputStall, l, seconds(p.input_stall_ns));
  });
  perProcess(kHostSync, [&](FamilyWriter& w, const ProcessFigures& p, const Labels& l) {
    // Blocking calls without host timestamps leave the time unknown.
    if (p.syncs.calls > 0 && p.syncs.untimed_calls == p.syncs.calls) return;
    counter(w, kHostSync, l, seconds(p.syncs.blocked_ns));
  });
  perGpu(kMemoryUsed,
         [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
           if (g.memory_used_bytes) w.sample("", l, double(*g.memory_used_bytes));
         });
  perGpu(kMemoryPeak,
         [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
           if (g.memory_peak_bytes) w.sample("", l, double(*g.memory_peak_bytes));
         });
  perGpu(kDeviceMemory,
         [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g, const Labels& l) {
           if (g.info && g.info->memory_total_bytes > 0)
             w.sample("", l, double(g.info->memory_total_bytes));
         });
  perProcess(kStepDuration, [&](FamilyWriter& w, const ProcessFigures& p, const Labels& l) {
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
      Labels bl = with(l, {{"le", formatValue(kStepBuckets[b])}});
      w.sample("_bucket", bl, floorCounter(seriesKey(kStepDuration, bl), double(counts[b])));
    }
    double n = double(p.steps->steps.size());
    Labels inf = with(l, {{"le", "+Inf"}});
    w.sample("_bucket", inf, floorCounter(seriesKey(kStepDuration, inf), n));
    w.sample("_sum", l, floorCounter("sum\x1f" + seriesKey(kStepDuration, l), sum));
    w.sample("_count", l, floorCounter("count\x1f" + seriesKey(kStepDuration, l), n));
  });
  perProcess(kEvents, [&](FamilyWriter& w, const ProcessFigures& p, const Labels& l) {
    counter(w, kEvents, l, double(p.events));
  });
  perProcess(kEventsDropped, [&](FamilyWriter& w, const ProcessFigures& p, const Labels& l) {
    counter(w, kEventsDropped, l, double(p.events_dropped));
  });

  // Pod-level families: the pods in order of first contact.
  std::vector<std::pair<std::string, std::string>> pods;
  for (const auto& p : job.processes) {
    std::pair<std::string, std::string> key{p.info.ns, p.info.pod};
    if (std::find(pods.begin(), pods.end(), key) == pods.end()) pods.push_back(key);
  }
  {
    FamilyWriter w(kProcesses, out);
    for (const auto& [ns, pod] : pods) {
      size_t n = 0;
      for (const auto& p : job.processes)
        if (p.info.ns == ns && p.info.pod == pod && p.connected) ++n;
      w.sample("", {{"namespace", ns}, {"pod", pod}}, double(n));
    }
  }
  {
    // Recommendations are job-level: the advisor serves one pod, so each pod it saw gets them.
    FamilyWriter w(kSaving, out);
    for (const auto& [ns, pod] : pods)
      for (const auto& r : job.recommendations)
        w.sample(
            "",
            {{"namespace", ns}, {"pod", pod}, {"id", r.id}, {"confidence", toString(r.confidence)}},
            r.expected_saving_ratio);
  }
  {
    FamilyWriter w(kInfo, out);
    for (const auto& [ns, pod] : pods) {
      bool cupti = true;
      StepSource best = StepSource::None;
      for (const auto& p : job.processes) {
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
                {"simulated", job.simulated ? "true" : "false"},
                {"step_source", source ? source : "none"}},
               1);
    }
  }
  perGpu(kGpuInfo, [&](FamilyWriter& w, const ProcessFigures&, const DeviceFigures& g,
                       const Labels& l) {
    std::string cc;
    if (g.info && g.info->compute_major > 0)
      cc = std::to_string(g.info->compute_major) + "." + std::to_string(g.info->compute_minor);
    // NVML's UUID from the shim's Hello; empty when NVML was absent or the trace was imported.
    w.sample("",
             with(l, {{"name", g.info ? g.info->name : ""},
                      {"uuid", g.info ? g.info->uuid : ""},
                      {"mig_profile", g.info ? g.info->mig_profile : ""},
                      {"compute_capability", cc}}),
             1);
  });
  return out;
}

} // namespace gpuwise::advisor::metrics
