#include "advisor/cli/locations.h"

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <system_error>

namespace gpuwise::advisor {

std::string executableDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return exe.parent_path().string();
}

namespace {

// ENV when set, else the first of RELATIVES (to the executable's folder) that exists as a file or
// a folder (IS_DIR), else the first of them: the build tree's layout comes first, the installed
// one (<prefix>/lib/gpuwise/...) second.
std::string besideExecutable(const char* env, std::initializer_list<const char*> relatives,
                             bool is_dir) {
  if (const char* v = std::getenv(env); v && *v) return v;
  auto dir = executableDir();
  if (dir.empty()) return *relatives.begin();
  for (const char* relative : relatives) {
    auto path = (std::filesystem::path(dir) / relative).lexically_normal().string();
    if (is_dir ? directoryExists(path) : fileExists(path)) return path;
  }
  return (std::filesystem::path(dir) / *relatives.begin()).lexically_normal().string();
}

} // namespace

std::string shimPath() {
  return besideExecutable("GPUWISE_SHIM", {"../lib/libgpuwise.so", "../lib/gpuwise/libgpuwise.so"},
                          false);
}
std::string simdeviceDir() {
  return besideExecutable("GPUWISE_SIMDEVICE_DIR", {"../simdevice", "../lib/gpuwise/simdevice"},
                          true);
}

bool fileExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

bool directoryExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

} // namespace gpuwise::advisor
