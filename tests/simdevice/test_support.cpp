#include "tests/simdevice/test_support.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <cuda_runtime_api.h>

extern char** environ;

extern "C" {
void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaRegisterFatBinaryEnd(void** fatCubinHandle);
void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                            const char* deviceName, int thread_limit, uint3* tid, uint3* bid,
                            dim3* bDim, dim3* gDim, int* wSize);
}

namespace gwsim_test {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A new empty file of our own; the caller unlinks it. (The name mkstemp reserves is the file
// used: a suffix added to it left the reserved file behind after every run.)
std::string tempPath(const char* what) {
  std::string name = std::string("/tmp/gwsim-test-") + what + "-XXXXXX";
  const int fd = mkstemp(name.data());
  if (fd >= 0) close(fd);
  return name;
}

} // namespace

std::string buildDir() {
  const char* dir = std::getenv("GPUWISE_BUILD_DIR");
  return dir != nullptr ? dir : ".";
}

std::string simdeviceDir() {
  return buildDir() + "/simdevice";
}

ProcessResult runProcess(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         std::chrono::milliseconds timeout) {
  ProcessResult result;
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const std::string& extra : env)
      overridden |= extra.substr(0, extra.find('=')) == name;
    if (!overridden) environment.push_back(entry);
  }
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<char*> c_env, c_argv;
  for (std::string& e : environment)
    c_env.push_back(e.data());
  c_env.push_back(nullptr);
  std::vector<std::string> args = argv;
  for (std::string& a : args)
    c_argv.push_back(a.data());
  c_argv.push_back(nullptr);

  const std::string out_path = tempPath("out"), err_path = tempPath("err");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, c_argv[0], &actions, nullptr, c_argv.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    result.err = std::string("posix_spawn failed: ") + std::strerror(spawned);
    return result;
  }
  const ProcessResult waited = waitChild(pid, timeout);
  result.exit_code = waited.exit_code;
  result.timed_out = waited.timed_out;
  result.out = readFile(out_path);
  result.err = readFile(err_path);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return result;
}

ProcessResult waitChild(pid_t pid, std::chrono::milliseconds timeout) {
  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5)); // polling with a deadline
  }
  if (!result.timed_out && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

std::map<std::string, std::string> parseKeyValues(const std::string& line) {
  std::map<std::string, std::string> values;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ')
      ++i;
    const size_t eq = line.find('=', i);
    const size_t space = line.find(' ', i);
    if (eq == std::string::npos || (space != std::string::npos && space < eq)) {
      i = space == std::string::npos ? line.size() : space; // a bare word: skip it
      continue;
    }
    const std::string key = line.substr(i, eq - i);
    size_t end;
    std::string value;
    if (eq + 1 < line.size() && line[eq + 1] == '"') {
      end = line.find('"', eq + 2);
      value = line.substr(eq + 2, end - eq - 2);
      end = end == std::string::npos ? line.size() : end + 1;
    } else {
      end = line.find_first_of(" \n", eq + 1);
      if (end == std::string::npos) end = line.size();
      value = line.substr(eq + 1, end - eq - 1);
    }
    values[key] = value;
    i = end;
  }
  return values;
}

std::string lastLineStartingWith(const std::string& text, const std::string& prefix) {
  std::string found, line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) found = line;
  }
  return found;
}

void registerKernel(const void* host_fun, const char* mangled_name) {
  static char fatbin_stand_in[16];
  void** module = __cudaRegisterFatBinary(fatbin_stand_in);
  __cudaRegisterFunction(module, static_cast<const char*>(host_fun),
                         const_cast<char*>(mangled_name), mangled_name, -1, nullptr, nullptr,
                         nullptr, nullptr, nullptr);
  __cudaRegisterFatBinaryEnd(module);
}

} // namespace gwsim_test
