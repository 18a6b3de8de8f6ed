#include "advisor/cli/child_process.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gpuwise::advisor {
namespace {

std::atomic<pid_t> g_forward_to{0};

// Signals a terminal sends (Ctrl-C) reach the whole foreground process group, the child
// included: forwarding those (si_code SI_KERNEL) would deliver them twice. Signals sent to
// gpuwise alone (kill, a job scheduler) are forwarded.
void forward(int sig, siginfo_t* info, void*) {
  pid_t pid = g_forward_to.load();
  if (pid > 0 && (!info || info->si_code != SI_KERNEL)) ::kill(pid, sig);
}

struct ForwardingScope {
  struct sigaction old_int {
  }, old_term{};
  explicit ForwardingScope(pid_t pid) {
    g_forward_to.store(pid);
    struct sigaction sa {};
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~ForwardingScope() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    g_forward_to.store(0);
  }
};

std::vector<char*> cStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v)
    out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

} // namespace

std::optional<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv,
                                                const std::vector<std::string>& env,
                                                std::string* error) {
  if (argv.empty() || argv[0].empty()) {
    *error = "no command given";
    return std::nullopt;
  }
  auto args = cStrings(argv);
  auto envp = cStrings(env);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  // glibc's posix_spawnp reports a failed exec (not found, not executable) as its return value.
  int rc = posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    // As a shell says it: a bare name searched in PATH is "not found", a path names its errno.
    bool searched = argv[0].find('/') == std::string::npos;
    *error = argv[0] + ": " +
             (rc == ENOENT && searched ? std::string("command not found") : std::strerror(rc));
    return std::nullopt;
  }
  return ChildProcess(pid);
}

int ChildProcess::wait() {
  ForwardingScope forwarding(pid_);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

std::vector<std::string> environmentWith(const std::vector<std::string>& overrides) {
  std::vector<std::string> env;
  auto nameOf = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    bool replaced = false;
    for (const auto& o : overrides)
      if (nameOf(o) == nameOf(entry)) replaced = true;
    if (!replaced) env.push_back(std::move(entry));
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

std::optional<std::string> findVariable(const std::vector<std::string>& env,
                                        const std::string& name) {
  for (const auto& e : env)
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=')
      return e.substr(name.size() + 1);
  return std::nullopt;
}

} // namespace gpuwise::advisor
