// The terminal summary printed when a run ends: one screen (at most ~25 lines of at most
// `width` columns), the verdict first, then the numbers.
//
//   line 1      verdict: "gpuwise: GPU busy 62.3% of a 10.5 s GPU span, idle 3.96 s; ..." (or why
//               it is unknown), the number of recommendations and the best saving; it starts
//               "gpuwise [SIMULATED DEVICE]:" when the run used the simulated device. Never
//               wrapped; other lines wrap at `width`.
//   next        where the GPU span went, then the top recommendations with their savings, each
//               with the change to make under it (one or two lines of its action; with
//               `verbose`, its evidence as well), then one line of notes (findings under the
//               advice floor)
//   then        the numbers: kernels, copies, host syncs, memory, processes and GPUs; for a
//               job of several ranks, the per-rank table (rank_table.h) after the steps
//   always      the collection line: tier and dropped events
//
// Pure; any thread.
#pragma once

#include "advisor/report/report_json.h"

#include <string>
#include <vector>

namespace gpuwise::advisor {

struct TerminalOptions {
  size_t width = 100;
  size_t max_recommendations = 3;
  bool verbose = false;                   // the evidence under each recommendation
  double advice_floor = 0.02;             // named on the notes line
  std::vector<std::string> written_files; // listed on the last line
};

std::string renderTerminalSummary(const ReportInput& input, const TerminalOptions& options = {});

} // namespace gpuwise::advisor
