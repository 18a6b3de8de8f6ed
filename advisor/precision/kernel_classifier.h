// Which precision a kernel computes in and whether it runs on tensor cores, from its name alone.
//
// The advisor uses this to split kernel time by precision (`summary.precision_time_ratio`,
// `tensor_core_time_ratio`) and to recommend BF16 autocast or TF32. Names are all we have for
// traces recorded elsewhere, and they are informative: cuBLAS, cuDNN, CUTLASS and cuBLASLt encode
// the data type and the MMA instruction shape in their kernel names, and PyTorch kernels carry
// their element type as template arguments. The patterns live in one ordered table
// (classification_rules.cpp); the first entry that matches decides, and its id is returned so a
// report can say why.
//
// Pure function: any thread, never blocks. It allocates (lower-casing, demangling), so it is not
// for the application's launch path; callers classify each distinct name once (per NameId) and
// cache the result.
#pragma once

#include "advisor/precision/precision.h"

#include <string_view>

namespace gpuwise::profiler {

struct KernelClass {
  Precision precision = Precision::Other;
  // Runs its math on tensor cores (NVIDIA HMMA/IMMA/DMMA/GMMA/UMMA; AMD MFMA "matrix cores").
  bool tensor_core = false;
  // Id of the table entry that matched ("cublas", "xmma", "pytorch.aten" ...), or "unknown" when
  // nothing in the name was recognised. Points at static storage: valid for the life of the
  // program.
  std::string_view rule = "unknown";
  // False when no entry recognised the name or the entry could not tell its precision: the report
  // lists these so the table can grow. A definite "other" (NCCL, Triton, integer index kernels) is
  // known.
  bool known = false;
};

// Classifies a mangled or demangled kernel name. An empty or unrecognised name gives
// {Other, false, "unknown", false}.
KernelClass classifyKernel(std::string_view name);

// The tensor-core markers alone (wmma, hmma, mma, tensorop, xmma, gmma/wgmma, tcgen05, the
// h884/s1688/i8816... instruction shapes, nvjet): true when the name says the kernel issues MMA
// instructions. classifyKernel() combines this with the precision (an FP32 kernel cannot use tensor
// cores) and with per-family knowledge; prefer it.
bool usesTensorCores(std::string_view name);

} // namespace gpuwise::profiler
