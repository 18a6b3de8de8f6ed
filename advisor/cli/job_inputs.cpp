#include "advisor/cli/job_inputs.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <numeric>

namespace gpuwise::advisor {
namespace {

bool isAlnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// The number after `word` (and an optional '-' or '_') at `at` of `name`, lowercased; nullopt
// when `word` is not there as a token.
std::optional<int32_t> numberAfter(std::string_view name, size_t at, std::string_view word) {
  if (name.substr(at, word.size()) != word) return std::nullopt;
  if (at > 0 && isAlnum(name[at - 1])) return std::nullopt;
  size_t i = at + word.size();
  if (i < name.size() && (name[i] == '-' || name[i] == '_')) ++i;
  int64_t n = 0;
  size_t digits = 0;
  for (; i < name.size() && isDigit(name[i]); ++i, ++digits) {
    n = n * 10 + (name[i] - '0');
    if (n > INT32_MAX) return std::nullopt;
  }
  if (digits == 0) return std::nullopt;
  return int32_t(n);
}

std::string str(int32_t v) {
  return std::to_string(v);
}

// The first input that has a rank, the first that has none, and the job's world size as the
// inputs give it; false with `error` set at the first disagreement.
struct JobCheck {
  const InputProcesses* sized = nullptr; // first input with a world size
  int32_t world_size = -1;
  const InputProcesses *ranked = nullptr, *unranked = nullptr;
  std::map<int32_t, const InputProcesses*> owner; // rank -> the input that holds it
};

bool checkProcess(const InputProcesses& in, const model::ProcessInfo& info, JobCheck& job,
                  std::string* error) {
  if (info.world_size >= 0) {
    if (!job.sized) {
      job.sized = &in;
      job.world_size = info.world_size;
    } else if (info.world_size != job.world_size) {
      *error = in.path + ": world_size " + str(info.world_size) + ", but " + job.sized->path +
               " has world_size " + str(job.world_size) + ": traces of two jobs";
      return false;
    }
  }
  if (info.rank < 0) return true;
  auto [it, fresh] = job.owner.emplace(info.rank, &in);
  if (!fresh && it->second != &in) {
    *error = in.path + ": rank " + str(info.rank) + ", and " + it->second->path + " is rank " +
             str(info.rank) + " too: the same rank twice";
    return false;
  }
  return true;
}

bool checkOneJob(const std::vector<InputProcesses>& inputs,
                 const std::vector<model::ProcessTrace>& processes, std::string* error) {
  JobCheck job;
  for (const auto& in : inputs) {
    bool has_rank = false;
    for (size_t k = in.first; k < in.first + in.count; ++k) {
      if (!checkProcess(in, processes[k].info, job, error)) return false;
      has_rank = has_rank || processes[k].info.rank >= 0;
    }
    // An input without processes (a recording that never got a Hello) is no rank at all.
    if (has_rank && !job.ranked) job.ranked = &in;
    if (!has_rank && in.count > 0 && !job.unranked) job.unranked = &in;
  }
  const std::string why = " (none in the trace, as distributedInfo.rank or RANK, and none in "
                          "the file name, as rank-N or workerN)";
  if (job.unranked && job.ranked) {
    *error = job.unranked->path + ": no rank" + why + ", but " + job.ranked->path +
             " has one: several traces are the ranks of one job, and each needs its rank";
    return false;
  }
  if (!job.ranked) {
    *error = inputs[0].path + " and " + inputs[1].path + ": no rank in either" + why +
             ": several traces are the ranks of one job; give one trace at a time";
    return false;
  }
  if (job.world_size >= 0 && !job.owner.empty() && job.owner.rbegin()->first >= job.world_size) {
    const auto& [rank, in] = *job.owner.rbegin();
    *error = in->path + ": rank " + str(rank) + ", outside the job's world_size " +
             str(job.world_size) + " (from " + job.sized->path + ")";
    return false;
  }
  return true;
}

// Reorders whole inputs by their lowest rank (stable; inputs without one last), keeping each
// input's processes in their order, and the files and stream health with them.
void orderByRank(const std::vector<InputProcesses>& inputs, LoadedInputs& loaded) {
  auto& processes = loaded.trace.processes;
  auto& files = loaded.trace.source.files;
  auto& streams = loaded.health.streams;
  std::vector<int64_t> lowest(inputs.size(), INT64_MAX);
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t k = inputs[i].first; k < inputs[i].first + inputs[i].count; ++k)
      if (processes[k].info.rank >= 0)
        lowest[i] = std::min<int64_t>(lowest[i], processes[k].info.rank);
  std::vector<size_t> order(inputs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return lowest[a] < lowest[b]; });
  if (std::is_sorted(order.begin(), order.end())) return;

  std::vector<model::ProcessTrace> sorted_processes;
  std::vector<std::optional<StreamHealth>> sorted_streams;
  std::vector<std::string> sorted_files;
  sorted_processes.reserve(processes.size());
  for (size_t i : order) {
    for (size_t k = inputs[i].first; k < inputs[i].first + inputs[i].count; ++k) {
      sorted_processes.push_back(std::move(processes[k]));
      if (k < streams.size()) sorted_streams.push_back(streams[k]);
    }
    if (i < files.size()) sorted_files.push_back(std::move(files[i]));
  }
  processes = std::move(sorted_processes);
  if (sorted_streams.size() == streams.size()) streams = std::move(sorted_streams);
  if (sorted_files.size() == files.size()) files = std::move(sorted_files);
}

// The process a file name's rank is for: the input's only process, or, in an input of several
// (an Nsight export with the launcher in it), the only one that used a GPU. None when a process
// of the input already has a rank.
model::ProcessTrace* nameableProcess(const InputProcesses& in,
                                     std::vector<model::ProcessTrace>& processes) {
  model::ProcessTrace* found = nullptr;
  size_t on_gpu = 0;
  for (size_t k = in.first; k < in.first + in.count; ++k) {
    if (processes[k].info.rank >= 0) return nullptr;
    if (in.count == 1 || !processes[k].devices.empty()) {
      found = &processes[k];
      ++on_gpu;
    }
  }
  return on_gpu == 1 ? found : nullptr;
}

} // namespace

std::optional<int32_t> rankFromFileName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  std::string name(slash == std::string_view::npos ? path : path.substr(slash + 1));
  for (char& c : name)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  for (size_t at = 0; at < name.size(); ++at) {
    if (auto r = numberAfter(name, at, "rank")) return r;
    if (auto r = numberAfter(name, at, "worker")) return r;
  }
  return std::nullopt;
}

bool arrangeAsJob(const std::vector<InputProcesses>& inputs, LoadedInputs* loaded,
                  std::string* error) {
  auto& processes = loaded->trace.processes;
  for (const auto& in : inputs)
    if (auto* rank_process = nameableProcess(in, processes))
      if (auto rank = rankFromFileName(in.path)) rank_process->info.rank = *rank;
  if (inputs.size() > 1 && !checkOneJob(inputs, processes, error)) return false;
  orderByRank(inputs, *loaded);
  return true;
}

} // namespace gpuwise::advisor
