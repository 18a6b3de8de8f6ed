// Containers of records: one ProcessTrace per process, one Trace per job.
//
// Owned by a single thread at a time: the importer or the advisor's per-process stream builds it,
// then hands it (moved or const&) to the analyzers. Vectors are not required to be sorted; use
// sortByTime() before analyses that need order.
#pragma once

#include "profiler/model/events.h"
#include "profiler/model/name_table.h"
#include "profiler/model/process.h"
#include "profiler/model/record_set.h"

#include <set>
#include <string>
#include <vector>

namespace gpuwise::model {

// What the bounds of record_limits.h left out of a process trace (the report shows it beside the
// dropped-event count; the records themselves are counted in events_dropped too).
struct LimitsApplied {
  uint64_t absurd_times = 0;           // records dropped for absurd times
  uint64_t devices_dropped = 0;        // device indices beyond kMaxDevicesPerTrace
  uint64_t names_truncated = 0;        // identity strings cut (names in `names` count there)
  uint64_t processes_dropped = 0;      // processes of the same input beyond kMaxProcessesPerTrace
  uint64_t process_events_dropped = 0; // and their records (not in events_dropped: not this one's)
};

// The records (RecordSet's columns: kernels, copies, ...) of one process, with its identity.
struct ProcessTrace : RecordSet {
  ProcessInfo info;
  std::vector<DeviceInfo> devices;
  NameTable names;

  // Events the producer counted but could not deliver (ring full, send would block, malformed
  // batch, CUPTI dropped records). Every report shows this number.
  uint64_t events_dropped = 0;
  // What the input bounds left out (record_limits.h). processes_dropped of an import travels with
  // the input's first process, so it survives whatever merges the processes of several inputs.
  LimitsApplied limits;
  // The shim's own cost (live runs; cumulative, the latest batch's figures).
  ShimCost shim_cost;
  // Wall-clock span of the process as the producer saw it (live: first event to exit), 0 unknown.
  TimeNs wall_start = 0, wall_end = 0;

  uint64_t eventCount() const { return size(); }
  // Sorts every vector by its start (or time) field, ties by end.
  void sortByTime();
  // The device with this index, or nullptr.
  const DeviceInfo* device(uint32_t index) const;
  // Devices with any activity: kernels, copies, memsets, device allocations, memory samples.
  std::set<uint32_t> activeDevices() const;
};

enum class SourceKind : uint8_t { Live, Kineto, Gwt, Nsys };

struct SourceInfo {
  SourceKind kind = SourceKind::Live;
  bool simulated = false;         // recorded on the simulated device
  std::vector<std::string> files; // input files (offline) or the recorded trace file (live)
};

struct Trace {
  SourceInfo source;
  std::vector<ProcessTrace> processes;
};

const char* toString(MemoryKind);
const char* toString(CopyDirection);
const char* toString(SyncKind);
const char* toString(RangeKind);
const char* toString(CollectionTier);
const char* toString(SourceKind);
const char* toString(BlasApi);
const char* toString(CollectiveKind);
const char* toString(ElementType);

} // namespace gpuwise::model
