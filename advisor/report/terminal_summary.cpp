#include "advisor/report/terminal_summary.h"

#include "advisor/cost/energy_cost.h"
#include "advisor/precision/demangle.h"
#include "advisor/precision/precision.h"
#include "advisor/report/format.h"
#include "advisor/report/rank_table.h"
#include "advisor/report/report_fields.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string_view>

namespace gpuwise::advisor {
namespace {

using model::CopyDirection;
using model::MemoryKind;

std::string plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string fit(std::string s, size_t width) {
  if (width >= 4 && s.size() > width) s = s.substr(0, width - 3) + "...";
  return s;
}

// SGR codes (ECMA-48).
constexpr const char* kBold = "\x1b[1m";
constexpr const char* kDim = "\x1b[2m";
constexpr const char* kGreen = "\x1b[32m";
constexpr const char* kYellow = "\x1b[33m";
constexpr const char* kCyan = "\x1b[36m";
constexpr const char* kReset = "\x1b[0m";

// Each line of `text` (lines end in '\n') between `code` and a reset, the reset before the
// newline; unchanged without colour.
std::string paint(const std::string& text, const char* code, bool colour) {
  if (!colour || text.empty()) return text;
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    size_t end = nl == std::string::npos ? text.size() : nl;
    if (end > at) out.append(code).append(text, at, end - at).append(kReset);
    if (nl == std::string::npos) break;
    out += '\n';
    at = nl + 1;
  }
  return out;
}

// Replaces the first `part` of `text` by itself in `code`, the text around it kept as it was.
std::string paintPart(const std::string& text, const std::string& part, const char* code,
                      const char* resume, bool colour) {
  if (!colour || part.empty()) return text;
  size_t at = text.find(part);
  if (at == std::string::npos) return text;
  return text.substr(0, at) + code + part + kReset + resume + text.substr(at + part.size());
}

// Breaks `s` at spaces into lines of at most `width` columns, continuation lines indented by 4.
std::string wrap(const std::string& s, size_t width) {
  if (s.size() <= width || width < 20) return s + "\n";
  std::string out, line;
  size_t indent = 0;
  while (indent < s.size() && s[indent] == ' ')
    ++indent;
  std::string cont(indent + 4, ' ');
  std::istringstream words(s);
  line.assign(indent, ' ');
  bool line_empty = true;
  for (std::string w; words >> w;) {
    if (!line_empty && line.size() + 1 + w.size() > width) {
      out += line + "\n";
      line = cont;
      line_empty = true;
    }
    line += (line_empty ? "" : " ") + w;
    line_empty = false;
  }
  return out + line + "\n";
}

// The change to make, in at most two lines: the action's first line of code (a line with "=" or
// "(" after its opening sentence), else its first line, wrapped and cut after two lines.
std::string actionLines(const std::string& action, size_t width) {
  std::vector<std::string> lines;
  std::istringstream in(action);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) lines.push_back(l);
  if (lines.empty()) return "";
  std::string pick = lines.front();
  for (size_t i = 1; i < lines.size(); ++i)
    if (lines[i].find('=') != std::string::npos || lines[i].find('(') != std::string::npos) {
      pick = lines[i];
      break;
    }
  std::string wrapped = wrap("     -> " + pick, width);
  size_t first = wrapped.find('\n');
  size_t second = first == std::string::npos ? first : wrapped.find('\n', first + 1);
  if (second != std::string::npos && second + 1 < wrapped.size()) {
    std::string two = wrapped.substr(0, second);
    if (two.size() - first - 1 + 3 > width) two.resize(first + 1 + width - 3);
    return two + "...\n";
  }
  return wrapped;
}

std::string evidenceLine(const nlohmann::ordered_json& evidence) {
  std::string s = "     evidence:";
  bool first = true;
  for (auto it = evidence.begin(); it != evidence.end(); ++it) {
    std::string v = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
    s += std::string(first ? " " : ", ") + it.key() + "=" + v;
    first = false;
  }
  return s;
}

