// The GPU classes users rent, side by side: memory, HBM bandwidth, dense throughput per precision,
// SM count, links, MIG profiles, board power and the on-demand list price. ONE table
// (gpu_classes.cpp, each figure with its source) serves every lookup that needs a GPU's figures:
// the precision rules' math throughput and the MIG and link tables (rules/gpu_tables.h), the
// GPU-hour prices (cost/gpu_prices.h), and the step-time model across classes
// (step_time_model.h) behind right_size_gpu_type.
//
// Pure lookups on static data; any thread; no allocation except PriceOverrides parsing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuwise::advisor {

// One MIG GPU-instance profile (NVIDIA MIG user guide, "Supported MIG Profiles").
struct MigProfile {
  const char* name;        // "1g.10gb"
  double memory_gb;        // the memory the profile name states (decimal GB)
  uint32_t compute_slices; // the "Ng" of the name: compute slices out of the GPU's total
  uint32_t memory_slices;  // memory slices out of the GPU's total
  uint32_t instances;      // how many fit on one GPU
};

struct MigGpu {
  const char* model = nullptr;          // "H100-80GB"
  uint32_t compute_slices = 0;          // 7 (4 on the A30)
  uint32_t memory_slices = 0;           // 8 (4 on the A30)
  std::span<const MigProfile> profiles; // smallest first
  bool known() const { return model != nullptr; }
};

enum class GpuVendor : uint8_t { Nvidia, Amd };

// Dense (no sparsity) peak figures of one GPU class. A throughput of 0: the class has no such
// path (V100: no TF32, BF16, FP8 or INT8 tensor cores; A100: no FP8).
struct GpuClass {
  const char* name;   // the class as the report names it: "H100 SXM", "A100 80GB"
  const char* family; // the math-throughput model it shares ("H100"), rules/gpu_tables.h's key
  GpuVendor vendor;
  double memory_gb;            // decimal GB
  double hbm_gb_per_s;         // device memory bandwidth
  double fp64_tflops;          // FP64 on the vector units
  double fp64_tensor_tflops;   // FP64 tensor cores (DMMA); 0 where none
  double fp32_tflops;          // FP32 SIMT (FFMA on the CUDA cores)
  double tf32_tensor_tflops;   // TF32 tensor cores
  double bf16_tensor_tflops;   // BF16 tensor cores (FP32 accumulate)
  double fp16_tensor_tflops;   // FP16 tensor cores (FP32 accumulate)
  double fp8_tensor_tflops;    // FP8 tensor cores
  double int8_tensor_tops;     // INT8 tensor cores
  uint32_t sm_count;           // SMs (AMD: compute units)
  double nvlink_gb_per_s;      // GPU-to-GPU link, one direction (NVLink / Infinity Fabric); 0 none
  double pcie_gb_per_s;        // host link, one direction
  double board_power_w;        // maximum board power (TDP)
  const char* price_model;     // cost/gpu_prices.h's row ("H100", "A100 80GB"); nullptr: unpriced
  double usd_per_hour;         // that row's on-demand list-price estimate; 0 when unpriced
  const MigGpu* mig = nullptr; // its MIG profiles; nullptr without MIG
};

// Every class, newest first. The classes of the issue (B200, H200, H100 SXM and PCIe, A100 80 and
// 40 GB, L40S, L4, A10G, V100, MI300X) and the ones the older tables knew (GB200, H100 NVL, A30,
// A10, T4).
std::span<const GpuClass> gpuClassTable();

// The class of a device name as CUDA, NVML or a trace reports it ("NVIDIA H100 80GB HBM3",
// "NVIDIA A100-SXM4-80GB", "Tesla V100-DGXS-32GB", "AMD Instinct MI300X"). Model names match as
// whole words (an L40S is not an L4, an A100 not an A10). An A100 without "40GB"/"80GB" in its
// name is told apart by memory_total_bytes; an H100 with "PCIe" is the PCIe class, with "NVL" or
// over 90 GB the NVL. nullptr for a GPU not in the table.
const GpuClass* findGpuClass(std::string_view device_name, uint64_t memory_total_bytes = 0);

// A class by its table name ("L4", "H100 SXM"), case-insensitively; nullptr when none.
const GpuClass* gpuClassNamed(std::string_view class_name);

// True when `word` occurs in `text` (case-insensitively) not glued to other letters or digits.
bool containsWord(std::string_view text, std::string_view word);

// Prices that replace the table's: `--gpu-hour-price` for the job's own GPU, and per class from
// `--gpu-price CLASS=USD` flags or a `--gpu-prices FILE` (one "CLASS USD" or "CLASS=USD" a line,
// '#' comments). A class named here is priced even when the table has no price for it.
struct PriceOverrides {
  std::optional<double> current_gpu;                    // --gpu-hour-price
  std::vector<std::pair<std::string, double>> by_class; // class name as the table names it

  // USD per hour of `c`: the override for it, else the table's; nullopt when neither.
  // `is_current`: the job's own GPU, which --gpu-hour-price prices first.
  std::optional<double> priceOf(const GpuClass& c, bool is_current) const;
};

// Parses "CLASS=USD" or "CLASS USD" (CLASS may contain spaces: "A100 80GB=4.1"); CLASS is a class
// of the table or a price row of several ("H100": the H100 SXM, NVL and PCIe), and the price
// positive. False with `error` naming the problem.
bool parsePriceOverride(std::string_view text, PriceOverrides& into, std::string* error);
// Every non-blank, non-comment line of a file's text, as parsePriceOverride; the first bad line
// named by number in `error`.
bool parsePriceFile(std::string_view text, PriceOverrides& into, std::string* error);

} // namespace gpuwise::advisor
