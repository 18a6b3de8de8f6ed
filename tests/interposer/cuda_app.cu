// A real nvcc-built CUDA program (-cudart shared): its <<<>>> launch goes through CUDA 13's
// __cudaGetKernel/__cudaLaunchKernel and its runtime calls reference cudaMalloc@libcudart.so.13.
// process_test runs it under LD_PRELOAD=libgpuwise.so to check those references bind to the hooks
// (on a machine without a GPU the calls fail; the exit code reports the first error, unchanged by
// the shim). With the simulated device on LD_LIBRARY_PATH it runs for real.
#include <cstdio>

__global__ void addOne(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

int main() {
  float* d = nullptr;
  cudaError_t m = cudaMalloc(&d, 1024 * sizeof(float));
  // Carry on after a failure, so every entry point is still called (and bound) without a GPU.
  addOne<<<4, 256>>>(d, 1024);
  cudaError_t l = cudaGetLastError();
  cudaError_t s = cudaDeviceSynchronize();
  cudaFree(d);
  std::printf("malloc=%d launch=%d sync=%d\n", int(m), int(l), int(s));
  return m == cudaSuccess && l == cudaSuccess && s == cudaSuccess ? 0 : 3;
}