// Findings under the floor on one line, by id and saving; a finding that is not advice for
// another reason (Recommendation::note_only) on a line of its own, with the title that says why.
std::string notesLine(const std::vector<Recommendation>* notes, double floor) {
  if (!notes || notes->empty()) return "";
  std::string under, other;
  for (const auto& n : *notes) {
    if (n.note_only) {
      other += "\n  note: " + n.title;
      continue;
    }
    under += std::string(under.empty() ? " " : ", ") + n.id + " saves ~" +
             formatPercent(n.expected_saving_ratio);
  }
  std::string s;
  if (!under.empty()) s = "  notes (under the " + formatPercent(floor) + " advice floor):" + under;
  if (!other.empty()) s += s.empty() ? other.substr(1) : other;
  return s;
}

std::string verdict(const JobAnalysis& a, const std::vector<Recommendation>& recs) {
  // The simulated marker goes before anything that could be cut by a narrow terminal.
  std::string v = a.simulated() ? "gpuwise [SIMULATED DEVICE]: " : "gpuwise: ";
  const auto& t = a.timeline;
  if (t.known()) {
    double busy = t.span_ns > 0 ? static_cast<double>(t.busy_ns) / t.span_ns : 0.0;
    v += "GPU busy " + formatPercent(busy) + " of a " + formatDuration(t.span_ns) +
         " GPU span, idle " + formatDuration(t.span_ns - t.busy_ns);
  } else if (a.collection.processes.empty()) {
    v += "no GPU activity recorded (no process reported)";
  } else if (a.kernels.count + a.copies.total.count > 0) {
    v += "GPU busy unknown (no GPU timestamps; collection tier " + jobTier(a.collection) + ")";
  } else {
    v += "no GPU activity recorded";
  }
  if (recs.empty()) {
    v += "; no recommendations";
  } else {
    v += "; " + plural(recs.size(), "recommendation", "recommendations") + ", best saves ~" +
         formatPercent(recs.front().expected_saving_ratio);
  }
  return v;
}

std::string whereTimeWent(const JobAnalysis& a) {
  const auto& t = a.timeline;
  if (!t.known()) return "";
  return "  GPU time: kernels " + formatDuration(t.kernel_busy_ns) + ", copies " +
         formatDuration(t.copy_busy_ns) + " (" + formatDuration(t.copy_exposed_ns) +
         " exposed), memsets " + formatDuration(t.memset_busy_ns) + ", idle " +
         formatDuration(t.span_ns - t.busy_ns);
}

// The collective kernels' time, its share of kernel time, the part no compute kernel hid and the
// share hidden; empty when the job ran no collective kernel.
std::string communicationLine(const JobAnalysis& a) {
  const auto& c = a.communication;
  if (!c.any() || c.busy_ns <= 0) return "";
  std::string s = "  communication " + formatDuration(c.busy_ns);
  if (a.timeline.kernel_busy_ns > 0)
    s += " (" + formatPercent(double(c.busy_ns) / double(a.timeline.kernel_busy_ns)) +
         " of kernel time)";
  char overlap[32];
  std::snprintf(overlap, sizeof overlap, "%.2f", c.overlap_ratio.value_or(0.0));
  return s + ", " + formatDuration(c.exposed_ns) + " exposed, overlap " + overlap;
}

// Idle split by cause, largest first, causes under 0.5% of idle left out.
std::string idleLine(const JobAnalysis& a) {
  const auto& t = a.timeline;
  if (!t.known() || t.idle.total() <= 0) return "";
  std::vector<std::pair<model::TimeNs, IdleCause>> causes;
  for (size_t c = 0; c < kIdleCauses; ++c)
    causes.push_back({t.idle.ns[c], static_cast<IdleCause>(c)});
  std::stable_sort(causes.begin(), causes.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string s = "  idle by cause:";
  bool first = true;
  for (const auto& [ns, cause] : causes) {
    if (ns * 200 < t.idle.total()) continue;
    // The report's names (summary.idle_seconds_by_cause, the rules' explains): one taxonomy.
    std::string name = toString(cause);
    s += std::string(first ? " " : ", ") + name + " " + formatDuration(ns) + " (" +
         formatPercent(static_cast<double>(ns) / t.idle.total()) + ")";
    first = false;
  }
  return s;
}

// How many steps: the count, or for the ranks of a job each rank's ("2 per rank x 2 ranks"), as
// each rank runs the job's steps itself.
std::string stepCount(const StepResult& steps) {
  if (steps.processes.size() <= 1) return std::to_string(steps.count());
  size_t lo = SIZE_MAX, hi = 0;
  for (const auto& p : steps.processes) {
    lo = std::min(lo, p.steps.size());
    hi = std::max(hi, p.steps.size());
  }
  return (lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi)) +
         " per rank x " + std::to_string(steps.processes.size()) + " ranks";
}

