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
// With `colour`, ANSI SGR codes mark the verdict (bold; the simulated marker yellow), each
// recommendation (bold, its saving green), its change (cyan) and the notes (dim); every code is
// closed before the end of its line, and widths count the visible text only. Without it (files,
// pipes, NO_COLOR: advisor/cli/terminal_style.h decides) the text is plain.
//
// Pure; any thread.
#pragma once

#include "advisor/report/report_json.h"

#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

struct TerminalOptions {
  size_t width = 100; // the terminal's columns (advisor/cli/terminal_style.h); 100 off a terminal
  bool colour = false;
  size_t max_recommendations = 3;
  bool verbose = false;                   // the evidence under each recommendation
  double advice_floor = 0.02;             // named on the notes line
  std::vector<std::string> written_files; // listed on the last line
  std::optional<double> energy_price_kwh; // --energy-price, for the energy line's cost
};

std::string renderTerminalSummary(const ReportInput& input, const TerminalOptions& options = {});

} // namespace gpuwise::advisor
