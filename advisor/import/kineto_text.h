// Pure text helpers of the Kineto importer: JSON number tokens to integers without going through
// double, and the meaning Kineto packs into event names (memcpy kinds, sync calls, steps, data
// loaders, collectives). No state, no allocation; safe from any thread.
#pragma once

#include "profiler/model/events.h"

#include <cstdint>
#include <string_view>

namespace gpuwise::advisor {

// Parses a JSON number token (`123`, `-4.5`, `1712195495505543.2`, `1.5e-3`) scaled by 10^scale
// and rounded to the nearest integer (ties away from zero). Digits are read as digits, so a
// 64-bit epoch in microseconds with a nanosecond fraction converts exactly. A quoted token
// (`"25738"`) is accepted too. Returns false for anything else or on int64 overflow.
bool parseScaledDecimal(std::string_view token, int scale, int64_t* out);

// Kineto timestamps and durations are microseconds; the model is nanoseconds.
inline bool parseMicrosToNs(std::string_view token, model::TimeNs* out) {
  return parseScaledDecimal(token, 3, out);
}

// An integer from a token that may be a number, a quoted number, or a quoted hex value ("0x7f").
bool parseLooseInt(std::string_view token, int64_t* out);

// The trailing integer of a label such as "stream 7" or "25738"; false if there is none.
bool parseTrailingInt(std::string_view text, int64_t* out);

// "Memcpy HtoD (Pageable -> Device)" -> HostToDevice, Pageable, Device. Kineto writes
// "Memcpy <kind> (<src> -> <dst>)" from CUPTI's memcpy and memory kinds; ROCm traces say "Host".
struct MemcpyNameInfo {
  bool ok = false; // the name starts with "Memcpy"
  model::CopyDirection direction = model::CopyDirection::Unknown;
  model::MemoryKind src = model::MemoryKind::Unknown;
  model::MemoryKind dst = model::MemoryKind::Unknown;
};
MemcpyNameInfo parseMemcpyName(std::string_view name);

// "Memset (Device)" -> Device.
model::MemoryKind parseMemsetName(std::string_view name);

// CUPTI / PyTorch memory-kind words: "Pageable", "Pinned", "Device", "Device Static" ...
model::MemoryKind parseMemoryKindWord(std::string_view word);

// The kind of host wait a runtime/driver call is: Device, Stream, Event, SyncCopy (a memcpy call
// without "Async", which blocks the host unless it is device-to-device), or Unknown.
model::SyncKind syncKindForApi(std::string_view api);

// The kind of a Kineto `cuda_sync` event from its name or its `cuda_sync_kind` argument:
// "Context Sync", "Stream Sync", "Event Sync", "Stream Wait Event" (and our "Memcpy Sync"): the
// inverse of model::kinetoSyncName.
model::SyncKind syncKindForCudaSync(std::string_view name);

// Calls issued with an *Async runtime/driver entry point.
bool isAsyncApi(std::string_view api);

// N for "ProfilerStep#N", -1 otherwise.
int64_t profilerStepNumber(std::string_view name);

// "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" and the other spellings that mark
// the host waiting on the input pipeline (DataPipe iterators, older _DataLoaderIter).
bool isDataLoaderRange(std::string_view name);
// The Python-stack spelling "torch/utils/data/dataloader.py(703): __next__", used only when a
// trace has no record_function range for the data loader.
bool isPythonDataLoaderNext(std::string_view name);

// NCCL / RCCL collective kernels ("ncclKernel_AllReduce_...", "ncclDevKernel_...").
bool isCommunicationKernel(std::string_view name);

} // namespace gpuwise::advisor
