// Writes a model::Trace as Chrome trace JSON that chrome://tracing and Perfetto load, streamed
// (no document in memory). Backs `gpuwise export --format chrome INPUT -o OUT.json`.
//
// Rows: each process gets a host row group (its pid; one row per thread: API calls, host syncs
// without a GPU-side record, steps, data-loader waits, annotations, CPU operators when the model
// holds them) and one row group per device it used (one row per stream: kernels, copies, memsets,
// GPU annotations, stream waits), with process_name / thread_name metadata, flow arrows from each
// launch to its GPU work, and memory counters.
//
// API calls: the trace's own (Kineto's cuda_runtime / cuda_driver events), and for GPU work whose
// launching call is known only from the GPU record (a live run: the shim records each launch,
// copy and memset call's start and end on the record itself) a runtime span of that call
// (cudaLaunchKernel, cudaMemcpy[Async], cudaMemset[Async]; args "gpuwise.synthesized": 1). Flows
// (one "ph": "s" at the call's start on its thread, a "ph": "f", "bp": "e" at the start of each
// piece of its work on its stream, category ac2g as Kineto writes them, which chrome://tracing
// and Perfetto's JSON importer bind to the enclosing slices) pair calls and work by correlation id.
// Work recorded without one (the interposer tier) gets a synthetic id from 2^36 (args
// "gpuwise.synthesized") so that the flow and a re-import still pair them. Kernel names are
// demangled (the mangled name kept in args "mangled name"). Events use Kineto's own categories and
// argument names (kernel, gpu_memcpy, cuda_runtime, cuda_sync, user_annotation, "[memory]" ...), so
// the file is also a Kineto trace: importing it back (advisor/import) gives the same records, with
// a small `gpuwise` object and a few `gpuwise.*` arguments carrying what Kineto has no field for
// (range kinds, the split of shared memory, process identity). A single-process trace round-trips;
// several processes are written to one file for viewing (their identity is kept per process group).
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
  bool demangle = true; // readable kernel names, the mangled one in args
};

// What one export wrote.
struct ChromeTraceStats {
  uint64_t events = 0;    // entries of traceEvents, metadata included
  uint64_t api_spans = 0; // runtime / driver API call spans (the trace's and synthesized ones)
  uint64_t flows = 0;     // call -> GPU work arrows: "f" events (one "s" per call)
};

// Returns false with `error` set (one line) when the stream fails. `stats`, when given, says what
// was written.
bool writeChromeTrace(const model::Trace& trace, std::ostream& out, std::string* error,
                      const ChromeTraceOptions& options = {}, ChromeTraceStats* stats = nullptr);

// Writes to `path` (replaced if it exists). False with `error` = "<path>: <problem>".
bool writeChromeTraceFile(const model::Trace& trace, const std::string& path, std::string* error,
                          const ChromeTraceOptions& options = {});

} // namespace gpuwise::advisor
