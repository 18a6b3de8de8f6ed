// The simulated cuBLAS's GEMM kernels: which kernel a matmul with given types runs, named the way
// real cuBLAS 13 kernels on Hopper are named, and its launch through the simulated runtime's
// cudaLaunchKernel (an ordinary call, so an LD_PRELOADed shim sees the launch like any other).
//
// Selection, deterministic: the A/B data type and the compute type (with the handle's math mode)
// pick the precision; TF32 or 16-bit tensor-core kernels need m, n, k multiples of 4 (TF32) or 8
// (FP16/BF16), otherwise a CUDA-core kernel runs instead: for FP32 data asked to run as TF32 that
// is a plain FP32 SGEMM, the disagreement the advisor's precision probe reports.
//
// Threads: any. Exported from libcublasLt.so.13 (stand-in) for libcublas.so.13 to share.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

extern "C" {
// Launches the simulated GEMM for the types and shape on `stream`; returns the kernel name it ran
// (a static string) or nullptr when the launch failed.
__attribute__((visibility("default"))) const char*
gwsimLaunchGemm(int a_type, int compute_type, int math_mode, int64_t m, int64_t n, int64_t k,
                int64_t batch, cudaStream_t stream);
}