// The step figures are the steady state's (step_analyzer.h): its median, p10-p90, and its
// variation, defined on the line as the interquartile range over the median.
std::string stepsLine(const JobAnalysis& a) {
  const uint64_t all = a.steps.count();
  const auto st = a.steps.steadyStats();
  std::string s;
  if (all == 0) {
    s = "  steps  none found";
  } else {
    s = "  steps  " + stepCount(a.steps) + " (" + toString(a.steps.source()) + ")";
    if (st.count != all)
      s += ", steady " + std::to_string(st.count) + (a.steps.processes.size() > 1 ? " in all" : "");
    s += ": median " + formatDuration(st.p50_ns) + ", p10-p90 " + formatDuration(st.p10_ns) + "-" +
         formatDuration(st.p90_ns) + ", variation " + formatPercent(st.iqrRatio()) +
         " (IQR/median)";
  }
  if (auto r = a.inputStallRatio())
    s += "; input stall " + formatPercent(*r) + (all ? " of step time" : " of GPU span");
  if (auto h = a.hostSyncSecondsPerStep())
    s += "; host sync " + formatDuration(static_cast<model::TimeNs>(*h * 1e9)) + "/step";
  return s;
}

// "warm-up: 3 steps, 160 ms, input-bound": the steps before the steady state, which the figures
// above and the advice leave out; nothing without a warm-up.
std::string warmupLine(const JobAnalysis& a) {
  const uint64_t n = a.steps.warmupCount();
  if (n == 0) return "";
  std::string s =
      "  warm-up: " + plural(n, "step", "steps") + ", " + formatDuration(a.steps.warmupNs());
  const std::string_view limiter = a.steps.warmupLimiter() ? a.steps.warmupLimiter() : "";
  if (limiter == "input")
    s += ", input-bound (waiting for the first batches)";
  else if (limiter == "host_bound")
    s += ", host-bound";
  else if (limiter == "sync")
    s += ", waiting on host syncs";
  else if (limiter == "launch_overhead")
    s += ", launch-bound";
  else if (limiter == "gpu_busy")
    s += ", GPU busy";
  return s + "; left out of the step figures and the advice";
}

