#include "advisor/report/merge_summary.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;
using Summaries = std::vector<const json*>;

std::optional<double> number(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

const json& member(const json& j, const char* key) {
  static const json null_value;
  auto it = j.find(key);
  return it == j.end() || !it->is_object() ? null_value : *it;
}

// The sum of a figure; null when no pod knows it.
json sum(const Summaries& s, const char* key) {
  std::optional<double> total;
  for (const json* j : s)
    if (auto v = number(*j, key)) total = total.value_or(0.0) + *v;
  return total ? json(*total) : json(nullptr);
}

json sumInteger(const Summaries& s, const char* key) {
  std::optional<uint64_t> total;
  for (const json* j : s)
    if (auto it = j->find(key); it != j->end() && it->is_number_unsigned())
      total = total.value_or(0) + it->get<uint64_t>();
  return total ? json(*total) : json(nullptr);
}

json largest(const Summaries& s, const char* key) {
  std::optional<double> best;
  for (const json* j : s)
    if (auto v = number(*j, key)) best = std::max(best.value_or(*v), *v);
  return best ? json(*best) : json(nullptr);
}

// The mean of a ratio over the pods weighted by the figure it is a share of; null when no pod
// with weight knows it.
template <typename Weight> json weighted(const Summaries& s, const char* key, Weight weight) {
  double num = 0, den = 0;
  for (const json* j : s) {
    auto v = number(*j, key);
    const double w = weight(*j);
    if (!v || w <= 0) continue;
    num += *v * w;
    den += w;
  }
  return den > 0 ? json(num / den) : json(nullptr);
}

double kernelSeconds(const json& j) {
  return number(j, "kernel_seconds").value_or(0.0);
}

double stepSeconds(const json& j) {
  const json& steps = member(j, "steps");
  if (steps.is_null()) return number(j, "gpu_span_seconds").value_or(0.0);
  const double count = number(steps, "count").value_or(0.0);
  const double mean = number(steps, "mean_seconds").value_or(0.0);
  return count * mean > 0 ? count * mean : number(j, "gpu_span_seconds").value_or(0.0);
}

double idleSeconds(const json& j) {
  auto span = number(j, "gpu_span_seconds"), busy = number(j, "gpu_busy_seconds");
  return span && busy ? std::max(0.0, *span - *busy) : 0.0;
}

json median(std::vector<double> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Steps as the per-rank view says: the ranks run the same steps side by side, so the job ran as
// many steps as its ranks did (the most any pod saw), of the pods' step-weighted mean duration.
json mergeSteps(const Summaries& s) {
  Summaries steps;
  for (const json* j : s)
    if (const json& st = member(*j, "steps"); !st.is_null() && number(st, "count"))
      steps.push_back(&st);
  json out;
  out["count"] = largest(steps, "count");
  if (out["count"].is_number()) out["count"] = out["count"].get<uint64_t>();
  out["mean_seconds"] = weighted(steps, "mean_seconds",
                                 [](const json& j) { return number(j, "count").value_or(0.0); });
  std::string source;
  for (const json* j : steps)
    if (auto it = j->find("source"); it != j->end() && it->is_string() && source.empty())
      source = it->get<std::string>();
  out["source"] = source.empty() ? json(nullptr) : json(source);
  std::vector<double> p50;
  for (const json* j : steps)
    if (auto v = number(*j, "p50_seconds")) p50.push_back(*v);
  out["p50_seconds"] = median(p50);
  out["p90_seconds"] = largest(steps, "p90_seconds");
  return out;
}

json mergePrecision(const Summaries& s) {
  std::map<std::string, std::pair<double, double>> shares; // name -> (weighted sum, weight)
  json order = json::array();
  for (const json* j : s) {
    const json& p = member(*j, "precision_time_ratio");
    const double w = kernelSeconds(*j);
    if (p.is_null() || w <= 0) continue;
    for (const auto& [name, v] : p.items()) {
      if (!v.is_number()) continue;
      if (!shares.count(name)) order.push_back(name);
      shares[name].first += v.get<double>() * w;
      shares[name].second += w;
    }
  }
  if (shares.empty()) return nullptr;
  json out;
  for (const auto& name : order) {
    const auto& [num, den] = shares[name.get<std::string>()];
    out[name.get<std::string>()] = den > 0 ? num / den : 0.0;
  }
  return out;
}

json mergeMemcpy(const Summaries& s) {
  Summaries m;
  for (const json* j : s)
    if (const json& mj = member(*j, "memcpy"); !mj.is_null()) m.push_back(&mj);
  json out;
  for (const char* key : {"h2d_bytes", "d2h_bytes", "d2d_bytes", "pageable_bytes"})
    out[key] = sumInteger(m, key);
  out["pageable_seconds"] = sum(m, "pageable_seconds");
  return out;
}

// {cause: seconds} summed over the pods, in the first pod's order of causes.
json mergeIdleByCause(const Summaries& s) {
  json out;
  for (const json* j : s) {
    const json& by = member(*j, "idle_seconds_by_cause");
    if (by.is_null()) continue;
    if (out.is_null()) out = json::object();
    for (const auto& [cause, v] : by.items())
      if (v.is_number())
        out[cause] = (out.contains(cause) ? out[cause].get<double>() : 0.0) + v.get<double>();
  }
  return out;
}

// summary.energy_*: the pods' energies add up (each pod's GPUs are its own); per step, the pods'
// per-step figures add up too (the ranks of a job step together). The source is the pods' when
// they agree, "estimate" when any pod's is one.
void mergeEnergy(const Summaries& s, json& out) {
  out["energy_joules"] = sum(s, "energy_joules");
  out["energy_joules_per_step"] = sum(s, "energy_joules_per_step");
  out["energy_cost"] = sum(s, "energy_cost");
  std::optional<std::string> source;
  for (const json* j : s) {
    auto it = j->find("energy_source");
    if (it == j->end() || !it->is_string()) continue;
    const std::string v = it->get<std::string>();
    if (!source || v == "estimate" || (v == "nvml_power" && *source == "nvml")) source = v;
  }
  out["energy_source"] = source && out["energy_joules"].is_number() ? json(*source) : json(nullptr);
}

} // namespace

json mergeSummaries(const Summaries& s) {
  json out;
  out["wall_seconds"] = largest(s, "wall_seconds");
  out["gpu_span_seconds"] = sum(s, "gpu_span_seconds");
  out["gpu_busy_seconds"] = sum(s, "gpu_busy_seconds");
  const auto span = out["gpu_span_seconds"], busy = out["gpu_busy_seconds"];
  out["gpu_idle_ratio"] = span.is_number() && busy.is_number() && span.get<double>() > 0
                              ? json(1.0 - busy.get<double>() / span.get<double>())
                              : json(nullptr);
  out["kernel_count"] = sumInteger(s, "kernel_count");
  out["kernel_seconds"] = sum(s, "kernel_seconds");
  out["precision_time_ratio"] = mergePrecision(s);
  out["tensor_core_time_ratio"] = weighted(s, "tensor_core_time_ratio", kernelSeconds);
  out["occupancy_theoretical"] = weighted(s, "occupancy_theoretical", kernelSeconds);
  out["input_stall_ratio"] = weighted(s, "input_stall_ratio", stepSeconds);
  out["host_sync_seconds"] = sum(s, "host_sync_seconds");
  out["launch_overhead_ratio"] = weighted(s, "launch_overhead_ratio", idleSeconds);
  out["memcpy"] = mergeMemcpy(s);
  out["memory_peak_bytes"] = largest(s, "memory_peak_bytes");
  if (out["memory_peak_bytes"].is_number())
    out["memory_peak_bytes"] = out["memory_peak_bytes"].get<uint64_t>();
  out["steps"] = mergeSteps(s);
  out["input_stall_seconds"] = sum(s, "input_stall_seconds");
  out["idle_seconds_by_cause"] = mergeIdleByCause(s);
  Summaries comm;
  for (const json* j : s)
    if (const json& c = member(*j, "communication"); !c.is_null()) comm.push_back(&c);
  out["communication"] = comm.empty() ? json(nullptr) : mergeCommunication(comm);
  mergeEnergy(s, out);
  return out;
}

json mergeTimelines(const Summaries& t) {
  json out = json::object();
  for (const json* j : t)
    for (const auto& [key, v] : j->items()) {
      if (key == "idle_ratio" || key == "devices") continue;
      if (v.is_number()) {
        const double prior = out.contains(key) && out[key].is_number() ? out[key].get<double>() : 0;
        out[key] = prior + v.get<double>();
      }
    }
  out["idle_seconds_by_cause"] = mergeIdleByCause(t);
  auto span = number(out, "span_seconds"), busy = number(out, "busy_seconds");
  out["idle_ratio"] = span && busy && *span > 0 ? json(1.0 - *busy / *span) : json(nullptr);
  return out;
}

json mergeCommunication(const Summaries& c) {
  json out;
  out["seconds"] = sum(c, "seconds");
  out["exposed_seconds"] = sum(c, "exposed_seconds");
  const double seconds = out["seconds"].is_number() ? out["seconds"].get<double>() : 0.0;
  const double exposed =
      out["exposed_seconds"].is_number() ? out["exposed_seconds"].get<double>() : 0.0;
  out["overlap_ratio"] = seconds > 0 ? json((seconds - exposed) / seconds) : json(nullptr);
  // by_kind: one entry per kind; integers summed, "seconds" summed, other numbers (bandwidths,
  // ratios) weighted by seconds, strings and the rest from the first pod that has the kind.
  std::map<std::string, size_t> index;
  json kinds = json::array();
  std::vector<std::map<std::string, std::pair<double, double>>> weighted_sums;
  for (const json* j : c) {
    auto it = j->find("by_kind");
    if (it == j->end() || !it->is_array()) continue;
    for (const json& k : *it) {
      if (!k.is_object() || !k.contains("kind")) continue;
      const std::string kind = k["kind"].dump();
      const double w = number(k, "seconds").value_or(0.0);
      auto [slot, fresh] = index.try_emplace(kind, kinds.size());
      if (fresh) {
        kinds.push_back(k);
        weighted_sums.emplace_back();
      }
      json& into = kinds[slot->second];
      for (const auto& [name, v] : k.items()) {
        if (!v.is_number()) continue;
        auto& ws = weighted_sums[slot->second][name];
        if (v.is_number_integer() || name == "seconds") {
          if (fresh) continue;
          const json prior = into.contains(name) && into[name].is_number() ? into[name] : json(0);
          into[name] = prior.is_number_integer() && v.is_number_integer()
                           ? json(prior.get<int64_t>() + v.get<int64_t>())
                           : json(prior.get<double>() + v.get<double>());
        } else if (w > 0) {
          ws.first += v.get<double>() * w;
          ws.second += w;
          into[name] = ws.first / ws.second;
        }
      }
    }
  }
  out["by_kind"] = std::move(kinds);
  return out;
}

} // namespace gpuwise::advisor
