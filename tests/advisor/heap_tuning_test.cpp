// The advisor's heap settings (advisor/import/heap_tuning.h) as its threads see them: a thread
// created after tuneLiveAdvisorHeap() that frees a working set larger than one of glibc's 64 MiB
// per-thread heaps gets its pages back on the next use, as the live ingest thread does from one
// window to the next. Without one arena, the part past the first heap was unmapped when freed
// and faulted in afresh by the next window. Its own executable: no thread exists before the call.
#include "advisor/import/heap_tuning.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <sys/resource.h>
#include <thread>
#include <vector>

namespace {

// Minor page faults a new thread takes to allocate and touch `blocks` blocks of `bytes` each; it
// frees them before it ends. -1 when an allocation failed (no Catch2 assertion in the worker: a
// failed REQUIRE throws, and a throw out of a std::thread ends the process).
long faultsOfWorkingSet(size_t blocks, size_t bytes) {
  long faults = -1;
  std::thread worker([&] {
    rusage before{}, after{};
    getrusage(RUSAGE_THREAD, &before);
    std::vector<char*> held;
    bool allocated = true;
    for (size_t b = 0; b < blocks; ++b) {
      auto* p = static_cast<char*>(std::malloc(bytes));
      allocated = p != nullptr;
      if (!allocated) break;
      for (size_t i = 0; i < bytes; i += 4096)
        p[i] = 1;
      held.push_back(p);
    }
    getrusage(RUSAGE_THREAD, &after);
    for (char* p : held)
      std::free(p);
    if (allocated) faults = after.ru_minflt - before.ru_minflt;
  });
  worker.join();
  return faults;
}

} // namespace

TEST_CASE("heap tuning: a later thread's freed working set is reused without page faults") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__GLIBC__)
  gpuwise::test::skipTest(
      "the sanitizer's allocator (or not glibc's): tuneAdvisorHeap does nothing");
#endif
  gpuwise::advisor::tuneLiveAdvisorHeap();
  // 96 MiB in blocks of 24 MiB: more than one per-thread heap holds, less than the 128 MiB of
  // free heap kept.
  constexpr size_t kBlocks = 4, kBytes = size_t{24} << 20;
  const long first = faultsOfWorkingSet(kBlocks, kBytes);
  const long again = faultsOfWorkingSet(kBlocks, kBytes);
  REQUIRE(again >= 0); // every block was allocated
  INFO("first thread " << first << " faults, the next " << again);
  CHECK(first > long(kBlocks * kBytes / 4096 / 2)); // the pages were new once
  CHECK(again < first / 10);
}
