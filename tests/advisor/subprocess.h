// Running the gpuwise executable (and the fake shim) as real processes in tests: spawned with
// extra environment variables and a working directory, stdout and stderr captured to files,
// waited for with a deadline (polling, never a fixed sleep); tools found on PATH, and the port a
// server announces on stderr.
#pragma once

#include "tests/sanitizer_env.h"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace gpuwise::advisor::test {

inline std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string buildDir() {
  const char* d = std::getenv("GPUWISE_BUILD_DIR");
  return d ? d : ".";
}
inline std::string sourceDir() {
  const char* d = std::getenv("GPUWISE_SOURCE_DIR");
  return d ? d : "..";
}

// The executable `tool` on PATH (/usr/bin:/bin when PATH is unset), or "" when there is none.
inline std::string which(const std::string& tool) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');) {
    std::string candidate = d + "/" + tool;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

struct TempDir {
  std::string path;
  TempDir() {
    std::string templ = "/tmp/gw-cli-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data())) path = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

// `gpuwise run --simulate` writing DIR/TAG.json and DIR/TAG.html, then `options`, then "--" and
// `command`: how the end-to-end tests run a program under gpuwise.
inline std::vector<std::string> simulatedRunArgv(const TempDir& dir, const std::string& tag,
                                                 const std::vector<std::string>& command,
                                                 const std::vector<std::string>& options = {}) {
  std::vector<std::string> argv{
      buildDir() + "/bin/gpuwise", "run",           "--simulate",         "--report-json",
      dir / (tag + ".json"),       "--report-html", dir / (tag + ".html")};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

// Polls `condition` until it holds or `timeout` passes.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return condition();
}

class Process {
public:
  // Starts `argv` in `cwd` with `env` (NAME=value) added to this process's environment.
  Process(const std::vector<std::string>& argv, const std::vector<std::string>& env,
          const std::string& cwd, const std::string& output_dir, const std::string& tag)
      : out_(output_dir + "/" + tag + ".out"), err_(output_dir + "/" + tag + ".err") {
    std::vector<std::string> all_env;
    auto nameOf = [](const std::string& e) { return e.substr(0, e.find('=')); };
    for (char** e = environ; *e; ++e) {
      bool overridden = false;
      for (const auto& o : env)
        overridden = overridden || nameOf(o) == nameOf(*e);
      if (!overridden) all_env.emplace_back(*e);
    }
    all_env.insert(all_env.end(), env.begin(), env.end());
    gpuwise::test::keepSanitizerPreload(all_env);
    gpuwise::test::forProgram(argv.empty() ? "" : argv[0], buildDir(), all_env);
    std::vector<char*> args, envp;
    for (const auto& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const auto& e : all_env)
      envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
    int rc = posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) pid_ = -1;
  }
  ~Process() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  pid_t pid() const { return pid_; }
  // The exit status as a shell reports it (128 + signal), or nullopt at the deadline.
  std::optional<int> wait(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    if (status_) return status_;
    eventually(
        [&] {
          int st = 0;
          if (::waitpid(pid_, &st, WNOHANG) != pid_) return false;
          status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
          return true;
        },
        timeout);
    return status_;
  }
  std::string out() const { return readFile(out_); }
  std::string err() const { return readFile(err_); }

private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::string out_, err_;
};

// The port a server process announces on stderr: group 1 of `pattern` (e.g. "\\(port ([0-9]+)\\)"),
// waited for until `timeout`; 0 when it never appears.
inline int announcedPort(const Process& p, const std::string& pattern,
                         std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const std::regex re(pattern);
  int port = 0;
  eventually(
      [&] {
        std::smatch m;
        const std::string err = p.err();
        if (!std::regex_search(err, m, re)) return false;
        port = std::stoi(m[1]);
        return true;
      },
      timeout);
  return port;
}

} // namespace gpuwise::advisor::test
