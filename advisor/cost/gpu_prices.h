// What a GPU-hour costs, by GPU model: the default behind `--gpu-hour-price`, which turns wasted
// GPU time into money in the report.
//
// The table (a column of the GPU class table, advisor/gpu/gpu_classes.h) holds list-price ESTIMATES
// in US dollars per GPU-hour for on-demand capacity: the large clouds' published on-demand instance
// prices divided by the GPUs per instance, as known in 2025 (table set 2026-11, kPriceTableDate).
// Real prices vary by provider, region, commitment and month by a factor of two or more; a user who
// knows theirs passes --gpu-hour-price.
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gpuwise::advisor {

inline constexpr std::string_view kPriceTableDate = "2026-11";
inline constexpr std::string_view kPriceCurrency = "USD";

struct GpuPrice {
  std::string_view model; // "H100", "A100 80GB": the table's key, shown in the report
  double usd_per_hour = 0.0;
};

// Every row of the table, most recent generation first.
std::span<const GpuPrice> gpuPriceTable();

// The row for a device name as CUDA, NVML or a trace reports it ("NVIDIA H100 80GB HBM3",
// "NVIDIA A100-SXM4-80GB", "Tesla V100-DGXS-32GB", "NVIDIA L4"). Model names match as whole
// words, so an L40S is not an L4 nor an A100 an A10G. An A100 without "40GB"/"80GB" in its name is
// told apart by `memory_total_bytes` (more than 48 GB: 80GB). nullopt for a model not in the table.
std::optional<GpuPrice> lookupGpuPrice(std::string_view device_name,
                                       uint64_t memory_total_bytes = 0);

} // namespace gpuwise::advisor
