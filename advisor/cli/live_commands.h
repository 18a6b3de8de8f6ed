// The commands that serve or run a job (run, advisor, webhook) and the libraries only they need
// (ZeroMQ, cpp-httplib, OpenSSL and the ~20 libraries ZeroMQ pulls in: Kerberos, libsodium,
// OpenPGM, NORM) live in lib/libgpuwise_live.so, which bin/gpuwise loads with dlopen when one of
// these commands is parsed. Every other command (version, report, export, diff) starts without
// them: the dynamic loader's work for those libraries was most of `gpuwise version`'s 20 ms.
//
// The module exports one C symbol, kLiveEntry, returning a table of the three commands; its
// other symbols are local to it (a version script), so its copies of our static libraries never
// interpose on the executable's. Tests link gpuwise_cli, where the three are plain functions.
#pragma once

#include "advisor/cli/commands.h"
#include "advisor/cli/webhook_command.h"

namespace gpuwise::advisor {

// Bumped whenever an options struct or this table changes layout: the executable and the module
// come from one build, and a mismatch (a stale module on the path) is refused, not called.
inline constexpr int kLiveAbi = 1;

struct LiveCommands {
  int abi;
  int (*run)(const RunOptions&, CliIo);
  int (*advisor)(const AdvisorOptions&, CliIo);
  int (*webhook)(const WebhookOptions&, CliIo);
};

inline constexpr const char* kLiveModule = "libgpuwise_live.so";
inline constexpr const char* kLiveEntry = "gpuwise_live_commands";

} // namespace gpuwise::advisor

// Defined in the module only (live_entry.cpp). A C symbol looked up by name (kLiveEntry), so it
// keeps the C naming of the shim's exported entry points.
// NOLINTNEXTLINE(readability-identifier-naming)
extern "C" const gpuwise::advisor::LiveCommands* gpuwise_live_commands();
