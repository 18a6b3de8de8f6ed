// The "real" runtime for the launch benchmark: __cudaLaunchKernel that does nothing, in its own
// shared library so calls to it are real cross-library calls, as calls into libcudart are.
#include <cuda_runtime_api.h>

extern "C" __attribute__((visibility("default"))) cudaError_t
__cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t) {
  asm volatile("" ::: "memory");
  return cudaSuccess;
}
