// Replays a recorded .gwt file through a StreamRouter: the offline twin of IngestServer, so
// `gpuwise report run.gwt` sees exactly what the live advisor saw.
//
// A recording holds every message the advisor received, so a few rejected records (a forged
// message on the socket, a batch from a shim of another version) are replayed as the live
// advisor took them: dropped and counted, the rest reported. A file whose records are all
// rejected is not a recording at all, however well framed: that is an error. An empty recording
// (the magic only: a run that sent nothing) is not.
//
// Runs on the caller's thread; reads the whole file; returns false with a one-line error naming
// the file and the problem (not a .gwt file, truncated at byte N, no gpuwise message in it).
#pragma once

#include "advisor/ingest/stream_router.h"

#include <cstdint>
#include <span>
#include <string>

namespace gpuwise::advisor {

struct GwtReplayStats {
  uint64_t records = 0;  // records read from the file
  uint64_t rejected = 0; // of those, rejected by the router
};

bool replayGwt(const std::string& path, StreamRouter& router, std::string* error,
               GwtReplayStats* stats = nullptr);
// The same for a recording in memory (an input read from a pipe), named `name` in errors.
bool replayGwtBytes(std::span<const uint8_t> bytes, const std::string& name, StreamRouter& router,
                    std::string* error, GwtReplayStats* stats = nullptr);

} // namespace gpuwise::advisor
