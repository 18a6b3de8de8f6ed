// The step-time model across GPU classes: what the job's step would take on another class, from
// what the trace shows about each kernel and copy on the class it ran on.
//
// Each kernel name's GPU time (KernelResult::by_name) is put in one term by what bounds it:
//   tensor.<precision>  tensor-core kernels (GEMMs, convolutions, attention: the precision
//                       classifier's tensor_core flag) scale with the target's tensor throughput
//                       at their precision (TF32 falls back to FP32 SIMT where the target has no
//                       TF32, as PyTorch does; BF16, FP8, FP4 and INT8 have no fallback: the class
//                       cannot run the job as it is, unsupported);
//   simt.<precision>    GEMMs and convolutions on the CUDA cores scale with the target's SIMT
//                       throughput (FP64: the better of its vector and tensor FP64, as cuBLAS
//                       picks). FP32 convolutions from a GPU without TF32 run TF32 on one with it:
//                       PyTorch's torch.backends.cudnn.allow_tf32 defaults to True
//                       (https://pytorch.org/docs/stable/notes/cuda.html, "TensorFloat-32 (TF32)
//                       on Ampere (and later) devices": "cuDNN ... allow_tf32 ... True" by
//                       default);
//   memory              every other kernel (elementwise, norms, reductions, softmax, copies done
//                       by kernels, unknown names) scales with HBM bandwidth;
//   communication       NCCL/RCCL kernels scale with the GPU-to-GPU link (NVLink, else PCIe);
//   copies.host_link    host<->device copies scale with the PCIe link;
//   copies.device       device-to-device copies with HBM bandwidth; peer copies with the link.
// SM fill carries over by SM count: a kernel whose grid filled a share f of the source's N_s SMs
// in w waves (its time-weighted means) fills min(1, w N_s / N_t) of the target's N_t, and runs at
// the rate times that fill; a grid that fits on fewer SMs than either GPU has runs at the per-SM
// rate ratio. Ratios are of peak (datasheet) throughputs: a kernel keeps its share of peak.
//
// The GPU's busy time scales by (sum of predicted terms) / (sum of measured terms), so kernels
// that overlapped keep overlapping; idle time (host time, gaps) is unchanged. The step: the
// steady steps' median when the trace has steps (its busy share of the GPU span scaled), else the
// GPU span itself (step_basis "gpu_span"). Works from the JobAnalysis alone: offline and on a
// live run's merged windows the same.
//
// Pure; any thread.
#pragma once

#include "advisor/analysis/job_analysis.h"
#include "advisor/gpu/gpu_classes.h"

#include <string>
#include <vector>

namespace gpuwise::advisor {

struct StepTimeTerm {
  std::string name;             // "tensor.bf16", "simt.fp32", "memory", "communication", ...
  double seconds = 0;           // measured on the source class, summed over the job
  double predicted_seconds = 0; // on the target class
};

struct StepPrediction {
  const GpuClass* source = nullptr;
  const GpuClass* target = nullptr;
  bool supported = true;   // false: the target cannot run these kernels as they are
  std::string unsupported; // why ("no BF16 tensor cores"), empty when supported
  double span_seconds = 0; // GPU span (summed over devices)
  double busy_seconds = 0; // GPU busy (union of kernels, copies, memsets)
  double busy_scale = 1;   // predicted / measured sum of the terms
  double step_seconds = 0; // the step on the source (see step_basis)
  double predicted_step_seconds = 0;
  const char* step_basis = "gpu_span"; // "steady_step_p50" or "gpu_span"
  std::vector<StepTimeTerm> terms;     // in a fixed order; terms with no time left out

  double slowdown() const { return step_seconds > 0 ? predicted_step_seconds / step_seconds : 1; }
};

// The prediction of the job's step on `target`, the job having run on `source`. With no timed
// kernels or copies the prediction equals the measurement.
StepPrediction predictStepTime(const JobAnalysis& analysis, const GpuClass& source,
                               const GpuClass& target);

} // namespace gpuwise::advisor
