// cuBLAS / cuBLASLt precision probes: cublasGemmEx, cublasGemmStridedBatchedEx and cublasLtMatmul
// record the call's data types (A, B, C), compute type, scale type, the handle's math mode and the
// shape, as the ground truth for the precision their kernels run in (the advisor compares it with
// what the kernel names say). cublasSetMathMode is hooked only to remember each handle's mode.
//
// Coverage. LD_PRELOAD: the hooks carry the libraries' version nodes (libcublas.so.13,
// libcublasLt.so.13, gpuwise.map), so references from PyTorch or any program linked against cuBLAS
// bind here and reach the real function through dlsym(RTLD_NEXT). CUDA_INJECTION64_PATH alone: the
// shim is loaded by the driver after the program's symbols are bound, so nothing here runs; the
// report then has no BLAS calls and precision rests on kernel names only. The legacy-typed entry
// points (cublasSgemm, cublasHgemm ...) and the _64 variants are not hooked.
//
// Hot path: the same Recorder as the launch hooks, one 64-byte event, no allocation or lock. The
// reentrancy guard is released around the real call, so the kernels cuBLAS launches inside it are
// recorded by the launch hooks as usual; a thread-local flag keeps a cuBLASLt call made inside a
// hooked cuBLAS call from being counted twice. cublasLtMatmul reads its types with the library's
// own attribute getters after the call (a few plain reads of the descriptors).
#include "interposer/math_mode_table.h"
#include "interposer/real_symbol.h"
#include "interposer/recorder.h"
#include "profiler/model/events.h"

#include <cublasLt.h>
#include <cublas_api.h>

using namespace gpuwise::interposer;
namespace model = gpuwise::model;

namespace {

// Each is the library's symbol version and its soname (the RealSymbol fallback finds an
// RTLD_LOCAL-loaded cuBLAS by it).
constexpr const char* kCublasVersion = "libcublas.so.13";
constexpr const char* kCublasLtVersion = "libcublasLt.so.13";

// cublas_api.h overloads these two in C++ (inline shims taking a cudaDataType compute type): the
// extern "C" entry points are spelled out.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
    cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*,
    void*, cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t);
constinit RealSymbol<GemmExFn> real_cublasGemmEx{"cublasGemmEx", kCublasVersion, kCublasVersion};
constinit RealSymbol<GemmStridedBatchedExFn> real_cublasGemmStridedBatchedEx{
    "cublasGemmStridedBatchedEx", kCublasVersion, kCublasVersion};
constinit RealSymbol<decltype(&::cublasSetMathMode)> real_cublasSetMathMode{
    "cublasSetMathMode", kCublasVersion, kCublasVersion};
constinit RealSymbol<decltype(&::cublasLtMatmul)> real_cublasLtMatmul{
    "cublasLtMatmul", kCublasLtVersion, kCublasLtVersion};
constinit RealSymbol<decltype(&::cublasLtMatmulDescGetAttribute)> real_descGet{
    "cublasLtMatmulDescGetAttribute", kCublasLtVersion, kCublasLtVersion};
constinit RealSymbol<decltype(&::cublasLtMatrixLayoutGetAttribute)> real_layoutGet{
    "cublasLtMatrixLayoutGetAttribute", kCublasLtVersion, kCublasLtVersion};

constinit MathModeTable g_math_modes;
// Inside a hooked cuBLAS call on this thread: a nested cuBLASLt matmul is part of it.
__thread uint8_t t_in_blas __attribute__((tls_model("initial-exec")));

// What a cuBLAS entry point answers when the real library is not there.
constexpr cublasStatus_t kNoLibrary = CUBLAS_STATUS_NOT_INITIALIZED;

inline uint8_t small(int64_t v) {
  return v < 0 || v >= 0xff ? uint8_t{0xff} : uint8_t(v);
}
inline uint32_t sat32(int64_t v) {
  return v < 0 ? 0 : v > 0xffffffffll ? 0xffffffffu : uint32_t(v);
}

struct BlasFacts {
  uint64_t stream = 0;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int32_t a = -1, b = -1, c = -1, scale = -1, compute = -1, math = -1;
};

// Runs `call` with the reentrancy guard released (its kernels are recorded), then records one
// Blas event with what `facts` fills in after the call.
template <class Call, class Facts>
[[gnu::noinline]] cublasStatus_t recordBlas(model::BlasApi api, ApiId id, Call&& call,
                                            Facts&& facts) {
  Recorder rec;
  if (!rec.begin()) return call();
  t_state.in_hook = 0; // cuBLAS's own launches underneath are recorded by their hooks
  t_in_blas = 1;
  cublasStatus_t r = call();
  t_in_blas = 0;
  t_state.in_hook = 1; // end() clears it
  BlasFacts f;
  if (r == CUBLAS_STATUS_SUCCESS) facts(f);
  if (RawEvent* e = rec.end(EventKind::Blas, id, int32_t(r), uint8_t(api))) {
    e->u.blas.stream = f.stream;
    e->u.blas.m = sat32(f.m);
    e->u.blas.n = sat32(f.n);
    e->u.blas.k = sat32(f.k);
    e->u.blas.batch = sat32(f.batch);
    e->u.blas.a_type = small(f.a);
    e->u.blas.b_type = small(f.b);
    e->u.blas.c_type = small(f.c);
    e->u.blas.scale_type = small(f.scale);
    e->u.blas.compute_type = small(f.compute);
    e->u.blas.math_mode = small(f.math);
    rec.publish();
  }
  return r;
}

