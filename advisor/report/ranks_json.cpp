#include "advisor/report/ranks_json.h"

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;

template <typename T> json orNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// A number field: absent or null leaves `out` unset; anything else but a number is an error.
bool readOptional(const json& j, const char* key, std::optional<double>* out, std::string* error) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_number()) {
    *error = std::string("ranks[].") + key + " is not a number";
    return false;
  }
  *out = it->get<double>();
  return true;
}

bool readNumber(const json& j, const char* key, double* out, std::string* error) {
  std::optional<double> v;
  if (!readOptional(j, key, &v, error)) return false;
  *out = v.value_or(0.0);
  return true;
}

} // namespace

json ranksJson(const std::vector<RankSummary>& ranks) {
  json arr = json::array();
  for (const auto& r : ranks) {
    json j;
    j["rank"] = r.rank >= 0 ? json(r.rank) : json(nullptr);
    j["host"] = r.host.empty() ? json(nullptr) : json(r.host);
    j["pid"] = r.pid;
    j["gpu"] = r.gpu.empty() ? json(nullptr) : json(r.gpu);
    j["steps"] = r.steps;
    j["step_mean_seconds"] = orNull(r.step_mean_seconds);
    j["step_p50_seconds"] = orNull(r.step_p50_seconds);
    j["gpu_busy_ratio"] = orNull(r.gpu_busy_ratio);
    j["compute_seconds"] = r.compute_seconds;
    j["communication_seconds"] = r.communication_seconds;
    j["communication_exposed_seconds"] = r.communication_exposed_seconds;
    j["communication_overlap_ratio"] = orNull(r.communication_overlap_ratio);
    j["collective_wait_seconds"] = r.collective_wait_seconds;
    j["input_stall_ratio"] = orNull(r.input_stall_ratio);
    arr.push_back(std::move(j));
  }
  return arr;
}

json stragglerJson(const std::optional<StragglerFinding>& straggler) {
  if (!straggler) return nullptr;
  json j;
  j["rank"] = straggler->rank;
  j["cause"] = toString(straggler->cause);
  j["others_wait_seconds"] = straggler->others_wait_seconds;
  j["step_p50_seconds"] = straggler->step_p50_seconds;
  j["peers_step_p50_seconds"] = straggler->peers_step_p50_seconds;
  return j;
}

std::optional<StragglerCause> stragglerCauseFromString(const std::string& name) {
  for (auto c : {StragglerCause::Compute, StragglerCause::Input, StragglerCause::Host})
    if (name == toString(c)) return c;
  return std::nullopt;
}

std::optional<StragglerFinding> stragglerFromJson(const json& j) {
  if (!j.is_object()) return std::nullopt;
  auto number = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  StragglerFinding f;
  auto rank = j.find("rank");
  f.rank = rank != j.end() && rank->is_number_integer() ? rank->get<int32_t>() : -1;
  auto cause = j.find("cause");
  f.cause =
      cause != j.end() && cause->is_string()
          ? stragglerCauseFromString(cause->get<std::string>()).value_or(StragglerCause::Compute)
          : StragglerCause::Compute;
  f.others_wait_seconds = number("others_wait_seconds");
  f.step_p50_seconds = number("step_p50_seconds");
  f.peers_step_p50_seconds = number("peers_step_p50_seconds");
  return f;
}

bool rankFromJson(const json& j, RankSummary* out, std::string* error) {
  if (!j.is_object()) {
    *error = "a ranks[] entry is not an object";
    return false;
  }
  RankSummary r;
  auto rank = j.find("rank");
  if (rank != j.end() && !rank->is_null()) {
    if (!rank->is_number_integer() || rank->get<int64_t>() < 0 ||
        rank->get<int64_t>() > INT32_MAX) {
      *error = "ranks[].rank is not a rank number";
      return false;
    }
    r.rank = rank->get<int32_t>();
  }
  if (auto it = j.find("host"); it != j.end() && it->is_string()) r.host = it->get<std::string>();
  if (auto it = j.find("gpu"); it != j.end() && it->is_string()) r.gpu = it->get<std::string>();
  if (auto it = j.find("pid"); it != j.end() && it->is_number_integer()) r.pid = it->get<int64_t>();
  if (auto it = j.find("steps"); it != j.end() && it->is_number_unsigned())
    r.steps = it->get<uint64_t>();
  if (!readOptional(j, "step_mean_seconds", &r.step_mean_seconds, error) ||
      !readOptional(j, "step_p50_seconds", &r.step_p50_seconds, error) ||
      !readOptional(j, "gpu_busy_ratio", &r.gpu_busy_ratio, error) ||
      !readNumber(j, "compute_seconds", &r.compute_seconds, error) ||
      !readNumber(j, "communication_seconds", &r.communication_seconds, error) ||
      !readNumber(j, "communication_exposed_seconds", &r.communication_exposed_seconds, error) ||
      !readOptional(j, "communication_overlap_ratio", &r.communication_overlap_ratio, error) ||
      !readNumber(j, "collective_wait_seconds", &r.collective_wait_seconds, error) ||
      !readOptional(j, "input_stall_ratio", &r.input_stall_ratio, error))
    return false;
  *out = std::move(r);
  return true;
}

} // namespace gpuwise::advisor
