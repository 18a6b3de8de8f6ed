#include "profiler/cupti/cupti_library.h"

#include <link.h>

#include <algorithm>
#include <filesystem>

namespace gpuwise::profiler {

std::vector<std::string> cuptiCandidates(const CuptiSearch& s) {
  if (!s.library.empty()) return {s.library};
  std::vector<std::string> out;
  auto add = [&](const std::string& path) {
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  };
  add(kCuptiSoname);
  for (const std::filesystem::path obj : s.loaded) {
    if (obj.filename().string().rfind("libcudart.so", 0) != 0 || !obj.has_parent_path()) continue;
    const auto dir = obj.parent_path();
    add(dir / kCuptiSoname);
    // Lexically: a toolkit's lib64 is often a link to targets/<arch>/lib, whose ".." has no extras.
    add((dir / "../extras/CUPTI/lib64" / kCuptiSoname).lexically_normal());
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
