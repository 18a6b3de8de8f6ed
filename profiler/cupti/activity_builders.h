// Builders that fill real CUPTI 13 activity structs from the headers, for tests of the decoding
// and correlation path (the way kineto's tests do). Every field not named is zero, as CUPTI leaves
// fields it does not fill.
#pragma once

#include <cupti.h>

#include <cstring>

namespace gpuwise::profiler::build {

template <class T> T zeroed() {
  T r;
  std::memset(&r, 0, sizeof r);
  return r;
}

struct KernelArgs {
  uint32_t correlation = 0;
  uint64_t start = 0, end = 0;
  const char* name = "";
  uint32_t device = 0, context = 1, stream = 7;
  int32_t grid[3] = {1, 1, 1};
  int32_t block[3] = {1, 1, 1};
  uint16_t registers = 0;
  int32_t static_shared = 0, dynamic_shared = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
  uint8_t launch_type = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
};

inline CUpti_ActivityKernel10 kernel(const KernelArgs& a) {
  auto r = zeroed<CUpti_ActivityKernel10>();
  r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  r.correlationId = a.correlation;
  r.start = a.start;
  r.end = a.end;
  r.completed = a.end;
  r.name = a.name;
  r.deviceId = a.device;
  r.contextId = a.context;
  r.streamId = a.stream;
  r.gridX = a.grid[0];
  r.gridY = a.grid[1];
  r.gridZ = a.grid[2];
  r.blockX = a.block[0];
  r.blockY = a.block[1];
  r.blockZ = a.block[2];
  r.registersPerThread = a.registers;
  r.staticSharedMemory = a.static_shared;
  r.dynamicSharedMemory = a.dynamic_shared;
  r.graphId = a.graph_id;
  r.graphNodeId = a.graph_node_id;
  r.launchType = a.launch_type;
  return r;
}

inline CUpti_ActivityMemcpy6 memcpy(uint32_t correlation, uint64_t start, uint64_t end,
                                    uint64_t bytes, CUpti_ActivityMemcpyKind kind,
                                    CUpti_ActivityMemoryKind src, CUpti_ActivityMemoryKind dst,
                                    bool async, uint32_t device = 0, uint32_t stream = 7) {
  auto r = zeroed<CUpti_ActivityMemcpy6>();
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  r.copyKind = uint8_t(kind);
  r.srcKind = uint8_t(src);
  r.dstKind = uint8_t(dst);
  r.flags = async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  r.bytes = bytes;
  r.start = start;
  r.end = end;
  r.deviceId = device;
  r.contextId = 1;
  r.streamId = stream;
  r.correlationId = correlation;
  r.copyCount = 1;
  return r;
}

inline CUpti_ActivityMemset4 memset(uint32_t correlation, uint64_t start, uint64_t end,
                                    uint64_t bytes, CUpti_ActivityMemoryKind kind, bool async,
                                    uint32_t device = 0, uint32_t stream = 7) {
  auto r = zeroed<CUpti_ActivityMemset4>();
  r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  r.bytes = bytes;
  r.start = start;
  r.end = end;
  r.deviceId = device;
  r.contextId = 1;
  r.streamId = stream;
  r.correlationId = correlation;
  r.flags = async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
  r.memoryKind = uint16_t(kind);
  return r;
}

inline CUpti_ActivitySynchronization2 sync(uint32_t correlation, uint64_t start, uint64_t end,
                                           CUpti_ActivitySynchronizationType type,
                                           uint32_t context = 1,
                                           uint32_t stream = CUPTI_SYNCHRONIZATION_INVALID_VALUE) {
  auto r = zeroed<CUpti_ActivitySynchronization2>();
  r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  r.type = type;
  r.start = start;
  r.end = end;
  r.correlationId = correlation;
  r.contextId = context;
  r.streamId = stream;
  r.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  return r;
}

inline CUpti_ActivityMemory4 memory(uint32_t correlation, uint64_t timestamp, uint64_t address,
                                    uint64_t bytes, CUpti_ActivityMemoryKind kind, bool release,
                                    uint32_t device = 0) {
  auto r = zeroed<CUpti_ActivityMemory4>();
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  r.memoryOperationType = release ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
                                  : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  r.memoryKind = kind;
  r.correlationId = correlation;
  r.address = address;
  r.bytes = bytes;
  r.timestamp = timestamp;
  r.deviceId = device;
  r.contextId = 1;
  return r;
}

inline CUpti_ActivityAPI api(bool runtime, CUpti_CallbackId cbid, uint32_t correlation,
                             uint32_t thread, uint64_t start, uint64_t end) {
  auto r = zeroed<CUpti_ActivityAPI>();
  r.kind = runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
  r.cbid = cbid;
  r.start = start;
  r.end = end;
  r.processId = 1;
  r.threadId = thread;
  r.correlationId = correlation;
  return r;
}

// An NVTX marker as CUPTI records it: `flags` CUPTI_ACTIVITY_FLAG_MARKER_START / _END /
// _INSTANTANEOUS; an end carries no name. Thread markers name the (system) thread id.
inline CUpti_ActivityMarker2 marker(uint32_t id, uint32_t flags, uint64_t timestamp,
                                    const char* name, uint32_t thread,
                                    const char* domain = nullptr) {
  auto r = zeroed<CUpti_ActivityMarker2>();
  r.kind = CUPTI_ACTIVITY_KIND_MARKER;
  r.flags = CUpti_ActivityFlag(flags);
  r.timestamp = timestamp;
  r.id = id;
  r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  r.objectId.pt.processId = 1;
  r.objectId.pt.threadId = thread;
  r.name = (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) ? nullptr : name;
  r.domain = domain;
  return r;
}

inline CUpti_ActivityOverhead3 overhead(CUpti_ActivityOverheadKind kind, uint64_t start,
                                        uint64_t end, uint32_t thread = 1) {
  auto r = zeroed<CUpti_ActivityOverhead3>();
  r.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  r.overheadKind = kind;
  r.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  r.objectId.pt.processId = 1;
  r.objectId.pt.threadId = thread;
  r.start = start;
  r.end = end;
  return r;
}

inline CUpti_ActivityGraphTrace2 graphTrace(uint32_t correlation, uint32_t graph, uint64_t start,
                                            uint64_t end, uint32_t device = 0,
                                            uint32_t stream = 7) {
  auto r = zeroed<CUpti_ActivityGraphTrace2>();
  r.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
  r.correlationId = correlation;
  r.start = start;
  r.end = end;
  r.deviceId = device;
  r.graphId = graph;
  r.contextId = 1;
  r.streamId = stream;
  r.endDeviceId = device;
  r.endContextId = 1;
  return r;
}

} // namespace gpuwise::profiler::build
