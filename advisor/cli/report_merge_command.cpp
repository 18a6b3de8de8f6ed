// gpuwise report on per-pod reports (report_inputs.h tells them from traces): each file read and
// parsed on its own worker, only what the merge reads kept (report_merge.h), the job's report
// written and summed up on the terminal.
#include "advisor/cli/commands.h"
#include "advisor/report/format.h"
#include "advisor/report/html_report.h"
#include "advisor/report/rank_table.h"
#include "advisor/report/ranks_json.h"
#include "advisor/report/report_merge.h"
#include "advisor/report/report_writer.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

namespace gpuwise::advisor {
namespace {

using json = nlohmann::ordered_json;

// The members of a pod's report the merge reads; the rest (timelines, step lists, kernels'
// launch configurations) is dropped as each file is parsed, so a thousand reports stay small.
constexpr const char* kMergedMembers[] = {
    "schema",  "source",          "gpus",  "processes",   "ranks",
    "summary", "recommendations", "notes", "top_kernels", "timeline"};

bool readReport(const std::string& path, PodReport* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot read";
    return false;
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  json full = json::parse(bytes.str(), nullptr, false);
  if (full.is_discarded() || !full.is_object()) {
    *error = path + ": not valid JSON (a truncated report?)";
    return false;
  }
  json slim;
  for (const char* key : kMergedMembers)
    if (auto it = full.find(key); it != full.end()) slim[key] = std::move(*it);
  out->path = path;
  out->report = std::move(slim);
  return true;
}

// Every file on the host's cores; the first failure (in input order) is the one reported.
bool readReports(const std::vector<std::string>& paths, std::vector<PodReport>* out,
                 std::string* error) {
  out->assign(paths.size(), {});
  std::vector<std::string> errors(paths.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < paths.size();)
      readReport(paths[i], &(*out)[i], &errors[i]);
  };
  const size_t workers =
      std::min<size_t>(paths.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w)
    threads.emplace_back(work);
  work();
  for (auto& t : threads)
    t.join();
  for (const auto& e : errors)
    if (!e.empty()) {
      *error = e;
      return false;
    }
  return true;
}

std::string mergedSummary(const json& r, const std::vector<std::string>& written) {
  std::ostringstream out;
  const auto& s = r["summary"];
  const size_t ranks = r["ranks"].size(), files = r["merged_from"].size();
  out << "gpuwise: job of " << ranks << (ranks == 1 ? " rank" : " ranks") << " from " << files
      << (files == 1 ? " report" : " reports");
  if (s["gpu_idle_ratio"].is_number())
    out << "; GPU busy " << formatPercent(1.0 - s["gpu_idle_ratio"].get<double>());
  out << "; " << r["recommendations"].size() << " recommendation"
      << (r["recommendations"].size() == 1 ? "" : "s") << "\n";
  std::vector<RankSummary> summaries;
  for (const auto& j : r["ranks"]) {
    RankSummary rank;
    std::string ignored;
    if (rankFromJson(j, &rank, &ignored)) summaries.push_back(std::move(rank));
  }
  const auto straggler = stragglerFromJson(s.value("straggler", json()));
  out << (summaries.size() > 1 ? renderRankTable(summaries, straggler) : stragglerLine(straggler));
  size_t shown = 0;
  for (const auto& rec : r["recommendations"]) {
    if (shown++ == 3) break;
    const size_t ranks_with = rec.value("ranks", json::array()).size();
    out << "  " << shown << ". [saves ~" << formatPercent(rec.value("expected_saving_ratio", 0.0))
        << " of the job"
        << (ranks_with ? ", found on " + std::to_string(ranks_with) + " of its ranks" : "") << "] "
        << rec.value("title", "") << "\n";
  }
  for (size_t i = 0; i < written.size(); ++i)
    out << (i ? ", " : "  report: ") << written[i] << (i + 1 == written.size() ? "\n" : "");
  return out.str();
}

} // namespace

int mergeReportsCommand(const std::vector<std::string>& files, const std::string& json_path,
                        const std::string& html_path, CliIo io) {
  auto fail = [&](const std::string& line) {
    logLine(io.err, "report", line);
    return kExitUsage;
  };
  std::vector<PodReport> pods;
  std::string error;
  if (!readReports(files, &pods, &error)) return fail(error);
  json merged;
  if (!mergeReports(pods, &merged, &error)) return fail(error);
  std::vector<std::string> written;
  if (!json_path.empty()) {
    if (!writeTextFile(json_path,
                       merged.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                       &error))
      return fail(error);
    written.push_back(json_path);
  }
  if (!html_path.empty()) {
    if (!writeTextFile(html_path, renderHtmlReport(merged), &error)) return fail(error);
    written.push_back(html_path);
  }
  io.out << mergedSummary(merged, written) << std::flush;
  return 0;
}

} // namespace gpuwise::advisor
