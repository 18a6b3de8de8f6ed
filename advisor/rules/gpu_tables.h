// Per-GPU figures the rules estimate with when the trace cannot measure them: dense math
// throughput by precision (what tensor cores would gain over FP32 on the CUDA cores) and the MIG
// profiles a GPU can be partitioned into. Each is a view of the one GPU class table
// (advisor/gpu/gpu_classes.h), which holds every figure with its source.
//
// Pure lookups; any thread; no allocation.
#pragma once

#include "advisor/gpu/gpu_classes.h"

#include <cstdint>
#include <string_view>

namespace gpuwise::advisor {

// Dense (no sparsity) peak throughput in TFLOPS of one GPU. 0 means the GPU has no such path
// (V100 and T4 have no TF32 or BF16 tensor cores; their FP16 tensor cores are the mixed-precision
// target, with a gradient scaler).
struct MathThroughput {
  const char* model = "unknown";
  double fp32_tflops = 0;        // FP32 on the CUDA cores (SIMT FFMA)
  double tf32_tensor_tflops = 0; // TF32 tensor cores
  double bf16_tensor_tflops = 0; // BF16 tensor cores
  double fp16_tensor_tflops = 0; // FP16 tensor cores (FP32 accumulate)
  bool known = false;

  bool hasTf32() const { return tf32_tensor_tflops > 0; }
  bool hasBf16() const { return bf16_tensor_tflops > 0; }
  // The 16-bit tensor-core rate autocast gets: BF16 where the GPU has it, else FP16.
  double halfTensorTflops() const { return hasBf16() ? bf16_tensor_tflops : fp16_tensor_tflops; }
};

// By the device name ("Tesla V100-DGXS-32GB", "NVIDIA H100 80GB HBM3", "NVIDIA H200"); the
// compute capability picks a representative of the architecture when the name matches nothing.
MathThroughput mathThroughputFor(std::string_view gpu_name, int compute_major, int compute_minor);

// A GPU's nominal interconnect bandwidth, GB/s in one direction (what nccl-tests' bus bandwidth
// approaches): NVLink between the GPUs of one node (0 where the model has none: PCIe cards), and
// its PCIe link to the host.
struct LinkBandwidth {
  const char* model = "unknown";
  double nvlink_gb_per_s = 0;
  double pcie_gb_per_s = 0;
  bool known = false;
};

// By the device name; PCIe variants of NVLink GPUs ("A100-PCIE-40GB", "H100 PCIe") get no NVLink.
LinkBandwidth linkBandwidthFor(std::string_view gpu_name);

// The MIG table of the GPU, matched by name and memory size (A100 40 vs 80 GB, H100 80 vs 94 GB);
// an empty MigGpu for GPUs without MIG.
MigGpu migGpuFor(std::string_view gpu_name, uint64_t memory_total_bytes);

// The Kubernetes extended resource the NVIDIA device plugin advertises for a profile under the
// "mixed" MIG strategy: "nvidia.com/mig-1g.10gb".
inline constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";

} // namespace gpuwise::advisor
