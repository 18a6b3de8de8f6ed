// The samples' tensor-core GEMM: C[M x N] (fp32) = A[M x K] * B[K x N] (T = __nv_bfloat16 or
// __half, row-major) with WMMA 16x16x16 fragments. 128 threads per 64 x 64 tile; each warp computes
// a 32 x 32 patch as 2 x 2 fragments. M, N multiples of 64 and K of 16. Its demangled name carries
// the element type (wmma_gemm_kernel<__nv_bfloat16>), which is how a profiler tells its precision.
#pragma once

#include <mma.h>

template <typename T>
__global__ void __launch_bounds__(128)
    wmma_gemm_kernel(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C, int M,
                     int N, int K) {
  using namespace nvcuda;
  const int warp = threadIdx.x / 32;
  const int tile_m = blockIdx.y * 64 + (warp / 2) * 32;
  const int tile_n = blockIdx.x * 64 + (warp % 2) * 32;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::fill_fragment(acc[i][j], 0.0f);
  for (int k = 0; k < K; k += 16) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[2];
    for (int i = 0; i < 2; ++i)
      wmma::load_matrix_sync(a[i], A + size_t(tile_m + i * 16) * K + k, K);
    for (int j = 0; j < 2; ++j)
      wmma::load_matrix_sync(b[j], B + size_t(k) * N + tile_n + j * 16, N);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(C + size_t(tile_m + i * 16) * N + tile_n + j * 16, acc[i][j], N,
                              wmma::mem_row_major);
}
