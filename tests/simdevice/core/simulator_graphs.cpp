// Stream capture and CUDA graphs on the simulated device: a capturing stream records kernels,
// async copies and memsets as graph nodes instead of running them; cudaGraphLaunch replays an
// executable graph's nodes back to back on a stream after one launch latency, with a short gap
// between nodes, each record carrying the graph's id, the node's id and the launch's correlation.
#include <algorithm>
#include <cstring>
#include <vector>

#include "tests/simdevice/core/graph_state.h"
#include "tests/simdevice/core/simulator.h"

namespace gpuwise::sim {

cudaError_t Simulator::beginCapture(cudaStream_t stream, bool per_thread) {
  std::lock_guard lock(mutex_);
  StreamState* s = resolveStreamLocked(stream, per_thread);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  if (s->legacy) return cudaErrorStreamCaptureUnsupported; // the legacy stream cannot capture
  if (s->capture != nullptr) return cudaErrorIllegalState;
  auto* graph = new GraphState();
  all_graphs_.push_back(graph);
  graph->id = next_graph_id_++;
  graph->device = s->device;
  s->capture = graph;
  s->capture_invalidated = false;
  return cudaSuccess;
}

cudaError_t Simulator::endCapture(cudaStream_t stream, bool per_thread, cudaGraph_t* out) {
  if (out == nullptr) return cudaErrorInvalidValue;
  std::lock_guard lock(mutex_);
  StreamState* s = resolveStreamLocked(stream, per_thread);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  if (s->capture == nullptr) return cudaErrorIllegalState;
  GraphState* graph = s->capture;
  s->capture = nullptr;
  if (s->capture_invalidated) {
    graph->destroyed = true;
    graph->nodes = {};
    *out = nullptr;
    return cudaErrorStreamCaptureInvalidated;
  }
  live_graphs_.insert(graph);
  *out = reinterpret_cast<cudaGraph_t>(graph);
  return cudaSuccess;
}

cudaError_t Simulator::captureStatus(cudaStream_t stream, bool per_thread,
                                     cudaStreamCaptureStatus* status) {
  if (status == nullptr) return cudaErrorInvalidValue;
  std::lock_guard lock(mutex_);
  StreamState* s = resolveStreamLocked(stream, per_thread);
  if (s == nullptr) return cudaErrorInvalidResourceHandle;
  *status = s->capture == nullptr    ? cudaStreamCaptureStatusNone
            : s->capture_invalidated ? cudaStreamCaptureStatusInvalidated
                                     : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

cudaError_t Simulator::graphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph) {
  if (exec == nullptr) return cudaErrorInvalidValue;
  std::lock_guard lock(mutex_);
  if (live_graphs_.count(graph) == 0) return cudaErrorInvalidValue;
  const auto* source = reinterpret_cast<const GraphState*>(graph);
  if (source->exec_id != 0) return cudaErrorInvalidValue;
  auto* instance = new GraphState(*source);
  all_graphs_.push_back(instance);
  instance->exec_id = next_graph_id_++;
  live_graphs_.insert(instance);
  *exec = reinterpret_cast<cudaGraphExec_t>(instance);
  return cudaSuccess;
}

cudaError_t Simulator::graphLaunch(cudaGraphExec_t exec, cudaStream_t stream, bool per_thread,
                                   const CallInfo& call) {
  struct MemsetWork {
    void* p;
    int value;
    size_t bytes;
  };
  std::vector<CopyRequest> copies;
  std::vector<MemsetWork> memsets;
  settle(stream, per_thread);
  {
    std::lock_guard lock(mutex_);
    if (live_graphs_.count(exec) == 0) return cudaErrorInvalidValue;
    const auto* graph = reinterpret_cast<const GraphState*>(exec);
    if (graph->exec_id == 0) return cudaErrorInvalidValue;
    StreamState* s = resolveStreamLocked(stream, per_thread);
    if (s == nullptr) return cudaErrorInvalidResourceHandle;
    if (s->capture != nullptr) return cudaErrorStreamCaptureUnsupported;
    DeviceState& device = *devices_[s->device];
    TimeNs cursor = std::max(call.start + config_.launch_latency_ns, readyLocked(*s));
    for (const GraphNode& node : graph->nodes) {
      switch (node.type) {
      case GraphNode::Type::Kernel: {
        const uint64_t seq = ++op_seq_;
        const KernelCost cost = cost_.kernel(*device.model, node.shape, seq);
        const TimeNs end = cursor + cost.duration_ns;
        KernelRecordArgs record;
        record.kernel = &node.kernel;
        record.shape = node.shape;
        record.where = placementLocked(*s);
        record.queued = call.start + 300;
        record.submitted = std::min(cursor, call.start + config_.launch_latency_ns / 2);
        record.start = cursor;
        record.end = end;
        record.correlation = call.correlation;
        record.grid_id = static_cast<int64_t>(seq);
        record.graph_id = graph->id;
        record.graph_node_id = node.id;
        record.cooperative = node.cooperative;
        emitKernelRecord(activity_, record);
        s->tail = end;
        cursor = end + config_.graph_node_gap_ns;
        break;
      }
      case GraphNode::Type::Copy: {
        const ResolvedCopy copy = resolveCopyLocked(node.copy);
        if (copy.error != cudaSuccess) break; // memory freed since capture: nothing to move
        const TimeNs end = placeCopyLocked(*s, copy, cursor, call.correlation, graph->id, node.id);
        copies.push_back(node.copy);
        cursor = end + config_.graph_node_gap_ns;
        break;
      }
      case GraphNode::Type::Memset: {
        const TimeNs end = cursor + cost_.memsetNs(*device.model, node.memset_bytes, ++op_seq_);
        MemsetRecordArgs record;
        record.value = static_cast<uint32_t>(node.memset_value);
        record.bytes = node.memset_bytes;
        record.memory_kind = node.memset_managed ? CUPTI_ACTIVITY_MEMORY_KIND_MANAGED
                                                 : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        record.async = true;
        record.where = placementLocked(*s);
        record.start = cursor;
        record.end = end;
        record.correlation = call.correlation;
        record.graph_id = graph->id;
        record.graph_node_id = node.id;
        emitMemsetRecord(activity_, record);
        s->tail = end;
        memsets.push_back({node.memset_ptr, node.memset_value, node.memset_bytes});
        cursor = end + config_.graph_node_gap_ns;
        break;
      }
      }
    }
  }
  for (const CopyRequest& copy : copies)
    copyBytes(copy);
  for (const MemsetWork& m : memsets)
    std::memset(m.p, m.value, m.bytes);
  return cudaSuccess;
}

cudaError_t Simulator::graphExecDestroy(cudaGraphExec_t exec) {
  std::lock_guard lock(mutex_);
  if (live_graphs_.count(exec) == 0) return cudaErrorInvalidValue;
  auto* graph = reinterpret_cast<GraphState*>(exec);
  if (graph->exec_id == 0) return cudaErrorInvalidValue;
  graph->destroyed = true;
  graph->nodes = {}; // the object stays (stale handles fail cleanly), its nodes go
  live_graphs_.erase(exec);
  return cudaSuccess;
}

cudaError_t Simulator::graphDestroy(cudaGraph_t handle) {
  std::lock_guard lock(mutex_);
  if (live_graphs_.count(handle) == 0) return cudaErrorInvalidValue;
  auto* graph = reinterpret_cast<GraphState*>(handle);
  if (graph->exec_id != 0) return cudaErrorInvalidValue;
  graph->destroyed = true;
  graph->nodes = {};
  live_graphs_.erase(handle);
  return cudaSuccess;
}

bool Simulator::graphId(cudaGraph_t handle, uint32_t* id) {
  std::lock_guard lock(mutex_);
  if (live_graphs_.count(handle) == 0) return false;
  *id = reinterpret_cast<const GraphState*>(handle)->id;
  return true;
}

} // namespace gpuwise::sim
