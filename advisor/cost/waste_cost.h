// The cost of waste: idle GPU time, and each recommendation's expected saving, in GPU-hours and
// money, for the analysed run and per 24 hours of the same work.
//
//   price per device  --gpu-hour-price when given; else the price --gpu-price CLASS=USD or
//                     --gpu-prices FILE gives the device's GPU class (the one price the
//                     report's gpu_types table and right_size_gpu_type use too); else the GPU
//                     model's row of gpu_prices.h; unknown for a model in none of them
//   job GPU-hours     sum over (process, device) of the GPU span (first to last GPU activity),
//                     or, without GPU timestamps, wall time x GPUs
//   idle GPU-hours    sum over (process, device) of idle = span - busy (the timeline's
//                     definition); time before the first and after the last GPU activity of a
//                     device (start-up, shutdown) is not counted
//   per day           what a device doing this work around the clock wastes: idle ratio x 24 h,
//                     summed over devices
//   a recommendation  expected_saving_ratio x job GPU-hours (and x GPUs x 24 h per day)
//   money             GPU-hours x price; the job's price is the GPU-hour-weighted mean of its
//                     devices' prices, so money figures add up
//
// A figure is nullopt when unknown: no price for some device, or no timeline for idle time.
// Pure; any thread.
#pragma once

#include "advisor/analysis/job_analysis.h"
#include "advisor/rules/recommendation.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuwise::advisor {

struct CostOptions {
  std::optional<double> gpu_hour_price;   // --gpu-hour-price: overrides the table for every GPU
  std::optional<double> energy_price_kwh; // --energy-price: USD per kWh (energy_cost.h)
  // --gpu-price CLASS=USD / --gpu-prices FILE: per GPU class (the class table's names, as
  // PriceOverrides::by_class holds them), below --gpu-hour-price, above the table.
  std::vector<std::pair<std::string, double>> class_prices;
};

struct DeviceCost {
  int64_t pid = 0;
  int32_t rank = -1;
  uint32_t device = 0;
  std::string gpu_name;        // as the device reported it, empty when unknown
  std::string price_model;     // the table row used ("H100"), empty when a flag priced it
  std::optional<double> price; // USD per GPU-hour
  double gpu_hours = 0.0;      // GPU span
  double idle_gpu_hours = 0.0;
  double idle_ratio = 0.0; // idle / span
  std::optional<double> idleCost() const;
};

struct JobCost {
  // "option" (a device priced by --gpu-hour-price, --gpu-price or --gpu-prices), "table", or ""
  // when no device is priced
  std::string price_source;
  std::optional<double> gpu_hour_price;   // GPU-hour-weighted mean over devices; nullopt unknown
  std::vector<std::string> unpriced_gpus; // device names without a table row (no override)
  bool timeline_known = false;            // GPU timestamps existed: idle figures are measured
  size_t gpus = 0;                        // (process, device) pairs the figures cover
  double gpu_hours = 0.0;                 // see the header comment
  std::optional<double> idle_gpu_hours, idle_gpu_hours_per_day;
  std::optional<double> idle_cost, idle_cost_per_day;
  std::vector<DeviceCost> devices;
};

// What one recommendation's expected saving is worth.
struct FindingCost {
  std::optional<double> gpu_hour_price;
  double wasted_gpu_hours = 0.0, wasted_gpu_hours_per_day = 0.0;
  std::optional<double> wasted_cost, wasted_cost_per_day;
};

JobCost computeJobCost(const JobAnalysis& analysis, const CostOptions& options = {});
// The price of an hour of `device` (nullptr: a device nothing is known of): --gpu-hour-price, else
// its class's --gpu-price, else its model's row of the table; nullopt when none says. The one
// place the report's `cost` section and the Prometheus gauge gpuwise_gpu_hour_price_dollars price
// a device.
std::optional<double> devicePrice(const model::DeviceInfo* device, const CostOptions& options);
FindingCost costOf(const Recommendation& recommendation, const JobCost& job);

// JSON for the report: the top-level `cost` section and each recommendation's `cost` field.
// Figures in GPU-hours and in kPriceCurrency; unknown ones null.
nlohmann::ordered_json toJson(const JobCost& cost);
nlohmann::ordered_json toJson(const FindingCost& cost);

} // namespace gpuwise::advisor
