// Children of a test under a sanitizer lane (cmake/sanitizers.cmake) need the sanitizer runtime
// preloaded ahead of anything the test preloads itself (the shim): a test that sets LD_PRELOAD
// replaces the lane's, and a sanitized shim loaded without its runtime first crashes at its first
// intercepted call (TSan: SEGV at address 0). In a normal build GPUWISE_SANITIZER_PRELOAD is unset
// and nothing changes.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

namespace gpuwise::test {

// True in a sanitizer lane: resident memory there is the sanitizer's shadow and quarantine as
// much as ours (TSan maps several shadow bytes per byte; ASan holds 256 MiB of freed memory back),
// so memory bounds measured as RSS are checked in the normal build only.
inline bool underSanitizer() {
  const char* runtime = std::getenv("GPUWISE_SANITIZER_PRELOAD");
  return runtime && *runtime;
}

// False in the sanitizer lanes: there the child of a fork() in a multithreaded process cannot be
// checked, because neither runtime that gcc 12 ships is fork-safe.
// - TSan turns itself off in such a child (its maintainers: "tsan simply disables itself after
//   multithreaded fork", llvm-project#96600). gcc 12's runtime aborts the child at its first thread
//   ("dup thread with used id").
// - gcc 12's ASan runtime does not lock its allocator around fork(). compiler-rt added that later
//   (BeforeFork/AfterFork in asan_posix.cpp). If one of the parent's threads is inside the
//   allocator when fork() runs, the child blocks forever at its first allocation of the same size
//   class. gdb on a hung child of interposer_fork_program showed the child's drain thread in
//   SizeClassAllocator64::GetFromAllocator -> Mutex::Lock. That was 6 of 40 runs on a quiet
//   machine; the normal build passed 60 of 60.
// The normal lane runs every fork case.
inline bool forkChildrenCheckable() {
  return !underSanitizer();
}

// "RUNTIME:" in a sanitizer lane, "" otherwise: what keepSanitizerPreload() puts in front of a
// test's own LD_PRELOAD, for tests that check the exact value a child sees.
inline std::string sanitizerPreloadPrefix() {
  const char* runtime = std::getenv("GPUWISE_SANITIZER_PRELOAD");
  return runtime && *runtime ? std::string(runtime) + ":" : std::string();
}

// Prepends the lane's runtime to an LD_PRELOAD=... entry of `env`, once.
inline void keepSanitizerPreload(std::vector<std::string>& env) {
  const char* runtime = std::getenv("GPUWISE_SANITIZER_PRELOAD");
  if (!runtime || !*runtime) return;
  const std::string prefix = "LD_PRELOAD=";
  for (auto& e : env) {
    if (e.rfind(prefix, 0) != 0) continue;
    if (e.find(runtime) == std::string::npos) e.insert(prefix.size(), std::string(runtime) + ":");
    return;
  }
}

// For a child given exactly `env`: the lane's options (unless `env` sets them itself) and its
// runtime preloaded.
inline void passSanitizerEnvironment(std::vector<std::string>& env) {
  for (const char* name : {"ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS"}) {
    const std::string prefix = std::string(name) + "=";
    bool set = false;
    for (const auto& e : env)
      set = set || e.rfind(prefix, 0) == 0;
    if (const char* v = std::getenv(name); v && !set) env.push_back(prefix + v);
  }
  const char* runtime = std::getenv("GPUWISE_SANITIZER_PRELOAD");
  if (!runtime || !*runtime) return;
  bool has_preload = false;
  for (const auto& e : env)
    has_preload = has_preload || e.rfind("LD_PRELOAD=", 0) == 0;
  if (!has_preload) env.push_back(std::string("LD_PRELOAD=") + runtime);
  keepSanitizerPreload(env);
}

// Removes the lane's runtime from the LD_PRELOAD entry of `env` (the entry goes when nothing else
// is left in it), for a program that never loads our code: there the preloaded runtime only gets in
// the way (gcc 12's libasan preloaded into curl deadlocks in its first setlocale).
inline void withoutSanitizerRuntime(std::vector<std::string>& env) {
  const char* runtime = std::getenv("GPUWISE_SANITIZER_PRELOAD");
  if (!runtime || !*runtime) return;
  const std::string prefix = "LD_PRELOAD=";
  for (size_t i = 0; i < env.size(); ++i) {
    if (env[i].rfind(prefix, 0) != 0) continue;
    std::string kept, list = env[i].substr(prefix.size());
    for (size_t at = 0; at <= list.size();) {
      size_t end = list.find_first_of(": ", at);
      if (end == std::string::npos) end = list.size();
      std::string item = list.substr(at, end - at);
      if (!item.empty() && item != runtime) kept += (kept.empty() ? "" : ":") + item;
      at = end + 1;
    }
    if (kept.empty())
      env.erase(env.begin() + long(i));
    else
      env[i] = prefix + kept;
    return;
  }
}

// The ASan lane checks leaks in the programs we build. `withoutLeakChecks(env)` turns the check
// off (detect_leaks=0 after the lane's ASAN_OPTIONS, in the ASAN_OPTIONS entry of `env`, added when
// absent) for a child whose leaks LeakSanitizer cannot judge: programs we do not build, and what
// they start (bash, openssl, curl, python: their own leaks are not ours, and LeakSanitizer's tracer
// cannot stop Python's threads: "Tracer caught signal 11"); forProgram() below does this for every
// program outside the build tree. (The children of a multithreaded fork() needed it too: the
// parent's other threads do not exist there, so LeakSanitizer cannot scan their stacks. Those
// tests now skip in the sanitizer lanes: forkChildrenCheckable().)
// Outside the ASan lane it changes nothing.
inline void withoutLeakChecks(std::vector<std::string>& env) {
  const std::string prefix = "ASAN_OPTIONS=";
  for (auto& e : env) {
    if (e.rfind(prefix, 0) != 0) continue;
    if (e.size() > prefix.size()) e += ":detect_leaks=0";
    return;
  }
  const char* lane = std::getenv("ASAN_OPTIONS");
  if (lane && *lane) env.push_back(prefix + lane + ":detect_leaks=0");
}

// The sanitizer lanes' rule for the full environment `env` of a child running `program`: leaks are
// checked in the programs we build only (those under `build_dir`), and the runtime stays preloaded
// only where our code may run: our programs, and Python, which runs them (gpu-check, train.py
// under `gpuwise run`). curl, openssl, bash scripts, kubectl and the browser never load our code.
inline void forProgram(const std::string& program, const std::string& build_dir,
                       std::vector<std::string>& env) {
  if (!build_dir.empty() && program.rfind(build_dir + "/", 0) == 0) return;
  withoutLeakChecks(env);
  const std::string name = program.substr(program.rfind('/') + 1);
  if (name.rfind("python", 0) != 0) withoutSanitizerRuntime(env);
}

} // namespace gpuwise::test
