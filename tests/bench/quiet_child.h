// Runs a command for a benchmark: stdout and stderr on /dev/null, waited for, with its resource
// use. Shared by the benchmarks that time or measure whole gpuwise processes.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <vector>

extern char** environ;

namespace gpuwise::bench {

// argv[0] is a path (no PATH search). Returns the exit code, -1 when it did not start or did not
// exit normally; `usage` (may be null) receives the child's own resource use (peak RSS, CPU).
inline int runQuietChild(const std::vector<std::string>& args, struct rusage* usage) {
  std::vector<char*> argv;
  for (const auto& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  struct rusage ru {};
  if (wait4(pid, &status, 0, &ru) != pid) return -1;
  if (usage) *usage = ru;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace gpuwise::bench
