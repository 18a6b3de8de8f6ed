// Writes a model::Trace as Chrome trace JSON that chrome://tracing and Perfetto load, streamed
// (no document in memory). Backs `gpuwise export --format chrome INPUT -o OUT.json`.
//
// Rows: each process gets a host row group (its pid; one row per thread: API calls, host syncs
// without a GPU-side record, steps, data-loader waits, annotations) and one row group per device
// it used (one row per stream: kernels, copies, memsets, GPU annotations, stream waits), with
// process_name / thread_name metadata, flow arrows from each launch to its GPU work, and memory
// counters. Events use Kineto's own categories and argument names (kernel, gpu_memcpy,
// cuda_runtime, cuda_sync, user_annotation, "[memory]" ...), so the file is also a Kineto trace:
// importing it back (advisor/import) gives the same records, with a small `gpuwise` object and
// a few `gpuwise.*` arguments carrying what Kineto has no field for (range kinds, the split of
// shared memory, process identity). A single-process trace round-trips; several processes are
// written to one file for viewing (their identity is kept per process group).
//
// Any thread; the trace is only read.
#pragma once

#include "profiler/model/trace.h"

#include <ostream>
#include <string>

namespace gpuwise::advisor {

struct ChromeTraceOptions {
  bool flows = true;    // launch -> GPU work arrows (ac2g flow events)
  bool counters = true; // memory counters ("ph": "C") next to the "[memory]" instants
};

// Returns false with `error` set (one line) when the stream fails.
bool writeChromeTrace(const model::Trace& trace, std::ostream& out, std::string* error,
                      const ChromeTraceOptions& options = {});

// Writes to `path` (replaced if it exists). False with `error` = "<path>: <problem>".
bool writeChromeTraceFile(const model::Trace& trace, const std::string& path, std::string* error,
                          const ChromeTraceOptions& options = {});

} // namespace gpuwise::advisor
