// Loading recorded traces for the offline commands (`gpuwise report`, `gpuwise export`): each
// INPUT is recognised by its content, a gpuwise .gwt recording (its magic) replayed through the
// StreamRouter the live advisor uses, a PyTorch profiler (Kineto) Chrome trace, plain or gzipped,
// or an Nsight Systems SQLite export (every process in it), both read by advisor/import. A folder
// stands for every trace in it, by name (one level; other files skipped with one line each on
// `progress`; a folder without a trace is an error). Several inputs are the ranks of one job
// (job_inputs.h: where each rank comes from, what is refused): their processes side by side,
// ordered by rank (the Kineto files are imported together, in parallel where the host allows).
//
// Each INPUT is opened once and its format told from the first bytes read: a regular file is then
// read by the importers by its path; anything else (a named pipe, `<(zcat t.json.gz)`,
// /dev/stdin on a pipe) is read whole into memory first (up to 2 GiB), as it can be read only
// once, and an Nsight export among them is spooled to a temporary file for SQLite.
//
// Long imports report progress on `progress` (a line about every second once an import has run
// for a second; one line rewritten in place when it is the terminal).
//
// Main thread; blocks until every input is read.
#pragma once

#include "advisor/analysis/collection_analyzer.h"
#include "profiler/model/trace.h"

#include <ostream>
#include <string>
#include <vector>

namespace gpuwise::advisor {

struct LoadedInputs {
  model::Trace trace;
  IngestHealth health;     // aligned with trace.processes; nullopt streams for imported inputs
  bool has_ingest = false; // some input was a .gwt recording
};

struct TraceInputOptions {
  // Keep the CPU operators of Kineto traces (cpu_op) and Nsight Systems exports (emit_nvtx's
  // aten:: ranges) as Range{Operator}: `gpuwise export` shows them; no analyzer needs them.
  bool include_operators = false;
};

// False with `error` set to one line naming the file and the problem; nothing partial is kept.
// `command` prefixes progress lines ("gpuwise report"); `progress` may be null (no progress).
bool loadTraceInputs(const std::vector<std::string>& paths, const char* command,
                     std::ostream* progress, LoadedInputs* out, std::string* error,
                     const TraceInputOptions& options = {});

} // namespace gpuwise::advisor
