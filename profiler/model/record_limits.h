// Bounds on what one trace may hold, applied where records enter the advisor: the importers
// (Kineto, Nsight Systems) and the live ingest. A trace is input from outside the process and may
// be hostile; these bounds keep every analysis of an input finite and its memory and report in
// proportion to the real work the input describes. What a bound leaves out is counted
// (ProcessTrace::events_dropped and ProcessTrace::limits), never silently lost.
//
// Times: a known time (non-zero; 0 is the model's "unknown") must lie strictly inside
// (-kTimeLimitNs, kTimeLimitNs), so that the difference of any two times, and a time plus a
// second, fit in an int64 (analyzers subtract and bucket times freely). A span must not end before
// it starts, and must not last kAbsurdDurationFactor times longer than the span of every start in
// the records checked with it (and at least kAbsurdDurationFloorNs): such a record ends beyond
// the trace's span by orders of magnitude, a writer's bug or a forged input, not GPU work.
//
// Pure functions on plain values; any thread.
#pragma once

#include "profiler/model/trace.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace gpuwise::model {

// 2^62 ns is about 146 years: nanoseconds since the Unix epoch (Kineto's clock) reach it in 2116;
// CLOCK_MONOTONIC (live runs) and Nsight's capture clock start near zero.
inline constexpr TimeNs kTimeLimitNs = TimeNs{1} << 62;
inline constexpr int64_t kAbsurdDurationFactor = 1000;
// A week: no shorter record is ever judged absurd by its length alone, so a long annotation range
// arriving with few other records (a live batch) is kept.
inline constexpr TimeNs kAbsurdDurationFloorNs = TimeNs{7} * 24 * 3600 * 1'000'000'000;

// The largest node sold today has 8 to 16 GPUs, and a GPU cut into MIG slices shows at most 7;
// 64 device indices cover every real process with room to spare. Each device costs the report a
// set of series and tables (about 10 KB of JSON), so an unbounded count (a forged trace naming
// 20,000 devices) costs hundreds of megabytes.
inline constexpr size_t kMaxDevicesPerTrace = 64;
// An Nsight Systems capture of one node holds its training processes (one per GPU) and the few
// tools around them; a capture of every rank of a 128-node job of 8 GPUs is 1,024. Each process
// costs the report about 11 KB of JSON and 4 KB of HTML, and the analysis about 45 KB (12,000
// one-kernel processes: 132 MB of JSON, 550 MB resident, 19 s): 1,024 keeps the report of any
// real capture whole and that of a forged one near 11 MB.
inline constexpr size_t kMaxProcessesPerTrace = 1024;
// Kernel names of heavily templated code reach a few KB: the longest in the shared real traces is
// 5,123 bytes (PyTorch's distribution_elementwise_grid_stride_kernel with its lambda types).
// 16 KiB keeps every real name whole; longer ones keep their first bytes and a hash of the whole
// name. A report names a kernel a few times, so a forged 200 MB name costs it tens of KB.
inline constexpr size_t kMaxNameBytes = 16384;

// True for 0 (unknown) and for times inside (-kTimeLimitNs, kTimeLimitNs).
inline bool plausibleTime(TimeNs t) {
  return t > -kTimeLimitNs && t < kTimeLimitNs;
}

// `name` if it is at most kMaxNameBytes long; otherwise its first bytes (cut on a UTF-8 character
// boundary) followed by "...#" and 16 hex digits of a 64-bit FNV-1a hash of the whole name, in
// kMaxNameBytes bytes: two long names with the same beginning stay distinct, and the same name is
// always cut the same way.
std::string_view boundedName(std::string_view name, std::string& storage);
// The same in place, for identity strings (command lines, host and device names). True if cut.
bool boundName(std::string& name);

// The size of each record vector of a trace (in RecordSet::columns() order): where newly appended
// records begin.
struct RecordMarks {
  std::array<size_t, kRecordKinds> sizes{};
  static RecordMarks of(const RecordSet& t);
  // Cuts each column of `t` back to its mark: drops what was appended since.
  void restore(RecordSet& t) const;
};

// Removes the records at or after `from` whose times are absurd (see the top of this file); the
// span of starts is taken over those same records. Adds the count to t.events_dropped and
// t.limits.absurd_times, and returns it. Order of the kept records is unchanged.
uint64_t dropAbsurdTimes(ProcessTrace& t, const RecordMarks& from = {});

// Keeps the kMaxDevicesPerTrace lowest device indices that the records of `processes` use, all
// processes together, and removes the records on any other device (kernels, copies, memsets,
// syncs, allocations, memory samples, GPU annotation ranges, NVML samples, BLAS calls), counting
// them in each process's events_dropped, and the devices left out in the first process's
// limits.devices_dropped (once per call, however many processes used them). Returns that number.
// Call before the devices are resolved into DeviceInfo.
uint64_t boundDevices(std::span<ProcessTrace> processes);

// Cuts the identity strings of a process (command line, host, Kubernetes names, its devices'
// names) to kMaxNameBytes, counting each cut in limits.names_truncated, where it also adds the
// names its name table cut (an importer calls it once, when the trace is complete). Returns the
// identity strings cut.
uint64_t boundIdentity(ProcessTrace& t);

} // namespace gpuwise::model
