// fake_shim: a test program that plays the shim's part for `gpuwise run`: it reads
// GPUWISE_ENDPOINT, sends a Hello and a few batches with BatchEncoder/PushSender, and exits with
// the code it is given (3 by default). Its Hello carries RANK, WORLD_SIZE, GPUWISE_POD and
// GPUWISE_NAMESPACE when they are set.
//
//   fake_shim [--exit-code N] [--kernels N] [--pageable] [--no-final] [--simulated]
//             [--env-out FILE] [--wait-signal READY_FILE]
//
// --pageable adds 1 GB of pageable H2D copies worth pinning; --env-out writes the environment
// variables gpuwise sets; --wait-signal writes READY_FILE after sending and then waits to be
// killed (no final batch).
#include "tests/advisor/wire_client.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace gpuwise;

namespace {

constexpr model::TimeNs kMs = 1'000'000;

void writeEnv(const std::string& path) {
  std::ofstream out(path);
  for (const char* name : {"GPUWISE_ENDPOINT", "LD_PRELOAD", "CUDA_INJECTION64_PATH",
                           "LD_LIBRARY_PATH", "NVTX_INJECTION64_PATH"}) {
    const char* v = std::getenv(name);
    out << name << "=" << (v ? v : "") << "\n";
  }
}

} // namespace

int main(int argc, char** argv) {
  int exit_code = 3, kernels = 10;
  bool pageable = false, final = true, simulated = false;
  std::string env_out, ready_file;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--exit-code")
      exit_code = std::atoi(next().c_str());
    else if (a == "--kernels")
      kernels = std::atoi(next().c_str());
    else if (a == "--pageable")
      pageable = true;
    else if (a == "--no-final")
      final = false;
    else if (a == "--simulated")
      simulated = true;
    else if (a == "--env-out")
      env_out = next();
    else if (a == "--wait-signal")
      ready_file = next(), final = false;
    else {
      std::fprintf(stderr, "fake_shim: unknown argument %s\n", a.c_str());
      return 64;
    }
  }
  if (!env_out.empty()) writeEnv(env_out);
  const char* endpoint = std::getenv("GPUWISE_ENDPOINT");
  if (!endpoint) {
    std::fprintf(stderr, "fake_shim: GPUWISE_ENDPOINT is not set\n");
    return 65;
  }
  try {
    int64_t pid = ::getpid();
    advisor::test::WireClient client(endpoint, pid, 0x5eed0000ull + static_cast<uint64_t>(pid));
    if (!client.waitConnected()) {
      std::fprintf(stderr, "fake_shim: no advisor at %s\n", endpoint);
      return 66;
    }
    auto hello = client.makeHello("NVIDIA H100 80GB HBM3", simulated);
    // RANK and WORLD_SIZE as the shim reads them (interposer/config.h); rank 0 without them.
    if (const char* rank = std::getenv("RANK")) hello.process.rank = std::atoi(rank);
    if (const char* size = std::getenv("WORLD_SIZE")) hello.process.world_size = std::atoi(size);
    // And its pod, as the shim reads it (GPUWISE_POD, GPUWISE_NAMESPACE; interposer/config.h).
    if (const char* pod = std::getenv("GPUWISE_POD")) hello.process.pod = pod;
    if (const char* ns = std::getenv("GPUWISE_NAMESPACE")) hello.process.ns = ns;
    client.sendHello(hello);
    auto gemm = client.names().intern("_Z4gemmPKfS0_Pfi");
    model::TimeNs t = 2000 * kMs;
    if (pageable) {
      model::Copy c;
      c.start = t - 100 * kMs;
      c.end = t;
      c.bytes = 1'000'000'000;
      c.direction = model::CopyDirection::HostToDevice;
      c.src = model::MemoryKind::Pageable;
      c.dst = model::MemoryKind::Device;
      c.stream = 7;
      c.async = true; // cudaMemcpyAsync from malloc'd memory, as in samples/pageable_copies
      client.encoder().add(c);
    }
    for (int i = 0; i < kernels; ++i) {
      model::KernelExec k;
      k.start = t;
      k.end = t + 90 * kMs;
      k.launch_start = t - kMs;
      k.launch_end = t - kMs + 5000;
      k.name = gemm;
      k.stream = 7;
      k.grid = {128, 1, 1};
      k.block = {256, 1, 1};
      client.encoder().add(k);
      t += 100 * kMs;
      if (i % 4 == 3) client.sendBatch(1, false, t);
    }
    client.sendBatch(1, final, t);
    if (!ready_file.empty()) {
      std::ofstream(ready_file) << "sent\n";
      for (;;)
        ::pause();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_shim: %s\n", e.what());
    return 67;
  }
  return exit_code;
}