std::string precisionLine(const JobAnalysis& a) {
  const auto& p = a.precision;
  if (p.kernel_ns <= 0) return "";
  std::vector<std::pair<model::TimeNs, profiler::Precision>> by;
  for (auto prec : profiler::kAllPrecisions)
    if (p.at(prec) > 0) by.push_back({p.at(prec), prec});
  std::stable_sort(by.begin(), by.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string s = "  precision ";
  for (size_t i = 0; i < by.size() && i < 4; ++i)
    s += std::string(i ? ", " : " ") + std::string(profiler::precisionName(by[i].second)) + " " +
         formatPercent(static_cast<double>(by[i].first) / p.kernel_ns);
  s += "; tensor cores " + formatPercent(*p.tensorCoreShare());
  if (p.fp32_matmul_ns > 0)
    s += "; FP32 GEMM/conv " + formatPercent(*p.fp32MatmulShare()) + " of kernel time";
  if (p.unknown_names > 0)
    s += "; " + plural(p.unknown_names, "kernel name", "kernel names") + " unrecognised";
  return s;
}

// The cuBLAS probe: how many calls' kernels ran in the precision their types asked for, and the
// first disagreement by kernel time.
std::string blasProbeLine(const JobAnalysis& a) {
  const auto& b = a.blas;
  if (!b.probed()) return "";
  std::string s = "  cuBLAS types " + plural(b.calls, "call", "calls") + ": " +
                  std::to_string(b.agreeing_calls) + " agree with their kernels' names";
  if (b.disagreeing_calls == 0) return s;
  s += ", " + std::to_string(b.disagreeing_calls) + " disagree";
  for (const auto& m : b.matches) {
    if (!m.classified || m.agrees) continue;
    s += " (" + std::string(profiler::precisionName(m.requested)) + " requested, " +
         std::string(profiler::precisionName(m.kernel_precision)) +
         " kernel ran: " + m.kernel.substr(0, 60) + ")";
    break;
  }
  return s;
}

std::string occupancyLine(const JobAnalysis& a) {
  const auto& o = a.kernels.occupancy;
  auto theo = o.occupancy();
  if (!theo && !o.achieved()) return "";
  std::string s = "  occupancy ";
  if (theo) {
    s += " theoretical " + formatPercent(*theo);
    auto l = o.limiter();
    if (l != profiler::OccupancyLimiter::None)
      s += " (mostly limited by " + std::string(profiler::limiterName(l)) + ")";
  }
  if (auto ach = o.achieved())
    s += std::string(theo ? "," : "") + " achieved " + formatPercent(*ach) + " (trace's estimate)";
  if (auto fill = o.smFill()) s += ", SM fill " + formatPercent(*fill);
  if (auto tail = o.tailLoss()) s += ", tail-wave loss " + formatPercent(*tail);
  return s;
}

std::string kernelsLine(const JobAnalysis& a, size_t width) {
  const auto& k = a.kernels;
  std::string s = "  kernels  " + plural(k.count, "launch", "launches");
  if (k.timed_count > 0) s += " in " + formatDuration(k.total_ns);
  if (!k.by_name.empty() && k.by_name.front().timed_count > 0 && k.total_ns > 0) {
    const auto& top = k.by_name.front();
    s += "; top " + fit(profiler::shortKernelName(top.display_name), 48) + " " +
         formatDuration(top.total_ns) + " (" +
         formatPercent(static_cast<double>(top.total_ns) / k.total_ns) + ")";
  }
  return fit(s, width);
}

std::string copiesLine(const JobAnalysis& a) {
  std::string s = "  copies  ";
  bool any = false;
  for (auto d : {CopyDirection::HostToDevice, CopyDirection::DeviceToHost,
                 CopyDirection::DeviceToDevice, CopyDirection::PeerToPeer}) {
    const auto& c = a.copies.at(d);
    if (c.count == 0) continue;
    std::string dir = model::toString(d);
    for (auto& ch : dir)
      ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    s += std::string(any ? ", " : "") + dir + " " + formatBytes(c.bytes) + " in " +
         formatDuration(c.time_ns);
    any = true;
  }
  if (!any) return "  copies  none";
  auto pageable = a.copies.hostTransfers(MemoryKind::Pageable);
  if (pageable.count > 0)
    s += "; pageable " + formatBytes(pageable.bytes) + " in " + formatDuration(pageable.time_ns);
  if (a.copies.synchronous.count > 0)
    s += "; " + plural(a.copies.synchronous.count, "sync copy", "sync copies");
  return s;
}

std::string syncLine(const JobAnalysis& a) {
  const auto& s = a.syncs;
  if (s.calls == 0) return "  host syncs  none recorded";
  if (s.untimed_calls == s.calls)
    return "  host blocked in syncs: unknown (" + plural(s.calls, "call", "calls") +
           " without host times)";
  std::string line = "  host blocked in syncs " + formatDuration(s.blocked_ns) + " (";
  bool first = true;
  for (size_t k = 0; k < kSyncKinds; ++k) {
    if (s.by_kind[k].calls == 0) continue;
    line += std::string(first ? "" : ", ") + model::toString(static_cast<model::SyncKind>(k)) +
            " " + formatDuration(s.by_kind[k].blocked_ns);
    first = false;
  }
  return line + ")";
}

std::string memoryLine(const JobAnalysis& a) {
  auto peak = a.memory.peakBytes();
  if (!peak) return "  peak device memory unknown";
  std::string s = "  peak device memory " + formatBytes(*peak);
  for (const auto& d : a.memory.devices) {
    if (d.peak_bytes == *peak && d.memory_total_bytes > 0) {
      s += " of " + formatBytes(d.memory_total_bytes) + " (" +
           formatPercent(static_cast<double>(d.peak_bytes) / d.memory_total_bytes) + ")";
      break;
    }
  }
  return s;
}

// " (NVIDIA A100-SXM4-80GB)" for the model names, or where no trace names its GPUs, which GPU of
// which rank each one is: " (GPU 0 of rank 0, GPU 1 of rank 1)". A few, then "...".
std::string gpuNames(const std::vector<GpuEntry>& gpus) {
  constexpr size_t kShown = 3;
  std::vector<std::string> names;
  for (const auto& g : gpus)
    if (!g.info.name.empty() && std::find(names.begin(), names.end(), g.info.name) == names.end())
      names.push_back(g.info.name);
  if (names.empty())
    for (const auto& g : gpus)
      names.push_back(gpuLabel(g));
  if (names.empty()) return "";
  std::string s = " (";
  for (size_t i = 0; i < names.size() && i < kShown; ++i)
    s += (i ? ", " : "") + names[i];
  return s + (names.size() > kShown ? ", ...)" : ")");
}

std::string jobLine(const JobAnalysis& a, size_t width) {
  std::string s = "  ";
  s += a.wall_ns ? "wall " + formatDuration(*a.wall_ns) : std::string("wall unknown");
  s += "; " + plural(a.collection.processes.size(), "process", "processes");
  s += "; " + plural(a.collection.gpus.size(), "GPU", "GPUs");
  s += gpuNames(a.collection.gpus);
  return fit(s, width);
}

// "  ranks: 7 of 8 (missing: 7)", when the job's world size says some ranks are not here; empty
// otherwise. A few runs of missing ranks, then "...".
std::string ranksLine(const JobAnalysis& a) {
  constexpr size_t kShown = 8;
  const JobRanks job = a.collection.jobRanks();
  if (job.missing.empty()) return "";
  std::string s = "  ranks: " + std::to_string(job.ranks.size()) + " of " +
                  std::to_string(job.world_size) + " (missing: ";
  for (size_t i = 0; i < job.missing.size() && i < kShown; ++i) {
    const auto& [first, last] = job.missing[i];
    s += (i ? ", " : "") + std::to_string(first);
    if (last > first) s += "-" + std::to_string(last);
  }
  return s + (job.missing.size() > kShown ? ", ...)" : ")");
}

// "  energy 1.02 kJ (NVML counter), 1.02 J/step, $0.0000370 at $0.13/kWh"; the estimate says so.
std::string energyLine(const JobAnalysis& a, std::optional<double> price_kwh) {
  CostOptions options;
  options.energy_price_kwh = price_kwh;
  const JobEnergy e = computeJobEnergy(a, options);
  if (!e.joules) return "";
  std::string s = "  energy " + formatEnergy(*e.joules);
  if (e.source == "nvml") s += " (NVML energy counter)";
  if (e.source == "nvml_power") s += " (NVML power readings, integrated: no energy counter)";
  if (e.source == "estimate")
    s += " (ESTIMATE: board power x GPU busy time; NVML did not measure it)";
  if (e.joules_per_step) s += ", " + formatEnergy(*e.joules_per_step) + "/step";
  if (e.cost) s += ", " + formatMoney(*e.cost) + " at " + formatMoney(e.price_kwh) + "/kWh";
  return s;
}

std::string collectionLine(const JobAnalysis& a) {
  const auto& c = a.collection;
  std::string s = "  collection: tier " + jobTier(c) + "; " + std::to_string(c.events) +
                  " events, " + std::to_string(c.events_dropped) + " dropped";
  if (c.undecodable_events > 0) s += ", " + std::to_string(c.undecodable_events) + " undecodable";
  if (c.lost_batches > 0) s += ", " + plural(c.lost_batches, "batch lost", "batches lost");
  if (c.events_lost > 0)
    s += " (" + std::to_string(c.events_lost) + " of the dropped events lost in transit)";
  if (c.rejectedMessages() > 0)
    s += ", " + plural(c.rejectedMessages(), "message rejected", "messages rejected");
  if (auto r = c.shimOverheadRatio()) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "; shim cost %.2f%% of wall time (est.)", *r * 100.0);
    s += buf;
    if (c.shimCostTotal().shed_ns > 0) s += ", launch detail sampled to stay in budget";
  }
  // Why a live process had no GPU timestamps (another tool held CUPTI, no privileges ...): the
  // first such reason, so the user knows what to change.
  for (const auto& p : c.processes) {
    if (p.tier != model::CollectionTier::Interposer || p.tier_reason.empty()) continue;
    s += "; no CUPTI";
    if (c.processes.size() > 1) s += " (pid " + std::to_string(p.pid) + ")";
    s += ": " + p.tier_reason;
    break;
  }
  return s;
}

} // namespace

