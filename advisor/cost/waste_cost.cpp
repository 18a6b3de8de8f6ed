#include "advisor/cost/waste_cost.h"

#include "advisor/cost/gpu_prices.h"
#include "advisor/gpu/gpu_classes.h"
#include "advisor/report/format.h"

#include <algorithm>

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;

constexpr double kSecondsPerHour = 3600.0;
constexpr double kHoursPerDay = 24.0;

const model::DeviceInfo* findDevice(const CollectionResult& c, int64_t pid, uint32_t index) {
  for (const auto& g : c.gpus)
    if (g.info.index == index && std::find(g.pids.begin(), g.pids.end(), pid) != g.pids.end())
      return &g.info;
  return nullptr;
}

struct PricedDevice {
  double usd_per_hour = 0;
  std::string_view price_model; // the table row; empty when a flag set the price
};

std::optional<PricedDevice> priceDevice(const model::DeviceInfo* device,
                                        const CostOptions& options) {
  if (options.gpu_hour_price) return PricedDevice{*options.gpu_hour_price, {}};
  const std::string_view name = device ? std::string_view(device->name) : std::string_view();
  const uint64_t memory = device ? device->memory_total_bytes : 0;
  if (const GpuClass* c = findGpuClass(name, memory))
    for (const auto& [class_name, usd] : options.class_prices)
      if (class_name == c->name) return PricedDevice{usd, {}};
  if (auto row = lookupGpuPrice(name, memory)) return PricedDevice{row->usd_per_hour, row->model};
  return std::nullopt;
}

// Sets the device's price; true when a flag set it.
bool price(DeviceCost& d, const model::DeviceInfo* info, const CostOptions& options) {
  if (info) d.gpu_name = info->name;
  auto p = priceDevice(info, options);
  if (!p) return false;
  d.price = p->usd_per_hour;
  d.price_model = std::string(p->price_model);
  return p->price_model.empty();
}

json orNull(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

} // namespace

std::optional<double> devicePrice(const model::DeviceInfo* device, const CostOptions& options) {
  if (auto p = priceDevice(device, options)) return p->usd_per_hour;
  return std::nullopt;
}

std::optional<double> DeviceCost::idleCost() const {
  if (!price) return std::nullopt;
  return idle_gpu_hours * *price;
}

JobCost computeJobCost(const JobAnalysis& a, const CostOptions& options) {
  JobCost job;
  bool flag_priced = false; // some device's price came from a flag, not the table
  job.timeline_known = a.timeline.known();
  if (job.timeline_known) {
    for (const auto& t : a.timeline.devices) {
      DeviceCost d;
      d.pid = t.pid;
      d.rank = t.rank;
      d.device = t.device;
      d.gpu_hours = toSeconds(t.spanNs()) / kSecondsPerHour;
      d.idle_gpu_hours = toSeconds(t.idleNs()) / kSecondsPerHour;
      d.idle_ratio = t.idleRatio().value_or(0.0);
      flag_priced = price(d, findDevice(a.collection, t.pid, t.device), options) || flag_priced;
      job.devices.push_back(std::move(d));
    }
  } else if (a.wall_ns) {
    // No GPU timestamps: the GPUs were held for the run's wall time, idle unknown.
    for (const auto& g : a.collection.gpus) {
      for (auto pid : g.pids) {
        DeviceCost d;
        d.pid = pid;
        d.device = g.info.index;
        d.gpu_hours = toSeconds(*a.wall_ns) / kSecondsPerHour;
        flag_priced = price(d, &g.info, options) || flag_priced;
        job.devices.push_back(std::move(d));
      }
    }
  }
  job.gpus = job.devices.size();

  double cost = 0.0, idle = 0.0, idle_per_day = 0.0, idle_cost = 0.0, idle_cost_per_day = 0.0;
  bool all_priced = !job.devices.empty();
  bool any_priced = false;
  for (const auto& d : job.devices) {
    job.gpu_hours += d.gpu_hours;
    idle += d.idle_gpu_hours;
    idle_per_day += d.idle_ratio * kHoursPerDay;
    if (!d.price) {
      all_priced = false;
      std::string name = d.gpu_name.empty() ? "unknown GPU" : d.gpu_name;
      if (std::find(job.unpriced_gpus.begin(), job.unpriced_gpus.end(), name) ==
          job.unpriced_gpus.end())
        job.unpriced_gpus.push_back(name);
      continue;
    }
    any_priced = true;
    cost += d.gpu_hours * *d.price;
    idle_cost += d.idle_gpu_hours * *d.price;
    idle_cost_per_day += d.idle_ratio * kHoursPerDay * *d.price;
  }
  if (any_priced) job.price_source = flag_priced ? "option" : "table";
  // One price for every GPU (the usual job): that price itself. The hours-weighted mean below
  // gives it back only up to rounding ((h * p) / h can be p plus an ulp), and /metrics exports
  // the device's own price beside it.
  const bool one_price =
      all_priced && std::all_of(job.devices.begin(), job.devices.end(), [&](const DeviceCost& d) {
        return *d.price == *job.devices.front().price;
      });
  if (all_priced) {
    if (options.gpu_hour_price) {
      job.gpu_hour_price = *options.gpu_hour_price;
    } else if (!one_price && job.gpu_hours > 0) {
      job.gpu_hour_price = cost / job.gpu_hours;
    } else { // one price, or zero-length spans: every device's price is as good as another
      job.gpu_hour_price = *job.devices.front().price;
    }
  }
  if (job.timeline_known) {
    job.idle_gpu_hours = idle;
    job.idle_gpu_hours_per_day = idle_per_day;
    if (all_priced) {
      job.idle_cost = idle_cost;
      job.idle_cost_per_day = idle_cost_per_day;
    }
  }
  return job;
}

