// Sample: pageable host-to-device copies.
//
// Planted inefficiency: every step copies its input batch to the GPU from malloc'd (pageable)
// memory. The driver stages pageable memory through a bounce buffer, so even cudaMemcpyAsync
// blocks the host and runs at a fraction of pinned bandwidth while the GPU waits.
// The fix the profiler should recommend: cudaMallocHost / cudaHostRegister (pin_memory=True).
#include <cstdlib>

#include "samples/common/training_loop.h"

template <typename T>
__global__ void dense_forward_kernel(const T* __restrict__ x, const T* __restrict__ w,
                                     T* __restrict__ y, int n, int iters) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T acc = 0, v = x[i], scale = w[i];
  for (int k = 0; k < iters; ++k)
    acc = fma(acc, scale, v);
  y[i] = acc;
}

template <typename T>
__global__ void sgd_update_kernel(T* __restrict__ w, const T* __restrict__ grad, int n, T lr) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] -= lr * grad[i];
}

int main(int argc, char** argv) {
  gwsample::Loop loop("pageable_copies", argc, argv, /*default_steps=*/600);
  constexpr int kN = 1 << 20;  // 4 MB batch of floats
  constexpr int kIters = 4096; // ~8.6 GFLOP per forward
  const size_t bytes = kN * sizeof(float);

  float* host_batch = static_cast<float*>(std::malloc(bytes)); // pageable: the planted problem
  gwsample::fillPattern(host_batch, kN, 1);
  float *x = nullptr, *w = nullptr, *y = nullptr;
  GW_CHECK(cudaMalloc(&x, bytes));
  GW_CHECK(cudaMalloc(&w, bytes));
  GW_CHECK(cudaMalloc(&y, bytes));
  GW_CHECK(cudaMemset(w, 0, bytes));
  cudaStream_t stream;
  GW_CHECK(cudaStreamCreate(&stream));

  const dim3 block(256), grid((kN + 255) / 256);
  loop.simulateKernelTime(dense_forward_kernel<float>, grid, block, 0, 300e-6, 32);
  loop.simulateKernelTime(sgd_update_kernel<float>, grid, block, 0, 12e-6, 16);

  for (int step = 0; step < loop.steps(); ++step) {
    loop.copy(x, host_batch, bytes, cudaMemcpyHostToDevice, stream, /*async=*/true,
              /*pinned=*/false);
    loop.launch(dense_forward_kernel<float>, grid, block, 0, stream, x, w, y, kN, kIters);
    loop.launch(sgd_update_kernel<float>, grid, block, 0, stream, w, y, kN, 1e-3f);
    loop.streamSync(stream);
  }
  const int rc = loop.finish();
  GW_CHECK(cudaStreamDestroy(stream));
  GW_CHECK(cudaFree(x));
  GW_CHECK(cudaFree(w));
  GW_CHECK(cudaFree(y));
  std::free(host_batch);
  return rc;
}
