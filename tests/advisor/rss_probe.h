// Memory of a running process as the kernel reports it, and the watcher's helpers shared by the
// bounded-memory test and bench: VmRSS of a pid, the child a launcher spawned, and the last
// "progress launches=N" line a long_run_app wrote to its output file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace gpuwise::advisor::test {

// A "Vm...:" field of /proc/PID/status in MiB; nullopt once the process is gone.
inline std::optional<double> statusMiB(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(field.size() + 1));
    uint64_t kb = 0;
    fields >> kb;
    return double(kb) / 1024.0;
  }
  return std::nullopt;
}

// VmRSS in MiB; nullopt once the process is gone.
inline std::optional<double> rssMiB(pid_t pid) {
  return statusMiB(pid, "VmRSS");
}
// VmHWM (the highest VmRSS so far) in MiB; nullopt once the process is gone.
inline std::optional<double> peakRssMiB(pid_t pid) {
  return statusMiB(pid, "VmHWM");
}

// The first child of `parent` (gpuwise run spawns exactly one), nullopt while it has none.
inline std::optional<pid_t> firstChild(pid_t parent) {
  std::ifstream in("/proc/" + std::to_string(parent) + "/task/" + std::to_string(parent) +
                   "/children");
  long child = 0;
  if (in >> child && child > 0) return pid_t(child);
  return std::nullopt;
}

// The launches the last complete "progress launches=N" line of `path` reports (0 before any).
inline uint64_t progressLaunches(const std::string& path) {
  std::ifstream in(path);
  uint64_t last = 0;
  for (std::string line; std::getline(in, line);) {
    if (in.eof()) break; // a line still being written
    auto at = line.find("progress launches=");
    if (at != std::string::npos) last = std::stoull(line.substr(at + 18));
  }
  return last;
}

} // namespace gpuwise::advisor::test
