// Whole processes: libgpuwise.so preloaded into programs that never touch CUDA (nothing happens,
// nothing is printed, exit codes unchanged), into a CUDA-shaped program on FakeCudart (it records,
// forwards, names its drain thread, and exits promptly), loaded through CUDA_INJECTION64_PATH's
// InitializeInjection, and the fork program. Every child runs with a deadline.
#include "tests/sanitizer_env.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Result {
  int code = -1;
  bool timed_out = false;
  std::string out, err;
  double seconds = 0;
};

std::string buildDir() {
  const char* d = std::getenv("GPUWISE_BUILD_DIR");
  char* abs = realpath(d ? d : ".", nullptr); // children may change directory (pyenv's shims do)
  std::string s = abs ? abs : ".";
  std::free(abs);
  return s;
}
std::string shim() {
  return buildDir() + "/lib/libgpuwise.so";
}

// Runs argv with exactly `env` as its environment (plus PATH), capturing output, killing it at
// the deadline.
Result run(std::vector<std::string> argv, std::vector<std::string> env,
           std::chrono::seconds deadline = std::chrono::seconds(30)) {
  int out[2], err[2];
  REQUIRE(pipe2(out, O_CLOEXEC) == 0);
  REQUIRE(pipe2(err, O_CLOEXEC) == 0);
  env.push_back(std::string("PATH=") +
                (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"));
  gpuwise::test::passSanitizerEnvironment(env);
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    std::vector<char*> a, e;
    for (auto& s : argv)
      a.push_back(s.data());
    a.push_back(nullptr);
    for (auto& s : env)
      e.push_back(s.data());
    e.push_back(nullptr);
    execvpe(a[0], a.data(), e.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  Result r;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  auto until = t0 + deadline;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, int(left.count())) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, size_t(n));
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

bool haveProgram(const char* name) {
  return run({"sh", "-c", std::string("command -v ") + name}, {}).code == 0;
}

} // namespace

TEST_CASE("Preloaded into programs that never touch CUDA: nothing happens, nothing is printed") {
  REQUIRE(access(shim().c_str(), R_OK) == 0);
  std::string preload = "LD_PRELOAD=" + shim();
  for (const auto& env : std::vector<std::vector<std::string>>{
           {preload},
           {preload, "GPUWISE_ENDPOINT=tcp://127.0.0.1:9", "GPUWISE_LOG=debug"},
           {preload, "GPUWISE_DISABLE=1"}}) {
    Result t = run({"/bin/true"}, env);
    CHECK(t.code == 0);
    CHECK(t.out.empty());
    CHECK(t.err.empty());
    Result f = run({"/bin/false"}, env);
    CHECK(f.code == 1);
    CHECK(f.err.empty());
  }
}

// [.python3], [.fork] and [.cuda]: CTest entries of their own (interposer_process_python3_test
// ...), reported Skipped where python3 or the nvcc-built program is missing, or in a sanitizer
// lane.
TEST_CASE("Preloaded into python3, which never touches CUDA: nothing happens, nothing is printed",
          "[.python3]") {
  if (!haveProgram("python3")) gpuwise::test::skipTest("python3 is not installed");
  REQUIRE(access(shim().c_str(), R_OK) == 0);
  std::string preload = "LD_PRELOAD=" + shim();
  Result p = run({"python3", "-c", "pass"}, {preload, "GPUWISE_ENDPOINT=tcp://127.0.0.1:9"});
  INFO(p.err);
  CHECK(p.code == 0);
  CHECK(p.out.empty());
  CHECK(p.err.empty());
  Result q = run({"python3", "-c", "import sys; print('hi'); sys.exit(3)"}, {preload});
  CHECK(q.code == 3);
  CHECK(q.out == "hi\n");
  CHECK(q.err.empty());
}

TEST_CASE("Preloaded into a CUDA program: forwards, records every call, exits promptly") {
  std::string app = buildDir() + "/tests/interposer_fake_app";
  std::string libs = "LD_LIBRARY_PATH=" + buildDir() + "/tests/lib";
  std::string preload = "LD_PRELOAD=" + shim();
  // Without the shim: the reference output.
  Result plain = run({app}, {libs});
  REQUIRE(plain.code == 0);
  CHECK(plain.out == "sum=522753 drain=no\n");

  Result rec =
      run({app}, {libs, preload, "GPUWISE_ENDPOINT=null:", "GPUWISE_LOG=debug", "GPUWISE_CUPTI=0"});
  INFO(rec.err);
  CHECK(rec.code == 0);
  CHECK(rec.out == "sum=522753 drain=yes\n");
  CHECK(rec.err.find("recording to null:, interposer tier (GPUWISE_CUPTI=0)") != std::string::npos);
  CHECK(rec.err.find("305 events recorded") != std::string::npos);
  CHECK(rec.err.find(" 0 dropped") != std::string::npos);
  CHECK(rec.seconds < 10);

  // No endpoint, or disabled: forwarding only, no thread, no output.
  for (const char* extra : {"GPUWISE_DISABLE=1", "GPUWISE_LOG=warn"}) {
    Result off = run({app}, {libs, preload, extra});
    CHECK(off.code == 0);
    CHECK(off.out == "sum=522753 drain=no\n");
    CHECK(off.err.empty());
  }

  // The real libcupti on the library path: on a machine without a driver it refuses, and the shim
  // says so and carries on with the interposer's own timings.
  Result cupti = run({app}, {libs, preload, "GPUWISE_ENDPOINT=null:", "GPUWISE_LOG=debug"});
  INFO(cupti.err);
  CHECK(cupti.code == 0);
  CHECK(cupti.out == "sum=522753 drain=yes\n");
  CHECK((cupti.err.find("interposer tier") != std::string::npos ||
         cupti.err.find("cupti tier") != std::string::npos));

  // GPUWISE_CUPTI_LIBRARY names the one CUPTI to load: a wrong one leaves the interposer tier,
  // and the reason names the file.
  Result named = run({app}, {libs, preload, "GPUWISE_ENDPOINT=null:", "GPUWISE_LOG=debug",
                             "GPUWISE_CUPTI_LIBRARY=/nonexistent/libcupti.so.13"});
  INFO(named.err);
  CHECK(named.code == 0);
  CHECK(named.out == "sum=522753 drain=yes\n");
  CHECK(named.err.find("interposer tier (CUPTI unavailable: /nonexistent/libcupti.so.13 not "
                       "loadable: ") != std::string::npos);

  // An endpoint this build cannot reach: the program is unaffected and exits within the budget.
  Result far = run(
      {app}, {libs, preload, "GPUWISE_ENDPOINT=tcp://127.0.0.1:9", "GPUWISE_EXIT_TIMEOUT_MS=1000"});
  CHECK(far.code == 0);
  CHECK(far.out.rfind("sum=522753", 0) == 0);
  CHECK(far.seconds < 10);
}

TEST_CASE("Loaded through CUDA_INJECTION64_PATH: InitializeInjection returns 1, once or twice") {
  std::string app = buildDir() + "/tests/interposer_fake_app";
  std::string libs = "LD_LIBRARY_PATH=" + buildDir() + "/tests/lib";
  Result r = run({app, "--inject", shim()}, {libs});
  CHECK(r.code == 0);
  CHECK(r.out == "InitializeInjection=1,1\n");
  CHECK(r.err.empty());
  Result s = run({app, "--inject", shim()}, {libs, "GPUWISE_ENDPOINT=null:", "GPUWISE_CUPTI=0"});
  CHECK(s.code == 0);
  CHECK(s.out == "InitializeInjection=1,1\n");
}

TEST_CASE("fork: parent and children record on their own sessions and all exit in time",
          "[.fork]") {
  if (!gpuwise::test::forkChildrenCheckable()) // the sanitizer lanes: tests/sanitizer_env.h
    gpuwise::test::skipTest("a sanitizer lane: children of a multithreaded fork cannot be checked");
  std::vector<std::string> env{"LD_LIBRARY_PATH=" + buildDir() + "/tests/lib"};
  Result r = run({buildDir() + "/tests/interposer_fork_program"}, env, std::chrono::seconds(60));
  INFO(r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.code == 0);
  CHECK(r.out == "fork ok\n");
}

TEST_CASE("An nvcc-built program's runtime references bind to the hooks and forward to libcudart",
          "[.cuda]") {
  std::string app = buildDir() + "/tests/interposer_cuda_app";
  if (access(app.c_str(), X_OK) != 0)
    gpuwise::test::skipTest(app + " is not built (CUDA language off)");
  std::string preload = "LD_PRELOAD=" + shim();
  // Whatever the machine (no driver here: every call fails the same way), the shim changes
  // neither the output nor the exit code.
  Result plain = run({app}, {});
  // The loader's binding report goes to a file of its own (LD_DEBUG_OUTPUT): on stderr it
  // interleaved with the shim's drain thread logging. LD_BIND_NOW: the loader writes each binding
  // line in two writes (the symbol, then its " [version]"), so a lazy binding in another thread
  // (the ASan runtime's, the shim's) could land between them and split the line (2 runs in 10 in
  // the ASan lane). Bound at start-up, before any thread exists, the program's references resolve
  // by the same lookup, one line at a time.
  char dir_template[] = "/tmp/gw-bindings-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string debug_prefix = std::string(dir_template) + "/ld";
  Result hooked =
      run({app}, {preload, "GPUWISE_ENDPOINT=null:", "GPUWISE_LOG=debug", "LD_DEBUG=bindings",
                  "LD_DEBUG_OUTPUT=" + debug_prefix, "LD_BIND_NOW=1"});
  CHECK(hooked.code == plain.code);
  CHECK(hooked.out == plain.out);
  std::string bindings;
  for (const auto& f : std::filesystem::directory_iterator(dir_template)) {
    std::ifstream in(f.path());
    bindings.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::filesystem::remove_all(dir_template);
  for (const char* symbol : {"__cudaRegisterFunction", "cudaMalloc", "__cudaGetKernel",
                             "__cudaLaunchKernel", "cudaDeviceSynchronize", "cudaFree"}) {
    INFO(symbol);
    // The program's reference binds to us, with the version the real runtime gives it ...
    CHECK(bindings.find("interposer_cuda_app [0] to " + shim() + " [0]: normal symbol `" + symbol +
                        "' [libcudart.so.13]") != std::string::npos);
    // ... and our forwarding reference binds to the real libcudart.so.13.
    CHECK(bindings.find("libgpuwise.so [0] to ") != std::string::npos);
  }
  CHECK(hooked.err.find("4 events recorded") != std::string::npos);
}
