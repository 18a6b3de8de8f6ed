// One-line diagnostics on stderr ("gpuwise[pid]: ..."), written with a single write(2) so lines
// from several processes do not interleave. Never called on the launch path.
//
// Threads: any. Never allocates (formats into a stack buffer), never throws.
#pragma once

#include "interposer/config.h"

namespace gpuwise::interposer {

void setLogLevel(LogLevel level);
LogLevel logLevel();
// Writes the line when `level` is enabled (Warn lines show unless GPUWISE_LOG=quiet).
void logLine(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

} // namespace gpuwise::interposer
