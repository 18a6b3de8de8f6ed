// A GPU's board power (its maximum TDP / TGP), by the device name the trace reports: what the
// offline energy estimate multiplies busy time by when NVML never measured the run.
//
// The figure is the GPU class table's (advisor/gpu/gpu_classes.h, GpuClass::board_power_w, each
// with its data sheet): one board power per GPU class, the same one the class comparison shows.
// A card the table folds into a class (an A100 PCIe into "A100 80GB"/"A100 40GB", a V100 PCIe
// into "V100") gets that class's figure: the SXM part's, an upper bound of the PCIe card's.
//
// Pure; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuwise::advisor {

struct BoardPower {
  std::string_view model; // the class used: "H100 SXM", "A100 80GB"
  double watts = 0.0;
};

// "NVIDIA H100 80GB HBM3" (SXM), "NVIDIA H100 PCIe", "NVIDIA A100-SXM4-80GB", "Tesla
// V100-DGXS-32GB", "NVIDIA L4", "AMD Instinct MI300X", ... as findGpuClass() matches them (whole
// words: an L40S is not an L4; `memory_total_bytes` tells an A100 without "40GB"/"80GB" in its
// name apart). nullopt for a GPU not in the class table.
std::optional<BoardPower> boardPowerOf(std::string_view device_name,
                                       uint64_t memory_total_bytes = 0);

} // namespace gpuwise::advisor
