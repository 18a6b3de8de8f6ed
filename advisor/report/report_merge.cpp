#include "advisor/report/report_merge.h"

#include "advisor/analysis/straggler.h"
#include "advisor/report/merge_summary.h"
#include "advisor/report/ranks_json.h"
#include "advisor/report/report_json.h"
#include "advisor/rules/fix_straggler_rule.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;

constexpr size_t kMergedTopKernels = 20;

// One pod's report, checked: its ranks read back, its world size (processes[].world_size).
struct Pod {
  const PodReport* file = nullptr;
  std::vector<RankSummary> ranks;
  std::optional<int64_t> world_size;
};

bool readPod(const PodReport& in, Pod* pod, std::string* error) {
  const json& r = in.report;
  auto fail = [&](const std::string& why) {
    *error = in.path + ": " + why;
    return false;
  };
  if (!r.is_object() || r.value("schema", json()) != json(kReportSchema))
    return fail(std::string("not a ") + kReportSchema + " report");
  auto ranks = r.find("ranks");
  if (ranks == r.end() || !ranks->is_array())
    return fail("a report without ranks[] (written by a gpuwise older than the per-rank view); "
                "report its traces again");
  if (!r.contains("summary") || !r["summary"].is_object()) return fail("a report without summary");
  pod->file = &in;
  for (const json& j : *ranks) {
    RankSummary rank;
    std::string why;
    if (!rankFromJson(j, &rank, &why)) return fail(why);
    pod->ranks.push_back(std::move(rank));
  }
  if (auto p = r.find("processes"); p != r.end() && p->is_array())
    for (const json& proc : *p)
      if (auto ws = proc.find("world_size"); ws != proc.end() && ws->is_number_integer()) {
        if (pod->world_size && *pod->world_size != ws->get<int64_t>())
          return fail("processes of two world sizes (" + std::to_string(*pod->world_size) +
                      " and " + std::to_string(ws->get<int64_t>()) + ")");
        pod->world_size = ws->get<int64_t>();
      }
  return true;
}

// The ranks of every pod, refusing a rank two reports both have and two world sizes.
bool checkOneJob(const std::vector<Pod>& pods, std::string* error) {
  std::unordered_map<int32_t, const Pod*> owner;
  const Pod* sized = nullptr;
  for (const Pod& pod : pods) {
    if (pod.world_size) {
      if (sized && *sized->world_size != *pod.world_size) {
        *error = sized->file->path + " and " + pod.file->path + " cannot be one job: world size " +
                 std::to_string(*sized->world_size) + " against " + std::to_string(*pod.world_size);
        return false;
      }
      sized = &pod;
    }
    for (const auto& r : pod.ranks) {
      if (r.rank < 0) continue;
      auto [it, fresh] = owner.try_emplace(r.rank, &pod);
      if (!fresh) {
        *error = it->second->file->path + " and " + pod.file->path + " both have rank " +
                 std::to_string(r.rank);
        return false;
      }
    }
  }
  return true;
}

json rankNumbers(const Pod& pod) {
  json arr = json::array();
  for (const auto& r : pod.ranks)
    arr.push_back(r.rank >= 0 ? json(r.rank) : json(nullptr));
  return arr;
}

