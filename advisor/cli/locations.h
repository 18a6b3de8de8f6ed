// Where `gpuwise run` finds the shim and the simulated device: next to the gpuwise executable in
// the build layout (DESIGN.md: <dir>/bin/gpuwise, <dir>/lib/libgpuwise.so, <dir>/simdevice/) or
// the installed one (<prefix>/bin/gpuwise, <prefix>/lib/gpuwise/libgpuwise.so,
// <prefix>/lib/gpuwise/simdevice/), unless GPUWISE_SHIM / GPUWISE_SIMDEVICE_DIR say otherwise.
#pragma once

#include <string>

namespace gpuwise::advisor {

// The directory of the running executable (/proc/self/exe), empty when unknown.
std::string executableDir();
// GPUWISE_SHIM, else <executableDir>/../lib/libgpuwise.so, else ../lib/gpuwise/libgpuwise.so.
std::string shimPath();
// GPUWISE_SIMDEVICE_DIR, else <executableDir>/../simdevice, else ../lib/gpuwise/simdevice.
std::string simdeviceDir();

bool fileExists(const std::string& path);
bool directoryExists(const std::string& path);

} // namespace gpuwise::advisor
