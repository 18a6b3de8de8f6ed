// Helpers shared by the simulated device's tests: running a helper process with a deadline,
// parsing `key=value` summary lines, finding build outputs, and registering host functions as
// kernels the way nvcc's generated static constructor does.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace gwsim_test {

struct ProcessResult {
  int exit_code = -1; // -1: did not exit (killed at the deadline) or killed by a signal
  bool timed_out = false;
  std::string out, err;
};

// Runs argv[0] (a path) with the current environment plus `env` ("NAME=value", overriding), and
// waits for it, polling until `timeout`; kills it (by its pid) when the deadline passes.
ProcessResult runProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         std::chrono::milliseconds timeout = std::chrono::seconds(120));

// Waits for the child `pid`, polling until `timeout`; kills it (SIGKILL) when the deadline passes.
// exit_code and timed_out as runProcess reports them; out and err stay empty.
ProcessResult waitChild(pid_t pid, std::chrono::milliseconds timeout);

// $GPUWISE_BUILD_DIR (set by CTest), else the current directory.
std::string buildDir();
std::string simdeviceDir(); // <build>/simdevice

// Parses "a=1 b=two c=\"x y\"" (the first `prefix` word, if given, must match and is skipped).
std::map<std::string, std::string> parseKeyValues(const std::string& line);
// The last line of `text` that starts with `prefix`, or "".
std::string lastLineStartingWith(const std::string& text, const std::string& prefix);

// Registers `host_fun` as a kernel named `mangled_name` in a module of its own, as nvcc's
// __sti____cudaRegisterAll does (__cudaRegisterFatBinary, __cudaRegisterFunction, ...End).
void registerKernel(const void* host_fun, const char* mangled_name);

} // namespace gwsim_test
