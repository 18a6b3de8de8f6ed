#include "advisor/cli/locations.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace gpuwise::advisor {

std::string executableDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return exe.parent_path().string();
}

namespace {

std::string besideExecutable(const char* env, const char* relative) {
  if (const char* v = std::getenv(env); v && *v) return v;
  auto dir = executableDir();
  if (dir.empty()) return relative;
  return (std::filesystem::path(dir) / relative).lexically_normal().string();
}

} // namespace

std::string shimPath() {
  return besideExecutable("GPUWISE_SHIM", "../lib/libgpuwise.so");
}
std::string simdeviceDir() {
  return besideExecutable("GPUWISE_SIMDEVICE_DIR", "../simdevice");
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
