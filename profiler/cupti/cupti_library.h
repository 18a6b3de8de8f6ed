// Where libcupti.so.13 is looked for. CUPTI is rarely on the loader's path: a CUDA toolkit installs
// it in <toolkit>/extras/CUPTI/lib64, which ld.so.conf does not name, and PyTorch's wheels put it
// beside their libcudart (site-packages/nvidia/cu13/lib), reached only through libtorch's RUNPATH.
// A plain dlopen("libcupti.so.13") therefore finds it only where someone set LD_LIBRARY_PATH, and
// a CUDA program on a machine with a full toolkit would run on the interposer tier for no reason.
//
// The order (cuptiCandidates):
//   1. GPUWISE_CUPTI_LIBRARY, when set: that file and nothing else (the user's choice);
//   2. the plain name: LD_LIBRARY_PATH, the loader cache, and a copy the process already loaded
//      (PyTorch loads its own at import, before the first CUDA call): always first, so the
//      process never holds two CUPTIs;
//   3. beside each libcudart the process loaded (pip wheels), and <its dir>/../extras/CUPTI/lib64
//      (a toolkit's lib64, ".." taken lexically): the CUPTI of the runtime the application uses;
//   4. $CUDA_HOME, else $CUDA_PATH: extras/CUPTI/lib64, lib64;
//   5. /usr/local/cuda: extras/CUPTI/lib64, lib64.
#pragma once

#include <string>
#include <vector>

namespace gpuwise::profiler {

inline constexpr const char* kCuptiSoname = "libcupti.so.13";

struct CuptiSearch {
  std::string library;             // GPUWISE_CUPTI_LIBRARY, or empty
  std::string cuda_home;           // CUDA_HOME, else CUDA_PATH, or empty
  std::vector<std::string> loaded; // paths of the objects the process has loaded
};

// Every place to try, in order, without duplicates; the first is what a plain dlopen gets.
std::vector<std::string> cuptiCandidates(const CuptiSearch& search);

// The paths of the shared objects loaded in this process (dl_iterate_phdr). Takes the loader's
// lock: call it where a dlopen would be fine too (the shim's start, on the application's thread).
std::vector<std::string> loadedObjects();

} // namespace gpuwise::profiler