std::string renderTerminalSummary(const ReportInput& in, const TerminalOptions& o) {
  const auto& a = in.analysis;
  std::ostringstream out;
  auto line = [&](const std::string& s) {
    if (!s.empty()) out << wrap(s, o.width);
  };
  // The verdict is never wrapped or cut: it is the line scripts and people read first.
  std::string v = paint(verdict(a, in.recommendations) + '\n', kBold, o.colour);
  out << paintPart(v, "[SIMULATED DEVICE]", kYellow, kBold, o.colour);
  line(whereTimeWent(a));
  line(communicationLine(a));
  for (size_t i = 0; i < in.recommendations.size() && i < o.max_recommendations; ++i) {
    const auto& r = in.recommendations[i];
    const std::string saving = "saves ~" + formatPercent(r.expected_saving_ratio);
    std::string head = paint(wrap("  " + std::to_string(i + 1) + ". [" + saving + ", " +
                                      toString(r.confidence) + " confidence] " + r.title,
                                  o.width),
                             kBold, o.colour);
    out << paintPart(head, saving, kGreen, kBold, o.colour);
    out << paint(actionLines(r.action, o.width), kCyan, o.colour);
    if (o.verbose) line(evidenceLine(r.evidence));
  }
  if (in.recommendations.size() > o.max_recommendations)
    line("  ... " + std::to_string(in.recommendations.size() - o.max_recommendations) +
         " more in the report");
  if (std::string notes = notesLine(in.notes, o.advice_floor); !notes.empty())
    out << paint(wrap(notes, o.width), kDim, o.colour);
  line(idleLine(a));
  line(jobLine(a, o.width));
  line(energyLine(a, o.energy_price_kwh));
  line(ranksLine(a));
  line(stepsLine(a));
  if (a.distributed.ranks.size() > 1)
    out << renderRankTable(a.distributed.ranks, a.distributed.straggler);
  else
    out << stragglerLine(a.distributed.straggler);
  line(warmupLine(a));
  line(kernelsLine(a, o.width));
  line(precisionLine(a));
  line(blasProbeLine(a));
  line(occupancyLine(a));
  line(copiesLine(a));
  line(syncLine(a));
  line(memoryLine(a));
  line(collectionLine(a));
  if (a.simulated())
    out << paint(wrap("  SIMULATED DEVICE: timings come from the simulated device's cost model, "
                      "not a real GPU",
                      o.width),
                 kYellow, o.colour);
  if (!o.written_files.empty()) {
    std::string files = "  report: ";
    for (size_t i = 0; i < o.written_files.size(); ++i)
      files += (i ? ", " : "") + o.written_files[i];
    line(files);
  }
  return out.str();
}

} // namespace gpuwise::advisor
