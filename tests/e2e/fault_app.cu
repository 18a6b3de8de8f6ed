// The fault program: a small CUDA program (nvcc, -cudart shared) that the fault tests run on the
// simulated device under the real shim, one mode per fault. Every mode prints one line per
// process that the tests compare the report against:
//
//   gwfault pid=1234 role=main kernels=2000 median_launch_ns=2710
//
// Options (any combination that makes sense):
//   --kernels N            kernels launched per phase, per thread, per process (default 1000)
//   --threads T            launch from T threads at once (a barrier releases them together)
//   --fork C               after its own kernels, fork C children at once; each launches N kernels
//                          and exits 0; the parent waits for all, then launches N more
//   --exec                 after its kernels, exec this program again (--kernels N only)
//   --exit exit|_exit|return|throw   how the process ends (default return), with --exit-code K
//   --flush-signal INT|TERM          raise the signal from another thread while the process runs
//                          its exit handlers (the shim's final flush); --ignore-signal installs a
//                          handler that returns, as a Python interpreter's does
//   --phases P --wait-dir D          P phases of N kernels; before phase p > 1 the program prints
//                          "gwfault phase=p-1 done" and waits for the file D/go<p> (tests use it
//                          to kill, stop or restart the advisor between phases)
//   --measure-phase M      the phase whose median launch time is printed (default: the last)
// The median launch time is the host time of one <<<>>> launch, over all threads of the phase.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

__global__ void fault_kernel(int* counter) {
  if (counter != nullptr && threadIdx.x == 0) atomicAdd(counter, 1);
}

struct Options {
  long kernels = 1000;
  int threads = 1;
  int fork_children = 0;
  bool exec_self = false;
  std::string exit_path = "return";
  int exit_code = 0;
  int flush_signal = 0;
  bool ignore_signal = false;
  int phases = 1;
  int measure_phase = 0; // 0: the last
  std::string wait_dir;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "fault_app: %s\n", why);
  std::exit(2);
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "fault_app: %s failed: %s\n", what, cudaGetErrorName(e));
  std::exit(1);
}

// One write per line, so lines from many processes sharing stdout never interleave.
void say(const std::string& line) {
  std::string l = line + "\n";
  ssize_t ignored = ::write(1, l.data(), l.size());
  (void)ignored;
}

// Launches n kernels on the calling thread; the host time of each launch goes to `times`.
void launch(long n, int* counter, std::vector<int64_t>* times) {
  for (long i = 0; i < n; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fault_kernel<<<1, 32>>>(counter);
    auto t1 = std::chrono::steady_clock::now();
    if (times)
      times->push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  }
  check(cudaGetLastError(), "launch");
}

int64_t median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

