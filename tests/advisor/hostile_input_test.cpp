// The hostile-input budget: any input of under 1 MB is analysed by `gpuwise report` within 10 s
// and 512 MiB, and either reported (exit 0, reports of bounded size) or refused (exit 2, one line).
// Each input below is one that once hung, exhausted or bloated gpuwise (times at the ends of the
// int64 range, thousands of devices or processes, names of a megabyte), generated here, run as a
// child process, and measured: wall time, and peak RSS from wait4().
//
// To add an input: one row in kInputs, {name, file name, generator, optional check of the report}.
#include "tests/advisor/subprocess.h"
#include "tests/sanitizer_env.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>
#include <libdeflate.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <spawn.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <vector>

extern char** environ;

using namespace gpuwise::advisor::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kInputLimit = 1u << 20;              // "under 1 MB"
constexpr double kSecondsLimit = 10.0;                  // analysed within 10 s ...
constexpr double kRssLimitMiB = 512.0;                  // ... and 512 MiB
constexpr uint64_t kReportLimit = 32u << 20;            // a report stays in proportion to the input
constexpr const char* kMaxTime = "9223372036854775807"; // INT64_MAX

// --- Kineto JSON ---------------------------------------------------------------------------

std::string kernelEvent(const std::string& name, const std::string& ts, const std::string& dur,
                        const std::string& pid = "0", const std::string& args = "") {
  return R"({"ph":"X","cat":"kernel","name":")" + name + R"(","pid":)" + pid + R"(,"tid":7,"ts":)" +
         ts + R"(,"dur":)" + dur + (args.empty() ? "" : R"(,"args":)" + args) + "}";
}

// A small healthy timeline (50 kernels) for the hostile events to sit in.
std::string healthyKernels() {
  std::string s;
  for (int i = 0; i < 50; ++i)
    s += (i ? "," : "") + kernelEvent("gemm", std::to_string(1000 + i * 10), "5");
  return s;
}

std::string kinetoTrace(const std::string& events, const std::string& top = "") {
  return R"({"schemaVersion":1,)" + top + R"("traceEvents":[)" + events + "]}";
}

std::string gzip(const std::string& text) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(9);
  std::string out(libdeflate_gzip_compress_bound(c, text.size()), '\0');
  out.resize(libdeflate_gzip_compress(c, text.data(), text.size(), out.data(), out.size()));
  libdeflate_free_compressor(c);
  return out;
}

void writeText(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// One kernel per device id, the device named by the row's pid (Kineto's GPU rows).
std::string kinetoDevices(int devices) {
  std::string s;
  for (int d = 0; d < devices; ++d)
    s += (d ? "," : "") + kernelEvent("k", std::to_string(1000 + d), "1", std::to_string(d));
  return kinetoTrace(s);
}

// --- Nsight Systems SQLite -------------------------------------------------------------------

constexpr const char* kNsysSchema = R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
  gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO StringIds VALUES (1, 'gemm');
)";

// A global id as nsys serializes it: pid in bits 24..47.
std::string gid(int64_t pid) {
  return std::to_string((int64_t(1) << 48) | (pid << 24));
}

std::string kernelRow(const std::string& start, const std::string& end, int64_t device = 0,
                      int64_t pid = 100, int64_t name = 1) {
  return "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + start + "," + end + "," +
         std::to_string(device) + ",7,0," + gid(pid) + "," + std::to_string(name) +
         ",1,1,1,128,1,1);\n";
}

std::string healthyRows() {
  std::string s;
  for (int i = 0; i < 50; ++i)
    s += kernelRow(std::to_string(1'000'000 + i * 10'000), std::to_string(1'005'000 + i * 10'000));
  return s;
}

