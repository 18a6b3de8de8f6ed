// Builders for the real CUPTI 13 activity structs (cupti_activity.h) the simulated device emits.
// Each fills every field the simulator knows, converts simulator times to the client's clock
// (Activity::mapTime) and hands the record to the activity engine. Records of a disabled kind are
// not built at all.
//
// Called from application threads, possibly under the simulator's mutex (lock order: simulator
// -> activity). Never block.
#pragma once

#include <cstdint>

#include <cupti.h>

#include "tests/simdevice/core/activity.h"
#include "tests/simdevice/core/clock.h"
#include "tests/simdevice/core/cost_model.h"
#include "tests/simdevice/core/device_model.h"
#include "tests/simdevice/core/kernel_registry.h"

namespace gpuwise::sim {

// Where an operation ran: device ordinal, CUPTI context id and stream id.
struct Placement {
  uint32_t device = 0;
  uint32_t context = 0;
  uint32_t stream = 0;
};

struct KernelRecordArgs {
  const KernelInfo* kernel = nullptr;
  KernelShape shape;
  Placement where;
  TimeNs queued = 0, submitted = 0, start = 0, end = 0;
  uint32_t correlation = 0;
  int64_t grid_id = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
  bool cooperative = false;
};
// CONCURRENT_KERNEL when that kind is on, else KERNEL when that one is, else nothing.
void emitKernelRecord(Activity& activity, const KernelRecordArgs& args);

struct CopyRecordArgs {
  CUpti_ActivityMemcpyKind copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
  CUpti_ActivityMemoryKind src_kind = CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
  CUpti_ActivityMemoryKind dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
  bool async = false;
  uint64_t bytes = 0;
  Placement where;
  TimeNs start = 0, end = 0;
  uint32_t correlation = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
};
void emitMemcpyRecord(Activity& activity, const CopyRecordArgs& args);

struct MemsetRecordArgs {
  uint32_t value = 0;
  uint64_t bytes = 0;
  CUpti_ActivityMemoryKind memory_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  bool async = false;
  Placement where;
  TimeNs start = 0, end = 0;
  uint32_t correlation = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
};
void emitMemsetRecord(Activity& activity, const MemsetRecordArgs& args);

struct MemoryRecordArgs {
  bool release = false; // false: allocation
  CUpti_ActivityMemoryKind memory_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  uint64_t address = 0;
  uint64_t bytes = 0;
  Placement where;
  TimeNs time = 0;
  uint32_t correlation = 0;
  bool async = false;
};
void emitMemoryRecord(Activity& activity, const MemoryRecordArgs& args);

void emitSyncRecord(Activity& activity, CUpti_ActivitySynchronizationType type, TimeNs start,
                    TimeNs end, uint32_t correlation, const Placement& where, uint32_t event_id);

// A runtime (RUNTIME) or driver (DRIVER) API record, when that cbid is recorded.
void emitApiRecord(Activity& activity, bool driver, uint32_t cbid, TimeNs start, TimeNs end,
                   uint32_t correlation, uint32_t return_value);

void emitDeviceRecord(Activity& activity, const DeviceModel& model, int ordinal);

// Size of the struct the simulator emits for `kind` (cuptiActivityGetNextRecord walks buffers with
// it); 0 for kinds the simulator never emits.
size_t recordSize(CUpti_ActivityKind kind);

} // namespace gpuwise::sim
