// simdevice_probe: a helper program the process-level tests run with different environments
// (GWSIM_DEVICE, GWSIM_CUPTI_BUSY, CUDA_INJECTION64_PATH) and modes, because those read the
// environment once per process or need a process of their own (fork). Prints one
// `probe key=value ...` line; exits 0 when the mode's calls behaved, 1 otherwise.
//
//   simdevice_probe props        device count and properties
//   simdevice_probe busy         CUPTI subscribe/enable results (GWSIM_CUPTI_BUSY=1)
//   simdevice_probe threads N    N threads make their first CUDA call at once (injection once)
//   simdevice_probe nocuda       makes no CUDA call at all
//   simdevice_probe resource     CUPTI resource callbacks: context and stream creation
//   simdevice_probe fork         the device works in a forked child and in the parent after it
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "tests/simdevice/test_support.h"

namespace {

volatile int g_sink = 0;
void probeKernel() {
  g_sink = 1;
} // host stub: only its address matters

int props() {
  int count = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&count) != cudaSuccess ||
      cudaGetDeviceProperties(&prop, count - 1) != cudaSuccess) {
    return 1;
  }
  std::printf("probe count=%d name=\"%s\" sms=%d memory=%zu cc=%d.%d\n", count, prop.name,
              prop.multiProcessorCount, prop.totalGlobalMem, prop.major, prop.minor);
  return 0;
}

int busy() {
  CUpti_SubscriberHandle handle = nullptr;
  const CUptiResult subscribe = cuptiSubscribe(&handle, nullptr, nullptr);
  const CUptiResult enable = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const CUptiResult runtime =
      cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1);
  // The device itself still works: a profiler falls back, the program carries on.
  void* p = nullptr;
  const cudaError_t malloc_result = cudaMalloc(&p, 1024);
  std::printf("probe subscribe=%d enable=%d runtime_api=%d malloc=%d\n", subscribe, enable, runtime,
              malloc_result);
  return malloc_result == cudaSuccess ? 0 : 1;
}

int threads(int n) {
  std::atomic<int> ready{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int i = 0; i < n; ++i) {
    pool.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < n) {
      } // start together: the first calls race for the injection
      if (cudaFree(nullptr) != cudaSuccess) failures.fetch_add(1);
    });
  }
  for (auto& t : pool)
    t.join();
  std::printf("probe threads=%d failures=%d\n", n, failures.load());
  return failures.load() == 0 ? 0 : 1;
}

std::atomic<int> g_context_created{0}, g_stream_created{0};

void CUPTIAPI onResource(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void*) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE) return;
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) g_context_created.fetch_add(1);
  if (cbid == CUPTI_CBID_RESOURCE_STREAM_CREATED) g_stream_created.fetch_add(1);
}

int resource() {
  CUpti_SubscriberHandle handle = nullptr;
  if (cuptiSubscribe(&handle, onResource, nullptr) != CUPTI_SUCCESS) return 1;
  cuptiEnableDomain(1, handle, CUPTI_CB_DOMAIN_RESOURCE);
  cudaStream_t stream = nullptr;
  const bool ok = cudaFree(nullptr) == cudaSuccess && cudaStreamCreate(&stream) == cudaSuccess &&
                  cudaFree(nullptr) == cudaSuccess;
  std::printf("probe context_created=%d stream_created=%d\n", g_context_created.load(),
              g_stream_created.load());
  return ok ? 0 : 1;
}

// Launches `n` kernels and synchronises; true when every call succeeded.
bool work(int n) {
  void* p = nullptr;
  bool ok = cudaMalloc(&p, 1 << 20) == cudaSuccess && cudaMemset(p, 1, 1 << 20) == cudaSuccess;
  for (int i = 0; i < n; ++i) {
    ok = ok && cudaLaunchKernel(reinterpret_cast<const void*>(&probeKernel), dim3(4), dim3(64),
                                nullptr, 0, nullptr) == cudaSuccess;
  }
  return ok && cudaDeviceSynchronize() == cudaSuccess && cudaFree(p) == cudaSuccess;
}

int forkMode() {
  if (!work(3)) return 1;
  const pid_t child = fork();
  if (child == 0) {
    // A child initialises its own device state; CUPTI is free for it to subscribe.
    CUpti_SubscriberHandle handle = nullptr;
    const bool subscribed = cuptiSubscribe(&handle, nullptr, nullptr) == CUPTI_SUCCESS;
    _exit(work(5) && subscribed ? 0 : 3);
  }
  // The parent keeps working while the child runs, then waits for it with a deadline.
  const bool parent_ok = work(5);
  int status = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) return 2;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const int child_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::printf("probe parent_ok=%d child_exit=%d\n", parent_ok ? 1 : 0, child_code);
  return parent_ok && child_code == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  gwsim_test::registerKernel(reinterpret_cast<const void*>(&probeKernel), "_Z12probe_kernelv");
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "props") return props();
  if (mode == "busy") return busy();
  if (mode == "threads") return threads(argc > 2 ? std::atoi(argv[2]) : 4);
  if (mode == "nocuda") return std::printf("probe nocuda=1\n") > 0 ? 0 : 1;
  if (mode == "resource") return resource();
  if (mode == "fork") return forkMode();
  std::fprintf(stderr, "usage: %s props|busy|threads N|nocuda|resource|fork\n", argv[0]);
  return 2;
}
