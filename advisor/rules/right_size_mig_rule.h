// right_size_mig: the job's peak memory and SM demand fit a smaller MIG slice of its GPU.
//
// SM demand = GPU busy share x kernel-time weighted SM fill (the share of the GPU's SMs busy
// over time). The profile: the smallest in the GPU's MIG table (gpu_tables.h) whose memory
// keeps memory_headroom free above the peak, whose compute share (slices / total) covers the
// demand and whose predicted slowdown stays within max_slowdown. Predicted slowdown: kernels
// that filled a share f of the SMs run f / s longer on a slice with share s, so the span grows
// by busy x max(0, f / s - 1) / span (upper bound: assumes none of it overlaps idle time).
// Expected saving: the share of the GPU given back, 1 - s (1 + slowdown). Fires only when the
// demand is below max_demand. Confidence medium: measured memory and busy time, table profiles.
//
// On a MIG slice (DeviceInfo::mig_profile, from NVML): busy time and SM fill were measured on the
// slice, so shares are of the slice's compute slices, candidates are the smaller profiles of the
// same GPU, and the saving is the share of the current slice given back. Already on the smallest
// profile that fits (or an unknown profile): nothing.
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class RightSizeMigRule final : public Rule {
public:
  std::string_view id() const override { return "right_size_mig"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