// recommendations[] (or notes[]) of the job: each id once, with the ranks of the pods that found
// it; its saving the pods' savings weighted by their share of the job's ranks.
json mergeFindings(const std::vector<Pod>& pods, const char* key, bool drop_pod_stragglers) {
  // Each pod weighs its ranks (one where it names none) in the job.
  size_t job_weight = 0;
  for (const Pod& pod : pods)
    job_weight += std::max<size_t>(pod.ranks.size(), 1);
  std::map<std::string, size_t> index;
  json out = json::array();
  std::vector<double> best;
  for (const Pod& pod : pods) {
    auto it = pod.file->report.find(key);
    if (it == pod.file->report.end() || !it->is_array()) continue;
    const double share = double(std::max<size_t>(pod.ranks.size(), 1)) / double(job_weight);
    for (const json& rec : *it) {
      if (!rec.is_object() || !rec.contains("id") || !rec["id"].is_string()) continue;
      const std::string id = rec["id"].get<std::string>();
      if (drop_pod_stragglers && id == "fix_straggler") continue;
      const double saving = rec.value("expected_saving_ratio", 0.0);
      auto [slot, fresh] = index.try_emplace(id, out.size());
      if (fresh) {
        json merged = rec;
        merged.erase("cost"); // a pod's cost and energy figures are not the job's
        merged.erase("energy_saving_joules");
        merged.erase("energy_saving_cost");
        merged["expected_saving_ratio"] = 0.0;
        merged["ranks"] = json::array();
        out.push_back(std::move(merged));
        best.push_back(-1);
      }
      json& merged = out[slot->second];
      merged["expected_saving_ratio"] =
          merged["expected_saving_ratio"].get<double>() + saving * share;
      for (auto& r : rankNumbers(pod))
        merged["ranks"].push_back(r);
      // The words and evidence of the pod where the finding weighs most.
      if (saving > best[slot->second]) {
        best[slot->second] = saving;
        for (const char* field : {"title", "evidence", "confidence", "action", "parameters"})
          if (rec.contains(field)) merged[field] = rec[field];
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return a["expected_saving_ratio"].get<double>() > b["expected_saving_ratio"].get<double>();
  });
  return out;
}

// The job's straggler as a recommendation: FixStragglerRule on the merged ranks, so a merged
// report words and weighs it as a report of the whole job's traces does.
std::optional<json> stragglerRecommendation(const std::optional<StragglerFinding>& s,
                                            const std::vector<RankSummary>& ranks) {
  if (!s) return std::nullopt;
  JobAnalysis job;
  job.distributed.ranks = ranks;
  job.distributed.straggler = s;
  const Thresholds thresholds;
  auto rec = FixStragglerRule().evaluate(RuleContext{job, nullptr, thresholds});
  if (!rec) return std::nullopt;
  json j = recommendationsJson({*rec}).front();
  j["ranks"] = json::array({s->rank});
  return j;
}

json mergeTopKernels(const std::vector<Pod>& pods) {
  std::map<std::string, size_t> index;
  json out = json::array();
  for (const Pod& pod : pods) {
    auto it = pod.file->report.find("top_kernels");
    if (it == pod.file->report.end() || !it->is_array()) continue;
    for (const json& k : *it) {
      if (!k.is_object() || !k.contains("name") || !k["name"].is_string()) continue;
      auto [slot, fresh] = index.try_emplace(k["name"].get<std::string>(), out.size());
      if (fresh) {
        out.push_back({{"name", k["name"]},
                       {"count", k.value("count", json(0))},
                       {"seconds", k.value("seconds", json(nullptr))},
                       {"precision", k.value("precision", json(nullptr))},
                       {"tensor_core", k.value("tensor_core", json(nullptr))},
                       {"occupancy_theoretical", k.value("occupancy_theoretical", json(nullptr))}});
        continue;
      }
      json& m = out[slot->second];
      if (k.value("count", json()).is_number_unsigned() && m["count"].is_number_unsigned())
        m["count"] = m["count"].get<uint64_t>() + k["count"].get<uint64_t>();
      if (k.value("seconds", json()).is_number())
        m["seconds"] = m["seconds"].is_number()
                           ? json(m["seconds"].get<double>() + k["seconds"].get<double>())
                           : k["seconds"];
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
    auto s = [](const json& k) {
      return k["seconds"].is_number() ? k["seconds"].get<double>() : -1;
    };
    return s(a) > s(b);
  });
  if (out.size() > kMergedTopKernels) out.erase(out.begin() + kMergedTopKernels, out.end());
  return out;
}

json concatenated(const std::vector<Pod>& pods, const char* key) {
  json out = json::array();
  for (const Pod& pod : pods)
    if (auto it = pod.file->report.find(key); it != pod.file->report.end() && it->is_array())
      for (const json& e : *it)
        out.push_back(e);
  return out;
}

json source(const std::vector<Pod>& pods) {
  bool simulated = false;
  json files = json::array();
  for (const Pod& pod : pods) {
    files.push_back(pod.file->path);
    if (auto s = pod.file->report.find("source"); s != pod.file->report.end() && s->is_object())
      simulated = simulated || s->value("simulated", false);
  }
  return {{"kind", "reports"}, {"simulated", simulated}, {"files", std::move(files)}};
}

// Each finding's share of the job's energy, from the merged saving and the merged energy (as
// buildReportJson does for one report: advisor/cost/energy_cost.h).
void addJobEnergyShares(json& r) {
  const json& joules = r["summary"]["energy_joules"];
  const json& cost = r["summary"]["energy_cost"];
  for (const char* key : {"recommendations", "notes"})
    for (json& rec : r[key]) {
      const double ratio = std::clamp(rec.value("expected_saving_ratio", 0.0), 0.0, 1.0);
      rec["energy_saving_joules"] =
          joules.is_number() ? json(ratio * joules.get<double>()) : json(nullptr);
      rec["energy_saving_cost"] =
          cost.is_number() ? json(ratio * cost.get<double>()) : json(nullptr);
    }
}

} // namespace

