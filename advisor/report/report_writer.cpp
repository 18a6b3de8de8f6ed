#include "advisor/report/report_writer.h"

#include "advisor/report/html_report.h"
#include "advisor/report/output_file.h"

namespace gpuwise::advisor {

bool writeTextFile(const std::string& path, std::string_view content, std::string* error) {
  return writeOutputFile(path, content, error);
}

bool writeJsonReport(const std::string& path, const ReportInput& input, std::string* error,
                     const ReportOptions& options) {
  // Names come from the trace (a kernel name off the wire, an Nsight export's strings) and need not
  // be UTF-8: invalid bytes become U+FFFD rather than an exception that ends the command.
  return writeTextFile(path,
                       buildReportJson(input, options)
                               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                           "\n",
                       error);
}

bool writeHtmlReport(const std::string& path, const ReportInput& input, std::string* error,
                     const ReportOptions& options) {
  return writeTextFile(path, renderHtmlReport(input, options), error);
}

} // namespace gpuwise::advisor
