#include "advisor/report/series_json.h"

#include "advisor/report/format.h"

#include <cmath>

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;

// Four decimals are finer than any chart draws and keep 200-value arrays short.
double rounded(double ratio) {
  return std::round(ratio * 1e4) / 1e4;
}

json identity(int64_t pid, int32_t rank, uint32_t device, model::TimeNs start, model::TimeNs end,
              size_t buckets) {
  json j;
  j["pid"] = pid;
  j["rank"] = rank >= 0 ? json(rank) : json(nullptr);
  j["device"] = device;
  j["start_ns"] = start;
  j["end_ns"] = end;
  j["bucket_seconds"] = buckets ? toSeconds(end - start) / static_cast<double>(buckets) : 0.0;
  return j;
}

json levels(const std::vector<int64_t>& values) {
  if (values.empty()) return nullptr;
  json arr = json::array();
  for (auto v : values)
    arr.push_back(v >= 0 ? json(v) : json(nullptr));
  return arr;
}

} // namespace

nlohmann::ordered_json timelineSeriesJson(const UtilizationResult& u) {
  json j;
  j["buckets"] = kSeriesBuckets;
  json busy = json::array();
  for (const auto& s : u.busy) {
    json sj = identity(s.pid, s.rank, s.device, s.start, s.end, s.buckets());
    json b = json::array(), k = json::array(), c = json::array();
    for (size_t i = 0; i < s.buckets(); ++i) {
      b.push_back(rounded(s.busyRatio(i)));
      k.push_back(rounded(s.kernelRatio(i)));
      c.push_back(rounded(s.copyRatio(i)));
    }
    sj["busy_ratio"] = std::move(b);
    sj["kernel_ratio"] = std::move(k);
    sj["copy_ratio"] = std::move(c);
    busy.push_back(std::move(sj));
  }
  j["busy"] = std::move(busy);
  json memory = json::array();
  for (const auto& s : u.memory) {
    json sj = identity(s.pid, s.rank, s.device, s.start, s.end, s.buckets());
    sj["source"] = toString(s.source);
    sj["memory_total_bytes"] = s.memory_total_bytes ? json(s.memory_total_bytes) : json(nullptr);
    sj["reserved_bytes"] = levels(s.reserved);
    sj["allocated_bytes"] = levels(s.allocated);
    memory.push_back(std::move(sj));
  }
  j["memory"] = std::move(memory);
  return j;
}

} // namespace gpuwise::advisor