bool looksLikeReportJson(const std::string& head) {
  size_t i = 0;
  auto skip = [&] {
    while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i])))
      ++i;
  };
  auto take = [&](const std::string& s) {
    skip();
    if (head.compare(i, s.size(), s) != 0) return false;
    i += s.size();
    return true;
  };
  if (!take("{")) return false;
  // Any "schema": "gpuwise.report/v1" member in the head: first in the reports gpuwise writes,
  // later in one rewritten by a tool that sorts keys.
  const std::string key = "\"schema\"", value = std::string("\"") + kReportSchema + "\"";
  for (size_t at = head.find(key, i); at != std::string::npos; at = head.find(key, at + 1)) {
    i = at + key.size();
    if (take(":") && take(value)) return true;
  }
  return false;
}

std::optional<StragglerFinding> detectStragglerOfRanks(const std::vector<RankSummary>& ranks) {
  return findStraggler(ranks);
}

bool mergeReports(const std::vector<PodReport>& files, json* merged, std::string* error) {
  std::vector<Pod> pods(files.size());
  for (size_t i = 0; i < files.size(); ++i)
    if (!readPod(files[i], &pods[i], error)) return false;
  if (!checkOneJob(pods, error)) return false;

  std::vector<RankSummary> ranks;
  std::vector<const json*> summaries;
  for (const Pod& pod : pods) {
    ranks.insert(ranks.end(), pod.ranks.begin(), pod.ranks.end());
    summaries.push_back(&pod.file->report["summary"]);
  }
  std::stable_sort(ranks.begin(), ranks.end(), [](const RankSummary& a, const RankSummary& b) {
    return (a.rank < 0 ? INT64_MAX : a.rank) < (b.rank < 0 ? INT64_MAX : b.rank);
  });
  const auto straggler = detectStragglerOfRanks(ranks);

  json r;
  r["schema"] = kReportSchema;
  r["generated_by"] = {{"tool", "gpuwise"}, {"version", gpuwiseVersion()}};
  r["source"] = source(pods);
  r["gpus"] = concatenated(pods, "gpus");
  r["processes"] = concatenated(pods, "processes");
  r["ranks"] = ranksJson(ranks);
  r["summary"] = mergeSummaries(summaries);
  r["summary"]["straggler"] = stragglerJson(straggler);
  const bool job_straggler_known = pods.size() > 1;
  json recs = mergeFindings(pods, "recommendations", job_straggler_known);
  if (job_straggler_known)
    if (auto rec = stragglerRecommendation(straggler, ranks)) {
      auto at = std::find_if(recs.begin(), recs.end(), [&](const json& x) {
        return x["expected_saving_ratio"].get<double>() <
               (*rec)["expected_saving_ratio"].get<double>();
      });
      recs.insert(at, std::move(*rec));
    }
  r["recommendations"] = std::move(recs);
  r["notes"] = mergeFindings(pods, "notes", job_straggler_known);
  addJobEnergyShares(r);
  r["top_kernels"] = mergeTopKernels(pods);
  std::vector<const json*> timelines;
  for (const Pod& pod : pods)
    if (auto it = pod.file->report.find("timeline");
        it != pod.file->report.end() && it->is_object())
      timelines.push_back(&*it);
  r["timeline"] = timelines.empty() ? json(nullptr) : mergeTimelines(timelines);
  json from = json::array();
  for (const Pod& pod : pods)
    from.push_back({{"file", pod.file->path}, {"ranks", rankNumbers(pod)}});
  r["merged_from"] = std::move(from);
  *merged = std::move(r);
  return true;
}

} // namespace gpuwise::advisor
