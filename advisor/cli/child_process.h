// The command `gpuwise run` profiles: spawned with its own environment, waited for, and sent the
// SIGINT/SIGTERM that gpuwise itself receives, so stopping gpuwise stops the job cleanly and
// gpuwise can still write the report.
//
// Called from the CLI's main thread only. wait() blocks until the child exits. The forwarding
// handlers are process-wide and installed only between spawn() and the end of wait().
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace gpuwise::advisor {

class ChildProcess {
public:
  // Starts argv[0], searched in PATH, with exactly `env` as its environment, signal mask empty and
  // SIGINT/SIGTERM at their defaults. nullopt with `error` set ("CMD: No such file or directory")
  // when it cannot be executed.
  static std::optional<ChildProcess> spawn(const std::vector<std::string>& argv,
                                           const std::vector<std::string>& env, std::string* error);

  pid_t pid() const { return pid_; }
  // Waits for the child, forwarding SIGINT and SIGTERM to it meanwhile, and returns its status as
  // a shell reports it: the exit code, or 128 + the signal that killed it.
  int wait();

private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
};

// `environ` as a list, with `overrides` (NAME=value) replacing entries of the same name.
std::vector<std::string> environmentWith(const std::vector<std::string>& overrides);
// The value of NAME in a NAME=value list, if present.
std::optional<std::string> findVariable(const std::vector<std::string>& env,
                                        const std::string& name);

} // namespace gpuwise::advisor
