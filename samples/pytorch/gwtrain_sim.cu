// libgwtrain_sim.so: the fallback backend of samples/pytorch/train.py, for machines without
// PyTorch (every CPU-only developer machine and CI, where it runs on the simulated device).
//
// train.py loads it with ctypes, so the shim sees real CUDA runtime calls made from a Python
// process: one training step of a small ResNet-style CNN whose convolutions run as implicit GEMMs
// (FP32 SIMT, or BF16/FP16 WMMA on the tensor cores under --amp), its elementwise layers, the
// backward pass (two GEMMs per convolution), an SGD-with-momentum update, the H2D copy of the
// input batch from pinned or pageable host memory, an optional loss read-back (.item()) and
// optional whole-step CUDA graph capture. What it is not: PyTorch. The kernels do real work on a
// real GPU but their results are never used; on the simulated device the durations are hints
// (gwsimSetKernelWork, tests/simdevice/README.md) chosen so that a batch of 128 takes about 5.5 ms
// per step in BF16 and about 3.5x that in FP32, scaled linearly with the batch size. Those figures
// are chosen, not measured.
//
// With several ranks (gwt_dist_init) it trains data-parallel as DDP does: each layer's FP32
// gradients form a bucket, all-reduced with NCCL on a communication stream of its own as soon as
// the backward pass has produced them (while the backward pass of earlier layers goes on), or,
// without overlap, all buckets after the whole backward pass; the optimizer waits for the last
// bucket. A straggler can be planted: gwt_slow_compute makes this rank's kernels slower.
//
// Threads: train.py's main thread calls everything but gwt_pinned_slot, which its pin-memory
// thread calls (CUDA calls from two threads are fine). Errors: a function returns
// non-zero and gwt_error() says which call failed; nothing here exits.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "samples/common/wmma_gemm.cuh"
#include "samples/pytorch/gwtrain_nccl.h"

namespace {

constexpr int kDim = 2048; // every layer's GEMM is kDim x kDim x kDim (grids of 1024 blocks)
constexpr int kLayers = 8; // convolutions: 4 residual blocks of 2
constexpr int kSlots = 4;  // pinned host batches in flight (the caching host allocator's role)
constexpr double kTensorCoreSpeedup = 3.5;
// DDP-style gradient buckets, kLayers / kBuckets layers each. FP32 gradients whatever --amp says:
// under autocast the parameters, and so the gradients DDP all-reduces, stay FP32.
constexpr int kBuckets = 8;
constexpr int kLayersPerBucket = kLayers / kBuckets;

// C[M x N] = A[M x K] * B[K x N] (fp32, row-major) on the CUDA cores; 256 threads, 16 x 16 tile.
template <typename T, int BM, int BN>
__global__ void __launch_bounds__(256)
    sgemm_simt_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M,
                      int N, int K) {
  __shared__ T As[16][BM];
  __shared__ T Bs[16][BN];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row = blockIdx.y * BM + ty * (BM / 16), col = blockIdx.x * BN + tx * (BN / 16);
  T acc[BM / 16][BN / 16] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int e = threadIdx.x; e < 16 * BM; e += 256)
      As[e % 16][e / 16] = A[size_t(blockIdx.y * BM + e / 16) * K + k0 + e % 16];
    for (int e = threadIdx.x; e < 16 * BN; e += 256)
      Bs[e / BN][e % BN] = B[size_t(k0 + e / BN) * N + blockIdx.x * BN + e % BN];
    __syncthreads();
    for (int kk = 0; kk < 16; ++kk)
      for (int i = 0; i < BM / 16; ++i)
        for (int j = 0; j < BN / 16; ++j)
          acc[i][j] += As[kk][ty * (BM / 16) + i] * Bs[kk][tx * (BN / 16) + j];
    __syncthreads();
  }
  for (int i = 0; i < BM / 16; ++i)
    for (int j = 0; j < BN / 16; ++j)
      C[size_t(row + i) * N + col + j] = acc[i][j];
}

// Normalises the fp32 input batch into the first layer's activations (type T).
template <typename T>
__global__ void normalize_input_kernel(const float* __restrict__ in, T* __restrict__ out, int n,
                                       int batch_n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = T((in[i % batch_n] - 0.5f) * 4.0f);
}

