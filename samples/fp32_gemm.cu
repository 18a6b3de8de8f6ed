// Sample: an FP32 SIMT GEMM dominates the step.
//
// Planted inefficiency: the model's matrix multiplies run as a classic shared-memory tiled FP32
// GEMM on the CUDA cores, never on the tensor cores. The kernel's name says what a classifier
// needs (`sgemm_simt_kernel<float, 128, 64>`). The fix: BF16 autocast (or TF32).
#include "samples/common/training_loop.h"

// C[M x N] = alpha * A[M x K] * B[K x N] + beta * C, row-major; M % BM == N % BN == K % 8 == 0.
// 256 threads; each computes an 8 x 4 patch of the BM x BN block tile.
template <typename T, int BM, int BN>
__global__ void __launch_bounds__(256)
    sgemm_simt_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M,
                      int N, int K, T alpha, T beta) {
  constexpr int BK = 8, TM = 8, TN = 4;
  static_assert(BM * BN == 256 * TM * TN, "tile does not match 256 threads");
  static_assert(BN / TN == 16 && BM / TM == 16, "16 x 16 thread grid");
  __shared__ T As[BK][BM];
  __shared__ T Bs[BK][BN];
  const int t = threadIdx.x, tx = t % 16, ty = t / 16;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  T acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int l = 0; l < BM * BK / 256; ++l) { // A tile, stored transposed
      const int e = t + l * 256, r = e / BK, c = e % BK;
      As[c][r] = A[(row0 + r) * K + k0 + c];
    }
    for (int l = 0; l < BK * BN / 256; ++l) {
      const int e = t + l * 256, r = e / BN, c = e % BN;
      Bs[r][c] = B[(k0 + r) * N + col0 + c];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      T a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i)
        a[i] = As[kk][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j)
        b[j] = Bs[kk][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < TM; ++i) {
    for (int j = 0; j < TN; ++j) {
      T& out = C[(row0 + ty * TM + i) * N + col0 + tx * TN + j];
      out = alpha * acc[i][j] + beta * out;
    }
  }
}

// Deterministic initialisation on the device (cheaper than copying from the host).
template <typename T> __global__ void init_kernel(T* __restrict__ x, int n, T scale) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = scale * T((i * 2654435761u) >> 24) / T(256);
}

template <typename T> __global__ void relu_kernel(T* __restrict__ x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] < T(0)) x[i] = T(0);
}

int main(int argc, char** argv) {
  gwsample::Loop loop("fp32_gemm", argc, argv, /*default_steps=*/300);
  constexpr int kDim = 2048; // 2048^3 GEMMs: 17.2 GFLOP each
  const size_t matrix_bytes = size_t{kDim} * kDim * sizeof(float);
  constexpr size_t kBatchBytes = 256 * 1024;

  float *x = nullptr, *w = nullptr, *y = nullptr, *dy = nullptr, *dw = nullptr, *dx = nullptr;
  for (float** m : {&x, &w, &y, &dy, &dw, &dx})
    GW_CHECK(cudaMalloc(m, matrix_bytes));
  float* host_batch = nullptr;
  GW_CHECK(cudaMallocHost(&host_batch, kBatchBytes));
  gwsample::fillPattern(host_batch, kBatchBytes / sizeof(float), 2);
  cudaStream_t stream;
  GW_CHECK(cudaStreamCreate(&stream));

  auto* gemm = sgemm_simt_kernel<float, 128, 64>;
  const dim3 gemm_block(256), gemm_grid(kDim / 64, kDim / 128);
  const int n = kDim * kDim;
  const dim3 block(256), grid((n + 255) / 256);
  loop.simulateKernelTime(gemm, gemm_grid, gemm_block, 0, 1.7e-3, 96);
  loop.simulateKernelTime(relu_kernel<float>, grid, block, 0, 15e-6, 16);
  loop.simulateKernelTime(init_kernel<float>, grid, block, 0, 12e-6, 16);
  for (float* m : {x, w, dy, dw})
    loop.launch(init_kernel<float>, grid, block, 0, stream, m, n, 0.01f);

  for (int step = 0; step < loop.steps(); ++step) {
    loop.copy(x, host_batch, kBatchBytes, cudaMemcpyHostToDevice, stream, true, /*pinned=*/true);
    loop.launch(gemm, gemm_grid, gemm_block, 0, stream, x, w, y, kDim, kDim, kDim, 1.0f, 0.0f);
    loop.launch(relu_kernel<float>, grid, block, 0, stream, y, n);
    loop.launch(gemm, gemm_grid, gemm_block, 0, stream, dy, w, dx, kDim, kDim, kDim, 1.0f, 0.0f);
    loop.launch(gemm, gemm_grid, gemm_block, 0, stream, x, dy, dw, kDim, kDim, kDim, -1e-3f, 1.0f);
    if ((step + 1) % 10 == 0) loop.streamSync(stream);
  }
  const int rc = loop.finish();
  GW_CHECK(cudaStreamDestroy(stream));
  for (float* m : {x, w, y, dy, dw, dx})
    GW_CHECK(cudaFree(m));
  GW_CHECK(cudaFreeHost(host_batch));
  return rc;
}
