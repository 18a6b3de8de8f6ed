// Collection: what was seen and what was lost, per process. Every report shows the dropped-event
// count and the collection tier, so a reader knows how far to trust the other figures.
//
// Sources: the trace itself (process identity, tier, event counts, producer-counted drops) and,
// for live runs and recorded .gwt files, the ingest's view of each stream (Hello received, final
// batch received, batches lost to sequence gaps, events the decoder could not decode, messages
// rejected before they reached any stream).
//
// Pure function; any thread. Results merge by (pid, rank) (counts add).
//
// GPU identity: a GPU is one per (host, device index, name) when the host is known, and one per
// (rank, device index, name) when it is not (most profiler traces): two ranks that each report
// "device 0" are two GPUs, unless their host says they are the same one. A known UUID (live runs)
// identifies the GPU on its own, whatever index the process saw it under.
#pragma once

#include "profiler/model/trace.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpuwise::advisor {

// The ingest's view of one process stream.
struct StreamHealth {
  uint64_t session_id = 0;
  bool hello_received = false;
  bool final_received = false;
  uint64_t batches = 0;
  uint64_t lost_batches = 0;       // sequence numbers never seen
  uint64_t undecodable_events = 0; // referenced a kernel signature the decoder never received
  // Events the sender's socket accepted that never arrived (Batch.events_delivered): a connection
  // dropped with messages in it. Counted in the process's events_dropped too.
  uint64_t events_lost = 0;
};

// The ingest's view of the whole job. `streams` is aligned with Trace::processes; nullopt for a
// process that did not come through the ingest (an imported trace merged into the same job).
struct IngestHealth {
  std::vector<std::optional<StreamHealth>> streams;
  uint64_t messages = 0;                              // every message received
  std::map<std::string, uint64_t> rejected_by_reason; // "malformed", "bad_envelope" ... -> count
  // Detail the ingest let go of to stay within its bounds (StreamRouter::shedByReason()).
  std::map<std::string, uint64_t> shed_by_reason;
  uint64_t rejectedMessages() const;
};

struct ProcessCollection {
  int64_t pid = 0;
  int32_t rank = -1, local_rank = -1, world_size = -1;
  std::string host, command;
  model::CollectionTier tier = model::CollectionTier::Unknown;
  std::string tier_reason;
  uint64_t events = 0;
  uint64_t kernels = 0; // kernel executions received (a subset of events)
  uint64_t events_dropped = 0;
  std::vector<uint32_t> devices;      // device indices the process reported
  std::optional<StreamHealth> stream; // live runs and .gwt files only
  model::ShimCost shim_cost;          // live runs only (all zero otherwise)
};

// A GPU as the report lists it (identity above), with the processes using it.
struct GpuEntry {
  model::DeviceInfo info;
  std::string host;
  int32_t rank = -1; // the rank that used it (the first seen, when several did); -1 unknown
  std::vector<int64_t> pids;
};

// What the report calls a GPU: its model name and index, with the rank that used it when there
// is one ("NVIDIA H100 80GB HBM3 (GPU 0) of rank 3"; "GPU 1 of rank 1" without a model name).
std::string gpuLabel(const GpuEntry& gpu);

// The job the processes are ranks of. `ranks`: every rank seen, ascending, once each.
// `missing`: the ranks of [0, world_size) not seen, as [first, last] runs, so that a 1,024-rank
// job with two ranks given stays short; empty when world_size is unknown.
struct JobRanks {
  int32_t world_size = -1; // the largest any process reported; -1 unknown
  std::vector<int32_t> ranks;
  std::vector<std::pair<int32_t, int32_t>> missing;
  uint64_t missingCount() const;
};

struct CollectionResult {
  std::vector<ProcessCollection> processes;
  std::vector<GpuEntry> gpus;
  uint64_t events = 0, events_dropped = 0, undecodable_events = 0, lost_batches = 0;
  uint64_t events_lost = 0; // StreamHealth::events_lost, all streams (in events_dropped too)
  // What the input bounds (profiler/model/record_limits.h) left out, all processes together;
  // the records of the first three are counted in events_dropped as well.
  model::LimitsApplied limits;
  bool simulated_device = false; // any device reported itself as the simulated device
  bool hip_api = false;          // the host called hip* (ROCm) APIs: an AMD GPU, whatever its name
  // From the ingest; unknown for imported traces.
  std::optional<uint64_t> messages;
  std::map<std::string, uint64_t> rejected_by_reason;
  std::map<std::string, uint64_t> shed_by_reason; // IngestHealth::shed_by_reason
  uint64_t rejectedMessages() const;

  // The shim's estimated cost on the application's threads over the wall time it recorded, all
  // processes together; nullopt when no process reported it (imported traces).
  std::optional<double> shimOverheadRatio() const;
  // Sums of every process's shim figures (ratios: the largest budget seen).
  model::ShimCost shimCostTotal() const;

  // The ranks the processes carry, and which of the job's are not here.
  JobRanks jobRanks() const;

  // Folds `other` in: processes by (pid, rank), GPUs by their identity (above). Linear in the size
  // of `other`: both are looked up through the indexes below, so merging thousands of streams
  // (or a Hello listing many devices) never compares every entry with every other.
  void merge(const CollectionResult& other);

  // What merge() uses to find an entry: position by key, and how many entries of the vector it
  // covers. Kept in step by merge() and rebuilt when a caller changed the vectors directly (the
  // count differs, or an entry is not where its key says).
  std::unordered_map<std::string, size_t> gpu_index, process_index;
  size_t gpus_indexed = 0, processes_indexed = 0;
};

CollectionResult analyzeCollection(const model::Trace& trace, const IngestHealth* ingest);

} // namespace gpuwise::advisor
