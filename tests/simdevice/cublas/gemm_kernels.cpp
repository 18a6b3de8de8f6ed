#include "tests/simdevice/cublas/gemm_kernels.h"

#include <algorithm>
#include <mutex>

#include <cublas_api.h>
#include <library_types.h>

extern "C" {
void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaRegisterFatBinaryEnd(void** fatCubinHandle);
void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                            const char* deviceName, int thread_limit, uint3* tid, uint3* bid,
                            dim3* bDim, dim3* gDim, int* wSize);
int gwsimSetKernelWork(const void* func, double work, int registers_per_thread);
}

namespace {

enum Kernel { kTf32, kF16, kBf16, kSimtF32, kF64, kF8, kI8, kCount };

struct KernelDef {
  const char* name;
  double work; // per full wave (2 us x work at fill 1)
  int registers;
};

constexpr KernelDef kKernels[kCount] = {
    {"sm90_xmma_gemm_tf32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     6, 168},
    {"sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_"
     "k_off_kernel__5x_cublas",
     3, 168},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     3, 168},
    {"cutlass_80_simt_sgemm_128x128_8x4_nn_align1", 25, 128},
    {"ampere_dgemm_64x64_nn", 40, 128},
    {"sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     2, 168},
    {"cutlass_80_tensorop_i16832gemm_s8_128x128_64x3_tn_align16", 2, 168},
};

// One host stub per kernel: its address is what the runtime launches.
volatile int g_sink = 0;
template <int I> void stub() {
  g_sink = I;
}
constexpr void (*kStubs[kCount])() = {stub<0>, stub<1>, stub<2>, stub<3>,
                                      stub<4>, stub<5>, stub<6>};

const void* stubOf(Kernel k) {
  return reinterpret_cast<const void*>(kStubs[k]);
}

void registerKernels() {
  static char fatbin_stand_in[16];
  void** module = __cudaRegisterFatBinary(fatbin_stand_in);
  for (int i = 0; i < kCount; ++i) {
    __cudaRegisterFunction(module, static_cast<const char*>(stubOf(Kernel(i))),
                           const_cast<char*>(kKernels[i].name), kKernels[i].name, -1, nullptr,
                           nullptr, nullptr, nullptr, nullptr);
    gwsimSetKernelWork(stubOf(Kernel(i)), kKernels[i].work, kKernels[i].registers);
  }
  __cudaRegisterFatBinaryEnd(module);
}

bool aligned(int64_t m, int64_t n, int64_t k, int64_t to) {
  return m % to == 0 && n % to == 0 && k % to == 0;
}

Kernel pick(int a_type, int compute, int math, int64_t m, int64_t n, int64_t k) {
  switch (a_type) {
  case CUDA_R_16F: return aligned(m, n, k, 8) ? kF16 : kF16; // FP16 stays FP16 either way
  case CUDA_R_16BF: return kBf16;
  case CUDA_R_64F: return kF64;
  case CUDA_R_8F_E4M3:
  case CUDA_R_8F_E5M2: return kF8;
  case CUDA_R_8I: return kI8;
  default: break;
  }
  // FP32 data: the compute type (or TF32 math mode) may allow tensor cores.
  bool tf32 = compute == CUBLAS_COMPUTE_32F_FAST_TF32 ||
              (compute == CUBLAS_COMPUTE_32F && (math & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH);
  if (compute == CUBLAS_COMPUTE_32F_FAST_16F) return aligned(m, n, k, 8) ? kF16 : kSimtF32;
  if (compute == CUBLAS_COMPUTE_32F_FAST_16BF) return aligned(m, n, k, 8) ? kBf16 : kSimtF32;
  if (compute == CUBLAS_COMPUTE_64F) return kF64;
  return tf32 && aligned(m, n, k, 4) ? kTf32 : kSimtF32;
}

uint32_t blocks(int64_t v, int64_t tile) {
  int64_t b = (std::max<int64_t>(v, 1) + tile - 1) / tile;
  return uint32_t(std::min<int64_t>(b, 65535));
}

} // namespace

extern "C" const char* gwsimLaunchGemm(int a_type, int compute_type, int math_mode, int64_t m,
                                       int64_t n, int64_t k, int64_t batch, cudaStream_t stream) {
  static std::once_flag once;
  std::call_once(once, registerKernels);
  Kernel kernel = pick(a_type, compute_type, math_mode, m, n, k);
  dim3 grid(blocks(m, 128) * blocks(n, 128), 1, uint32_t(std::clamp<int64_t>(batch, 1, 65535)));
  dim3 block(kernel == kSimtF32 || kernel == kF64 ? 256 : 384);
  if (cudaLaunchKernel(stubOf(kernel), grid, block, nullptr, 0, stream) != cudaSuccess)
    return nullptr;
  return kKernels[kernel].name;
}
