#include "tests/simdevice/core/records.h"

#include "tests/simdevice/core/energy_meter.h"

#include <unistd.h>

#include <cstring>

namespace gpuwise::sim {

void emitKernelRecord(Activity& activity, const KernelRecordArgs& a) {
  energyMeter().addBusy(a.where.device, a.start, a.end); // busy whether or not CUPTI records it
  CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  if (!activity.enabled(kind)) {
    kind = CUPTI_ACTIVITY_KIND_KERNEL;
    if (!activity.enabled(kind)) return;
  }
  CUpti_ActivityKernel10 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = kind;
  r.registersPerThread = static_cast<uint16_t>(a.shape.registers);
  r.partitionedGlobalCacheRequested = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
  r.partitionedGlobalCacheExecuted = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
  r.start = activity.mapTime(a.start);
  r.end = activity.mapTime(a.end);
  r.completed = r.end;
  r.deviceId = a.where.device;
  r.contextId = a.where.context;
  r.streamId = a.where.stream;
  r.gridX = static_cast<int32_t>(a.shape.grid.x);
  r.gridY = static_cast<int32_t>(a.shape.grid.y);
  r.gridZ = static_cast<int32_t>(a.shape.grid.z);
  r.blockX = static_cast<int32_t>(a.shape.block.x);
  r.blockY = static_cast<int32_t>(a.shape.block.y);
  r.blockZ = static_cast<int32_t>(a.shape.block.z);
  r.staticSharedMemory = static_cast<int32_t>(a.shape.static_shared);
  r.dynamicSharedMemory = static_cast<int32_t>(a.shape.dynamic_shared);
  r.correlationId = a.correlation;
  r.gridId = a.grid_id;
  r.name = a.kernel != nullptr ? a.kernel->name : nullptr;
  r.queued = activity.mapTime(a.queued);
  r.submitted = activity.mapTime(a.submitted);
  r.launchType = a.cooperative ? CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE
                               : CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  r.sharedMemoryExecuted = static_cast<uint32_t>(a.shape.static_shared + a.shape.dynamic_shared);
  r.graphNodeId = a.graph_node_id;
  r.shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
  r.graphId = a.graph_id;
  r.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  activity.emitAt(a.end, &r, sizeof(r));
}

void emitMemcpyRecord(Activity& activity, const CopyRecordArgs& a) {
  energyMeter().addBusy(a.where.device, a.start, a.end);
  if (!activity.enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) return;
  CUpti_ActivityMemcpy6 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  r.copyKind = static_cast<uint8_t>(a.copy_kind);
  r.srcKind = static_cast<uint8_t>(a.src_kind);
  r.dstKind = static_cast<uint8_t>(a.dst_kind);
  r.flags = a.async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  r.bytes = a.bytes;
  r.start = activity.mapTime(a.start);
  r.end = activity.mapTime(a.end);
  r.deviceId = a.where.device;
  r.contextId = a.where.context;
  r.streamId = a.where.stream;
  // The simulator gives a runtime call and the driver call under it one id, as CUPTI does.
  r.correlationId = a.correlation;
  r.runtimeCorrelationId = a.correlation;
  r.graphNodeId = a.graph_node_id;
  r.graphId = a.graph_id;
  r.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
  r.copyCount = 1;
  activity.emitAt(a.end, &r, sizeof(r));
}

void emitMemsetRecord(Activity& activity, const MemsetRecordArgs& a) {
  energyMeter().addBusy(a.where.device, a.start, a.end);
  if (!activity.enabled(CUPTI_ACTIVITY_KIND_MEMSET)) return;
  CUpti_ActivityMemset4 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  r.value = a.value;
  r.bytes = a.bytes;
  r.start = activity.mapTime(a.start);
  r.end = activity.mapTime(a.end);
  r.deviceId = a.where.device;
  r.contextId = a.where.context;
  r.streamId = a.where.stream;
  r.correlationId = a.correlation;
  r.flags = a.async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
  r.memoryKind = static_cast<uint16_t>(a.memory_kind);
  r.graphNodeId = a.graph_node_id;
  r.graphId = a.graph_id;
  r.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  activity.emitAt(a.end, &r, sizeof(r));
}

void emitMemoryRecord(Activity& activity, const MemoryRecordArgs& a) {
  if (!activity.enabled(CUPTI_ACTIVITY_KIND_MEMORY2)) return;
  CUpti_ActivityMemory4 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  r.memoryOperationType = a.release ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
                                    : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  r.memoryKind = a.memory_kind;
  r.correlationId = a.correlation;
  r.address = a.address;
  r.bytes = a.bytes;
  r.timestamp = activity.mapTime(a.time);
  r.processId = static_cast<uint32_t>(getpid());
  r.deviceId = a.where.device;
  r.contextId = a.where.context;
  r.streamId = a.where.stream;
  r.isAsync = a.async ? 1 : 0;
  r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
  activity.emitNow(&r, sizeof(r));
}

void emitSyncRecord(Activity& activity, CUpti_ActivitySynchronizationType type, TimeNs start,
                    TimeNs end, uint32_t correlation, const Placement& where, uint32_t event_id) {
  if (!activity.enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) return;
  CUpti_ActivitySynchronization2 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  r.type = type;
  r.start = activity.mapTime(start);
  r.end = activity.mapTime(end);
  r.correlationId = correlation;
  r.contextId = where.context;
  // CUPTI_SYNCHRONIZATION_INVALID_VALUE where a field does not apply to the type.
  r.streamId = (type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE ||
                type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE)
                   ? CUPTI_SYNCHRONIZATION_INVALID_VALUE
                   : where.stream;
  r.cudaEventId = event_id != 0 ? event_id : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  activity.emitNow(&r, sizeof(r));
}

void emitApiRecord(Activity& activity, bool driver, uint32_t cbid, TimeNs start, TimeNs end,
                   uint32_t correlation, uint32_t return_value) {
  if (driver ? !activity.driverApiRecorded(cbid) : !activity.runtimeApiRecorded(cbid)) return;
  CUpti_ActivityAPI r;
  std::memset(&r, 0, sizeof(r));
  r.kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
  r.cbid = cbid;
  r.start = activity.mapTime(start);
  r.end = activity.mapTime(end);
  r.processId = static_cast<uint32_t>(getpid());
  r.threadId = activity.threadId();
  r.correlationId = correlation;
  r.returnValue = return_value;
  activity.emitNow(&r, sizeof(r));
}

void emitDeviceRecord(Activity& activity, const DeviceModel& m, int ordinal) {
  if (!activity.enabled(CUPTI_ACTIVITY_KIND_DEVICE)) return;
  CUpti_ActivityDevice5 r;
  std::memset(&r, 0, sizeof(r));
  r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  r.flags = CUPTI_ACTIVITY_FLAG_DEVICE_CONCURRENT_KERNELS;
  r.globalMemoryBandwidth = static_cast<uint64_t>(m.dram_gbps * 1e6); // KB/s
  r.globalMemorySize = m.total_memory_bytes;
  r.constantMemorySize = 65536;
  r.l2CacheSize = static_cast<uint32_t>(m.l2_bytes);
  r.numThreadsPerWarp = 32;
  r.coreClockRate = static_cast<uint32_t>(m.clock_khz);
  r.numMemcpyEngines = static_cast<uint32_t>(m.async_engines);
  r.numMultiprocessors = static_cast<uint32_t>(m.sm_count);
  r.maxIPC = 4;
  r.maxWarpsPerMultiprocessor = static_cast<uint32_t>(m.max_threads_per_sm / 32);
  r.maxBlocksPerMultiprocessor = static_cast<uint32_t>(m.max_blocks_per_sm);
  r.maxSharedMemoryPerMultiprocessor = static_cast<uint32_t>(m.shared_per_sm);
  r.maxRegistersPerMultiprocessor = static_cast<uint32_t>(m.registers_per_sm);
  r.maxRegistersPerBlock = static_cast<uint32_t>(m.registers_per_block);
  r.maxSharedMemoryPerBlock = static_cast<uint32_t>(m.shared_per_block);
  r.maxThreadsPerBlock = 1024;
  r.maxBlockDimX = 1024, r.maxBlockDimY = 1024, r.maxBlockDimZ = 64;
  r.maxGridDimX = 2147483647u, r.maxGridDimY = 65535, r.maxGridDimZ = 65535;
  r.computeCapabilityMajor = static_cast<uint32_t>(m.cc_major);
  r.computeCapabilityMinor = static_cast<uint32_t>(m.cc_minor);
  r.id = static_cast<uint32_t>(ordinal);
  r.eccEnabled = 1;
  std::memcpy(r.uuid.bytes, "gwsim", 5);
  std::strncpy(r.uuid.bytes + 5, m.key, 10);
  r.uuid.bytes[15] = static_cast<char>(ordinal);
  r.name = m.name;
  r.isCudaVisible = 1;
  activity.emitNow(&r, sizeof(r));
}

size_t recordSize(CUpti_ActivityKind kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
  case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
  case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
  case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
  case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
  case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
  default: return 0;
  }
}

} // namespace gpuwise::sim
