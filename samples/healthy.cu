// Sample: a healthy training loop, the control case: a profiler should recommend nothing.
//
// Pinned host batches are copied asynchronously on a side stream, double-buffered and overlapped
// with compute; the step's GEMMs run on the tensor cores in BF16 (WMMA on __nv_bfloat16) with
// large grids; the host synchronises once per many steps; memory use is moderate (a quarter of
// the GPU). The GPU should be busy more than 95 % of the time.
#include <cuda_bf16.h>

#include "samples/common/training_loop.h"
#include "samples/common/wmma_gemm.cuh"

template <typename T> __global__ void init_kernel(T* __restrict__ x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = T(float((i * 2654435761u) >> 24) / 4096.0f);
}

// Converts the fp32 input batch into the bf16 activation matrix and applies the bias.
__global__ void cast_bias_bf16_kernel(const float* __restrict__ in, const float* __restrict__ bias,
                                      __nv_bfloat16* __restrict__ out, int n, int batch_n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16(in[i % batch_n] + bias[i % batch_n]);
}

int main(int argc, char** argv) {
  gwsample::Loop loop("healthy", argc, argv, /*default_steps=*/1000);
  constexpr int kDim = 2048;       // 2048^3 BF16 GEMMs
  constexpr int kBatchN = 1 << 16; // 256 KB fp32 batch per step
  constexpr int kSyncEvery = 50;
  const size_t matrix_elems = size_t{kDim} * kDim;

  // Moderate memory use: a quarter of the device for parameters and optimizer state.
  char* state = nullptr;
  GW_CHECK(cudaMalloc(&state, loop.device().totalGlobalMem / 4));
  __nv_bfloat16 *act = nullptr, *weight = nullptr;
  float *out = nullptr, *bias = nullptr;
  GW_CHECK(cudaMalloc(&act, matrix_elems * sizeof(__nv_bfloat16)));
  GW_CHECK(cudaMalloc(&weight, matrix_elems * sizeof(__nv_bfloat16)));
  GW_CHECK(cudaMalloc(&out, matrix_elems * sizeof(float)));
  GW_CHECK(cudaMalloc(&bias, kBatchN * sizeof(float)));

  float* host_batch[2];
  float* device_batch[2];
  cudaEvent_t loaded[2], consumed[2];
  for (int b = 0; b < 2; ++b) {
    GW_CHECK(cudaMallocHost(&host_batch[b], kBatchN * sizeof(float)));
    gwsample::fillPattern(host_batch[b], kBatchN, 10 + b);
    GW_CHECK(cudaMalloc(&device_batch[b], kBatchN * sizeof(float)));
    GW_CHECK(cudaEventCreateWithFlags(&loaded[b], cudaEventDisableTiming));
    GW_CHECK(cudaEventCreateWithFlags(&consumed[b], cudaEventDisableTiming));
  }
  // The host waits, once per kSyncEvery steps, for the step kLag steps back: the GPU keeps the
  // newer steps queued meanwhile, so a sync never drains it.
  constexpr int kLag = 3;
  cudaEvent_t step_done[kLag];
  for (cudaEvent_t& e : step_done)
    GW_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  cudaStream_t copy_stream, compute_stream;
  GW_CHECK(cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking));
  GW_CHECK(cudaStreamCreateWithFlags(&compute_stream, cudaStreamNonBlocking));

  auto* gemm = wmma_gemm_kernel<__nv_bfloat16>;
  const dim3 gemm_block(128), gemm_grid(kDim / 64, kDim / 64);
  const int n = static_cast<int>(matrix_elems);
  const dim3 block(256), grid((n + 255) / 256);
  loop.simulateKernelTime(gemm, gemm_grid, gemm_block, 0, 500e-6, 64);
  loop.simulateKernelTime(cast_bias_bf16_kernel, grid, block, 0, 12e-6, 24);
  loop.simulateKernelTime(init_kernel<__nv_bfloat16>, grid, block, 0, 8e-6, 16);
  loop.simulateKernelTime(init_kernel<float>, dim3(kBatchN / 256), block, 0, 2e-6, 16);
  loop.launch(init_kernel<__nv_bfloat16>, grid, block, 0, compute_stream, weight, n);
  loop.launch(init_kernel<float>, dim3(kBatchN / 256), block, 0, compute_stream, bias, kBatchN);

  for (int step = 0; step < loop.steps(); ++step) {
    const int b = step % 2;
    // Load the next batch on the side stream once the step that used this buffer is done.
    GW_CHECK(cudaStreamWaitEvent(copy_stream, consumed[b], 0));
    loop.copy(device_batch[b], host_batch[b], kBatchN * sizeof(float), cudaMemcpyHostToDevice,
              copy_stream, /*async=*/true, /*pinned=*/true);
    GW_CHECK(cudaEventRecord(loaded[b], copy_stream));
    // Compute on it.
    GW_CHECK(cudaStreamWaitEvent(compute_stream, loaded[b], 0));
    loop.launch(cast_bias_bf16_kernel, grid, block, 0, compute_stream, device_batch[b], bias, act,
                n, kBatchN);
    for (int g = 0; g < 3; ++g) {
      loop.launch(gemm, gemm_grid, gemm_block, 0, compute_stream, act, weight, out, kDim, kDim,
                  kDim);
    }
    GW_CHECK(cudaEventRecord(consumed[b], compute_stream));
    if ((step + 1) % kSyncEvery == 0)
      loop.eventSync(step_done[(step + 1) % kLag]); // kLag-1 steps back
    GW_CHECK(cudaEventRecord(step_done[step % kLag], compute_stream));
  }
  const int rc = loop.finish();
  for (int b = 0; b < 2; ++b) {
    GW_CHECK(cudaFreeHost(host_batch[b]));
    GW_CHECK(cudaFree(device_batch[b]));
    GW_CHECK(cudaEventDestroy(loaded[b]));
    GW_CHECK(cudaEventDestroy(consumed[b]));
  }
  for (cudaEvent_t e : step_done)
    GW_CHECK(cudaEventDestroy(e));
  GW_CHECK(cudaStreamDestroy(copy_stream));
  GW_CHECK(cudaStreamDestroy(compute_stream));
  for (void* p : {static_cast<void*>(state), static_cast<void*>(act), static_cast<void*>(weight),
                  static_cast<void*>(out), static_cast<void*>(bias)}) {
    GW_CHECK(cudaFree(p));
  }
  return rc;
}
