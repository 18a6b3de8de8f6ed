// Stands for torch.profiler: a CUDA program that runs its own CUPTI client, started the way
// Kineto starts it (cuptiSubscribe, cuptiActivityRegisterCallbacks, CONCURRENT_KERNEL), either half
// way through the run ("late": after gpuwise took CUPTI on the first CUDA call) or before any CUDA
// call ("early"). It counts the kernel records its own buffers receive and fails (exit 4) unless
// it saw every kernel launched while its client was on: gpuwise must not break it.
//
//   cupti_client_app late|early [kernels-before] [kernels-after]
// Prints: cupti_client subscribe=R register=R enable=R launched=N seen=M
#include <cupti.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

std::atomic<int> g_seen{0};

void CUPTIAPI onCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = size_t{1} << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS)
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) g_seen.fetch_add(1);
  std::free(buffer);
}

__global__ void step(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.5f + 1.0f;
}

bool launch(float* d, int n) {
  for (int i = 0; i < n; ++i)
    step<<<4, 256>>>(d, 1024);
  return cudaDeviceSynchronize() == cudaSuccess;
}

} // namespace

int main(int argc, char** argv) {
  const bool early = argc > 1 && std::strcmp(argv[1], "early") == 0;
  const int before = argc > 2 ? std::atoi(argv[2]) : 20;
  const int after = argc > 3 ? std::atoi(argv[3]) : 30;

  CUptiResult sub = CUPTI_SUCCESS, reg = CUPTI_SUCCESS, en = CUPTI_SUCCESS;
  CUpti_SubscriberHandle handle = nullptr;
  auto startClient = [&] {
    sub = cuptiSubscribe(&handle, onCallback, nullptr);
    reg = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted);
    en = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  };
  if (early) startClient();

  float* d = nullptr;
  if (cudaMalloc(&d, 1024 * sizeof(float)) != cudaSuccess) return 3;
  if (!launch(d, before)) return 3;
  if (!early) startClient();
  if (!launch(d, after)) return 3;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (handle) cuptiUnsubscribe(handle);
  cudaFree(d);

  const int expected = early ? before + after : after;
  std::printf("cupti_client subscribe=%d register=%d enable=%d launched=%d seen=%d\n", int(sub),
              int(reg), int(en), before + after, g_seen.load());
  return sub == CUPTI_SUCCESS && reg == CUPTI_SUCCESS && en == CUPTI_SUCCESS &&
                 g_seen.load() == expected
             ? 0
             : 4;
}
