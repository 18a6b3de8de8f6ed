#include "advisor/cost/energy_cost.h"

#include "advisor/cost/board_power.h"
#include "advisor/cost/gpu_prices.h"
#include "advisor/report/format.h"

#include <algorithm>
#include <cstdlib>

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;

constexpr double kJoulesPerKwh = 3.6e6;

const model::DeviceInfo* deviceInfo(const CollectionResult& c, int64_t pid, uint32_t index) {
  for (const auto& g : c.gpus)
    if (g.info.index == index && std::find(g.pids.begin(), g.pids.end(), pid) != g.pids.end())
      return &g.info;
  return nullptr;
}

std::string gpuName(const CollectionResult& c, int64_t pid, uint32_t index) {
  const auto* info = deviceInfo(c, pid, index);
  return info ? info->name : std::string();
}

// A MIG slice's share of its GPU's board power: its compute slices ("3g.40gb": 3) of the 7 an
// A100 / H100 / H200 has. 1 for a whole GPU.
double migShare(const model::DeviceInfo* info) {
  constexpr double kComputeSlices = 7.0;
  if (!info || info->mig_profile.empty()) return 1.0;
  const int slices = std::atoi(info->mig_profile.c_str());
  return slices > 0 && slices <= 7 ? slices / kComputeSlices : 1.0;
}

json orNull(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

// Every sampled device measured: the counter's figures (each physical GPU once).
bool measure(const JobAnalysis& a, JobEnergy& job) {
  auto total = a.nvml.energyJoules();
  if (!total) return false;
  bool by_power = false;
  for (const auto& d : a.nvml.devices) {
    DeviceEnergy e;
    e.pid = d.pid;
    e.rank = d.rank;
    e.device = d.device;
    e.gpu_name = gpuName(a.collection, d.pid, d.device);
    e.source = d.energy.source();
    e.joules = d.energy.joules();
    e.mean_power_watts = d.energy.meanPowerWatts();
    by_power = by_power || e.source == "nvml_power";
    job.devices.push_back(std::move(e));
  }
  job.joules = *total;
  job.source = by_power ? "nvml_power" : "nvml";
  return true;
}

// Board power x busy time, per (process, GPU) of the timeline.
void estimate(const JobAnalysis& a, JobEnergy& job) {
  if (!a.timeline.known() || a.timeline.devices.empty()) return;
  double total = 0;
  bool all = true;
  for (const auto& t : a.timeline.devices) {
    DeviceEnergy e;
    e.pid = t.pid;
    e.rank = t.rank;
    e.device = t.device;
    const model::DeviceInfo* info = deviceInfo(a.collection, t.pid, t.device);
    e.gpu_name = info ? info->name : std::string();
    e.busy_seconds = toSeconds(t.busy_ns);
    e.source = "estimate";
    if (auto p = boardPowerOf(e.gpu_name, info ? info->memory_total_bytes : 0)) {
      e.board_power_watts = p->watts * migShare(info);
      e.board_model = std::string(p->model);
      e.joules = *e.board_power_watts * e.busy_seconds;
      total += *e.joules;
    } else {
      all = false;
      std::string name = e.gpu_name.empty() ? "unknown GPU" : e.gpu_name;
      if (std::find(job.unknown_gpus.begin(), job.unknown_gpus.end(), name) ==
          job.unknown_gpus.end())
        job.unknown_gpus.push_back(name);
    }
    job.devices.push_back(std::move(e));
  }
  job.source = "estimate";
  if (all) job.joules = total;
}

} // namespace

JobEnergy computeJobEnergy(const JobAnalysis& a, const CostOptions& options) {
  JobEnergy job;
  if (options.energy_price_kwh) {
    job.price_kwh = *options.energy_price_kwh;
    job.price_source = "option";
  }
  if (!measure(a, job)) estimate(a, job);
  if (!job.joules) return job;
  job.kwh = *job.joules / kJoulesPerKwh;
  job.cost = *job.kwh * job.price_kwh;
  if (const uint64_t steps = a.steps.count(); steps > 0 && !a.steps.processes.empty())
    job.joules_per_step = *job.joules / (double(steps) / double(a.steps.processes.size()));
  return job;
}

FindingEnergy energyOf(const Recommendation& r, const JobEnergy& job) {
  FindingEnergy f;
  if (!job.joules) return f;
  const double ratio = std::clamp(r.expected_saving_ratio, 0.0, 1.0);
  f.saving_joules = ratio * *job.joules;
  f.saving_cost = *f.saving_joules / kJoulesPerKwh * job.price_kwh;
  return f;
}

json toJson(const JobEnergy& e) {
  json j;
  j["source"] = e.source.empty() ? json(nullptr) : json(e.source);
  j["estimated"] = e.source == "estimate";
  j["joules"] = orNull(e.joules);
  j["kwh"] = orNull(e.kwh);
  j["joules_per_step"] = orNull(e.joules_per_step);
  j["currency"] = kPriceCurrency;
  j["price_per_kwh"] = e.price_kwh;
  j["price_source"] = e.price_source;
  j["cost"] = orNull(e.cost);
  j["unknown_gpus"] = e.unknown_gpus;
  json devices = json::array();
  for (const auto& d : e.devices) {
    json dj;
    dj["pid"] = d.pid;
    dj["rank"] = d.rank >= 0 ? json(d.rank) : json(nullptr);
    dj["device"] = d.device;
    dj["gpu_name"] = d.gpu_name.empty() ? json(nullptr) : json(d.gpu_name);
    dj["source"] = d.source.empty() ? json(nullptr) : json(d.source);
    dj["joules"] = orNull(d.joules);
    dj["mean_power_watts"] = orNull(d.mean_power_watts);
    dj["board_power_watts"] = orNull(d.board_power_watts);
    dj["board_model"] = d.board_model.empty() ? json(nullptr) : json(d.board_model);
    dj["busy_seconds"] = d.busy_seconds;
    devices.push_back(std::move(dj));
  }
  j["devices"] = std::move(devices);
  return j;
}

json toJson(const FindingEnergy& f) {
  json j;
  j["saving_joules"] = orNull(f.saving_joules);
  j["saving_cost"] = orNull(f.saving_cost);
  return j;
}

} // namespace gpuwise::advisor