void writeNsys(const std::string& path, const std::string& rows) {
  fs::remove(path);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  const std::string sql = std::string(kNsysSchema) + "BEGIN;\n" + rows + "COMMIT;\n";
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  INFO((err ? err : ""));
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

// --- the inputs ----------------------------------------------------------------------------

struct HostileInput {
  const char* name;
  const char* file; // the file name, whose extension gpuwise may look at
  std::function<void(const std::string& path)> generate;
  std::function<void(const json& report)> check; // optional, on a report of exit 0
};

uint64_t bound(const json& r, const char* key) {
  return r.at("collection").at("input_bounds").at(key).get<uint64_t>();
}

// A committed hostile input (tests/data/hostile).
std::string hostileData(const char* name) {
  return sourceDir() + "/tests/data/hostile/" + name;
}

const std::vector<HostileInput> kInputs = {
    // Two recordings of forged wire messages (an attack driver's output, kept as they were):
    // twelve Hellos of 600 devices and 64 KiB strings each, and batches naming ids a million
    // apart. Each once took minutes and gigabytes (tests/data/hostile/README.md).
    {"recording of twelve bloated Hellos", "bloated-hellos.gwt",
     [](const std::string& p) { fs::copy_file(hostileData("bloated-hellos.gwt"), p); },
     [](const json& r) {
       CHECK(r.at("gpus").size() <= 64);
       for (const auto& proc : r.at("processes"))
         CHECK(proc.at("command").get<std::string>().size() <= 4096);
     }},
    {"recording naming ids a million apart", "name-id-gap.gwt",
     [](const std::string& p) { fs::copy_file(hostileData("name-id-gap.gwt"), p); }, nullptr},
    {"Kineto kernel ending at INT64_MAX", "int64max-end.json",
     [](const std::string& p) {
       // 9223372036854774 us = 9223372036854774000 ns; + 1807 ns = INT64_MAX.
       writeText(p, kinetoTrace(healthyKernels() + "," +
                                kernelEvent("gemm", "9223372036854774", "1.807")));
     },
     [](const json& r) {
       CHECK(bound(r, "absurd_time_records_dropped") == 1);
       CHECK(r.at("summary").at("kernel_count") == 50);
     }},
    {"Kineto kernel lasting INT64_MAX", "int64max-dur.json",
     [](const std::string& p) {
       writeText(p, kinetoTrace(healthyKernels() + "," +
                                kernelEvent("gemm", "1000", "9223372036854775.807")));
     },
     [](const json& r) { CHECK(bound(r, "absurd_time_records_dropped") == 1); }},
    {"Kineto kernel starting at -INT64_MAX", "int64min-start.json",
     [](const std::string& p) {
       writeText(p, kinetoTrace(healthyKernels() + "," +
                                kernelEvent("gemm", "-9223372036854775.807", "10")));
     },
     [](const json& r) { CHECK(bound(r, "absurd_time_records_dropped") == 1); }},
    {"Nsight kernel ending at INT64_MAX", "int64max-end.sqlite",
     [](const std::string& p) { writeNsys(p, healthyRows() + kernelRow("2000000", kMaxTime)); },
     [](const json& r) {
       CHECK(bound(r, "absurd_time_records_dropped") == 1);
       CHECK(r.at("summary").at("kernel_count") == 50);
     }},
    {"Nsight kernel starting at INT64_MIN", "int64min-start.sqlite",
     [](const std::string& p) {
       writeNsys(p, healthyRows() + kernelRow("-9223372036854775808", "1000"));
     },
     [](const json& r) { CHECK(bound(r, "absurd_time_records_dropped") == 1); }},
    {"Kineto trace of 12,000 device ids", "devices.json",
     [](const std::string& p) { writeText(p, kinetoDevices(12'000)); },
     [](const json& r) {
       CHECK(bound(r, "devices_dropped") == 12'000 - 64);
       CHECK(r.at("gpus").size() <= 64);
     }},
    {"Kineto trace of 100,000 device ids, gzipped", "devices.json.gz",
     [](const std::string& p) { writeText(p, gzip(kinetoDevices(100'000))); },
     [](const json& r) { CHECK(bound(r, "devices_dropped") == 100'000 - 64); }},
    {"Nsight export of 20,000 device ids", "devices.sqlite",
     [](const std::string& p) {
       std::string rows;
       for (int d = 0; d < 20'000; ++d)
         rows += kernelRow(std::to_string(1000 + d), std::to_string(2000 + d), d);
       writeNsys(p, rows);
     },
     [](const json& r) { CHECK(bound(r, "devices_dropped") == 20'000 - 64); }},
    {"Nsight export of 12,000 processes", "processes.sqlite",
     [](const std::string& p) {
       std::string rows;
       for (int pid = 1; pid <= 12'000; ++pid)
         rows += kernelRow(std::to_string(1000 + pid), std::to_string(2000 + pid), 0, pid);
       writeNsys(p, rows);
     },
     [](const json& r) {
       CHECK(bound(r, "processes_dropped") == 12'000 - 1024);
       CHECK(r.at("processes").size() == 1024);
     }},
    {"Kineto kernel name of a megabyte", "long-name.json",
     [](const std::string& p) {
       writeText(p, kinetoTrace(healthyKernels() + "," +
                                kernelEvent(std::string(1'000'000, 'n'), "2000", "5")));
     },
     [](const json& r) { CHECK(bound(r, "names_truncated") == 1); }},
    {"Kineto trace of 60 distinct 17 KB kernel names", "long-names.json",
     [](const std::string& p) {
       std::string s = healthyKernels();
       for (int i = 0; i < 60; ++i)
         s += "," + kernelEvent(std::string(17000, 'n') + std::to_string(i),
                                std::to_string(2000 + i), "1");
       writeText(p, kinetoTrace(s));
     },
     [](const json& r) { CHECK(bound(r, "names_truncated") == 60); }},
    {"Kineto process name of a megabyte",
     "long-process-name.json",
     [](const std::string& p) {
       writeText(
           p, kinetoTrace(healthyKernels() +
                          R"(,{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":")" +
                          std::string(1'000'000, 'p') + R"("}})"));
     },
     {}},
    {"Nsight kernel name of a megabyte", "long-name.sqlite",
     [](const std::string& p) {
       writeNsys(p, "INSERT INTO StringIds VALUES (2, '" + std::string(1'000'000, 'n') + "');\n" +
                        healthyRows() + kernelRow("3000000", "3005000", 0, 100, 2));
     },
     [](const json& r) { CHECK(bound(r, "names_truncated") == 1); }},
};

struct Run {
  int status = -1; // exit status, 128 + signal, or -1 at the deadline
  double seconds = 0;
  double peak_rss_mib = 0;
};

// `argv` as a child with this process's environment (a sanitizer lane's runtime included), its
// output in `out_prefix`.out/.err; killed at `deadline`.
Run runChild(const std::vector<std::string>& argv, const std::string& out_prefix,
             std::chrono::seconds deadline) {
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const std::string out = out_prefix + ".out", err = out_prefix + ".err";
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const auto started = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  REQUIRE(rc == 0);
  Run run;
  int st = 0;
  rusage usage{};
  const bool done = eventually([&] { return ::wait4(pid, &st, WNOHANG, &usage) == pid; },
                               std::chrono::duration_cast<std::chrono::milliseconds>(deadline));
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!done) {
    ::kill(pid, SIGKILL);
    ::wait4(pid, &st, 0, &usage);
    run.peak_rss_mib = double(usage.ru_maxrss) / 1024.0;
    return run;
  }
  run.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  run.peak_rss_mib = double(usage.ru_maxrss) / 1024.0; // ru_maxrss is in KiB on Linux
  return run;
}

uint64_t sizeOr0(const std::string& path) {
  std::error_code ec;
  const auto n = fs::file_size(path, ec);
  return ec ? 0 : uint64_t(n);
}

} // namespace

TEST_CASE("every hostile input under 1 MB is analysed within 10 s and 512 MiB") {
  const std::string gpuwise = buildDir() + "/bin/gpuwise";
  if (!fs::exists(gpuwise)) {
    gpuwise::test::skipTest("no " + gpuwise + " (build the gpuwise_exe target)");
  }
  // Under a sanitizer lane the runtime's shadow and quarantine count in RSS and every
  // instruction is checked: the memory bound is not measured and the time bound is relaxed.
  const bool sanitized = gpuwise::test::underSanitizer();
  const double seconds_limit = sanitized ? 6 * kSecondsLimit : kSecondsLimit;
  TempDir dir;
  REQUIRE(!dir.path.empty());

  for (const HostileInput& in : kInputs) {
    DYNAMIC_SECTION(in.name) {
      const std::string input = dir / in.file, json_path = dir / "report.json",
                        html_path = dir / "report.html";
      fs::remove(json_path);
      fs::remove(html_path);
      in.generate(input);
      const uint64_t input_bytes = sizeOr0(input);
      INFO(in.name << ": " << input_bytes << " bytes");
      REQUIRE(input_bytes > 0);
      REQUIRE(input_bytes < kInputLimit);

      const Run run = runChild({gpuwise, "report", input, "--json", json_path, "--html", html_path},
                               dir / "child", std::chrono::seconds(120));
      const std::string err = readFile(dir / "child.err");
      INFO("exit " << run.status << " after " << run.seconds << " s, peak RSS " << run.peak_rss_mib
                   << " MiB; stderr: " << err.substr(0, 500));
      WARN(in.name << ": " << run.seconds << " s, " << run.peak_rss_mib << " MiB, JSON "
                   << sizeOr0(json_path) << " B, HTML " << sizeOr0(html_path) << " B");
      REQUIRE(run.status != -1); // did not finish within 120 s
      CHECK(run.seconds < seconds_limit);
      if (!sanitized) CHECK(run.peak_rss_mib < kRssLimitMiB);
      REQUIRE((run.status == 0 || run.status == 2));
      if (run.status == 2) {
        // Refused: one line naming the file, nothing written.
        CHECK(std::count(err.begin(), err.end(), '\n') == 1);
        CHECK(err.find(input) != std::string::npos);
        CHECK_FALSE(fs::exists(json_path));
        continue;
      }
      REQUIRE(fs::exists(json_path));
      CHECK(sizeOr0(json_path) < kReportLimit);
      CHECK(sizeOr0(html_path) < kReportLimit);
      const json report = json::parse(readFile(json_path));
      if (in.check) in.check(report);
    }
  }
}
