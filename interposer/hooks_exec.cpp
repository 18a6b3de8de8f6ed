// exec hooks: execve, execv, execvp and execvpe replace the process image without running exit
// handlers, so the shim's final flush (atexit) never happens and the old image's last batch (for
// a short program, everything it recorded) would vanish uncounted. Each hook runs the final flush
// first (bounded by GPUWISE_EXIT_TIMEOUT_MS, as at exit), then calls the real function. The new
// image loads the shim again and starts its own session; if exec fails, the process carries on
// with the shim off.
//
// Only the process that owns the session flushes: a vfork child shares its parent's memory and
// must not touch the parent's session (flushBeforeExec checks the pid). The real functions are
// resolved at load time, so a vfork child never calls into the dynamic linker here.
//
// The references an executable makes are versioned (execve@GLIBC_2.2.5 on x86_64), so these
// definitions carry glibc's version nodes (exec_<arch>.map), as the runtime hooks carry
// libcudart.so.13. Built into libgpuwise.so only, not the core library tests link.
#include "interposer/real_symbol.h"
#include "interposer/runtime.h"

#include <dlfcn.h>

namespace {

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvFn = int (*)(const char*, char* const[]);

ExecveFn g_execve = nullptr;
ExecvFn g_execv = nullptr;
ExecvFn g_execvp = nullptr;
ExecveFn g_execvpe = nullptr;

__attribute__((constructor)) void resolveExec() {
  g_execve = reinterpret_cast<ExecveFn>(dlsym(RTLD_NEXT, "execve"));
  g_execv = reinterpret_cast<ExecvFn>(dlsym(RTLD_NEXT, "execv"));
  g_execvp = reinterpret_cast<ExecvFn>(dlsym(RTLD_NEXT, "execvp"));
  g_execvpe = reinterpret_cast<ExecveFn>(dlsym(RTLD_NEXT, "execvpe"));
}

void flush() {
  try {
    gpuwise::interposer::flushBeforeExec();
  } catch (...) {
  }
}

} // namespace

GPUWISE_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  flush();
  return g_execve(path, argv, envp);
}

GPUWISE_EXPORT int execv(const char* path, char* const argv[]) {
  flush();
  return g_execv(path, argv);
}

GPUWISE_EXPORT int execvp(const char* file, char* const argv[]) {
  flush();
  return g_execvp(file, argv);
}

GPUWISE_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  flush();
  return g_execvpe(file, argv, envp);
}
