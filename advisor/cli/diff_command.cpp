// gpuwise diff BASE.json NEW.json [--json F] [--threshold R]: a CI gate on two reports.
//
// Exit status: 0 no regression, 1 regression (steady step time or GPU busy worse than the noise
// band: the threshold, or the runs' own step spread where larger, report_diff.h),
// 2 bad usage or bad input (unreadable file, not JSON, not a gpuwise.report/v1 report, a --json
// file that cannot be written), with one line on stderr naming the file and the problem.
#include "advisor/cli/commands.h"
#include "advisor/diff/report_diff.h"
#include "advisor/report/report_writer.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpuwise::advisor {
namespace {

// The report at `path`, or nullopt with `error` set to "PATH: problem".
std::optional<nlohmann::ordered_json> readReport(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot read: " + std::strerror(errno);
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    *error = path + ": cannot read: " + std::strerror(errno);
    return std::nullopt;
  }
  auto report = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (report.is_discarded()) {
    *error = path + ": not valid JSON";
    return std::nullopt;
  }
  if (auto problem = validateReport(report); !problem.empty()) {
    *error = path + ": " + problem;
    return std::nullopt;
  }
  return report;
}

} // namespace

int diffCommand(const DiffOptionsCli& o, CliIo io) {
  auto fail = [&](const std::string& line) {
    logLine(io.err, "diff", line);
    return kExitUsage;
  };
  if (!std::isfinite(o.threshold) || o.threshold < 0)
    return fail("--threshold must be a ratio >= 0 (0.05 is 5%)");
  std::string error;
  auto base = readReport(o.base, &error);
  if (!base) return fail(error);
  auto next = readReport(o.next, &error);
  if (!next) return fail(error);

  DiffOptions options;
  options.threshold = o.threshold;
  auto diff = diffReports(*base, *next, options);
  if (!o.json.empty() &&
      !writeTextFile(o.json,
                     diffToJson(diff, o.base, o.next)
                             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                         "\n",
                     &error))
    return fail(error);
  io.out << renderDiffText(diff) << std::flush;
  return diff.regressed() ? kExitRegression : 0;
}

} // namespace gpuwise::advisor
