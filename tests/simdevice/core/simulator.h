// The simulated GPU(s): devices and their contexts, streams, events, memory, graphs, and one
// virtual timeline on CLOCK_MONOTONIC (tests/simdevice/README.md describes the semantics).
//
// Work is never executed; it is placed on the timeline when the host issues it:
//   start = max(host issue time + latency, the stream's previous work end [, the copy engine])
//   end   = start + CostModel duration
// and its CUPTI record is emitted then, completing when the clock passes `end`. Streams are FIFO;
// the legacy default stream waits for, and is waited for by, every blocking stream of its device;
// non-blocking streams overlap freely. Synchronising calls block the calling thread until the
// clock reaches the awaited end. Deferred kernels (a stand-in NCCL's collectives) are the one
// exception to "placed when issued": their end is decided by other processes, and they are placed
// when something first needs their stream (simulator_deferred.cpp).
//
// Threads: any thread may call any method. One mutex guards all state; it is never held while a
// thread sleeps for a sync, while memory is copied, or while a CUPTI client callback runs.
// Object lifetime: the Simulator is leaked (process exit may still call in); stream, event and
// graph objects are never freed, only marked destroyed, so a stale handle is an error, not a crash.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "tests/simdevice/core/activity.h"
#include "tests/simdevice/core/config.h"
#include "tests/simdevice/core/cost_model.h"
#include "tests/simdevice/core/memory_map.h"
#include "tests/simdevice/core/records.h"
#include "tests/simdevice/core/subscriber.h"

namespace gpuwise::sim {

// The API call on whose behalf the simulator works: its CUPTI correlation id and when it began.
struct CallInfo {
  uint32_t correlation = 0;
  TimeNs start = 0;
};

struct GraphState;

// A kernel whose timing is decided outside this process: a collective that ends only when its
// peers (other processes) have reached it. The simulator queues it on its stream as pending and
// asks `resolve` for its start and end only when something needs them: later work on the stream
// (or on a stream the legacy-stream rules tie to it), an event recorded there, a synchronisation.
// `resolve` may block (until the peers arrived, or a bounded timeout); it is called without the
// simulator lock, from whichever thread needs the stream, possibly twice for one kernel, so it must
// be thread-safe and return the same answer each time. token 0 means "no pending kernel".
struct DeferredHooks {
  void (*resolve)(void* context, uint64_t token, TimeNs* start, TimeNs* end) = nullptr;
  void* context = nullptr;
  uint64_t token = 0;
};

struct PendingKernel {
  DeferredHooks hooks;
  KernelInfo info;
  KernelRecordArgs record; // start and end filled in when resolved
};

struct StreamState {
  int device = 0;
  uint32_t id = 0; // CUPTI stream id: 7 for the legacy default stream, 13+ for others
  bool legacy = false;
  bool blocking = true; // false for cudaStreamNonBlocking
  bool destroyed = false;
  int priority = 0;
  unsigned flags = 0;
  TimeNs tail = 0;               // end of the last work queued on this stream
  GraphState* capture = nullptr; // graph being captured, when capturing
  bool capture_invalidated = false;
  std::deque<PendingKernel> pending; // deferred kernels not resolved yet, oldest first; `tail`
                                     // is then only a lower bound of the stream's ready time
};

struct EventState {
  int device = 0;
  uint32_t id = 0;
  unsigned flags = 0;
  bool recorded = false;
  bool destroyed = false;
  TimeNs time = 0; // when the work before the record completes
};

struct DeviceState {
  int ordinal = 0;
  const DeviceModel* model = nullptr;
  uint32_t context_id = 0;
  bool context_created = false;
  StreamState legacy;
  std::vector<StreamState*> streams; // every non-legacy stream, destroyed ones included
  uint32_t next_stream_id = 13;
  TimeNs h2d_engine_tail = 0, d2h_engine_tail = 0;
  TimeNs kernel_serial_tail = 0; // CUPTI KERNEL (serialised) mode
  uint64_t memory_used = 0, memory_peak = 0;
};

struct LaunchRequest {
  const void* func = nullptr; // host stub or cudaKernel_t
  dim3 grid, block;
  size_t dynamic_shared = 0;
  cudaStream_t stream = nullptr;
  bool per_thread = false; // _ptsz entry point: stream 0 means the per-thread default stream
  bool cooperative = false;
};

struct CopyRequest {
  void* dst = nullptr;
  const void* src = nullptr;
  size_t width = 0, height = 1;        // bytes per row, rows
  size_t dst_pitch = 0, src_pitch = 0; // 0: rows are contiguous
  cudaMemcpyKind kind = cudaMemcpyDefault;
  cudaStream_t stream = nullptr;
  bool async = false;
  bool per_thread = false;
};

class Simulator {
public:
  Simulator(const SimConfig& config, Activity& activity, Subscriber& subscriber);

