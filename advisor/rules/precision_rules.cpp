#include "advisor/rules/precision_rules.h"

#include "advisor/report/format.h"
#include "advisor/rules/gpu_tables.h"

#include <algorithm>
#include <string>
#include <utility>

namespace gpuwise::advisor {
namespace {

using profiler::Precision;

MathThroughput throughputFromKernelNames(const KernelResult& kernels);

struct Candidates {
  MathThroughput gpu;
  std::string gpu_name;
  double span_s = 0;
  double busy_s = 0;
  double fp32_matmul_s = 0;
  double tf32_s = 0;
};

std::optional<Candidates> candidates(const JobAnalysis& a) {
  const auto* dev = primaryGpu(a);
  if (!dev || !a.timeline.known() || a.timeline.span_ns <= 0) return std::nullopt;
  Candidates c;
  c.gpu = mathThroughputFor(dev->name, dev->compute_major, dev->compute_minor);
  c.gpu_name = dev->name;
  if (c.gpu.fp32_tflops <= 0) {
    c.gpu = throughputFromKernelNames(a.kernels);
    c.gpu_name = dev->name.empty() ? "unknown" : dev->name;
  }
  if (c.gpu.fp32_tflops <= 0) return std::nullopt; // no tensor-core table for this GPU
  c.span_s = toSeconds(a.timeline.span_ns);
  c.busy_s = toSeconds(a.timeline.busy_ns);
  if (c.busy_s <= 0) return std::nullopt;
  c.fp32_matmul_s = toSeconds(a.precision.fp32_matmul_ns);
  c.tf32_s = toSeconds(a.precision.at(Precision::Tf32));
  return c;
}

// cuBLAS/cuDNN name their kernels after the architecture they were built for ("volta_sgemm_...",
// "ampere_fp16_s1688gemm...", "sm90_xmma_..."): a trace without device properties still says
// which GPU generation ran it. The first match in kernel-time order wins.
MathThroughput throughputFromKernelNames(const KernelResult& kernels) {
  static constexpr std::pair<const char*, const char*> kPrefixes[] = {
      {"volta_", "V100"}, {"turing_", "T4"}, {"ampere_", "A100"}, {"sm80_", "A100"},
      {"sm86_", "A10"},   {"sm89_", "L40S"}, {"sm90_", "H100"},   {"sm100_", "B200"}};
  for (const auto& k : kernels.by_name) {
    for (const auto& [prefix, model] : kPrefixes) {
      if (k.display_name.find(prefix) == std::string::npos) continue;
      auto t = mathThroughputFor(model, 0, 0);
      t.known = false;
      return t;
    }
  }
  return {};
}

Confidence confidenceFor(const MathThroughput& gpu) {
  return gpu.known ? Confidence::Medium : Confidence::Low;
}

} // namespace

std::optional<Recommendation> EnableMixedPrecisionRule::evaluate(const RuleContext& ctx) const {
  auto c = candidates(ctx.analysis);
  if (!c) return std::nullopt;
  double half = c->gpu.halfTensorTflops();
  if (half <= 0) return std::nullopt;
  double tf32_s = c->gpu.hasTf32() ? c->tf32_s : 0.0;
  double candidate_s = c->fp32_matmul_s + tf32_s;
  double share = candidate_s / c->busy_s;
  if (share < ctx.thresholds.precision.min_share) return std::nullopt;

  double fp32_speedup = half / c->gpu.fp32_tflops;
  double tf32_speedup = c->gpu.hasTf32() ? half / c->gpu.tf32_tensor_tflops : 1.0;
  double saving_s =
      c->fp32_matmul_s * (1.0 - 1.0 / fp32_speedup) + tf32_s * (1.0 - 1.0 / tf32_speedup);
  double ratio = std::min(1.0, saving_s / c->span_s);
  bool bf16 = c->gpu.hasBf16();

  Recommendation r;
  r.id = std::string(id());
  r.expected_saving_ratio = ratio;
  r.confidence = confidenceFor(c->gpu);
  r.explains = {"busy.fp32_matmul", candidate_s, c->span_s};
  r.title = std::string("Enable mixed precision: FP32 GEMMs/convolutions") +
            (tf32_s > 0 ? " and TF32 kernels" : "") + " were " + formatPercent(share) +
            " of GPU busy time (" + formatSignificant(candidate_s) + " s) that " +
            (bf16 ? "BF16" : "FP16") + " tensor cores run up to " +
            formatSignificant(fp32_speedup) + "x faster";
  if (bf16) {
    r.action = "Run the forward pass and loss under autocast; keep the optimizer step outside:\n"
               "with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):\n"
               "    loss = loss_fn(model(inputs), targets)\n"
               "loss.backward(); optimizer.step()\n"
               "BF16 keeps FP32's exponent range, so no gradient scaler is needed.";
  } else {
    r.action = "This GPU has FP16 tensor cores but no BF16: use autocast with FP16 and a gradient "
               "scaler:\n"
               "scaler = torch.cuda.amp.GradScaler()\n"
               "with torch.autocast(device_type=\"cuda\", dtype=torch.float16):\n"
               "    loss = loss_fn(model(inputs), targets)\n"
               "scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()";
  }
  auto& ev = r.evidence;
  ev["candidate_share_of_busy"] = share;
  ev["candidate_share_of_span"] = candidate_s / c->span_s;
  ev["gpu_busy_seconds"] = c->busy_s;
  ev["candidate_seconds"] = candidate_s;
  ev["fp32_matmul_seconds"] = c->fp32_matmul_s;
  ev["tf32_seconds"] = tf32_s;
  ev["gpu_span_seconds"] = c->span_s;
  ev["kernel_seconds"] = toSeconds(ctx.analysis.precision.kernel_ns);
  ev["tensor_core_share"] = ctx.analysis.precision.tensorCoreShare().value_or(0.0);
  ev["gpu"] = c->gpu_name;
  ev["throughput_table"] =
      std::string(c->gpu.model) +
      (c->gpu.known
           ? ""
           : " (architecture representative, from the compute capability or kernel names)");
  ev["fp32_tflops"] = c->gpu.fp32_tflops;
  ev["tensor_dtype"] = bf16 ? "bf16" : "fp16";
  ev["tensor_tflops"] = half;
  ev["fp32_to_tensor_speedup"] = fp32_speedup;
  if (tf32_s > 0) ev["tf32_to_tensor_speedup"] = tf32_speedup;
  ev["saving_seconds"] = saving_s;
  ev["expected_saving_ratio"] = ratio;
  ev["min_share_threshold"] = ctx.thresholds.precision.min_share;

  r.parameters["autocast_dtype"] = bf16 ? "bfloat16" : "float16";
  r.parameters["grad_scaler"] = !bf16;
  return r;
}

std::optional<Recommendation> EnableTf32Rule::evaluate(const RuleContext& ctx) const {
  auto c = candidates(ctx.analysis);
  if (!c || !c->gpu.hasTf32()) return std::nullopt;
  double share = c->fp32_matmul_s / c->busy_s;
  if (share < ctx.thresholds.precision.min_share) return std::nullopt;
  double speedup = c->gpu.tf32_tensor_tflops / c->gpu.fp32_tflops;
  double saving_s = c->fp32_matmul_s * (1.0 - 1.0 / speedup);
  double ratio = std::min(1.0, saving_s / c->span_s);

  Recommendation r;
  r.id = std::string(id());
  r.expected_saving_ratio = ratio;
  r.confidence = confidenceFor(c->gpu);
  r.explains = {"busy.fp32_matmul", c->fp32_matmul_s, c->span_s};
  r.title = "Allow TF32: FP32 GEMMs/convolutions were " + formatPercent(share) +
            " of GPU busy time (" + formatSignificant(c->fp32_matmul_s) +
            " s) on CUDA cores; TF32 tensor cores run them up to " + formatSignificant(speedup) +
            "x faster";
  r.action = "A two-line change that keeps FP32 storage (TF32 rounds the multiply inputs to a "
             "10-bit mantissa):\n"
             "torch.backends.cuda.matmul.allow_tf32 = True\n"
             "torch.backends.cudnn.allow_tf32 = True\n"
             "(or torch.set_float32_matmul_precision(\"high\")). Mixed precision (BF16 autocast) "
             "gains more where the model tolerates it.";
  auto& ev = r.evidence;
  ev["fp32_matmul_share_of_busy"] = share;
  ev["gpu_busy_seconds"] = c->busy_s;
  ev["fp32_matmul_seconds"] = c->fp32_matmul_s;
  ev["gpu_span_seconds"] = c->span_s;
  ev["gpu"] = c->gpu_name;
  ev["throughput_table"] =
      std::string(c->gpu.model) +
      (c->gpu.known
           ? ""
           : " (architecture representative, from the compute capability or kernel names)");
  ev["fp32_tflops"] = c->gpu.fp32_tflops;
  ev["tf32_tflops"] = c->gpu.tf32_tensor_tflops;
  ev["fp32_to_tf32_speedup"] = speedup;
  ev["saving_seconds"] = saving_s;
  ev["expected_saving_ratio"] = ratio;
  ev["min_share_threshold"] = ctx.thresholds.precision.min_share;
  ev["mantissa_bits"] = 10;

  r.parameters["allow_tf32"] = true;
  r.parameters["float32_matmul_precision"] = "high";
  return r;
}

} // namespace gpuwise::advisor