// Batch-norm (inference-style affine) + ReLU from the fp32 GEMM output into activations of type T.
template <typename T>
__global__ void bn_relu_kernel(const float* __restrict__ in, T* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = T(fmaxf(in[i] * 0.9f + 0.01f, 0.0f));
}

template <typename T>
__global__ void residual_add_kernel(T* __restrict__ x, const T* __restrict__ skip, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = T(float(x[i]) + float(skip[i]));
}

template <typename T>
__global__ void relu_backward_kernel(const float* __restrict__ grad, const T* __restrict__ act,
                                     T* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = float(act[i]) > 0.0f ? T(grad[i]) : T(0.0f);
}

// Mean of a softmax-cross-entropy-like loss over the first row (one block).
__global__ void cross_entropy_loss_kernel(const float* __restrict__ logits,
                                          float* __restrict__ loss, int n) {
  __shared__ float part[256];
  float s = 0.0f;
  for (int i = threadIdx.x; i < n; i += 256)
    s += logf(1.0f + expf(-fabsf(logits[i])));
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = 128; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = part[0] / n;
}

// GradScaler's unscale: gradients divided by the scale, non-finite ones flagged.
__global__ void unscale_grads_kernel(float* __restrict__ grad, int n, float inv_scale,
                                     int* __restrict__ found_inf) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    grad[i] *= inv_scale;
    if (!isfinite(grad[i])) *found_inf = 1;
  }
}

// SGD with momentum on the fp32 master weights.
template <typename T>
__global__ void sgd_momentum_kernel(T* __restrict__ w, T* __restrict__ m,
                                    const float* __restrict__ g, int n, float lr) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    m[i] = T(0.9f) * m[i] + T(g[i]);
    w[i] -= T(lr) * m[i];
  }
}

char g_error[256] = "";

bool check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::snprintf(g_error, sizeof g_error, "%s failed: %s", what, cudaGetErrorString(e));
  return false;
}
#define GWT_TRY(call)                                                                              \
  do {                                                                                             \
    if (!check((call), #call)) return 1;                                                           \
  } while (0)

enum Amp { kNone = 0, kBf16 = 1, kFp16 = 2 };

struct State {
  bool ready = false;
  int amp = kNone;
  bool graphs = false;
  int batch_n = 0; // fp32 elements in one input batch
  cudaDeviceProp prop{};
  cudaStream_t stream{};
  float* input = nullptr;      // device copy of the batch
  void* act[kLayers + 1] = {}; // activations (fp32, bf16 or fp16)
  void* weight[kLayers] = {};  // weights in the GEMM's type
  float* gemm_out = nullptr;   // fp32 GEMM output / gradient
  float* grad = nullptr;       // fp32 weight gradient
  float* master = nullptr;     // fp32 master weights + momentum
  float* momentum = nullptr;
  float* loss = nullptr;
  int* found_inf = nullptr;
  void* pinned[kSlots] = {};
  cudaEvent_t slot_free[kSlots] = {};
  cudaGraph_t graph{};
  cudaGraphExec_t graph_exec{};
  bool captured = false;
  long long kernels = 0, h2d_bytes = 0, pinned_bytes = 0, pageable_bytes = 0, syncs = 0;
  double batch_scale = 1.0;
  // Data-parallel mode (gwt_dist_init): NCCL, its stream, the gradient buckets.
  gwtrain::NcclApi nccl;
  gwtrain::NcclComm comm = nullptr;
  bool overlap = true;
  cudaStream_t comm_stream{};
  void* grad_buckets = nullptr; // kLayers FP32 gradients
  cudaEvent_t bucket_ready[kBuckets] = {};
  cudaEvent_t comm_done{};
  long long allreduces = 0;
};
State g;

using SetWork = int (*)(const void*, double, int);

// "This kernel takes `seconds` on an H200" for the simulated device (as samples/common/
// training_loop.h does); a no-op on a real runtime, where gwsimSetKernelWork does not exist.
void hintKernel(const void* func, dim3 grid, int threads, double seconds, int registers) {
  auto set_work = reinterpret_cast<SetWork>(dlsym(RTLD_DEFAULT, "gwsimSetKernelWork"));
  if (set_work == nullptr) return;
  set_work(func, 1.0, registers);
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, func, threads, 0) != cudaSuccess)
    return;
  const double slots = double(g.prop.multiProcessorCount) * std::max(per_sm, 1);
  const double waves = std::ceil(double(grid.x) * grid.y / slots);
  const double fill = std::min(1.0, per_sm * std::ceil(threads / 32.0) /
                                        (g.prop.maxThreadsPerMultiProcessor / 32.0));
  set_work(func, seconds * 1e9 / (waves * 2000.0 * std::max(fill, 0.25)), registers);
}

