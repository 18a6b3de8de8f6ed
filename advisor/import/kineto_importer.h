// Imports PyTorch profiler (Kineto) Chrome-trace JSON files into the one event model, so offline
// traces go through the same analyzers as live runs (`gpuwise report trace.json.gz`).
//
//   KinetoImportResult r = importKineto({"rank0.json.gz", "rank1.json.gz"});
//   if (!r.ok()) { std::cerr << r.error << "\n"; return 2; }   // "<file>: <problem>", one line
//   analyze(r.trace);
//
// Several files given together are the ranks of one job: one ProcessTrace each, in the order
// given. Files are gzip (detected by magic bytes) or plain JSON. A file that is not a Chrome trace
// (an execution trace, a memory timeline, garbage, empty, truncated) fails the whole import with
// one line naming the file and what it is: never a partial result presented as whole. A trace
// without GPU activity (a CPU-only rank) imports as a ProcessTrace with no GPU records.
//
// How: one reader thread inflates (ISA-L) and cuts the text into batches of whole events with a
// SIMD scan while the calling thread parses the previous batch with simdjson On-Demand; no DOM of
// the file is built and memory for the text is a few fixed-size buffers, whatever the file size.
// Several files: on a large host, several such pipelines run at once (parallel_files). One file
// of up to 1 MiB is read and parsed on the calling thread alone: a thread there cost more than
// the import (`gpuwise report` of a small trace, docs/performance.md).
//
// Thread: call from any thread; it blocks until done, starting and joining its helper threads.
// The progress callback runs on the calling thread.
#pragma once

#include "profiler/model/trace.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuwise::advisor {

struct KinetoImportOptions {
  // Keep cpu_op / Operator events as Range{Operator}. They are most of a trace's bytes and no
  // analyzer needs them by default, so they are skipped without decoding their args.
  bool include_operators = false;
  // Called after each batch with compressed input bytes consumed so far and the total of all
  // files, for a progress line on long imports.
  std::function<void(uint64_t done, uint64_t total)> progress;
  // Size of one batch of text handed from the reader to the parser, and how many batches may be
  // in flight. Memory for the text is about batch_bytes * batches_in_flight.
  size_t batch_bytes = size_t{1} << 20;
  size_t batches_in_flight = 4;
  // Files imported at once when several are given, each by a reader and a parser thread.
  // 0: half the hardware threads (one on a 2-core machine, where the two threads are busy).
  size_t parallel_files = 0;
  // Tests: the scalar boundary scanner even where AVX2 exists.
  bool force_scalar_scan = false;
};

struct KinetoImportStats {
  uint64_t input_bytes = 0; // bytes read from the files (compressed size for gzip)
  uint64_t json_bytes = 0;  // bytes of JSON text after inflating
  uint64_t events = 0;      // trace events seen
};

struct KinetoImportResult {
  model::Trace trace; // SourceKind::Kineto, files listed; empty when error is set
  std::string error;  // one line, "<file>: <problem>"; empty on success
  KinetoImportStats stats;
  bool ok() const { return error.empty(); }
};

KinetoImportResult importKineto(const std::vector<std::string>& paths,
                                const KinetoImportOptions& options = {});

// The same for a trace already in memory (gzip or plain), named `name` in errors and in
// source.files. `data` must stay alive for the call.
KinetoImportResult importKinetoBuffer(std::string_view data, const std::string& name,
                                      const KinetoImportOptions& options = {});

} // namespace gpuwise::advisor
