// The four 4-rank data-parallel jobs that distributed analysis is judged on, run on the simulated
// device: samples/pytorch/launch.py starts the ranks, samples/pytorch/train.py's sim backend
// all-reduces each layer's gradients with the stand-in NCCL (tests/simdevice/nccl).
//
//   healthy       all-reduce overlapped with the backward pass, no straggler
//   slow_compute  rank 2's kernels 1.5x longer (a throttled GPU): the others wait for it
//   slow_loader   rank 1's loader takes 25 ms a batch against a ~6 ms step: the others wait for it
//   no_overlap    every all-reduce after the whole backward pass: communication fully exposed
//
// Each takes a few seconds under `gpuwise run --simulate` on a 2-core machine (40 steps). Use:
//   argv = simulatedRunArgv(dir, job.name, distributedJobCommand(job, python, sourceDir()));
#pragma once

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

namespace gpuwise::test {

// The Python the tests run train.py with: GPUWISE_PYTHON (set by CMake), else /usr/bin/python3.
inline std::string testPython() {
  const char* p = std::getenv("GPUWISE_PYTHON");
  return p ? p : "/usr/bin/python3";
}

// Every rank's "allreduces=N", from the gwtrain result lines in a job's output.
inline std::vector<long long> allReduceCounts(const std::string& out) {
  std::vector<long long> counts;
  static const std::regex re(R"( allreduces=(\d+))");
  for (std::sregex_iterator it(out.begin(), out.end(), re), end; it != end; ++it)
    counts.push_back(std::stoll((*it)[1]));
  return counts;
}

inline constexpr int kDistributedRanks = 4;

struct DistributedJob {
  std::string name;
  std::vector<std::string> flags; // train.py flags beyond distributedCommonFlags()
  int straggler_rank = -1;        // -1: none planted
  std::string straggler_cause;    // "compute", "input", or "" (none)
  bool exposed_communication = false;
};

// Flags every job shares: pinned memory, one loader worker and BF16, so that the healthy job has
// nothing else to recommend; small images, so that each rank's host work per step (above all the
// pinned copy of its batch) stays small: the simulated device keeps real time, and four ranks
// starving a 2-core machine's CPU would plant host stalls of their own (with 64-pixel images the
// no-overlap job's step took 13 ms instead of its model's 7.3 ms).
inline const std::vector<std::string>& distributedCommonFlags() {
  static const std::vector<std::string> flags{
      "--backend",     "sim", "--steps",     "40", "--warmup",     "5",  "--amp",       "bf16",
      "--num-workers", "1",   "--loader-ms", "2",  "--image-size", "16", "--pin-memory"};
  return flags;
}

inline const std::vector<DistributedJob>& distributedJobs() {
  static const std::vector<DistributedJob> jobs{
      {"healthy", {}, -1, "", false},
      {"slow_compute", {"--slow-rank", "2", "--slow-compute", "1.5"}, 2, "compute", false},
      {"slow_loader", {"--slow-loader-rank", "1", "--slow-loader-ms", "25"}, 1, "input", false},
      {"no_overlap", {"--no-overlap"}, -1, "", true},
  };
  return jobs;
}

// The command `gpuwise run ... --` runs: launch.py's stand-in launcher (never torchrun, so the job
// is the same wherever PyTorch is installed) starting kDistributedRanks ranks of train.py.
inline std::vector<std::string> distributedJobCommand(const DistributedJob& job,
                                                      const std::string& python,
                                                      const std::string& source_dir) {
  std::vector<std::string> cmd{python,
                               source_dir + "/samples/pytorch/launch.py",
                               "--stand-in",
                               "--nproc-per-node",
                               std::to_string(kDistributedRanks),
                               "--",
                               source_dir + "/samples/pytorch/train.py"};
  const auto& common = distributedCommonFlags();
  cmd.insert(cmd.end(), common.begin(), common.end());
  cmd.insert(cmd.end(), job.flags.begin(), job.flags.end());
  return cmd;
}

} // namespace gpuwise::test