const dim3 kGemmGridSimt(kDim / 64, kDim / 64), kGemmGridWmma(kDim / 64, kDim / 64);
const int kElems = kDim * kDim;
const dim3 kEltGrid((kElems + 255) / 256);

template <typename T> void launchGemm(const void* a, const void* b) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm_simt_kernel<float, 64, 64><<<kGemmGridSimt, 256, 0, g.stream>>>(
        static_cast<const float*>(a), static_cast<const float*>(b), g.gemm_out, kDim, kDim, kDim);
  } else {
    wmma_gemm_kernel<T><<<kGemmGridWmma, 128, 0, g.stream>>>(
        static_cast<const T*>(a), static_cast<const T*>(b), g.gemm_out, kDim, kDim, kDim);
  }
  ++g.kernels;
}

// Bucket b (the gradients of kLayersPerBucket layers, last layers first, as DDP orders them):
// the communication stream waits until the backward pass produced it, then all-reduces it.
int allReduceBucket(int b) {
  GWT_TRY(cudaEventRecord(g.bucket_ready[b], g.stream));
  GWT_TRY(cudaStreamWaitEvent(g.comm_stream, g.bucket_ready[b], 0));
  const size_t count = size_t(kLayersPerBucket) * kElems;
  float* base = static_cast<float*>(g.grad_buckets) + size_t(b) * count;
  const int r = g.nccl.allReduce(base, base, count, gwtrain::kNcclFloat32, gwtrain::kNcclSum,
                                 g.comm, g.comm_stream);
  if (r != 0) {
    std::snprintf(g_error, sizeof g_error, "ncclAllReduce failed: %s", g.nccl.errorString(r));
    return 1;
  }
  ++g.allreduces;
  return 0;
}

// After the backward pass: the buckets not all-reduced yet (all of them without overlap), then the
// compute stream waits for the communication stream, as DDP's optimizer step waits for its hooks.
int finishGradientSync() {
  if (g.comm == nullptr) return 0;
  if (!g.overlap) {
    for (int b = 0; b < kBuckets; ++b)
      if (allReduceBucket(b) != 0) return 1;
  }
  GWT_TRY(cudaEventRecord(g.comm_done, g.comm_stream));
  GWT_TRY(cudaStreamWaitEvent(g.stream, g.comm_done, 0));
  return 0;
}

template <typename T> int forwardT() {
  normalize_input_kernel<T>
      <<<kEltGrid, 256, 0, g.stream>>>(g.input, static_cast<T*>(g.act[0]), kElems, g.batch_n);
  ++g.kernels;
  for (int l = 0; l < kLayers; ++l) {
    launchGemm<T>(g.act[l], g.weight[l]);
    bn_relu_kernel<T>
        <<<kEltGrid, 256, 0, g.stream>>>(g.gemm_out, static_cast<T*>(g.act[l + 1]), kElems);
    ++g.kernels;
    if (l % 2 == 1) {
      residual_add_kernel<T><<<kEltGrid, 256, 0, g.stream>>>(
          static_cast<T*>(g.act[l + 1]), static_cast<const T*>(g.act[l - 1]), kElems);
      ++g.kernels;
    }
  }
  cross_entropy_loss_kernel<<<1, 256, 0, g.stream>>>(g.gemm_out, g.loss, kDim);
  ++g.kernels;
  return check(cudaGetLastError(), "forward launch") ? 0 : 1;
}

