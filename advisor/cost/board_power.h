// A GPU's board power (its maximum TDP / TGP), by the device name the trace reports: what the
// offline energy estimate multiplies busy time by when NVML never measured the run.
//
// Deliberately small: one function over a few rows, so that a fuller GPU class table (memory,
// throughput, power per class) can take its place behind the same signature.
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuwise::advisor {

struct BoardPower {
  std::string_view model; // the row used: "H100 SXM", "A100 PCIe 80GB"
  double watts = 0.0;
};

// "NVIDIA H100 80GB HBM3" (SXM), "NVIDIA H100 PCIe", "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB
// PCIe", "Tesla V100-SXM2-16GB", "Tesla V100-PCIE-16GB", "NVIDIA L4", "AMD Instinct MI300X", ...
// Model names match as whole words (an L40S is not an L4). nullopt for a GPU not in the table.
std::optional<BoardPower> boardPowerOf(std::string_view device_name);

} // namespace gpuwise::advisor
