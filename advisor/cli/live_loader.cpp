// bin/gpuwise's runCommand, advisorCommand and webhookCommand: each loads lib/libgpuwise_live.so
// (live_commands.h) and calls the module's own. GPUWISE_LIVE_MODULE names another file (tests,
// unusual layouts); otherwise <executableDir>/../lib/libgpuwise_live.so (the build tree), then
// <executableDir>/../lib/gpuwise/libgpuwise_live.so (installed, beside the shim), else the loader's
// search path. A module that is missing or from another build is one line on stderr and exit 2.
#include "advisor/cli/live_commands.h"
#include "advisor/cli/locations.h"

#include <cstdlib>
#include <dlfcn.h>
#include <string>

namespace gpuwise::advisor {
namespace {

const LiveCommands* loadLive(const char* command, CliIo io) {
  std::string path;
  if (const char* env = std::getenv("GPUWISE_LIVE_MODULE"); env && *env)
    path = env;
  else
    path = kLiveModule;
  if (path == kLiveModule) {
    const std::string dir = executableDir();
    for (const char* sub : {"/../lib/", "/../lib/gpuwise/"})
      if (!dir.empty() && fileExists(dir + sub + kLiveModule)) {
        path = dir + sub + kLiveModule;
        break;
      }
  }
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    logLine(io.err, command,
            "cannot load " + path + " (" + (why ? why : "unknown error") +
                "): it holds this command; install it in the lib folder beside bin/gpuwise");
    return nullptr;
  }
  using Entry = const LiveCommands* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, kLiveEntry));
  const LiveCommands* table = entry ? entry() : nullptr;
  if (!table || table->abi != kLiveAbi) {
    logLine(io.err, command, path + " is from another build of gpuwise");
    return nullptr;
  }
  return table; // never unloaded: the process ends with the command
}

} // namespace

int runCommand(const RunOptions& options, CliIo io) {
  const LiveCommands* live = loadLive("run", io);
  return live ? live->run(options, io) : kExitUsage;
}

int advisorCommand(const AdvisorOptions& options, CliIo io) {
  const LiveCommands* live = loadLive("advisor", io);
  return live ? live->advisor(options, io) : kExitUsage;
}

int webhookCommand(const WebhookOptions& options, CliIo io) {
  const LiveCommands* live = loadLive("webhook", io);
  return live ? live->webhook(options, io) : kExitUsage;
}

} // namespace gpuwise::advisor