  const SimConfig& config() const { return config_; }
  int deviceCount() const { return static_cast<int>(devices_.size()); }
  const DeviceModel& model(int device) const { return *devices_[device]->model; }

  // Per-thread current device (cudaSetDevice).
  int currentDevice() const;
  cudaError_t setDevice(int device);
  // Creates the device's context on first use and fires the CONTEXT_CREATED resource callback.
  void ensureContext(int device);
  CUcontext contextHandle(int device) const;
  uint32_t contextId(int device) const;
  // CUPTI helpers: the device and context a CUcontext names; a stream's CUPTI id.
  bool contextInfo(CUcontext ctx, uint32_t* device, uint32_t* context_id) const;
  bool streamId(cudaStream_t stream, bool per_thread, uint32_t* id);
  // A copy of a stream's identity (id, flags, priority, device); false for a bad handle.
  bool streamInfo(cudaStream_t stream, bool per_thread, StreamState* info);
  void emitDeviceRecords();

  // Memory.
  cudaError_t allocate(void** out, size_t bytes, MemKind kind, const CallInfo& call,
                       cudaStream_t async_stream = nullptr, bool async = false);
  cudaError_t release(void* p, MemKind kind, const CallInfo& call, bool async = false);
  cudaError_t hostRegister(void* p, size_t bytes);
  cudaError_t hostUnregister(void* p);
  cudaError_t memGetInfo(size_t* free_bytes, size_t* total_bytes);
  // Bytes the process holds on `device`: the context reserve plus its allocations (the simulated
  // NVML's per-process used memory). 0 for a bad ordinal.
  uint64_t memoryUsed(int device);
  cudaError_t pointerAttributes(cudaPointerAttributes* attributes, const void* p);

  // Work.
  cudaError_t launch(const LaunchRequest& request, const CallInfo& call);
  cudaError_t copy(const CopyRequest& request, const CallInfo& call);
  cudaError_t memset(void* p, int value, size_t bytes, cudaStream_t stream, bool async,
                     bool per_thread, const CallInfo& call);

  // Streams, events, synchronisation.
  cudaError_t streamCreate(cudaStream_t* out, unsigned flags, int priority);
  cudaError_t streamDestroy(cudaStream_t stream);
  cudaError_t streamQuery(cudaStream_t stream, bool per_thread);
  cudaError_t streamSynchronize(cudaStream_t stream, bool per_thread, const CallInfo& call);
  cudaError_t deviceSynchronize(const CallInfo& call);
  cudaError_t eventCreate(cudaEvent_t* out, unsigned flags);
  cudaError_t eventDestroy(cudaEvent_t event);
  cudaError_t eventRecord(cudaEvent_t event, cudaStream_t stream, bool per_thread);
  cudaError_t eventQuery(cudaEvent_t event);
  cudaError_t eventSynchronize(cudaEvent_t event, const CallInfo& call);
  cudaError_t eventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
  cudaError_t streamWaitEvent(cudaStream_t stream, cudaEvent_t event, bool per_thread,
                              const CallInfo& call);

