// Sample: a small job on a big GPU.
//
// Planted inefficiency: the job reserves a few GB of a large GPU's memory and runs short bursts
// of work between long idle waits (like a light inference or evaluation service), so most of the
// GPU's time and memory go unused. The fix: a MIG slice or a shared (time-sliced) GPU.
#include <chrono>
#include <thread>

#include "samples/common/training_loop.h"

template <typename T>
__global__ void infer_kernel(const T* __restrict__ w, const T* __restrict__ x, T* __restrict__ y,
                             int n, int iters) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T acc = 0, v = x[i], s = w[i];
  for (int k = 0; k < iters; ++k)
    acc = fma(acc, s, v);
  y[i] = acc;
}

int main(int argc, char** argv) {
  gwsample::Loop loop("small_footprint", argc, argv, /*default_steps=*/80);
  constexpr size_t kModelBytes = size_t{3} << 30; // 3 GiB of "weights": 2 % of an H200
  constexpr int kN = 1 << 20;                     // the slice each burst touches
  constexpr int kIters = 2048;
  constexpr int kKernelsPerBurst = 4;
  // Waiting for the next request. Long beside the 0.5 ms burst and its sync: on a loaded host
  // the sync's wake-up comes milliseconds late, GPU idle the sync rule counts, and at 8 ms that
  // was enough to put reduce_host_syncs (which rightly outranks right-sizing) over its threshold.
  constexpr auto kIdle = std::chrono::milliseconds(20);

  char* model = nullptr;
  float *x = nullptr, *y = nullptr;
  GW_CHECK(cudaMalloc(&model, kModelBytes));
  GW_CHECK(cudaMalloc(&x, kN * sizeof(float)));
  GW_CHECK(cudaMalloc(&y, kN * sizeof(float)));
  GW_CHECK(cudaMemset(model, 0, kN * sizeof(float))); // only the slice in use is touched
  GW_CHECK(cudaMemset(x, 0, kN * sizeof(float)));
  const float* weights = reinterpret_cast<const float*>(model);
  cudaStream_t stream;
  GW_CHECK(cudaStreamCreate(&stream));

  const dim3 block(256), grid(kN / 256);
  loop.simulateKernelTime(infer_kernel<float>, grid, block, 0, 120e-6, 32);

  for (int step = 0; step < loop.steps(); ++step) {
    for (int k = 0; k < kKernelsPerBurst; ++k) {
      loop.launch(infer_kernel<float>, grid, block, 0, stream, weights, k % 2 ? y : x,
                  k % 2 ? x : y, kN, kIters);
    }
    loop.streamSync(stream);
    std::this_thread::sleep_for(kIdle);
  }
  const int rc = loop.finish();
  GW_CHECK(cudaStreamDestroy(stream));
  GW_CHECK(cudaFree(model));
  GW_CHECK(cudaFree(x));
  GW_CHECK(cudaFree(y));
  return rc;
}
