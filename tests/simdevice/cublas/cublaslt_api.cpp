// The simulated libcublasLt.so.13: handles, matmul descriptors and matrix layouts that keep the
// attributes the precision probe reads (compute/scale type, transposes; layout type, rows, cols,
// ld, batch count), and cublasLtMatmul launching the simulated GEMM (gemm_kernels.h). Signatures
// are the toolkit's cublasLt.h, so they cannot drift. Only what the tests and samples use.
#include "tests/simdevice/cublas/gemm_kernels.h"

#include <cstring>
#include <new>

#include <cublasLt.h>

#define GWSIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Desc {
  int32_t compute, scale, transa, transb;
};
struct Layout {
  uint32_t type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
};
static_assert(sizeof(Desc) <= sizeof(cublasLtMatmulDescOpaque_t));
static_assert(sizeof(Layout) <= sizeof(cublasLtMatrixLayoutOpaque_t));

Desc* desc(cublasLtMatmulDesc_t d) {
  return reinterpret_cast<Desc*>(d->data);
}
Layout* layout(cublasLtMatrixLayout_t l) {
  return reinterpret_cast<Layout*>(l->data);
}

template <class T> cublasStatus_t put(T* field, const void* buf, size_t size) {
  if (!buf || size != sizeof(T)) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(field, buf, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}
template <class T> cublasStatus_t get(const T& field, void* buf, size_t size, size_t* written) {
  if (written) *written = sizeof(T);
  if (!buf && size == 0) return CUBLAS_STATUS_SUCCESS; // a size query
  if (!buf || size < sizeof(T)) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, &field, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}

struct LtContext {
  int unused = 0;
};

} // namespace

GWSIM_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = reinterpret_cast<cublasLtHandle_t>(new (std::nothrow) LtContext);
  return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

GWSIM_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  delete reinterpret_cast<LtContext*>(handle);
  return CUBLAS_STATUS_SUCCESS;
}

GWSIM_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d,
                                                     cublasComputeType_t compute,
                                                     cudaDataType_t scale) {
  if (!d) return CUBLAS_STATUS_INVALID_VALUE;
  *d = new (std::nothrow) cublasLtMatmulDescOpaque_t{};
  if (!*d) return CUBLAS_STATUS_ALLOC_FAILED;
  *desc(*d) = {int32_t(compute), int32_t(scale), CUBLAS_OP_N, CUBLAS_OP_N};
  return CUBLAS_STATUS_SUCCESS;
}

GWSIM_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
  delete d;
  return CUBLAS_STATUS_SUCCESS;
}

GWSIM_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                           cublasLtMatmulDescAttributes_t attr,
                                                           const void* buf, size_t size) {
  if (!d) return CUBLAS_STATUS_NOT_INITIALIZED;
  switch (attr) {
  case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return put(&desc(d)->compute, buf, size);
  case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return put(&desc(d)->scale, buf, size);
  case CUBLASLT_MATMUL_DESC_TRANSA: return put(&desc(d)->transa, buf, size);
  case CUBLASLT_MATMUL_DESC_TRANSB: return put(&desc(d)->transb, buf, size);
  default: return CUBLAS_STATUS_SUCCESS; // epilogues, pointers ...: accepted, ignored
  }
}

GWSIM_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                                           cublasLtMatmulDescAttributes_t attr,
                                                           void* buf, size_t size,
                                                           size_t* written) {
  if (!d) return CUBLAS_STATUS_NOT_INITIALIZED;
  switch (attr) {
  case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return get(desc(d)->compute, buf, size, written);
  case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return get(desc(d)->scale, buf, size, written);
  case CUBLASLT_MATMUL_DESC_TRANSA: return get(desc(d)->transa, buf, size, written);
  case CUBLASLT_MATMUL_DESC_TRANSB: return get(desc(d)->transb, buf, size, written);
  default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

GWSIM_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType type,
                                                       uint64_t rows, uint64_t cols, int64_t ld) {
  if (!l) return CUBLAS_STATUS_INVALID_VALUE;
  *l = new (std::nothrow) cublasLtMatrixLayoutOpaque_t{};
  if (!*l) return CUBLAS_STATUS_ALLOC_FAILED;
  *layout(*l) = {uint32_t(type), rows, cols, ld, 1};
  return CUBLAS_STATUS_SUCCESS;
}

GWSIM_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
  delete l;
  return CUBLAS_STATUS_SUCCESS;
}

GWSIM_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                             cublasLtMatrixLayoutAttribute_t attr,
                                                             const void* buf, size_t size) {
  if (!l) return CUBLAS_STATUS_NOT_INITIALIZED;
  switch (attr) {
  case CUBLASLT_MATRIX_LAYOUT_TYPE: return put(&layout(l)->type, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_ROWS: return put(&layout(l)->rows, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_COLS: return put(&layout(l)->cols, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_LD: return put(&layout(l)->ld, buf, size);
  case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return put(&layout(l)->batch, buf, size);
  default: return CUBLAS_STATUS_SUCCESS;
  }
}

GWSIM_EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                             cublasLtMatrixLayoutAttribute_t attr,
                                                             void* buf, size_t size,
                                                             size_t* written) {
  if (!l) return CUBLAS_STATUS_NOT_INITIALIZED;
  switch (attr) {
  case CUBLASLT_MATRIX_LAYOUT_TYPE: return get(layout(l)->type, buf, size, written);
  case CUBLASLT_MATRIX_LAYOUT_ROWS: return get(layout(l)->rows, buf, size, written);
  case CUBLASLT_MATRIX_LAYOUT_COLS: return get(layout(l)->cols, buf, size, written);
  case CUBLASLT_MATRIX_LAYOUT_LD: return get(layout(l)->ld, buf, size, written);
  case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return get(layout(l)->batch, buf, size, written);
  default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

GWSIM_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t d,
                                           const void* alpha, const void* A,
                                           cublasLtMatrixLayout_t Adesc, const void* B,
                                           cublasLtMatrixLayout_t Bdesc, const void* beta,
                                           const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                                           cublasLtMatrixLayout_t Ddesc,
                                           const cublasLtMatmulAlgo_t* algo, void* workspace,
                                           size_t workspace_bytes, cudaStream_t stream) {
  (void)alpha, (void)A, (void)B, (void)beta, (void)C, (void)Cdesc, (void)D, (void)algo;
  (void)workspace, (void)workspace_bytes;
  if (!handle || !d || !Adesc || !Bdesc || !Ddesc) return CUBLAS_STATUS_NOT_INITIALIZED;
  const Layout& a = *layout(Adesc);
  const Layout& out = *layout(Ddesc);
  int64_t k = int64_t(desc(d)->transa == CUBLAS_OP_N ? a.cols : a.rows);
  return gwsimLaunchGemm(int(a.type), desc(d)->compute, 0, int64_t(out.rows), int64_t(out.cols), k,
                         out.batch, stream)
             ? CUBLAS_STATUS_SUCCESS
             : CUBLAS_STATUS_EXECUTION_FAILED;
}
