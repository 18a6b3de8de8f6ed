#include "advisor/analysis/process_workers.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace gpuwise::advisor {

size_t analysisWorkers(size_t processes, unsigned requested) {
  size_t workers = requested;
  if (workers == 0) workers = std::max(1u, std::thread::hardware_concurrency());
  return std::max<size_t>(1, std::min(workers, processes));
}

void runOnWorkers(size_t count, size_t workers, const std::function<void(size_t)>& task) {
  if (count == 0) return;
  std::vector<std::exception_ptr> failures(count);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      try {
        task(i);
      } catch (...) {
        failures[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  const size_t extra = std::min(std::max<size_t>(workers, 1), count) - 1;
  threads.reserve(extra);
  for (size_t t = 0; t < extra; ++t) {
    try {
      threads.emplace_back(work);
    } catch (const std::system_error&) {
      break; // no thread to be had: the ones started and this one share the work
    }
  }
  work();
  for (auto& t : threads)
    t.join();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

} // namespace gpuwise::advisor
