// Communication: what each rank's collective kernels (NCCL / RCCL, flagged kKernelCommunication)
// cost it, and how much of that the compute kernels hid.
//
// Per process, over its devices' timelines (timeline_analyzer.h, which a live run's windows count
// exactly):
//   communication = union of its collective kernels' intervals, per device, summed
//   exposed       = the part of that union no compute kernel (a kernel not flagged communication)
//                   overlaps
//   overlap ratio = (communication - exposed) / communication
//
// This is HTA's comm/compute overlap (CommunicationAnalysis.get_comm_comp_overlap) without its
// rounding: for each rank, over the whole trace (not per iteration), the length of the time where
// the union of its communication kernels and the union of its computation kernels overlap, over the
// length of the communication union. HTA reports it as a percentage rounded to 0.01 and reads
// timestamps rounded to integers; here it is the exact ratio of integer nanoseconds. HTA unites a
// rank's kernels across devices; a rank drives one GPU in every trace it reads, where the two are
// the same. HTA counts "Memcpy" / "Sync" kernels as neither; here every kernel not communication is
// compute.
//
// Per collective kind (from the model::Collective records joined to their kernels by correlation,
// else the kind the kernel's name says, collective_kernel_name.h): count, kernel seconds, bytes,
// and nccl-tests' bandwidths: algorithm = bytes / time, bus = algorithm x 2(n-1)/n for all-reduce,
// (n-1)/n for all-gather and reduce-scatter, 1 for the others (n: the communicator's size).
//
// Pure function of the trace; any thread.
#pragma once

#include "advisor/analysis/timeline_analyzer.h"
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
  model::TimeNs sized_ns = 0;  // the summed durations of those
  int32_t group_size = -1;     // ranks in the communicator (the largest seen), -1 unknown
  std::string algorithm;       // "ring", "tree", "nvls", ... from the kernel names; empty unknown
  // Over the sized collectives: bytes / their kernel time, and the bus bandwidth from it; nullopt
  // without a size or group size.
  std::optional<double> algorithm_bytes_per_second, bus_bytes_per_second;

  // Folds another's figures in (counts and bytes add); the bandwidths are recomputed.
  void merge(const CollectiveKindStats& other);
  void computeBandwidths();
};

// nccl-tests' bus-bandwidth factor for a collective over `ranks` ranks: 2(n-1)/n for all-reduce,
// (n-1)/n for all-gather and reduce-scatter, 1 for the others; nullopt when ranks < 1.
std::optional<double> busBandwidthFactor(model::CollectiveKind kind, int32_t ranks);

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
  std::vector<CollectiveKindStats> by_kind; // merged over processes, by kind

  bool any() const { return !processes.empty(); }
  // Takes each process's communication and exposed time from the timeline (the same devices,
  // counted as the timeline counts them), and recomputes the totals.
  void attachTimeline(const TimelineResult& timeline);
  // Combines another window's result: the kinds' counts add; the times come from the (already
  // merged) timeline through attachTimeline().
  void merge(const CommunicationResult& other);
};

// The per-kind figures from the trace's records, the times from `timeline` (the trace's).
CommunicationResult analyzeCommunication(const model::Trace& trace, const TimelineResult& timeline);
// The same, analysing the timeline itself.
CommunicationResult analyzeCommunication(const model::Trace& trace);

} // namespace gpuwise::advisor
