// A long launch-bound loop for the bounded-memory test and bench (issue 7): launches tiny kernels
// in steps of 1000 with a stream sync per step (the launch_bound sample's shape), and prints
// "progress launches=N" after every --every launches (flushed), so a watcher can sample memory
// at known points of the run without sleeping.
//
//   long_run_app --launches N [--every M]
#include "samples/common/training_loop.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void tiny_kernel(float* __restrict__ x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

int main(int argc, char** argv) {
  long long launches = 1'000'000, every = 250'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--launches") == 0) launches = std::atoll(argv[i + 1]);
    if (std::strcmp(argv[i], "--every") == 0) every = std::atoll(argv[i + 1]);
  }
  if (launches < 1 || every < 1) {
    std::fprintf(stderr, "usage: long_run_app --launches N [--every M]\n");
    return 2;
  }
  char* fake_argv[] = {argv[0], nullptr};
  gwsample::Loop loop("long_run", 1, fake_argv, /*default_steps=*/1);
  constexpr int kN = 4096;
  constexpr int kPerStep = 1000;
  float* x = nullptr;
  GW_CHECK(cudaMalloc(&x, kN * sizeof(float)));
  const dim3 block(256), grid(kN / 256);
  loop.simulateKernelTime(tiny_kernel, grid, block, 0, 1.6e-6, 16);
  long long done = 0, next_report = every;
  while (done < launches) {
    const long long n = std::min<long long>(kPerStep, launches - done);
    for (long long k = 0; k < n; ++k)
      loop.launch(tiny_kernel, grid, block, 0, nullptr, x, kN);
    loop.streamSync(nullptr);
    done += n;
    if (done >= next_report || done == launches) {
      std::printf("progress launches=%lld\n", done);
      std::fflush(stdout);
      next_report += every;
    }
  }
  const int rc = loop.finish();
  GW_CHECK(cudaFree(x));
  return rc;
}
