// Process workers: the per-process work of an offline analysis (one rank's index, timeline, idle
// causes, steps) spread over the cores, one process per worker at a time.
//
// runOnWorkers(count, workers, task) calls task(i) once for every i in [0, count), on up to
// `workers` threads (the caller's own thread is one of them), and returns when all are done. The
// tasks take the next unstarted index, so uneven ranks keep every worker busy. Each task writes
// only its own slot of a result vector the caller sized beforehand; the caller then folds the
// slots in index order, so the result does not depend on which worker ran which process, nor on
// how many there were.
//
// An exception thrown by a task (std::bad_alloc on a huge trace) is rethrown on the caller's
// thread after every worker stopped: the lowest index's, whatever order they failed in. Where a
// thread cannot be started, the threads already started and the caller do the work.
//
// Any thread; the tasks must not share mutable state.
#pragma once

#include <cstddef>
#include <functional>

namespace gpuwise::advisor {

// How many workers analyse `processes` processes: `requested` when not 0, otherwise one per core
// (std::thread::hardware_concurrency(), 1 when unknown); never more than the processes, at least 1.
size_t analysisWorkers(size_t processes, unsigned requested);

void runOnWorkers(size_t count, size_t workers, const std::function<void(size_t)>& task);

} // namespace gpuwise::advisor
