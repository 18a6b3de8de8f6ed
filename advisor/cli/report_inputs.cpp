#include "advisor/cli/report_inputs.h"

#include "advisor/report/report_merge.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace gpuwise::advisor {
namespace {

namespace fs = std::filesystem;

// Where the schema member is looked for: first in gpuwise's reports, within the first sections
// of one whose keys a tool sorted.
constexpr size_t kHeadBytes = size_t{1} << 20;

bool isReportFile(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  // No bigger than the file: zeroing (and faulting in) 1 MiB for a small trace was a third of
  // `gpuwise report`'s start-up.
  const auto size = fs::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  std::string head(ec ? kHeadBytes : std::min<size_t>(kHeadBytes, size_t(size)), '\0');
  in.read(head.data(), std::streamsize(head.size()));
  head.resize(size_t(in.gcount()));
  return looksLikeReportJson(head);
}

bool looksLikeTraceName(const std::string& name) {
  for (const char* ext : {".json", ".gz", ".gwt", ".sqlite"})
    if (name.size() >= std::string_view(ext).size() &&
        name.compare(name.size() - std::string_view(ext).size(), std::string::npos, ext) == 0)
      return true;
  return false;
}

// A folder's reports in name order, and its first file that looks like a trace (empty if none).
void scanFolder(const std::string& dir, std::vector<std::string>* reports, std::string* trace) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file(ec)) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    if (isReportFile(f))
      reports->push_back(f);
    else if (trace->empty() && looksLikeTraceName(fs::path(f).filename().string()))
      *trace = f;
  }
}

} // namespace

bool classifyReportInputs(const std::vector<std::string>& inputs, ClassifiedInputs* out,
                          std::string* error) {
  std::vector<std::string> reports;
  std::string first_trace;
  for (const auto& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::vector<std::string> found;
      std::string trace;
      scanFolder(input, &found, &trace);
      // A folder with any trace is a folder of traces: a report in it is the one an earlier
      // `gpuwise report DIR` left there, which the trace loader skips with a line.
      if (found.empty() || !trace.empty()) {
        if (first_trace.empty()) first_trace = input;
        continue;
      }
      reports.insert(reports.end(), found.begin(), found.end());
    } else if (isReportFile(input)) {
      reports.push_back(input);
    } else if (first_trace.empty()) {
      first_trace = input;
    }
  }
  if (!reports.empty() && !first_trace.empty()) {
    *error = reports.front() + " is a report and " + first_trace +
             " a trace: give reports to merge or traces to analyse, not both";
    return false;
  }
  out->reports = !reports.empty();
  out->report_files = std::move(reports);
  return true;
}

} // namespace gpuwise::advisor
