// increase_batch_size: the GPU is under-filled (small grids: low kernel-time weighted SM fill)
// and the memory model says a larger batch fits.
//
// Memory model: persistent memory P (weights, optimizer state: the lowest level the allocation
// series reaches after its first tenth) stays; the rest of the peak, W = peak - P, grows with
// the batch. multiplier = floor((capacity x (1 - memory_headroom) - P) / W, to 0.5), capped at
// max_multiplier; without a series all of the peak is taken to grow (the conservative case).
// Fires when SM fill < max_sm_fill and the multiplier >= min_multiplier (so never when memory
// is near full). Expected saving per sample: with span T, busy B, fill f and multiplier m, the
// kernels of a step grow only once they fill the SMs, so kernel time per sample falls from B to
// B max(1, m f) / m: saving = B/T x (1 - max(1, m f) / m). Idle time per sample shrinks too, but
// that is what use_cuda_graphs and the idle rules count; leaving it out keeps one saving from
// being claimed twice. Confidence low: it rests on the
// linear memory model and on the kernels scaling with the batch.
//
// Outside a training loop (no step ranges, fewer inferred steps than
// Thresholds::PrefetchInput::min_inferred_steps) or without a memory model there is no batch to
// scale: the same id then reports the under-filled launch itself, the kernel with the most time
// among those under max_sm_fill, its grid and block, and the grid of one full wave on this GPU
// (blocks per SM x SMs) in parameters.launch_config. Saving: the under-filled kernels' time x
// (1 - their fill) over the GPU span.
#pragma once

#include "advisor/rules/rule.h"

namespace gpuwise::advisor {

class IncreaseBatchSizeRule final : public Rule {
public:
  std::string_view id() const override { return "increase_batch_size"; }
  std::optional<Recommendation> evaluate(const RuleContext& context) const override;
};

} // namespace gpuwise::advisor
