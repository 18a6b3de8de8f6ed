// Writing reports to disk, with one-line errors naming the file: the boundary where a CLI turns a
// failed write into its exit status.
#pragma once

#include "advisor/report/report_json.h"

#include <string>
#include <string_view>

namespace gpuwise::advisor {

// Writes `content` to `path` through OutputFile (output_file.h): a regular file atomically, a
// symlink's target, a FIFO or a device written through. False with `error` set to "PATH: reason".
bool writeTextFile(const std::string& path, std::string_view content, std::string* error);

bool writeJsonReport(const std::string& path, const ReportInput& input, std::string* error,
                     const ReportOptions& options = {});
bool writeHtmlReport(const std::string& path, const ReportInput& input, std::string* error,
                     const ReportOptions& options = {});

} // namespace gpuwise::advisor
