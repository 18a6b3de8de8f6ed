// `gpuwise report`'s inputs told apart before anything is read whole: per-pod report JSONs
// (`gpuwise.report/v1`, recognised by their first member, report_merge.h) go to the report merge,
// anything else to the trace importers (trace_input.h).
//
// A folder given as an INPUT is a folder of reports when it holds at least one report JSON; its
// reports are then taken in name order, its other files ignored unless they look like traces
// (.json, .json.gz, .gz, .gwt, .sqlite), which would mix the two. A folder without reports is left
// to the trace loader.
//
// Main thread; reads the first bytes of each file.
#pragma once

#include <string>
#include <vector>

namespace gpuwise::advisor {

struct ClassifiedInputs {
  bool reports = false;                  // every input is a report (or a folder of them)
  std::vector<std::string> report_files; // when `reports`: the files, folders expanded
};

// False with `error` set to one line naming a report and a trace when the inputs mix the two.
bool classifyReportInputs(const std::vector<std::string>& inputs, ClassifiedInputs* out,
                          std::string* error);

} // namespace gpuwise::advisor
