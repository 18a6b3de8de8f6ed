// Sample: launch-bound training step.
//
// Planted inefficiency: every step launches a thousand tiny elementwise kernels (grids of 16
// blocks, far fewer than the GPU's SMs), each shorter than the CPU time it takes to launch it, so
// the GPU idles between kernels. The fix: fuse the kernels, or capture the step in a CUDA graph.
#include "samples/common/training_loop.h"

template <typename T>
__global__ void bias_add_kernel(T* __restrict__ x, const T* __restrict__ bias, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += bias[i];
}

template <typename T> __global__ void relu_kernel(T* __restrict__ x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] < T(0)) x[i] = T(0);
}

template <typename T> __global__ void scale_kernel(T* __restrict__ x, T factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

int main(int argc, char** argv) {
  gwsample::Loop loop("launch_bound", argc, argv, /*default_steps=*/200);
  constexpr int kN = 4096;            // a small activation: 16 blocks of 256 threads
  constexpr int kLayersPerStep = 333; // 3 kernels per layer: 999 launches per step
  float *x = nullptr, *bias = nullptr;
  GW_CHECK(cudaMalloc(&x, kN * sizeof(float)));
  GW_CHECK(cudaMalloc(&bias, kN * sizeof(float)));
  GW_CHECK(cudaMemset(x, 0, kN * sizeof(float)));
  GW_CHECK(cudaMemset(bias, 0, kN * sizeof(float)));

  const dim3 block(256), grid(kN / 256);
  loop.simulateKernelTime(bias_add_kernel<float>, grid, block, 0, 1.8e-6, 16);
  loop.simulateKernelTime(relu_kernel<float>, grid, block, 0, 1.6e-6, 16);
  loop.simulateKernelTime(scale_kernel<float>, grid, block, 0, 1.6e-6, 16);

  for (int step = 0; step < loop.steps(); ++step) {
    for (int layer = 0; layer < kLayersPerStep; ++layer) {
      loop.launch(bias_add_kernel<float>, grid, block, 0, nullptr, x, bias, kN);
      loop.launch(relu_kernel<float>, grid, block, 0, nullptr, x, kN);
      loop.launch(scale_kernel<float>, grid, block, 0, nullptr, x, 0.5f, kN);
    }
    loop.streamSync(nullptr);
  }
  const int rc = loop.finish();
  GW_CHECK(cudaFree(x));
  GW_CHECK(cudaFree(bias));
  return rc;
}
