#include "advisor/gpu/step_time_model.h"

#include "advisor/analysis/collective_kernel_name.h"

#include <algorithm>
#include <array>

namespace gpuwise::advisor {
namespace {

using profiler::Precision;

double toSec(model::TimeNs ns) {
  return double(ns) / 1e9;
}

enum class Bound : uint8_t { Tensor, Simt, Memory, Communication, HostLink, DeviceCopy, PeerLink };

// One piece of GPU work as the model sees it: what bounds it, at which precision, its measured
// time and how it filled the source's SMs.
struct Work {
  Bound bound = Bound::Memory;
  Precision precision = Precision::Other;
  bool convolution = false;
  double seconds = 0;
  double sm_fill = 1; // share of the source's SMs the first wave filled
  double waves = 1;   // grid / one full wave on the source
  bool has_fill = false;
};

bool isBlackwell(const GpuClass& c) {
  std::string_view family = c.family;
  return family == "B200" || family == "GB200";
}

// The rate (TFLOPS, or GB/s for memory and links) the work runs at on `c`; 0 when `c` has no
// path for it.
double rateOn(const GpuClass& c, const Work& w, const GpuClass& source) {
  switch (w.bound) {
  case Bound::Tensor:
    switch (w.precision) {
    case Precision::Fp64: return std::max(c.fp64_tensor_tflops, c.fp64_tflops);
    case Precision::Tf32: return c.tf32_tensor_tflops > 0 ? c.tf32_tensor_tflops : c.fp32_tflops;
    case Precision::Fp16: return c.fp16_tensor_tflops;
    case Precision::Bf16: return c.bf16_tensor_tflops;
    case Precision::Fp8: return c.fp8_tensor_tflops;
    case Precision::Fp4: return isBlackwell(c) ? 2 * c.fp8_tensor_tflops : 0;
    case Precision::Int8: return c.int8_tensor_tops;
    case Precision::Fp32: return c.fp32_tflops;
    case Precision::Other: break;
    }
    return std::max(c.fp16_tensor_tflops, c.bf16_tensor_tflops);
  case Bound::Simt:
    if (w.precision == Precision::Fp64) return std::max(c.fp64_tflops, c.fp64_tensor_tflops);
    // cuDNN's FP32 convolutions run TF32 by default where the GPU has it (the header says why);
    // a source that had TF32 and still ran FP32 had it turned off.
    if (w.convolution && w.precision == Precision::Fp32 && source.tf32_tensor_tflops <= 0 &&
        c.tf32_tensor_tflops > 0)
      return c.tf32_tensor_tflops;
    return c.fp32_tflops;
  case Bound::Memory:
  case Bound::DeviceCopy: return c.hbm_gb_per_s;
  case Bound::HostLink: return c.pcie_gb_per_s;
  case Bound::Communication:
  case Bound::PeerLink: return c.nvlink_gb_per_s > 0 ? c.nvlink_gb_per_s : c.pcie_gb_per_s;
  }
  return 0;
}

const char* termName(const Work& w) {
  static constexpr std::array<const char*, profiler::kPrecisionCount> kTensor = {
      "tensor.other", "tensor.fp64", "tensor.fp32", "tensor.tf32", "tensor.fp16",
      "tensor.bf16",  "tensor.fp8",  "tensor.fp4",  "tensor.int8"};
  switch (w.bound) {
  case Bound::Tensor: return kTensor[static_cast<size_t>(w.precision)];
  case Bound::Simt: return w.precision == Precision::Fp64 ? "simt.fp64" : "simt.fp32";
  case Bound::Memory: return "memory";
  case Bound::Communication: return "communication";
  case Bound::HostLink: return "copies.host_link";
  case Bound::DeviceCopy: return "copies.device";
  case Bound::PeerLink: return "copies.peer";
  }
  return "memory";
}

std::string missingPath(const Work& w) {
  return "no " + std::string(termName(w)).substr(7) + " tensor cores";
}

// cuDNN and PyTorch convolution kernels: "implicit_convolve_sgemm",
// "cudnn::...::wgrad_alg0_engine", "dgrad_engine", cuDNN's own
// "volta_scudnn_128x64_relu_interior_nn_v1" (s/h/d: FP32/FP16/FP64), Winograd. Batch-norm kernels
// ("cudnn::bn_fw_...") are not: they are memory bound.
bool isConvolution(std::string_view name) {
  for (std::string_view marker : {"scudnn", "hcudnn", "dcudnn", "wgrad", "dgrad", "winograd"})
    if (name.find(marker) != std::string_view::npos) return true;
  for (size_t at = name.find("conv"); at != std::string_view::npos; at = name.find("conv", at + 4))
    if (name.compare(at, 7, "convert") != 0) return true;
  return false;
}

Work kernelWork(const KernelStats& k) {
  Work w;
  w.seconds = toSec(k.total_ns);
  w.precision = k.kernel_class.precision;
  if (parseCollectiveKernelName(k.name).collective) {
    w.bound = Bound::Communication;
    return w;
  }
  if (k.kernel_class.tensor_core)
    w.bound = Bound::Tensor;
  else if (k.matmul_like || isConvolution(k.display_name))
    w.bound = Bound::Simt, w.convolution = isConvolution(k.display_name);
  else
    w.bound = Bound::Memory;
  if (auto fill = k.occupancy.smFill(); fill && *fill > 0) {
    w.sm_fill = std::min(1.0, *fill);
    w.waves = std::max(k.occupancy.waves().value_or(w.sm_fill), w.sm_fill);
    w.has_fill = true;
  }
  return w;
}

// The work's time on the target: the rate ratio, and SM fill carried over by SM count.
double predictedSeconds(const Work& w, const GpuClass& source, const GpuClass& target,
                        double source_sms) {
  double from = rateOn(source, w, source), to = rateOn(target, w, source);
  if (from <= 0 || to <= 0) return w.seconds;
  double fill_ratio = 1;
  const bool on_sms =
      w.bound == Bound::Tensor || w.bound == Bound::Simt || w.bound == Bound::Memory;
  if (on_sms && w.has_fill && source_sms > 0 && target.sm_count > 0) {
    // The SMs' worth of blocks the grid offers: its fill of the source when under one wave
    // (then the same GPU gives the same fill), else its waves.
    double parallel_sms = (w.sm_fill < 1.0 ? w.sm_fill : w.waves) * source_sms;
    double target_fill = std::min(1.0, parallel_sms / double(target.sm_count));
    fill_ratio = w.sm_fill / target_fill;
  }
  return w.seconds * (from / to) * fill_ratio;
}

std::vector<Work> jobWork(const JobAnalysis& a) {
  std::vector<Work> out;
  out.reserve(a.kernels.by_name.size() + 4);
  for (const auto& k : a.kernels.by_name)
    if (k.total_ns > 0) out.push_back(kernelWork(k));
  auto copies = [&](model::CopyDirection d, Bound bound) {
    Work w;
    w.bound = bound;
    w.seconds = toSec(a.copies.at(d).gpu_ns);
    if (w.seconds > 0) out.push_back(w);
  };
  copies(model::CopyDirection::HostToDevice, Bound::HostLink);
  copies(model::CopyDirection::DeviceToHost, Bound::HostLink);
  copies(model::CopyDirection::DeviceToDevice, Bound::DeviceCopy);
  copies(model::CopyDirection::PeerToPeer, Bound::PeerLink);
  return out;
}

void addTerm(std::vector<StepTimeTerm>& terms, const char* name, double seconds, double predicted) {
  auto it = std::find_if(terms.begin(), terms.end(), [&](const auto& t) { return t.name == name; });
  if (it == terms.end()) it = terms.insert(terms.end(), StepTimeTerm{name, 0, 0});
  it->seconds += seconds;
  it->predicted_seconds += predicted;
}

} // namespace

StepPrediction predictStepTime(const JobAnalysis& a, const GpuClass& source,
                               const GpuClass& target) {
  StepPrediction p;
  p.source = &source;
  p.target = &target;
  p.span_seconds = toSec(a.timeline.span_ns);
  p.busy_seconds = toSec(a.timeline.busy_ns);
  const auto* gpu = a.collection.gpus.empty() ? nullptr : &a.collection.gpus.front().info;
  const double source_sms = gpu && gpu->sm_count > 0 ? gpu->sm_count : source.sm_count;
  double measured = 0, predicted = 0;
  for (const Work& w : jobWork(a)) {
    if (rateOn(target, w, source) <= 0 && rateOn(source, w, source) > 0 && p.supported) {
      p.supported = false;
      p.unsupported = missingPath(w);
    }
    double t = predictedSeconds(w, source, target, source_sms);
    addTerm(p.terms, termName(w), w.seconds, t);
    measured += w.seconds;
    predicted += t;
  }
  std::sort(p.terms.begin(), p.terms.end(),
            [](const auto& x, const auto& y) { return x.seconds > y.seconds; });
  p.busy_scale = measured > 0 ? predicted / measured : 1.0;
  double busy_share = p.span_seconds > 0 ? std::min(1.0, p.busy_seconds / p.span_seconds) : 0.0;
  p.step_seconds = p.span_seconds;
  if (a.steps.steadyCount() > 0 && a.steps.steadyStats().p50_ns > 0) {
    p.step_seconds = toSec(a.steps.steadyStats().p50_ns);
    p.step_basis = "steady_step_p50";
    busy_share = std::min(1.0, a.steps.busyRatio().value_or(busy_share));
  }
  // Idle time (host work, gaps) stays; the busy share of the step scales.
  p.predicted_step_seconds = p.step_seconds * (1.0 - busy_share + busy_share * p.busy_scale);
  return p;
}

} // namespace gpuwise::advisor
