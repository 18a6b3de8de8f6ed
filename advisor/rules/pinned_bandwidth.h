// Host<->device bandwidth of pinned copies, per GPU model, for when a trace has no pinned copies
// of its own to measure. Figures are practical one-direction cudaMemcpyAsync rates from pinned
// memory (about 80% of the link's theoretical rate), by host link:
//
//   NVLink-C2C (GH200, GB200, GB300)                       ~350 GB/s  (450 GB/s per direction)
//   PCIe 5.0 x16 (H100, H200, H800, H20, B100, B200, B300,
//                 RTX 50xx)                                 ~50 GB/s  (63 GB/s)
//   PCIe 4.0 x16 (A100, A800, A10, A16, A30, A40, A2, L4,
//                 L20, L40, L40S, RTX 30xx/40xx, RTX A-series) ~24 GB/s (31.5 GB/s)
//   PCIe 3.0 x16 (V100, T4, P100, P40, P4, RTX 20xx, and
//                 any GPU not listed: the conservative choice) ~12 GB/s (15.8 GB/s)
//
// A lower assumed bandwidth can only make the estimated saving smaller, which is why unknown
// GPUs get the slowest link.
#pragma once

#include <string_view>

namespace gpuwise::advisor {

struct PinnedLink {
  double bytes_per_second = 12e9;
  const char* link = "PCIe 3.0 x16";
  bool known_model = false; // false: the GPU name matched no table entry
};

// Matches model tokens in the device name ("NVIDIA A100-SXM4-80GB" -> A100, "Tesla
// V100-DGXS-32GB" -> V100, "NVIDIA GeForce RTX 4090" -> RTX 40xx).
PinnedLink pinnedLinkFor(std::string_view gpu_name);

} // namespace gpuwise::advisor
