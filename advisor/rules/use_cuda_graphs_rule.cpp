#include "advisor/rules/use_cuda_graphs_rule.h"

#include "advisor/report/format.h"

#include <algorithm>
#include <string>

namespace gpuwise::advisor {

std::optional<Recommendation> UseCudaGraphsRule::evaluate(const RuleContext& ctx) const {
  const auto& a = ctx.analysis;
  const auto& t = ctx.thresholds.cuda_graphs;
  const auto& tl = a.timeline;
  if (!tl.known() || tl.span_ns <= 0 || tl.timed_kernels == 0) return std::nullopt;
  double short_share = double(tl.short_kernels) / double(tl.timed_kernels);
  if (short_share < t.min_short_kernel_share) return std::nullopt;
  // Graphs remove the launch path's cost, which is the launch_overhead idle cause and nothing
  // else: host-bound idle (Python, allocations, module loads) stays with or without them.
  model::TimeNs launch_idle = tl.idle.at(IdleCause::LaunchOverhead);
  double span_s = toSeconds(tl.span_ns);
  double launch_idle_share = toSeconds(launch_idle) / span_s;
  if (launch_idle_share < t.min_launch_idle_share) return std::nullopt;
  double residual_s =
      toSeconds(static_cast<model::TimeNs>(tl.timed_kernels) * t.graph_gap_per_kernel_ns);
  double saving_s = std::max(0.0, toSeconds(launch_idle) - residual_s);
  double ratio = std::min(1.0, saving_s / span_s);
  if (ratio <= 0) return std::nullopt;
  double mean_kernel_us =
      toSeconds(a.kernels.total_ns) / double(std::max<uint64_t>(1, a.kernels.timed_count)) * 1e6;
  double kernels_per_second = double(tl.timed_kernels) / span_s;
  const bool rocm = platformOf(a) == Platform::Rocm;

  Recommendation r;
  r.id = std::string(id());
  r.expected_saving_ratio = ratio;
  r.confidence = Confidence::Medium;
  r.explains = idleExplains(a, IdleCause::LaunchOverhead);
  r.title = "Launch-bound: the GPU idled " + formatPercent(launch_idle_share) +
            " of its span on launch overhead between short kernels (" + formatPercent(short_share) +
            " under " + formatSignificant(toSeconds(kShortKernelNs) * 1e6) +
            " us); capture the step in a " + (rocm ? "HIP graph" : "CUDA graph");
  if (rocm) {
    r.action =
        "Replay the step's kernels as one HIP graph so the host launches once per step:\n"
        "model = torch.compile(model, mode=\"reduce-overhead\")   # captures hipGraphs on ROCm\n"
        "or capture by hand: torch.cuda.CUDAGraph() and torch.cuda.graph(g) map to hipGraph on "
        "ROCm builds of PyTorch (in HIP C++: hipStreamBeginCapture / hipStreamEndCapture, "
        "hipGraphInstantiate, hipGraphLaunch). Graphs need static shapes and no host syncs inside "
        "the captured region; fusing small elementwise kernels also cuts the count.";
  } else {
    r.action =
        "Replay the step's kernels as one graph so the host launches once per step:\n"
        "model = torch.compile(model, mode=\"reduce-overhead\")   # captures CUDA graphs\n"
        "or capture by hand with torch.cuda.graphs: g = torch.cuda.CUDAGraph(); with "
        "torch.cuda.graph(g): out = model(static_input); then copy new data into static_input and "
        "call g.replay(). Graphs need static shapes and no host syncs inside the captured region; "
        "fusing small elementwise kernels (torch.compile's default mode) also cuts the count.";
  }
  auto& ev = r.evidence;
  ev["launch_idle_share_of_span"] = launch_idle_share;
  ev["launch_overhead_idle_seconds"] = toSeconds(tl.idle.at(IdleCause::LaunchOverhead));
  ev["host_bound_idle_seconds"] = toSeconds(tl.idle.at(IdleCause::HostBound));
  ev["gpu_span_seconds"] = span_s;
  ev["short_kernel_share"] = short_share;
  ev["short_kernel_max_us"] = toSeconds(kShortKernelNs) * 1e6;
  ev["timed_kernels"] = tl.timed_kernels;
  ev["mean_kernel_us"] = mean_kernel_us;
  ev["kernels_per_second"] = kernels_per_second;
  ev["graph_residual_seconds"] = residual_s;
  ev["saving_seconds"] = saving_s;
  ev["expected_saving_ratio"] = ratio;
  ev["min_launch_idle_share_threshold"] = t.min_launch_idle_share;

  r.parameters["torch_compile_mode"] = "reduce-overhead";
  r.parameters[rocm ? "hip_graphs" : "cuda_graphs"] = true;
  r.parameters["platform"] = rocm ? "rocm" : "cuda";
  return r;
}

} // namespace gpuwise::advisor
