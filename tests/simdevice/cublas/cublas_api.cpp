// The simulated libcublas.so.13: handles with a stream and a math mode, and the matmul entry
// points the precision probe hooks (cublasGemmEx, cublasGemmStridedBatchedEx, cublasSetMathMode),
// each launching the simulated GEMM (gemm_kernels.h, in libcublasLt.so.13 as real cuBLAS keeps its
// kernels beside cuBLASLt). Signatures are the toolkit's cublas_api.h. Only what tests use.
#include "tests/simdevice/cublas/gemm_kernels.h"

#include <new>

#include <cublas_api.h>

#define GWSIM_EXPORT extern "C" __attribute__((visibility("default")))

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

GWSIM_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new (std::nothrow) cublasContext;
  return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

GWSIM_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

GWSIM_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

GWSIM_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

GWSIM_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  if (!handle || !mode) return CUBLAS_STATUS_NOT_INITIALIZED;
  *mode = handle->math;
  return CUBLAS_STATUS_SUCCESS;
}

extern "C" __attribute__((visibility("default"))) cublasStatus_t
cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
             int n, int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
             const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
             cudaDataType Ctype, int ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  (void)transa, (void)transb, (void)alpha, (void)A, (void)lda, (void)B, (void)Btype, (void)ldb;
  (void)beta, (void)C, (void)Ctype, (void)ldc, (void)algo;
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0) return CUBLAS_STATUS_INVALID_VALUE;
  return gwsimLaunchGemm(int(Atype), int(computeType), int(handle->math), m, n, k, 1,
                         handle->stream)
             ? CUBLAS_STATUS_SUCCESS
             : CUBLAS_STATUS_EXECUTION_FAILED;
}

extern "C" __attribute__((visibility("default"))) cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
    const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  (void)transa, (void)transb, (void)alpha, (void)A, (void)lda, (void)strideA, (void)B, (void)Btype;
  (void)ldb, (void)strideB, (void)beta, (void)C, (void)Ctype, (void)ldc, (void)strideC, (void)algo;
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || batchCount < 0) return CUBLAS_STATUS_INVALID_VALUE;
  return gwsimLaunchGemm(int(Atype), int(computeType), int(handle->math), m, n, k, batchCount,
                         handle->stream)
             ? CUBLAS_STATUS_SUCCESS
             : CUBLAS_STATUS_EXECUTION_FAILED;
}
