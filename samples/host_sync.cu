// Sample: host synchronisation inside the step.
//
// Planted inefficiency: the loop calls cudaDeviceSynchronize after every two kernels and then
// spends 40 us on the value it waited for (the C++ equivalent of `loss.item()` / `print(loss)` in
// the middle of a step), so the host stops feeding the GPU: the GPU drains at every sync and idles
// until the host has woken up, done its work and launched again, about half of the GPU span. The
// fix: remove the syncs, or sync once per many steps, so that the host work overlaps queued
// kernels.
//
// Each step starts by copying its (small, pinned) batch to the device, as every training step
// loads one: without it the 16 layers and 8 syncs of a step are 8 repeats of one identical
// two-layer block, and nothing in the trace would say where a step begins.
#include "samples/common/training_loop.h"

template <typename T>
__global__ void layer_kernel(const T* __restrict__ x, T* __restrict__ y, int n, int iters) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T acc = 0, v = x[i];
  for (int k = 0; k < iters; ++k)
    acc = fma(acc, T(0.5), v);
  y[i] = acc;
}

int main(int argc, char** argv) {
  gwsample::Loop loop("host_sync", argc, argv, /*default_steps=*/1500);
  constexpr int kN = 1 << 18;
  constexpr int kIters = 1024;
  constexpr int kLayers = 16;
  constexpr int kSyncEvery = 2;
  constexpr double kHostWorkAfterSync = 40e-6;
  constexpr size_t kBatchBytes = 4096;
  float *a = nullptr, *b = nullptr, *batch = nullptr;
  void* host_batch = nullptr;
  GW_CHECK(cudaMallocHost(&host_batch, kBatchBytes));
  std::memset(host_batch, 0, kBatchBytes);
  GW_CHECK(cudaMalloc(&batch, kBatchBytes));
  GW_CHECK(cudaMalloc(&a, kN * sizeof(float)));
  GW_CHECK(cudaMalloc(&b, kN * sizeof(float)));
  GW_CHECK(cudaMemset(a, 0, kN * sizeof(float)));

  const dim3 block(256), grid(kN / 256);
  loop.simulateKernelTime(layer_kernel<float>, grid, block, 0, 20e-6, 32);

  for (int step = 0; step < loop.steps(); ++step) {
    loop.copy(batch, host_batch, kBatchBytes, cudaMemcpyHostToDevice, nullptr, /*async=*/true,
              /*host_pinned=*/true);
    for (int layer = 0; layer < kLayers; ++layer) {
      const bool even = layer % 2 == 0;
      loop.launch(layer_kernel<float>, grid, block, 0, nullptr, even ? a : b, even ? b : a, kN,
                  kIters);
      if ((layer + 1) % kSyncEvery == 0) {
        loop.deviceSync();                 // the planted sync
        loop.hostWork(kHostWorkAfterSync); // what the host does with the value it waited for
      }
    }
  }
  const int rc = loop.finish();
  GW_CHECK(cudaFree(a));
  GW_CHECK(cudaFree(b));
  GW_CHECK(cudaFree(batch));
  GW_CHECK(cudaFreeHost(host_batch));
  return rc;
}
