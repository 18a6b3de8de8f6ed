// Imports Nsight Systems SQLite exports (`nsys export --type sqlite report.nsys-rep`, or
// `nsys profile --export sqlite`) into the one event model, so `gpuwise report profile.sqlite`
// analyses an Nsight Systems capture like a live run or a PyTorch profiler trace.
//
//   NsysImportResult r = importNsys({"profile.sqlite"});
//   if (!r.ok()) { std::cerr << r.error << "\n"; return 2; }   // "<file>: <problem>", one line
//   analyze(r.trace);
//
// Mapping (tables of export schemas 2.x and 3.x; a column a schema lacks reads as unknown):
//   CUPTI_ACTIVITY_KIND_KERNEL           -> KernelExec (demangled name, launch configuration,
//                                           graph node, cooperative, NCCL flagged communication)
//   CUPTI_ACTIVITY_KIND_MEMCPY / MEMSET  -> Copy / Memset (direction, memory kinds from the
//                                           export's ENUM_CUDA_MEM_KIND, whose numbering is not
//                                           CUPTI's)
//   CUPTI_ACTIVITY_KIND_RUNTIME          -> ApiCall (runtime and driver; nsys's "_v7000" version
//                                           suffixes dropped; the backtrace rows some exports
//                                           repeat a call with are dropped), synchronising calls
//                                           -> HostSync
//   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION  -> the stream and device of those HostSyncs
//   NVTX_EVENTS                          -> Range (push/pop and start/end ranges, marks), steps
//                                           and data-loader ranges recognised by name
//   CUDA_GPU_MEMORY_USAGE_EVENTS         -> Allocation (with --cuda-memory-usage=true): the
//                                           peak device memory
//   TARGET_INFO_GPU                      -> DeviceInfo of the devices each process used
//   PROCESSES, TARGET_INFO_SYSTEM_ENV    -> pid, process name, host
// One ProcessTrace per process with CUDA or NVTX activity (the pid in nsys's serialized global
// ids), in pid order; several files are imported one after the other, their processes side by
// side. Times stay on the export's own clock (ns since the capture started).
//
// A file that is not an Nsight Systems export (another SQLite database, a corrupt file) fails the
// whole import with one line naming the file and the problem; nothing partial is returned.
//
// Thread: call from any thread; it blocks until done. The progress callback runs on that thread.
#pragma once

#include "profiler/model/trace.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

struct NsysImportOptions {
  // Called every 64 k rows with rows read so far and the rows of every table to read.
  std::function<void(uint64_t done, uint64_t total)> progress;
  // Keep emit_nvtx's per-operator "aten::" ranges (many, and no analyzer needs them).
  bool include_operators = false;
};

struct NsysImportStats {
  uint64_t rows = 0;               // rows read
  uint64_t duplicate_api_rows = 0; // API rows repeating a call already read (backtrace rows)
};

struct NsysImportResult {
  model::Trace trace; // SourceKind::Nsys, files listed; empty when error is set
  std::string error;  // one line, "<file>: <problem>"; empty on success
  NsysImportStats stats;
  bool ok() const { return error.empty(); }
};

NsysImportResult importNsys(const std::vector<std::string>& paths,
                            const NsysImportOptions& options = {});

// The 16 bytes every SQLite database file starts with.
inline constexpr char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                          'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

} // namespace gpuwise::advisor
