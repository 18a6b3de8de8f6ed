#include "advisor/cli/sidecar_report_name.h"

#include <algorithm>
#include <cstdlib>

namespace gpuwise::advisor {

namespace {

std::string safeFileName(const std::string& job) {
  std::string out = job.substr(0, 200);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (!out.empty() && out[0] == '.') out[0] = '_';
  return out;
}

} // namespace

std::string sidecarReportBaseName(const std::string& job, const std::vector<int32_t>& ranks,
                                  std::optional<int32_t> pod_rank) {
  if (job.empty()) return kDefaultReportBaseName;
  std::string stem = safeFileName(job); // not const: returned by move
  std::vector<int32_t> known;
  for (int32_t r : ranks)
    if (r >= 0) known.push_back(r);
  if (known.empty() && pod_rank && *pod_rank >= 0) known.push_back(*pod_rank);
  if (known.empty()) return stem;
  const auto [low, high] = std::minmax_element(known.begin(), known.end());
  if (*low == *high) return stem + "-rank-" + std::to_string(*low);
  return stem + "-ranks-" + std::to_string(*low) + "-" + std::to_string(*high);
}

std::string podReportSuffix(const std::string& ns, const std::string& pod) {
  if (pod.empty() && ns.empty()) return "-no-pod";
  return "-" + safeFileName(ns.empty() ? pod : ns + "." + pod);
}

std::string sidecarJob() {
  const char* job = std::getenv("GPUWISE_JOB");
  return job ? job : "";
}

std::optional<int32_t> sidecarRank() {
  const char* text = std::getenv("GPUWISE_RANK");
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < 0 || v > INT32_MAX) return std::nullopt;
  return int32_t(v);
}

} // namespace gpuwise::advisor
