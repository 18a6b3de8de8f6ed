// Replays a recorded .gwt file through a StreamRouter: the offline twin of IngestServer, so
// `gpuwise report run.gwt` sees exactly what the live advisor saw.
//
// Runs on the caller's thread; reads the whole file; returns false with a one-line error naming
// the file and the problem (not a .gwt file, truncated at byte N).
#pragma once

#include "advisor/ingest/stream_router.h"

#include <string>

namespace gpuwise::advisor {

bool replayGwt(const std::string& path, StreamRouter& router, std::string* error);

} // namespace gpuwise::advisor
