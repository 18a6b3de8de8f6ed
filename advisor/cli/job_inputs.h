// The inputs of `gpuwise report` and `gpuwise export` as the ranks of one job.
//
// Each input's rank comes from, in this order: the trace itself (Kineto's distributedInfo.rank,
// or the RANK a live process reported in its Hello, both already in ProcessInfo::rank), else the
// file name (rankFromFileName), for an input that holds one process, or one process that used a
// GPU among others (an Nsight export with its launcher). world_size comes only from the traces
// (distributedInfo.world_size, WORLD_SIZE).
//
// Several inputs must be one job, or nothing is reported (one line naming the two files that
// disagree): two world sizes, the same rank in two inputs, an input without a rank next to
// others, a rank outside its world size. One input is taken as it is (a recording of several
// processes may hold ranks that restarted, or none). Missing ranks are no refusal: the report
// names them (CollectionResult::jobRanks).
//
// The processes are then ordered by rank (those without one last, in input order), and the files
// by their first process's rank.
//
// Main thread; pure apart from the LoadedInputs it is given.
#pragma once

#include "advisor/cli/trace_input.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuwise::advisor {

// The rank a file name gives, as a token of the base name (case-insensitive; not preceded by a
// letter or digit, not followed by a digit past the number): `rank-N`, `rank_N`, `rankN`,
// `workerN`, `worker-N`, `worker_N`. "sampled_rank-1.json.gz" -> 1, "worker0.pt.trace.json.gz"
// -> 0, "ranking.json" -> none.
std::optional<int32_t> rankFromFileName(std::string_view path);

// Where one input's processes are in LoadedInputs::trace.processes.
struct InputProcesses {
  std::string path;
  size_t first = 0, count = 0;
};

// Applies file-name ranks, checks that the inputs are one job, and orders them by rank (above).
// False with `error` set to one line naming the files; `loaded` is then not to be used.
bool arrangeAsJob(const std::vector<InputProcesses>& inputs, LoadedInputs* loaded,
                  std::string* error);

} // namespace gpuwise::advisor