  // Deferred kernels (simulator_deferred.cpp). launchDeferred queues `hooks`' kernel on the
  // stream; *earliest_start is when it could start from what is known here (the call, the
  // stream's resolved work and waited events), *previous the stream's newest still pending
  // deferred kernel (token 0: none): the new kernel cannot start before that one ends.
  cudaError_t launchDeferred(const LaunchRequest& request, const CallInfo& call,
                             const DeferredHooks& hooks, TimeNs* earliest_start,
                             DeferredHooks* previous);
  // The stream's newest pending deferred kernel (token 0: none).
  DeferredHooks lastPending(cudaStream_t stream, bool per_thread);
  // Resolves (blocking) the pending deferred kernels that the stream's readiness depends on: its
  // own (unless !include_self) and, by the legacy-stream rules, the streams tied to it.
  void settle(cudaStream_t stream, bool per_thread, bool include_self = true);
  // Resolves every pending deferred kernel of the device.
  void settleDevice(int device);

  // Stream capture and graphs (simulator_graphs.cpp).
  cudaError_t beginCapture(cudaStream_t stream, bool per_thread);
  cudaError_t endCapture(cudaStream_t stream, bool per_thread, cudaGraph_t* graph);
  cudaError_t captureStatus(cudaStream_t stream, bool per_thread, cudaStreamCaptureStatus* status);
  cudaError_t graphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph);
  cudaError_t graphLaunch(cudaGraphExec_t exec, cudaStream_t stream, bool per_thread,
                          const CallInfo& call);
  cudaError_t graphExecDestroy(cudaGraphExec_t exec);
  cudaError_t graphDestroy(cudaGraph_t graph);
  bool graphId(cudaGraph_t graph, uint32_t* id);

private:
  friend struct SimulatorAccess;
  StreamState* resolveStreamLocked(cudaStream_t stream, bool per_thread);
  EventState* resolveEventLocked(cudaEvent_t event);
  TimeNs readyLocked(const StreamState& stream) const;
  TimeNs deviceDoneLocked(int device) const;
  Placement placementLocked(const StreamState& stream) const;
  // Resolves, one at a time, the pending kernels of the streams `pick` selects (under the lock).
  template <typename Pick> void settleWhere(Pick pick);

  // A copy's direction, memory kinds and cost path, from where its pointers live.
  struct ResolvedCopy {
    cudaError_t error = cudaSuccess;
    CopyPath path = CopyPath::Pinned;
    CUpti_ActivityMemcpyKind kind = CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
    CUpti_ActivityMemoryKind src_kind = CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
    CUpti_ActivityMemoryKind dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
    bool blocks_host = false;
    bool staged = false; // pageable / host-to-host: the host moves the bytes itself
    bool async = false;
    uint64_t bytes = 0;
  };
  ResolvedCopy resolveCopyLocked(const CopyRequest& request) const;
  // Places a copy on stream s at or after `earliest`; returns its end and emits its record.
  TimeNs placeCopyLocked(StreamState& s, const ResolvedCopy& copy, TimeNs earliest,
                         uint32_t correlation, uint32_t graph_id, uint64_t node_id,
                         TimeNs min_end = 0);
  static void copyBytes(const CopyRequest& request);
  // Blocks the caller until `until`, without the lock.
  static void waitUntil(TimeNs until);

  SimConfig config_;
  CostModel cost_;
  Activity& activity_;
  Subscriber& subscriber_;

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<DeviceState>> devices_;
  std::unordered_set<const void*> live_streams_;
  std::deque<EventState> events_;
  std::unordered_set<const void*> live_events_;
  std::unordered_set<const void*> live_graphs_; // graphs and executable graphs
  std::deque<GraphState*> all_graphs_;          // every graph ever made (never freed)
  uint32_t next_graph_id_ = 1;
  uint64_t next_graph_node_id_ = 1;
  MemoryMap memory_;
  uint32_t next_event_id_ = 1;
  uint64_t op_seq_ = 0;               // operation counter: jitter seed and CUPTI gridId
  std::atomic<int> pending_count_{0}; // deferred kernels pending on any stream (fast path: 0)
};

// The process's simulator, activity engine and subscriber: created on first use, replaced by fresh
// ones in a forked child (see process_state.cpp).
Simulator& simulator();
Activity& activity();
Subscriber& subscriber();

} // namespace gpuwise::sim
