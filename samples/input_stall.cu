// Sample: input-bound training step.
//
// Planted inefficiency: the host prepares each batch (decoding and augmenting: real CPU work) on
// the training thread while the GPU sits idle, then copies it (pinned, async) and computes. Nothing
// overlaps the preparation with the GPU's work. The fix: prefetch in background workers
// (DataLoader num_workers / prefetch_factor), double-buffer the input.
#include <cmath>

#include "samples/common/training_loop.h"

template <typename T>
__global__ void conv_block_kernel(const T* __restrict__ x, T* __restrict__ y, int n, int iters) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T acc = 0, v = x[i];
  for (int k = 0; k < iters; ++k)
    acc = fma(acc, T(0.999), v);
  y[i] = acc;
}

template <typename T>
__global__ void loss_kernel(const T* __restrict__ y, T* __restrict__ loss, int n) {
  __shared__ T partial[256];
  T sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    sum += y[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(loss, partial[0]);
}

// "Decode and augment" one batch on the CPU: a few transcendental operations per value.
static void prepareBatch(float* batch, int count, int step) {
  for (int i = 0; i < count; ++i) {
    const float raw = static_cast<float>((i * 2654435761u + step) & 0xffff) / 65536.0f;
    const float jitter = std::sin(raw * 6.2831853f + step) * 0.1f;
    batch[i] = std::sqrt(std::exp(-raw) + jitter * jitter) * std::cos(raw + jitter);
  }
}

int main(int argc, char** argv) {
  gwsample::Loop loop("input_stall", argc, argv, /*default_steps=*/120);
  constexpr int kBatch = 1 << 18; // 1 MB of floats per batch
  constexpr int kN = 1 << 20;     // activations
  constexpr int kIters = 12000;   // ~25 GFLOP per step on the GPU
  float* host_batch = nullptr;
  GW_CHECK(cudaMallocHost(&host_batch, kBatch * sizeof(float)));
  float *x = nullptr, *y = nullptr, *loss = nullptr;
  GW_CHECK(cudaMalloc(&x, kN * sizeof(float)));
  GW_CHECK(cudaMalloc(&y, kN * sizeof(float)));
  GW_CHECK(cudaMalloc(&loss, sizeof(float)));
  GW_CHECK(cudaMemset(x, 0, kN * sizeof(float)));
  cudaStream_t stream;
  GW_CHECK(cudaStreamCreate(&stream));

  const dim3 block(256), grid(kN / 256), loss_grid(264);
  loop.simulateKernelTime(conv_block_kernel<float>, grid, block, 0, 1.4e-3, 32);
  loop.simulateKernelTime(loss_kernel<float>, loss_grid, block, 0, 20e-6, 32);

  for (int step = 0; step < loop.steps(); ++step) {
    prepareBatch(host_batch, kBatch, step); // the GPU idles meanwhile: the planted stall
    loop.copy(x, host_batch, kBatch * sizeof(float), cudaMemcpyHostToDevice, stream, true, true);
    loop.launch(conv_block_kernel<float>, grid, block, 0, stream, x, y, kN, kIters);
    loop.launch(conv_block_kernel<float>, grid, block, 0, stream, y, x, kN, kIters);
    loop.launch(loss_kernel<float>, loss_grid, block, 0, stream, x, loss, kN);
    loop.streamSync(stream);
  }
  const int rc = loop.finish();
  GW_CHECK(cudaStreamDestroy(stream));
  GW_CHECK(cudaFree(x));
  GW_CHECK(cudaFree(y));
  GW_CHECK(cudaFree(loss));
  GW_CHECK(cudaFreeHost(host_batch));
  return rc;
}
