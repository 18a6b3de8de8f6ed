// Which GPU class runs the job for the least money per step: every class of the table
// (gpu_classes.h) with the job's predicted step time on it (step_time_model.h), its price and
// whether it qualifies. right_size_gpu_type recommends the best; the report lists them all.
//
// A class qualifies when it is not the job's own, is priced (the table, or PriceOverrides) below
// the job's GPU per hour, is
// of the job's vendor (a CUDA job on an AMD GPU is a port, not a move), runs every kernel's
// precision, holds the job's peak memory with memory_headroom free, keeps the predicted step
// within max_slowdown x the measured one, and, for a job of several ranks on a GPU with NVLink,
// has NVLink too (collectives would fall to PCIe). Cost per step = price per GPU-hour x the job's
// GPUs x step seconds / 3600.
//
// Pure; any thread.
#pragma once

#include "advisor/analysis/job_analysis.h"
#include "advisor/gpu/gpu_classes.h"
#include "advisor/gpu/step_time_model.h"

#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

struct GpuTypeOptions {
  // Predicted step time over the measured one the user accepts for a cheaper GPU
  // (`--max-gpu-slowdown`): 1.3, a job 30% slower for a GPU that costs far less per step is what
  // a platform team trades; beyond it the job's owners notice the wait more than the bill.
  double max_slowdown = 1.3;
  // Memory kept free above the measured peak: the target's memory x (1 - headroom) must hold it
  // (the allocator's fragmentation and a larger batch now and then; increase_batch_size's 10%).
  double memory_headroom = 0.10;
  PriceOverrides prices; // --gpu-hour-price, --gpu-price CLASS=USD, --gpu-prices FILE
};

struct GpuTypeOption {
  const GpuClass* gpu = nullptr;
  StepPrediction prediction;
  std::optional<double> usd_per_hour;
  std::optional<double> cost_per_step; // USD, the job's GPUs together
  bool current = false;                // the class the job ran on
  bool memory_fits = false;
  bool eligible = false;
  std::string reason; // why it does not qualify; empty when it does (or is the current class)
};

struct GpuTypeComparison {
  const GpuClass* current = nullptr; // nullptr: the job's GPU is not in the table (no options)
  std::string skipped;               // why nothing was compared, when current is nullptr
  std::optional<double> peak_memory_gb, memory_needed_gb;
  std::optional<double> current_usd_per_hour; // the job's GPU's price; nullopt when unpriced
  size_t gpus = 1;
  bool multi_rank = false;
  double max_slowdown = 1.3;
  double memory_headroom = 0.10;
  std::vector<GpuTypeOption> options; // every class, in table order

  const GpuTypeOption* currentOption() const;
  // The qualifying class with the lowest cost per step, if it costs less than the current class.
  const GpuTypeOption* cheapest() const;
};

GpuTypeComparison compareGpuTypes(const JobAnalysis& analysis, const GpuTypeOptions& options);

} // namespace gpuwise::advisor
