// The names Kineto traces give the sync kinds (CUPTI's synchronization kinds; "Memcpy Sync" is
// ours): what the Chrome-trace exporter (advisor/export) writes and the Kineto importer
// (advisor/import) reads back, so both use this one table. Pure; safe from any thread.
#pragma once

#include "profiler/model/events.h"

namespace gpuwise::model {

inline const char* kinetoSyncName(SyncKind kind) {
  switch (kind) {
  case SyncKind::Device: return "Context Sync";
  case SyncKind::Stream: return "Stream Sync";
  case SyncKind::Event: return "Event Sync";
  case SyncKind::StreamWaitEvent: return "Stream Wait Event";
  case SyncKind::SyncCopy: return "Memcpy Sync";
  case SyncKind::Unknown: break;
  }
  return "Unknown Sync";
}

} // namespace gpuwise::model
