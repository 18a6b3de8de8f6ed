#include "advisor/report/report_writer.h"

#include "advisor/report/html_report.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace gpuwise::advisor {

bool writeTextFile(const std::string& path, std::string_view content, std::string* error) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    *error = path + ": cannot write: " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  int saved = errno;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) saved = saved ? saved : errno;
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    *error = path + ": cannot write: " + std::strerror(saved);
  }
  return ok;
}

bool writeJsonReport(const std::string& path, const ReportInput& input, std::string* error,
                     const ReportOptions& options) {
  return writeTextFile(path, buildReportJson(input, options).dump(2) + "\n", error);
}

bool writeHtmlReport(const std::string& path, const ReportInput& input, std::string* error,
                     const ReportOptions& options) {
  return writeTextFile(path, renderHtmlReport(input, options), error);
}

} // namespace gpuwise::advisor
