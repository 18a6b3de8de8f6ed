// fork() under the shim: the parent records, forks while other threads are inside hooks and
// registering pinned memory, and keeps recording; the child must not deadlock, must not touch the
// parent's session, and must start its own on its first CUDA call. Exit 0 when all of that held;
// otherwise one line on stderr and a distinct exit code. Run by process_test with a deadline.
#include "fake_batch_sink.h"
#include "fake_cudart/fake_cudart.h"
#include "interposer/recorder.h"
#include "interposer/runtime.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace gpuwise;
using namespace gpuwise::interposer;
using gpuwise::interposer::testing::FakeBatchSink;

namespace {

FakeBatchSink* g_sink = nullptr; // this process's current sink

int fail(int code, const char* what) {
  std::fprintf(stderr, "fork_program[%d]: %s\n", int(getpid()), what);
  return code;
}

size_t memsetsReceived() {
  return g_sink ? g_sink->count([](const auto& b) { return b.batch.memsets.size(); }) : 0;
}

int child(uint64_t parent_session, void* pinned_in_parent) {
  ShimStatus st = shimStatus();
  if (st.session) return fail(10, "child still sees the parent's session");
  if (st.mode != kModeUnstarted) return fail(11, "child is not waiting to start afresh");
  g_sink = nullptr;
  void* dev = nullptr;
  if (cudaMalloc(&dev, 4096) != cudaSuccess) return fail(12, "cudaMalloc failed in the child");
  for (int i = 0; i < 5; ++i)
    cudaMemset(dev, i, 64);
  st = shimStatus();
  if (!st.session || st.session_id == parent_session)
    return fail(13, "no new session in the child");
  // The parent's pinned ranges are not the child's.
  cudaMemcpy(dev, pinned_in_parent, 64, cudaMemcpyHostToDevice);
  if (!drainAndWait(std::chrono::seconds(10), 2)) return fail(14, "child drain made no progress");
  if (memsetsReceived() != 5) return fail(15, "child's sink did not get exactly its 5 memsets");
  auto copies = g_sink->with([](auto& s) {
    std::vector<model::Copy> c;
    for (auto& b : s.batches)
      c.insert(c.end(), b.batch.copies.begin(), b.batch.copies.end());
    return c;
  });
  if (copies.size() != 1 || copies[0].src != model::MemoryKind::Pageable)
    return fail(16, "the parent's pinned range leaked into the child");
  shutdownShim();
  if (!shimStatus().drain.final_sent) return fail(17, "child's final batch was not sent");
  return 0;
}

} // namespace

int main() {
  Config c;
  c.endpoint = "fake:";
  c.cupti = false;
  c.batch_ms = 2;
  c.log = LogLevel::Warn;
  ShimDeps d;
  d.make_sink = [](const Config&, const model::NameTable& names, uint64_t, int64_t) {
    auto s = std::make_unique<FakeBatchSink>(&names);
    g_sink = s.get();
    return std::unique_ptr<BatchSink>(std::move(s));
  };
  configure(c, d);
  pthread_atfork(forkPrepare, forkParent, forkChild);

  void* dev = nullptr;
  if (cudaMalloc(&dev, 1 << 16) != cudaSuccess) return fail(2, "cudaMalloc failed");
  void* pinned = nullptr;
  if (cudaMallocHost(&pinned, 4096) != cudaSuccess) return fail(2, "cudaMallocHost failed");
  uint64_t parent_session = shimStatus().session_id;

  // Busy threads while forking: one launching copies, one churning pinned registrations (which
  // takes the registry's lock), so fork lands in the middle of both.
  std::atomic<bool> stop{false};
  static char churn[1 << 16];
  std::thread copier([&] {
    while (!stop.load())
      cudaMemsetAsync(dev, 0, 64, nullptr);
  });
  std::thread registrar([&] {
    while (!stop.load()) {
      cudaHostRegister(churn, sizeof churn, 0);
      cudaHostUnregister(churn);
    }
  });

  std::vector<pid_t> children;
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3)); // let the threads get going
    pid_t pid = fork();
    if (pid < 0) return fail(3, "fork failed");
    if (pid == 0) std::exit(child(parent_session, pinned)); // exit(): atexit paths run too
    children.push_back(pid);
  }

  // The parent carries on recording with its own session.
  size_t before = memsetsReceived();
  for (int i = 0; i < 3; ++i)
    cudaMemset(dev, 1, 64);
  stop = true;
  copier.join();
  registrar.join();
  if (!drainAndWait(std::chrono::seconds(10), 2)) return fail(4, "parent drain made no progress");
  if (memsetsReceived() < before + 3) return fail(5, "parent lost its memsets after fork");
  if (shimStatus().session_id != parent_session) return fail(6, "parent's session changed");

  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (pid_t pid : children) {
    int status = 0;
    for (;;) {
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) break;
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        return fail(7, "a child did not exit within the deadline (deadlock?)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!WIFEXITED(status)) return fail(8, "a child died from a signal");
    if (WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "fork_program: child exited with %d\n", WEXITSTATUS(status));
      return 9;
    }
  }
  cudaFreeHost(pinned);
  cudaFree(dev);
  std::printf("fork ok\n");
  return 0;
}