template <typename T> int backwardT() {
  for (int l = kLayers - 1; l >= 0; --l) {
    relu_backward_kernel<T><<<kEltGrid, 256, 0, g.stream>>>(
        g.gemm_out, static_cast<const T*>(g.act[l + 1]), static_cast<T*>(g.act[l + 1]), kElems);
    ++g.kernels;
    launchGemm<T>(g.act[l + 1], g.weight[l]); // dgrad
    launchGemm<T>(g.act[l], g.act[l + 1]);    // wgrad
    if (g.comm != nullptr && g.overlap && l % kLayersPerBucket == 0) {
      if (allReduceBucket((kLayers - 1 - l) / kLayersPerBucket) != 0) return 1;
    }
  }
  if (finishGradientSync() != 0) return 1;
  if (g.amp == kFp16) {
    unscale_grads_kernel<<<kEltGrid, 256, 0, g.stream>>>(g.grad, kElems, 1.0f / 65536.0f,
                                                         g.found_inf);
    ++g.kernels;
  }
  sgd_momentum_kernel<float>
      <<<kEltGrid, 256, 0, g.stream>>>(g.master, g.momentum, g.grad, kElems, 0.01f);
  ++g.kernels;
  return check(cudaGetLastError(), "backward launch") ? 0 : 1;
}

int forward() {
  switch (g.amp) {
  case kBf16: return forwardT<__nv_bfloat16>();
  case kFp16: return forwardT<__half>();
  default: return forwardT<float>();
  }
}
int backward() {
  switch (g.amp) {
  case kBf16: return backwardT<__nv_bfloat16>();
  case kFp16: return backwardT<__half>();
  default: return backwardT<float>();
  }
}

template <typename T> void hintAll(double scale);

// The kernel-time hints for the model at the batch size, `slowdown` times slower.
void hintModel(double slowdown) {
  const double scale = g.batch_scale * slowdown;
  if (g.amp == kBf16)
    hintAll<__nv_bfloat16>(scale);
  else if (g.amp == kFp16)
    hintAll<__half>(scale);
  else
    hintAll<float>(scale);
}

template <typename T> void hintAll(double scale) {
  const double gemm_s = 200e-6 * scale * (std::is_same_v<T, float> ? kTensorCoreSpeedup : 1.0);
  const double elt_s = 15e-6 * scale * (std::is_same_v<T, float> ? 2.0 : 1.0);
  if constexpr (std::is_same_v<T, float>) {
    hintKernel(reinterpret_cast<const void*>(sgemm_simt_kernel<float, 64, 64>), kGemmGridSimt, 256,
               gemm_s, 64);
  } else {
    hintKernel(reinterpret_cast<const void*>(wmma_gemm_kernel<T>), kGemmGridWmma, 128, gemm_s, 64);
  }
  hintKernel(reinterpret_cast<const void*>(normalize_input_kernel<T>), kEltGrid, 256, 20e-6 * scale,
             16);
  hintKernel(reinterpret_cast<const void*>(bn_relu_kernel<T>), kEltGrid, 256, elt_s, 16);
  hintKernel(reinterpret_cast<const void*>(residual_add_kernel<T>), kEltGrid, 256, elt_s * 0.7, 16);
  hintKernel(reinterpret_cast<const void*>(relu_backward_kernel<T>), kEltGrid, 256, elt_s, 16);
  hintKernel(reinterpret_cast<const void*>(cross_entropy_loss_kernel), dim3(1), 256, 10e-6, 32);
  hintKernel(reinterpret_cast<const void*>(unscale_grads_kernel), kEltGrid, 256, 20e-6, 16);
  hintKernel(reinterpret_cast<const void*>(sgd_momentum_kernel<float>), kEltGrid, 256, 60e-6, 24);
}

} // namespace