FindingCost costOf(const Recommendation& r, const JobCost& job) {
  FindingCost f;
  double ratio = std::clamp(r.expected_saving_ratio, 0.0, 1.0);
  f.gpu_hour_price = job.gpu_hour_price;
  f.wasted_gpu_hours = ratio * job.gpu_hours;
  f.wasted_gpu_hours_per_day = ratio * static_cast<double>(job.gpus) * kHoursPerDay;
  if (job.gpu_hour_price) {
    f.wasted_cost = f.wasted_gpu_hours * *job.gpu_hour_price;
    f.wasted_cost_per_day = f.wasted_gpu_hours_per_day * *job.gpu_hour_price;
  }
  return f;
}

json toJson(const JobCost& c) {
  json j;
  j["currency"] = kPriceCurrency;
  j["gpu_hour_price"] = orNull(c.gpu_hour_price);
  j["price_source"] = c.price_source.empty() ? json(nullptr) : json(c.price_source);
  j["price_table_date"] = kPriceTableDate;
  j["unpriced_gpus"] = c.unpriced_gpus;
  j["gpus"] = c.gpus;
  j["gpu_hours"] = c.gpu_hours;
  j["wasted_gpu_hours"] = orNull(c.idle_gpu_hours);
  j["wasted_cost"] = orNull(c.idle_cost);
  json day;
  day["wasted_gpu_hours"] = orNull(c.idle_gpu_hours_per_day);
  day["wasted_cost"] = orNull(c.idle_cost_per_day);
  j["per_day"] = std::move(day);
  json devices = json::array();
  for (const auto& d : c.devices) {
    json dj;
    dj["pid"] = d.pid;
    dj["rank"] = d.rank >= 0 ? json(d.rank) : json(nullptr);
    dj["device"] = d.device;
    dj["gpu_name"] = d.gpu_name.empty() ? json(nullptr) : json(d.gpu_name);
    dj["price_model"] = d.price_model.empty() ? json(nullptr) : json(d.price_model);
    dj["gpu_hour_price"] = orNull(d.price);
    dj["gpu_hours"] = d.gpu_hours;
    dj["wasted_gpu_hours"] = c.timeline_known ? json(d.idle_gpu_hours) : json(nullptr);
    dj["wasted_cost"] = c.timeline_known ? orNull(d.idleCost()) : json(nullptr);
    devices.push_back(std::move(dj));
  }
  j["devices"] = std::move(devices);
  return j;
}

json toJson(const FindingCost& f) {
  json j;
  j["currency"] = kPriceCurrency;
  j["gpu_hour_price"] = orNull(f.gpu_hour_price);
  j["wasted_gpu_hours"] = f.wasted_gpu_hours;
  j["wasted_cost"] = orNull(f.wasted_cost);
  json day;
  day["wasted_gpu_hours"] = f.wasted_gpu_hours_per_day;
  day["wasted_cost"] = orNull(f.wasted_cost_per_day);
  j["per_day"] = std::move(day);
  return j;
}

} // namespace gpuwise::advisor
