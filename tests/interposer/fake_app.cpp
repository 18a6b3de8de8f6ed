// A CUDA-shaped program linked against FakeCudart only, run by process_test with and without
// LD_PRELOAD=libgpuwise.so. It makes a known number of hooked calls (305) and prints what it
// computed (so forwarding is checked from the outside) and whether a "gpuwise-drain" thread exists.
//
//   fake_app                 the workload
//   fake_app --inject LIB    dlopen LIB and call its InitializeInjection twice
//   (CUDA_INJECTION64_PATH)
#include "interposer/cuda_declarations.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <string>
#include <thread>
#include <vector>

namespace {

void kernelStub() {}

bool drainThreadRunning() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return false;
  bool found = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string path = std::string("/proc/self/task/") + e->d_name + "/comm";
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      char comm[64] = {};
      if (std::fgets(comm, sizeof comm, f) && std::strncmp(comm, "gpuwise-drain", 13) == 0)
        found = true;
      std::fclose(f);
    }
  }
  closedir(d);
  return found;
}

int inject(const char* lib) {
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::printf("dlopen failed: %s\n", dlerror());
    return 2;
  }
  auto init = reinterpret_cast<int (*)()>(dlsym(h, "InitializeInjection"));
  if (!init) {
    std::printf("no InitializeInjection\n");
    return 3;
  }
  int a = init();
  int b = init();
  std::printf("InitializeInjection=%d,%d\n", a, b);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--inject") == 0) return inject(argv[2]);

  __cudaRegisterFunction(nullptr, reinterpret_cast<const char*>(&kernelStub), nullptr,
                         "_Z10kernelStubv", -1, nullptr, nullptr, nullptr, nullptr, nullptr);
  constexpr int kN = 1024;
  std::vector<int> host(kN), back(kN, 0);
  for (int i = 0; i < kN; ++i)
    host[size_t(i)] = i;
  void* dev = nullptr;
  if (cudaMalloc(&dev, kN * sizeof(int)) != cudaSuccess) return 10;       // 1
  cudaMemcpy(dev, host.data(), kN * sizeof(int), cudaMemcpyHostToDevice); // 1
  for (int i = 0; i < 100; ++i)                                           // 100
    cudaLaunchKernel(reinterpret_cast<const void*>(&kernelStub), dim3(4), dim3(256), nullptr, 0,
                     nullptr);
  cudaDeviceSynchronize(); // 1
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) // 200
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        cudaMemsetAsync(static_cast<char*>(dev) + kN * sizeof(int) - 4, 0, 4, nullptr);
    });
  for (auto& t : threads)
    t.join();
  cudaMemcpy(back.data(), dev, kN * sizeof(int), cudaMemcpyDeviceToHost); // 1
  if (cudaFree(dev) != cudaSuccess) return 11;                            // 1
  long sum = 0;
  for (int i = 0; i < kN - 1; ++i)
    sum += back[size_t(i)];
  std::printf("sum=%ld drain=%s\n", sum, drainThreadRunning() ? "yes" : "no");
  return 0;
}