extern "C" {

const char* gwt_error() {
  return g_error;
}

// 1 on the simulated device (its extra export gwsimIsSimulated), 0 on a real runtime.
int gwt_simulated() {
  using IsSimulated = int (*)();
  auto f = reinterpret_cast<IsSimulated>(dlsym(RTLD_DEFAULT, "gwsimIsSimulated"));
  return f != nullptr && f() == 1 ? 1 : 0;
}

const char* gwt_device_name() {
  return g.prop.name;
}

// Sets up the device (local_rank modulo the device count: ranks share a GPU when there are fewer
// GPUs than ranks), the model's buffers and the kernel-time hints. amp: 0 none, 1 bf16, 2 fp16.
int gwt_init(int local_rank, int batch_size, int batch_bytes, int amp, int pinned, int graphs) {
  if (g.ready) return 0;
  g.amp = amp;
  g.graphs = graphs != 0;
  g.batch_n = batch_bytes / 4;
  int devices = 0;
  GWT_TRY(cudaGetDeviceCount(&devices));
  if (devices < 1) {
    check(cudaErrorNoDevice, "cudaGetDeviceCount");
    return 1;
  }
  const int device = local_rank % devices;
  GWT_TRY(cudaSetDevice(device));
  GWT_TRY(cudaGetDeviceProperties(&g.prop, device));
  GWT_TRY(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
  const size_t elem = amp == kNone ? sizeof(float) : 2;
  GWT_TRY(cudaMalloc(&g.input, size_t(batch_bytes)));
  for (auto& a : g.act)
    GWT_TRY(cudaMalloc(&a, kElems * elem));
  for (auto& w : g.weight)
    GWT_TRY(cudaMalloc(&w, kElems * elem));
  GWT_TRY(cudaMalloc(&g.gemm_out, kElems * sizeof(float)));
  GWT_TRY(cudaMalloc(&g.grad, kElems * sizeof(float)));
  GWT_TRY(cudaMalloc(&g.master, kElems * sizeof(float)));
  GWT_TRY(cudaMalloc(&g.momentum, kElems * sizeof(float)));
  GWT_TRY(cudaMalloc(&g.loss, sizeof(float)));
  GWT_TRY(cudaMalloc(&g.found_inf, sizeof(int)));
  for (int s = 0; s < kSlots; ++s) {
    if (pinned) GWT_TRY(cudaMallocHost(&g.pinned[s], size_t(batch_bytes)));
    GWT_TRY(cudaEventCreateWithFlags(&g.slot_free[s], cudaEventDisableTiming));
  }
  g.batch_scale = batch_size / 128.0;
  hintModel(1.0);
  g.ready = true;
  return 0;
}

// A straggler: this rank's kernels take `factor` times as long (a throttled or slower GPU). Only
// on the simulated device, where kernel times are hints.
int gwt_slow_compute(double factor) {
  if (!g.ready || factor <= 0) {
    std::snprintf(g_error, sizeof g_error, "gwt_slow_compute: call gwt_init first, factor > 0");
    return 1;
  }
  hintModel(factor);
  return 0;
}

// Rank 0's NCCL unique id (128 bytes into `out`), to be handed to every rank.
int gwt_nccl_unique_id(char* out) {
  if (!g.nccl.load(g_error, sizeof g_error)) return 1;
  gwtrain::NcclUniqueId id{};
  const int r = g.nccl.getUniqueId(&id);
  if (r != 0) {
    std::snprintf(g_error, sizeof g_error, "ncclGetUniqueId failed: %s", g.nccl.errorString(r));
    return 1;
  }
  std::memcpy(out, id.internal, sizeof id.internal);
  return 0;
}

// Joins the job (blocks until every rank has) and sets up the gradient buckets, the
// communication stream and its events. overlap 0: all-reduce only after the whole backward pass.
int gwt_dist_init(int rank, int world_size, const char* unique_id, int overlap) {
  if (!g.ready || g.graphs) {
    std::snprintf(g_error, sizeof g_error,
                  "gwt_dist_init: call gwt_init first; CUDA graphs are not supported with ranks");
    return 1;
  }
  if (g.comm != nullptr) return 0;
  if (!g.nccl.load(g_error, sizeof g_error)) return 1;
  gwtrain::NcclUniqueId id{};
  std::memcpy(id.internal, unique_id, sizeof id.internal);
  const int r = g.nccl.commInitRank(&g.comm, world_size, id, rank);
  if (r != 0) {
    std::snprintf(g_error, sizeof g_error, "ncclCommInitRank failed: %s", g.nccl.errorString(r));
    g.comm = nullptr;
    return 1;
  }
  g.overlap = overlap != 0;
  GWT_TRY(cudaStreamCreateWithFlags(&g.comm_stream, cudaStreamNonBlocking));
  GWT_TRY(cudaMalloc(&g.grad_buckets, size_t(kLayers) * kElems * sizeof(float)));
  for (auto& e : g.bucket_ready)
    GWT_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  GWT_TRY(cudaEventCreateWithFlags(&g.comm_done, cudaEventDisableTiming));
  return 0;
}

long long gwt_allreduces() {
  return g.allreduces;
}

int gwt_slots() {
  return kSlots;
}

// The pinned host buffer of `slot`, once the copy that last read it has finished (a lagged wait:
// the GPU is kSlots steps behind at most, as with PyTorch's caching host allocator). NULL when
// the backend was set up without pinned memory.
void* gwt_pinned_slot(int slot) {
  if (g.pinned[slot] == nullptr) return nullptr;
  if (!check(cudaEventSynchronize(g.slot_free[slot]), "cudaEventSynchronize(slot)")) return nullptr;
  return g.pinned[slot];
}

// The step up to the loss: the batch's H2D copy from `host` (pinned: async; pageable: the
// runtime stages it and returns when it is done), then the forward pass. With CUDA graphs the
// whole step (forward, backward, optimizer) is one graph launch, captured on the first call.
int gwt_forward(const void* host, int bytes, int slot, int host_pinned) {
  GWT_TRY(cudaMemcpyAsync(g.input, host, size_t(bytes), cudaMemcpyHostToDevice, g.stream));
  g.h2d_bytes += bytes;
  (host_pinned ? g.pinned_bytes : g.pageable_bytes) += bytes;
  if (host_pinned) GWT_TRY(cudaEventRecord(g.slot_free[slot], g.stream));
  if (!g.graphs) return forward();
  if (!g.captured) {
    const long long before = g.kernels;
    GWT_TRY(cudaStreamBeginCapture(g.stream, cudaStreamCaptureModeThreadLocal));
    if (forward() != 0 || backward() != 0) return 1;
    GWT_TRY(cudaStreamEndCapture(g.stream, &g.graph));
    GWT_TRY(cudaGraphInstantiate(&g.graph_exec, g.graph, 0));
    g.kernels = before;
    g.captured = true;
  }
  GWT_TRY(cudaGraphLaunch(g.graph_exec, g.stream));
  return 0;
}

// Backward pass and optimizer step (nothing with CUDA graphs: the graph holds them). FP16 ends
// like GradScaler.step(): the found-inf flag read back, which synchronises.
int gwt_backward() {
  if (g.graphs) return 0;
  if (backward() != 0) return 1;
  if (g.amp == kFp16) {
    int found = 0;
    GWT_TRY(cudaMemcpyAsync(&found, g.found_inf, sizeof found, cudaMemcpyDeviceToHost, g.stream));
    GWT_TRY(cudaStreamSynchronize(g.stream));
    ++g.syncs;
  }
  return 0;
}

// loss.item(): a 4-byte read-back and a stream synchronisation. NaN on failure.
float gwt_read_loss() {
  float value = 0.0f;
  if (!check(cudaMemcpyAsync(&value, g.loss, sizeof value, cudaMemcpyDeviceToHost, g.stream),
             "cudaMemcpyAsync(loss)") ||
      !check(cudaStreamSynchronize(g.stream), "cudaStreamSynchronize"))
    return NAN;
  ++g.syncs;
  return value;
}

int gwt_finish() {
  GWT_TRY(cudaDeviceSynchronize());
  return 0;
}

// kernels launched one by one, h2d_bytes, pinned_bytes, pageable_bytes, syncs. With CUDA graphs
// the step's kernels are graph nodes, not launches: they are not counted.
void gwt_counts(long long* out) {
  out[0] = g.kernels;
  out[1] = g.h2d_bytes;
  out[2] = g.pinned_bytes;
  out[3] = g.pageable_bytes;
  out[4] = g.syncs;
}

} // extern "C"
