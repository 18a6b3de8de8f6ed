// The gpuwise commands behind the argument parser (cli.cpp). Each returns the process exit
// status and reports problems as one line on io.err.
#pragma once

#include "advisor/cli/cli.h"
#include "advisor/gpu/gpu_type_choice.h"

#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

inline constexpr int kExitUsage = 2;           // bad usage or bad input
inline constexpr int kExitCannotExecute = 127; // like a shell
inline constexpr int kExitRegression = 1;      // gpuwise diff: a gate metric regressed

inline constexpr const char* kDefaultJsonReport = "gpuwise-report.json";
inline constexpr const char* kDefaultHtmlReport = "gpuwise-report.html";

// --advice-floor, --verbose and right_size_gpu_type's options, on every command that writes a
// report.
struct AdviceCli {
  double floor = 0.02; // findings whose expected saving is below this share are notes
  bool verbose = false;
  // --max-gpu-slowdown, and the prices of --gpu-price CLASS=USD and --gpu-prices FILE (cli.cpp
  // parses them into gpu_type.prices; --gpu-hour-price becomes its current_gpu).
  GpuTypeOptions gpu_type;
  std::vector<std::string> gpu_prices;
  std::string gpu_prices_file;
};

struct RunOptions {
  bool simulate = false;
  std::string endpoint; // empty: the advisor runs in-process on a private ipc:// endpoint
  std::string report_json = kDefaultJsonReport;
  std::string report_html = kDefaultHtmlReport;
  std::string trace; // record the messages into this .gwt file
  std::vector<std::string> command;
  bool report_paths_given = false;
  std::optional<double> gpu_hour_price; // --gpu-hour-price: overrides the price table
  std::optional<double> energy_price;   // --energy-price: USD per kWh
  // --nvtx: NVTX_INJECTION64_PATH=libcupti.so.13 (unless set), so CUPTI receives NVTX ranges.
  // Opt-in: CUPTI 13.0's NVTX handler segfaults in nvtxNameOsThreadA (NVIDIA/NVTX#125).
  bool nvtx = false;
  AdviceCli advice;
};
int runCommand(const RunOptions& options, CliIo io);

struct AdvisorOptions {
  std::string listen;
  std::string metrics_addr;
  std::string report_dir = ".";
  std::optional<double> gpu_hour_price;
  std::optional<double> energy_price;
  // --memory-budget-mb, else GPUWISE_MEMORY_BUDGET_MB, else IngestServer's default (1 GiB).
  std::optional<uint64_t> memory_budget_mb;
  AdviceCli advice;
};
int advisorCommand(const AdvisorOptions& options, CliIo io);

struct ReportOptionsCli {
  std::vector<std::string> inputs;
  std::string json; // empty: gpuwise-report.json unless only --html was given
  std::string html;
  std::optional<double> gpu_hour_price;
  std::optional<double> energy_price;
  AdviceCli advice;
};
int reportCommand(const ReportOptionsCli& options, CliIo io);
// gpuwise report on per-pod reports: their merge, the job's report (report_merge.h).
int mergeReportsCommand(const std::vector<std::string>& report_files, const std::string& json_path,
                        const std::string& html_path, CliIo io);

struct DiffOptionsCli {
  std::string base, next; // gpuwise.report/v1 files
  std::string json;       // write the diff as JSON here; empty: not written
  double threshold = 0.05;
};
int diffCommand(const DiffOptionsCli& options, CliIo io);

struct ExportOptions {
  std::string format = "chrome";
  std::vector<std::string> inputs;
  std::string output;
};
int exportCommand(const ExportOptions& options, CliIo io);

int versionCommand(CliIo io);

} // namespace gpuwise::advisor
