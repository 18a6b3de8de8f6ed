// The entry point of lib/libgpuwise_live.so (live_commands.h): the module's only exported symbol.
#include "advisor/cli/live_commands.h"

// NOLINTBEGIN(readability-identifier-naming): a C symbol, named as the shim's entry points are
extern "C" __attribute__((visibility("default"))) const gpuwise::advisor::LiveCommands*
gpuwise_live_commands() {
  using namespace gpuwise::advisor;
  static const LiveCommands table{kLiveAbi, &runCommand, &advisorCommand, &webhookCommand};
  return &table;
}
// NOLINTEND(readability-identifier-naming)
