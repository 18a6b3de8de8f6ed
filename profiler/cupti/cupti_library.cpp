#include "profiler/cupti/cupti_library.h"

#include <link.h>

#include <algorithm>
#include <filesystem>

namespace gpuwise::profiler {

namespace {

std::string dirOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string baseOf(const std::string& path) { return path.substr(path.rfind('/') + 1); }

} // namespace

std::vector<std::string> cuptiCandidates(const CuptiSearch& s) {
  if (!s.library.empty()) return {s.library};
  std::vector<std::string> out;
  auto add = [&](const std::string& path) {
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  };
  add(kCuptiSoname);
  for (const auto& obj : s.loaded) {
    if (baseOf(obj).rfind("libcudart.so", 0) != 0) continue;
    std::string dir = dirOf(obj);
    if (dir.empty()) continue;
    add(dir + "/" + kCuptiSoname);
    // Lexically: a toolkit's lib64 is often a link to targets/<arch>/lib, whose ".." has no extras.
    add((std::filesystem::path(dir) / "../extras/CUPTI/lib64" / kCuptiSoname).lexically_normal());
  }
  for (const std::string& root : {s.cuda_home, std::string("/usr/local/cuda")}) {
    if (root.empty()) continue;
    add(root + "/extras/CUPTI/lib64/" + kCuptiSoname);
    add(root + "/lib64/" + kCuptiSoname);
  }
  return out;
}

std::vector<std::string> loadedObjects() {
  std::vector<std::string> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        // No exception may unwind through the loader, which holds its lock here.
        try {
          if (info->dlpi_name && *info->dlpi_name)
            static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
          return 0;
        } catch (...) {
          return 1; // out of memory: stop with what was found
        }
      },
      &out);
  return out;
}

} // namespace gpuwise::profiler
