// Communication: what each rank's collective kernels (NCCL / RCCL, flagged kKernelCommunication)
// cost it, and how much of that the compute kernels hid.
//
// Per process, over its devices' timelines:
//   communication = union of its collective kernels' intervals
//   exposed       = the part of that union no compute kernel (a kernel not flagged communication)
//                   overlaps
//   overlap ratio = (communication - exposed) / communication: HTA's comm/compute overlap
// and per collective kind (from the model::Collective records, joined to their kernels where the
// source correlates them, else the kind the kernel's name says): count, kernel seconds, bytes, and
// nccl-tests' bandwidths: algorithm = bytes / time, bus = algorithm x 2(n-1)/n for all-reduce,
// (n-1)/n for all-gather and reduce-scatter, 1 for the others.
//
// Pure function of the trace; any thread.
#pragma once

#include "profiler/model/trace.h"

#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

struct CollectiveKindStats {
  model::CollectiveKind kind = model::CollectiveKind::Unknown;
  uint64_t count = 0;          // collective kernels of this kind
  model::TimeNs kernel_ns = 0; // their summed durations
  uint64_t bytes = 0;          // summed model::Collective::bytes() of those whose size is known
  uint64_t sized = 0;          // how many had a known size
  int32_t group_size = -1;     // ranks in the communicator (the most common), -1 unknown
  std::string algorithm;       // "ring", "tree", "nvls", ... from the kernel names; empty unknown
  // Over the sized collectives: bytes / their kernel time, and the bus bandwidth from it; nullopt
  // without a size or group size.
  std::optional<double> algorithm_bytes_per_second, bus_bytes_per_second;
};

struct ProcessCommunication {
  int64_t pid = 0;
  int32_t rank = -1;
  model::TimeNs busy_ns = 0;           // union of collective kernels (summed over devices)
  model::TimeNs exposed_ns = 0;        // not overlapped by compute kernels
  std::optional<double> overlap_ratio; // nullopt without communication
  std::vector<CollectiveKindStats> by_kind;
};

struct CommunicationResult {
  std::vector<ProcessCommunication> processes; // processes with any collective kernel
  // Sums over processes, and the overlap ratio of those sums.
  model::TimeNs busy_ns = 0, exposed_ns = 0;
  std::optional<double> overlap_ratio;
  std::vector<CollectiveKindStats> by_kind; // merged over processes

  bool any() const { return !processes.empty(); }
};

CommunicationResult analyzeCommunication(const model::Trace& trace);

} // namespace gpuwise::advisor
