// What the end-to-end fault tests share: where the built programs are, running the fault program
// (tests/e2e/fault_app.cu) under `gpuwise run --simulate` or under the shim against a separate
// `gpuwise advisor`, reading its "gwfault ..." lines, and reading the JSON report per process.
//
// Everything waits on conditions (process exit, a line in a file, a file) with deadlines; nothing
// sleeps a fixed time.
#pragma once

#include "tests/advisor/subprocess.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace gpuwise::e2e {

using advisor::test::buildDir;
using advisor::test::eventually;
using advisor::test::Process;
using advisor::test::readFile;
using advisor::test::TempDir;
using json = nlohmann::json;

inline std::string gpuwiseExe() {
  return buildDir() + "/bin/gpuwise";
}
inline std::string faultApp() {
  return buildDir() + "/tests/e2e_fault_app";
}
inline std::string shimLib() {
  return buildDir() + "/lib/libgpuwise.so";
}
inline std::string simdeviceDir() {
  return buildDir() + "/simdevice";
}

// The environment that runs a CUDA program on the simulated device under the shim, sending to
// `endpoint` (what `gpuwise run --simulate --endpoint` sets up, without the run command).
inline std::vector<std::string> shimEnv(const std::string& endpoint) {
  return {"LD_PRELOAD=" + shimLib(), "LD_LIBRARY_PATH=" + simdeviceDir(),
          "GPUWISE_ENDPOINT=" + endpoint};
}
// The simulated device without the shim.
inline std::vector<std::string> plainEnv() {
  return {"LD_LIBRARY_PATH=" + simdeviceDir()};
}

// One "gwfault pid=... role=... kernels=... median_launch_ns=..." line.
struct FaultLine {
  int64_t pid = 0;
  std::string role;
  int64_t kernels = 0;
  int64_t median_launch_ns = 0;
};

inline std::vector<FaultLine> faultLines(const std::string& out) {
  std::vector<FaultLine> lines;
  static const std::regex re(
      R"(gwfault pid=(\d+) role=(\w+) kernels=(\d+) median_launch_ns=(\d+))");
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end; ++it) {
    FaultLine l;
    l.pid = std::stoll((*it)[1]);
    l.role = (*it)[2];
    l.kernels = std::stoll((*it)[3]);
    l.median_launch_ns = std::stoll((*it)[4]);
    lines.push_back(l);
  }
  return lines;
}

inline bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

inline json readJson(const std::string& path) {
  std::string text = readFile(path);
  return text.empty() ? json() : json::parse(text, nullptr, false);
}

// The report's processes[] entries with this pid (an exec'd process appears twice: two sessions).
inline std::vector<json> processesWithPid(const json& report, int64_t pid) {
  std::vector<json> out;
  for (const auto& p : report["processes"])
    if (p["pid"].get<int64_t>() == pid) out.push_back(p);
  return out;
}

inline int64_t reportKernels(const json& report) {
  int64_t n = 0;
  for (const auto& p : report["processes"])
    n += p["kernel_count"].get<int64_t>();
  return n;
}

// A `gpuwise advisor` on `endpoint` writing into `report_dir`, started and waited for.
class Advisor {
public:
  Advisor(const std::string& endpoint, const std::string& report_dir, const std::string& dir,
          const std::string& tag, const std::vector<std::string>& extra = {})
      : process_(args(endpoint, report_dir, extra), {}, dir, dir, tag) {}
  // Waits for the whole "listening on ENDPOINT" line, up to its newline: a read that ended just
  // after "listening on " once gave security_test an empty endpoint, when the advisor still wrote
  // the line in pieces (it now writes it whole, logLine).
  bool listening() {
    return eventually([&] {
      const std::string err = process_.err();
      const auto at = err.find("listening on");
      return at != std::string::npos && err.find('\n', at) != std::string::npos;
    });
  }
  // Waits for the advisor's "N process(es) connected" line.
  bool connected(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    std::string line = std::to_string(n) + (n == 1 ? " process" : " processes") + " connected";
    return eventually([&] { return contains(process_.err(), line); }, timeout);
  }
  bool finished(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    return eventually(
        [&] {
          std::string err = process_.err();
          std::string want = std::to_string(n) + " of " + std::to_string(n) +
                             (n == 1 ? " process" : " processes") + " finished";
          return contains(err, want);
        },
        timeout);
  }
  // SIGTERM, then the exit status (the report is written before it exits).
  std::optional<int> stop(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    ::kill(process_.pid(), SIGTERM);
    return process_.wait(timeout);
  }
  Process& process() { return process_; }

private:
  static std::vector<std::string> args(const std::string& endpoint, const std::string& report_dir,
                                       const std::vector<std::string>& extra) {
    std::vector<std::string> a{gpuwiseExe(), "advisor",      "--listen",
                               endpoint,     "--report-dir", report_dir};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  Process process_;
};

// Resident set of a process in KiB, from /proc (0 when it is gone).
inline int64_t rssKib(pid_t pid) {
  std::istringstream in(readFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  return 0;
}

} // namespace gpuwise::e2e