void waitForFile(const std::string& path) {
  struct stat st {};
  while (::stat(path.c_str(), &st) != 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// The kernels of one process: phases of n launches from `threads` threads. Returns how many.
long runKernels(const Options& o, const char* role) {
  int* counter = nullptr;
  check(cudaMalloc(&counter, sizeof(int)), "cudaMalloc");
  long launched = 0;
  std::vector<int64_t> measured;
  const int measure = o.measure_phase > 0 ? o.measure_phase : o.phases;
  for (int phase = 1; phase <= o.phases; ++phase) {
    if (phase > 1) {
      say("gwfault phase=" + std::to_string(phase - 1) + " done");
      waitForFile(o.wait_dir + "/go" + std::to_string(phase));
    }
    std::vector<int64_t> times;
    times.reserve(size_t(o.kernels) * size_t(o.threads));
    if (o.threads <= 1) {
      launch(o.kernels, counter, &times);
    } else {
      std::atomic<int> ready{0};
      std::vector<std::thread> pool;
      std::vector<std::vector<int64_t>> per_thread(size_t(o.threads));
      for (int t = 0; t < o.threads; ++t) {
        pool.emplace_back([&, t] {
          per_thread[size_t(t)].reserve(size_t(o.kernels));
          ready.fetch_add(1);
          while (ready.load() < o.threads)
            std::this_thread::yield();
          launch(o.kernels, counter, &per_thread[size_t(t)]);
          check(cudaStreamSynchronize(cudaStreamPerThread), "cudaStreamSynchronize");
        });
      }
      for (auto& th : pool)
        th.join();
      for (auto& v : per_thread)
        times.insert(times.end(), v.begin(), v.end());
    }
    launched += o.kernels * o.threads;
    if (phase == measure) measured = std::move(times);
  }
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaFree(counter), "cudaFree");
  say("gwfault pid=" + std::to_string(::getpid()) + " role=" + role + " kernels=" +
      std::to_string(launched) + " median_launch_ns=" + std::to_string(median(measured)));
  return launched;
}

int g_flush_signal = 0;
std::atomic<int> g_exiting{0};
volatile sig_atomic_t g_signals_seen = 0;

void onSignal(int) {
  g_signals_seen = g_signals_seen + 1;
}

// Registered after the first CUDA call, so (atexit runs handlers last-in first-out) it runs just
// before the shim's final flush: the raiser thread then signals the process during that flush.
void beginExit() {
  g_exiting.store(1);
  // Give the raiser a head start on the flush without sleeping a fixed time: wait until it took
  // the flag (bounded), then return into the next exit handler, the shim's.
  for (int i = 0; i < 1000000 && g_exiting.load() != 2; ++i)
    std::this_thread::yield();
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--kernels")
      o.kernels = std::atol(next().c_str());
    else if (a == "--threads")
      o.threads = std::atoi(next().c_str());
    else if (a == "--fork")
      o.fork_children = std::atoi(next().c_str());
    else if (a == "--exec")
      o.exec_self = true;
    else if (a == "--exit")
      o.exit_path = next();
    else if (a == "--exit-code")
      o.exit_code = std::atoi(next().c_str());
    else if (a == "--flush-signal") {
      std::string s = next();
      o.flush_signal = s == "INT" ? SIGINT : s == "TERM" ? SIGTERM : 0;
      if (!o.flush_signal) usage("--flush-signal takes INT or TERM");
    } else if (a == "--ignore-signal")
      o.ignore_signal = true;
    else if (a == "--phases")
      o.phases = std::atoi(next().c_str());
    else if (a == "--wait-dir")
      o.wait_dir = next();
    else if (a == "--measure-phase")
      o.measure_phase = std::atoi(next().c_str());
    else
      usage(("unknown option " + a).c_str());
  }
  if (o.kernels < 0 || o.threads < 1 || o.fork_children < 0 || o.phases < 1) usage("bad numbers");
  if (o.phases > 1 && o.wait_dir.empty()) usage("--phases needs --wait-dir");
  return o;
}

} // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  check(cudaSetDevice(0), "cudaSetDevice");
  if (o.ignore_signal) {
    std::signal(SIGINT, onSignal);
    std::signal(SIGTERM, onSignal);
  }
  runKernels(o, "main");

  if (o.fork_children > 0) {
    std::vector<pid_t> children;
    for (int c = 0; c < o.fork_children; ++c) {
      pid_t pid = ::fork();
      if (pid < 0) usage("fork failed");
      if (pid == 0) {
        Options child = o;
        child.phases = 1;
        child.measure_phase = 0;
        child.threads = 1;
        runKernels(child, "child");
        std::exit(0); // exit handlers run: the child's own final flush
      }
      children.push_back(pid);
    }
    int failed = 0;
    for (pid_t pid : children) {
      int st = 0;
      if (::waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) ++failed;
    }
    if (failed) {
      std::fprintf(stderr, "fault_app: %d children failed\n", failed);
      return 1;
    }
    Options again = o;
    again.phases = 1;
    again.measure_phase = 0;
    runKernels(again, "parent");
  }

  if (o.exec_self) {
    std::string kernels = std::to_string(o.kernels);
    char* args[] = {argv[0], const_cast<char*>("--kernels"), kernels.data(), nullptr};
    ::execv("/proc/self/exe", args);
    std::perror("fault_app: execv");
    return 1;
  }

  std::thread raiser;
  if (o.flush_signal) {
    g_flush_signal = o.flush_signal;
    std::atexit(beginExit);
    raiser = std::thread([] {
      while (g_exiting.load() == 0)
        std::this_thread::yield();
      g_exiting.store(2);
      ::kill(::getpid(), g_flush_signal);
    });
    raiser.detach();
  }

  if (o.exit_path == "exit") std::exit(o.exit_code);
  if (o.exit_path == "_exit") ::_exit(o.exit_code);
  if (o.exit_path == "throw") throw std::runtime_error("fault_app: uncaught, as asked");
  if (o.exit_path != "return") usage("--exit takes exit, _exit, return or throw");
  return o.exit_code;
}
