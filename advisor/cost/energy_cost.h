// The energy a job's GPUs used, and what it cost, for the report's summary.energy_joules, its
// `energy` section and each recommendation's energy share.
//
//   measured    live runs with NVML: per physical GPU the difference of its total energy counter
//               between the shim's first and last sample ("nvml"), or, on a GPU without the
//               counter, its power draw integrated over the samples ("nvml_power"); see
//               nvml_analyzer.h. The counter is the whole board's, from the first sample to the
//               last, idle time and other processes on the GPU included.
//   estimated   no NVML (offline traces; live runs without NVML): per (process, GPU) its board
//               power (board_power.h) x its GPU busy time (the union of kernel, copy and memset
//               intervals) ("estimate"). Idle draw is left out and a busy GPU rarely draws its
//               full board power: the two err in opposite directions, and the report says that
//               the figure is an estimate. A MIG slice counts its share of the board: its compute
//               slices of seven ("3g.40gb": 3/7). Unknown when a GPU's model is not in the table or
//               the trace has no GPU timestamps.
//   per step    energy / steps per process (summary.steps.count / processes with steps), when
//               steps are known: the energy of all the job's GPUs for one training step.
//   cost        kWh x --energy-price (USD per kWh; default kDefaultEnergyPriceKwh).
//   a finding   expected_saving_ratio x energy: the same work in that much less time at the run's
//               mean power. An upper bound where the time saved is idle time (an idle board draws
//               less than a busy one).
//
// Pure; any thread.
#pragma once

#include "advisor/analysis/job_analysis.h"
#include "advisor/cost/waste_cost.h"
#include "advisor/rules/recommendation.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

// USD per kWh when --energy-price is not given: the U.S. commercial-sector average retail price
// of electricity, rounded: EIA Electric Power Monthly, Table 5.6.B "Average Price of Electricity to
// Ultimate Customers by End-Use Sector" (www.eia.gov/electricity/monthly/epm_table_grapher.php
// ?t=epmt_5_06_b), 2024 year to date: commercial 10 to 20 cents per kWh across census divisions
// (West North Central 10.40, New England 20.08), about 13 cents nationally. A data centre's
// contract price and its cooling overhead (PUE) differ: pass --energy-price with yours.
inline constexpr double kDefaultEnergyPriceKwh = 0.13;

struct DeviceEnergy {
  int64_t pid = 0;
  int32_t rank = -1;
  uint32_t device = 0;
  std::string gpu_name;
  std::string source;                      // "nvml", "nvml_power", "estimate", "" unknown
  std::optional<double> joules;            // nullopt unknown
  std::optional<double> mean_power_watts;  // NVML's mean reading (measured devices)
  std::optional<double> board_power_watts; // the table's figure (a MIG slice: its share)
  std::string board_model;                 // the table row used
  double busy_seconds = 0.0;               // GPU busy time (the estimate's basis)
};

struct JobEnergy {
  // "nvml" when every GPU's counter measured it, "nvml_power" when every GPU was measured and
  // some by integrated power, "estimate" otherwise (when known); "" unknown.
  std::string source;
  std::optional<double> joules, joules_per_step, kwh, cost;
  double price_kwh = kDefaultEnergyPriceKwh;
  std::string price_source = "default";  // "option" with --energy-price
  std::vector<std::string> unknown_gpus; // GPU names without a board-power figure (estimate)
  std::vector<DeviceEnergy> devices;
};

struct FindingEnergy {
  std::optional<double> saving_joules, saving_cost;
};

JobEnergy computeJobEnergy(const JobAnalysis& analysis, const CostOptions& options = {});
FindingEnergy energyOf(const Recommendation& recommendation, const JobEnergy& job);

// The report's top-level `energy` section; each recommendation's `energy` field.
nlohmann::ordered_json toJson(const JobEnergy& energy);
nlohmann::ordered_json toJson(const FindingEnergy& energy);

} // namespace gpuwise::advisor