template <class T>
T descAttr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, T fallback) {
  auto get = real_descGet.get();
  T v{};
  size_t written = 0;
  if (!get || !d || get(d, a, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS ||
      written != sizeof v)
    return fallback;
  return v;
}

template <class T>
T layoutAttr(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, T fallback) {
  auto get = real_layoutGet.get();
  T v{};
  size_t written = 0;
  if (!get || !l || get(l, a, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS ||
      written != sizeof v)
    return fallback;
  return v;
}

} // namespace

GPUWISE_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  auto fn = real_cublasSetMathMode.get();
  if (!fn) return kNoLibrary;
  cublasStatus_t r = fn(handle, mode);
  if (r == CUBLAS_STATUS_SUCCESS) g_math_modes.set(handle, int32_t(mode));
  return r;
}

GPUWISE_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                           cublasOperation_t transb, int m, int n, int k,
                                           const void* alpha, const void* A, cudaDataType Atype,
                                           int lda, const void* B, cudaDataType Btype, int ldb,
                                           const void* beta, void* C, cudaDataType Ctype, int ldc,
                                           cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  auto fn = real_cublasGemmEx.get();
  if (!fn) return kNoLibrary;
  auto call = [=] {
    return fn(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype,
              ldc, computeType, algo);
  };
  if (Recorder::off() || t_in_blas) return call();
  return recordBlas(model::BlasApi::GemmEx, ApiId::cublasGemmEx, call, [=](BlasFacts& f) {
    f.m = m, f.n = n, f.k = k;
    f.a = Atype, f.b = Btype, f.c = Ctype, f.compute = computeType;
    f.math = g_math_modes.get(handle);
  });
}

GPUWISE_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
    const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  auto fn = real_cublasGemmStridedBatchedEx.get();
  if (!fn) return kNoLibrary;
  auto call = [=] {
    return fn(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
              strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
  };
  if (Recorder::off() || t_in_blas) return call();
  return recordBlas(model::BlasApi::GemmStridedBatchedEx, ApiId::cublasGemmStridedBatchedEx, call,
                    [=](BlasFacts& f) {
                      f.m = m, f.n = n, f.k = k, f.batch = batchCount;
                      f.a = Atype, f.b = Btype, f.c = Ctype, f.compute = computeType;
                      f.math = g_math_modes.get(handle);
                    });
}

GPUWISE_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
    const void* A, cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
    const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream) {
  auto fn = real_cublasLtMatmul.get();
  if (!fn) return kNoLibrary;
  auto call = [=] {
    return fn(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
              workspace, workspaceSizeInBytes, stream);
  };
  if (Recorder::off() || t_in_blas) return call();
  return recordBlas(model::BlasApi::LtMatmul, ApiId::cublasLtMatmul, call, [=](BlasFacts& f) {
    f.stream = reinterpret_cast<uint64_t>(stream);
    f.compute = descAttr<int32_t>(computeDesc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, -1);
    f.scale = descAttr<int32_t>(computeDesc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, -1);
    const int32_t ta = descAttr<int32_t>(computeDesc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N);
    f.a = int32_t(layoutAttr<uint32_t>(Adesc, CUBLASLT_MATRIX_LAYOUT_TYPE, ~0u));
    f.b = int32_t(layoutAttr<uint32_t>(Bdesc, CUBLASLT_MATRIX_LAYOUT_TYPE, ~0u));
    f.c = int32_t(layoutAttr<uint32_t>(Cdesc ? Cdesc : Ddesc, CUBLASLT_MATRIX_LAYOUT_TYPE, ~0u));
    // D is m x n; op(A) is m x k.
    f.m = int64_t(layoutAttr<uint64_t>(Ddesc, CUBLASLT_MATRIX_LAYOUT_ROWS, 0));
    f.n = int64_t(layoutAttr<uint64_t>(Ddesc, CUBLASLT_MATRIX_LAYOUT_COLS, 0));
    f.k = int64_t(layoutAttr<uint64_t>(
        Adesc, ta == CUBLAS_OP_N ? CUBLASLT_MATRIX_LAYOUT_COLS : CUBLASLT_MATRIX_LAYOUT_ROWS, 0));
    f.batch = layoutAttr<int32_t>(Ddesc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 1);
  });
}
