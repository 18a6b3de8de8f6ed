// The name a sidecar gives its report, so that a job's reports can be gathered into one folder (a
// shared volume, or copied out of each pod) and merged with `gpuwise report reports/*.json`:
//
//   <job>-rank-<N>                one rank in the pod
//   <job>-ranks-<first>-<last>    several (torchrun with --nproc-per-node 8: ranks 8-15)
//   <job>                         no rank known
//   gpuwise-report                no job known (what every sidecar wrote before jobs had names)
//
// The job is the sidecar's GPUWISE_JOB (the webhook sets it from the pod's job labels, see
// containers/kubernetes/README.md). The ranks are, in order: those of the processes the sidecar
// analysed (each shim sends its RANK), else the sidecar's GPUWISE_RANK (the webhook's pick of the
// training container's RANK or the pod's index label). A job name is made a safe file name: bytes
// other than letters, digits, '.', '_' and '-' become '_', a leading '.' too, at most 200 bytes.
//
// Pure apart from the two environment readers; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuwise::advisor {

inline constexpr const char* kDefaultReportBaseName = "gpuwise-report";

// The file name stem (no extension) for `job` and the ranks of its processes (any order, repeats
// and negative "unknown" ranks allowed); `pod_rank` when no process knew its rank.
std::string sidecarReportBaseName(const std::string& job, const std::vector<int32_t>& ranks,
                                  std::optional<int32_t> pod_rank);

// What an advisor that several pods reached appends to each pod's report name:
// "-<namespace>.<pod>" ("-<pod>" without a namespace, "-no-pod" for processes outside a pod),
// made a safe file name as a job name is.
std::string podReportSuffix(const std::string& ns, const std::string& pod);

// GPUWISE_JOB of this process, empty when unset.
std::string sidecarJob();
// GPUWISE_RANK of this process when it is a non-negative integer.
std::optional<int32_t> sidecarRank();

} // namespace gpuwise::advisor
