// A program that calls the cuBLAS / cuBLASLt matmul entry points the shim's precision probe hooks,
// with types whose kernels agree with them and one case whose kernel does not (TF32 asked for
// through the math mode, shapes not multiples of 4: the simulated cuBLAS runs an FP32 SGEMM, as a
// real one may). Built against the toolkit's cublas_v2.h / cublasLt.h and linked with the simulated
// libcublas.so.13 / libcublasLt.so.13 (same SONAMEs and version nodes as the real ones).
//
//   e2e_blas_app [iterations]     prints "blas_app calls=<n>" at the end; exit 0 on success.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_OK(call)                                                                             \
  do {                                                                                             \
    if ((call) != 0) {                                                                             \
      std::fprintf(stderr, "blas_app: %s failed\n", #call);                                        \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 10;
  void* buf = nullptr;
  CHECK_OK(cudaMalloc(&buf, 64 << 20));
  cudaStream_t stream;
  CHECK_OK(cudaStreamCreate(&stream));
  cublasHandle_t h;
  CHECK_OK(cublasCreate(&h));
  CHECK_OK(cublasSetStream(h, stream));
  CHECK_OK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
  cublasLtHandle_t lt;
  CHECK_OK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t desc;
  CHECK_OK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t trans = CUBLAS_OP_T;
  CHECK_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans));
  cublasLtMatrixLayout_t la, lb, ld;
  CHECK_OK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, 768, 1024, 768)); // op(A) = 1024 x 768
  CHECK_OK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, 768, 512, 768));
  CHECK_OK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, 1024, 512, 1024));

  float alpha = 1.0f, beta = 0.0f;
  int calls = 0;
  for (int i = 0; i < iterations; ++i) {
    // FP32 data, TF32 math mode, aligned: a TF32 tensor-core kernel (agrees).
    CHECK_OK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1024, 1024, 1024, &alpha, buf, CUDA_R_32F,
                          1024, buf, CUDA_R_32F, 1024, &beta, buf, CUDA_R_32F, 1024,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    // The same, k = 1001: an FP32 SGEMM runs although TF32 was allowed (disagrees).
    CHECK_OK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1000, 1000, 1001, &alpha, buf, CUDA_R_32F,
                          1000, buf, CUDA_R_32F, 1001, &beta, buf, CUDA_R_32F, 1000,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    // FP16 in, FP32 out: an FP16 tensor-core kernel (agrees).
    CHECK_OK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 2048, 2048, 2048, &alpha, buf, CUDA_R_16F,
                          2048, buf, CUDA_R_16F, 2048, &beta, buf, CUDA_R_32F, 2048,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP));
    // Batched BF16 (attention-shaped): a BF16 kernel (agrees).
    CHECK_OK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 128, 128, 64, &alpha, buf,
                                        CUDA_R_16BF, 64, 8192, buf, CUDA_R_16BF, 64, 8192, &beta,
                                        buf, CUDA_R_16BF, 128, 16384, 16, CUBLAS_COMPUTE_32F,
                                        CUBLAS_GEMM_DEFAULT));
    // cuBLASLt, BF16 in, FP32 out (agrees).
    CHECK_OK(cublasLtMatmul(lt, desc, &alpha, buf, la, buf, lb, &beta, buf, ld, buf, ld, nullptr,
                            nullptr, 0, stream));
    calls += 5;
  }
  CHECK_OK(cudaStreamSynchronize(stream));
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  cublasDestroy(h);
  cudaFree(buf);
  std::printf("blas_app calls=%d\n", calls);
  return 0;
}
