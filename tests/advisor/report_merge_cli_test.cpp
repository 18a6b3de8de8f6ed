// `gpuwise report` on per-pod reports, end to end through the CLI: the merge of the reports of a
// job's ranks equals the report of their traces at once; a thousand-rank merge is quick and its
// terminal and HTML views stay bounded; reports that cannot be one job are refused in one line.
#include "tests/advisor/subprocess.h"
#include "tests/traces_dir.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

using namespace gpuwise::advisor::test;
using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

std::string gpuwiseExe() {
  return buildDir() + "/bin/gpuwise";
}

struct Result {
  int status = -1;
  std::string out, err;
};

Result runGpuwise(const TempDir& dir, const std::string& tag, std::vector<std::string> args,
                  std::chrono::seconds timeout = std::chrono::seconds(120)) {
  args.insert(args.begin(), gpuwiseExe());
  Process p(args, {}, dir.path, dir.path, tag);
  auto status = p.wait(timeout);
  REQUIRE(status);
  return {*status, p.out(), p.err()};
}

json readJson(const std::string& path) {
  return json::parse(readFile(path));
}

void writeJson(const std::string& path, const json& j) {
  std::ofstream(path) << j.dump(2);
}

// A report of one rank, with the ranks[] and world size the merge reads.
json rankReport(const json& base, int rank, int world, double step_p50) {
  json r = base;
  r["ranks"] = json::array({{{"rank", rank},
                             {"host", "node-" + std::to_string(rank / 8)},
                             {"pid", 1000 + rank},
                             {"gpu", "NVIDIA H100 80GB HBM3"},
                             {"steps", 50},
                             {"step_mean_seconds", step_p50 * 1.02},
                             {"step_p50_seconds", step_p50},
                             {"gpu_busy_ratio", 0.8},
                             {"compute_seconds", 30.0},
                             {"communication_seconds", 12.0},
                             {"communication_exposed_seconds", 3.0},
                             {"communication_overlap_ratio", 0.75},
                             {"collective_wait_seconds", 0.5},
                             {"input_stall_ratio", 0.01}}});
  for (auto& p : r["processes"]) {
    p["rank"] = rank;
    p["world_size"] = world;
  }
  return r;
}

} // namespace

TEST_CASE("gpuwise report: the merge of two ranks' reports equals the report of their traces",
          "[.full_traces]") {
  const fs::path dir0 = gpuwise::test::requireFullTraces("kineto/hta/trace_filter");
  const std::string t0 = dir0 / "sampled_rank-0.json.gz", t1 = dir0 / "sampled_rank-1.json.gz";
  TempDir dir;
  auto a = runGpuwise(dir, "a", {"report", t0, "--json", dir / "r0.json"});
  REQUIRE(a.status == 0);
  auto b = runGpuwise(dir, "b", {"report", t1, "--json", dir / "r1.json"});
  REQUIRE(b.status == 0);
  auto both = runGpuwise(dir, "both", {"report", t0, t1, "--json", dir / "both.json"});
  REQUIRE(both.status == 0);
  auto merge = runGpuwise(dir, "merge",
                          {"report", dir / "r0.json", dir / "r1.json", "--json",
                           dir / "merged.json", "--html", dir / "merged.html"});
  INFO(merge.err);
  REQUIRE(merge.status == 0);
  CHECK(merge.out.find("from 2 reports") != std::string::npos);
  const json merged = readJson(dir / "merged.json"), whole = readJson(dir / "both.json");
  CHECK(merged["schema"] == "gpuwise.report/v1");
  CHECK(merged["source"]["kind"] == "reports");
  CHECK(merged["merged_from"].size() == 2);
  if (whole["ranks"].size() < 2)
    gpuwise::test::skipTest("this build's analysis fills no per-rank view (distributed.ranks)");
  REQUIRE(merged["ranks"].size() == whole["ranks"].size());
  for (size_t i = 0; i < whole["ranks"].size(); ++i) {
    const json &m = merged["ranks"][i], &w = whole["ranks"][i];
    INFO("rank " << i);
    for (const auto& [key, value] : w.items()) {
      INFO(key);
      // A rank's wait for the others is measured against the ranks one analysis sees: a pod's
      // report of one rank has no peer to wait for.
      if (key == "collective_wait_seconds") continue;
      if (value.is_number_float())
        CHECK(m[key].get<double>() == Approx(value.get<double>()).epsilon(1e-9).margin(1e-9));
      else
        CHECK(m[key] == value);
    }
  }
  CHECK(readFile(dir / "merged.html").find("<h2 id=\"ranks-h\">Ranks</h2>") != std::string::npos);
}

TEST_CASE("gpuwise report: a folder of 1,024 rank reports merges quickly and reads short") {
  const fs::path trace = gpuwise::test::requireTrace(
      "kineto/tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz");
  TempDir dir;
  REQUIRE(runGpuwise(dir, "base", {"report", trace.string(), "--json", dir / "base.json"}).status ==
          0);
  const json base = readJson(dir / "base.json");
  fs::create_directory(dir / "reports");
  constexpr int kRanks = 1024, kSlow = 777;
  for (int r = 0; r < kRanks; ++r)
    writeJson(dir / ("reports/job-rank-" + std::to_string(r) + ".json"),
              rankReport(base, r, kRanks, r == kSlow ? 1.5 : 1.0 + 0.0001 * (r % 100)));
  std::ofstream(dir / "reports/index.html") << "<html></html>"; // ignored beside reports

  const auto start = std::chrono::steady_clock::now();
  auto merge = runGpuwise(
      dir, "merge",
      {"report", dir / "reports", "--json", dir / "job.json", "--html", dir / "job.html"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(merge.err);
  REQUIRE(merge.status == 0);
  WARN("merged 1,024 reports in " << seconds << " s");
  CHECK(seconds < 60); // a second or two on an idle host; generous for a loaded one
  const json job = readJson(dir / "job.json");
  REQUIRE(job["ranks"].size() == kRanks);
  for (int r = 0; r < kRanks; ++r)
    REQUIRE(job["ranks"][r]["rank"] == r);
  CHECK(job["merged_from"].size() == kRanks);
  CHECK(job["summary"]["kernel_count"].get<double>() ==
        Approx(kRanks * base["summary"]["kernel_count"].get<double>()));
  // The terminal: the slowest 4 and fastest 2, the rest counted.
  INFO(merge.out);
  CHECK(merge.out.find("job of 1024 ranks from 1024 reports") != std::string::npos);
  CHECK(merge.out.find("1018 more ranks (all in the JSON report)") != std::string::npos);
  CHECK(merge.out.find("\n  777") != std::string::npos);
  CHECK(merge.out.size() < 4000);
  // The HTML: at most 64 bars per chart and a note for the rest.
  const std::string html = readFile(dir / "job.html");
  CHECK(html.find("960 more ranks are in the JSON report") != std::string::npos);
  CHECK(html.find("rank 777") != std::string::npos);
}

TEST_CASE("gpuwise report: reports that cannot be one job are refused in one line") {
  TempDir dir;
  json base = {{"schema", "gpuwise.report/v1"},
               {"source", {{"kind", "kineto"}, {"simulated", false}, {"files", json::array()}}},
               {"gpus", json::array()},
               {"processes", json::array({{{"pid", 1}, {"rank", 0}}})},
               {"summary", json::object()},
               {"recommendations", json::array()}};
  writeJson(dir / "a.json", rankReport(base, 3, 8, 1.0));
  writeJson(dir / "b.json", rankReport(base, 3, 8, 1.0));
  writeJson(dir / "c.json", rankReport(base, 4, 16, 1.0));

  auto dup =
      runGpuwise(dir, "dup", {"report", dir / "a.json", dir / "b.json", "--json", dir / "o.json"});
  CHECK(dup.status == 2);
  CHECK(dup.err ==
        "gpuwise report: " + (dir / "a.json") + " and " + (dir / "b.json") + " both have rank 3\n");
  CHECK_FALSE(fs::exists(dir / "o.json"));

  auto world = runGpuwise(dir, "world",
                          {"report", dir / "a.json", dir / "c.json", "--json", dir / "o.json"});
  CHECK(world.status == 2);
  CHECK(world.err.find("world size 8 against 16") != std::string::npos);
  CHECK(std::count(world.err.begin(), world.err.end(), '\n') == 1);

  std::ofstream(dir / "trace.json") << "{\"traceEvents\": []}";
  auto mixed = runGpuwise(dir, "mixed",
                          {"report", dir / "a.json", dir / "trace.json", "--json", dir / "o.json"});
  CHECK(mixed.status == 2);
  CHECK(mixed.err.find("not both") != std::string::npos);
  CHECK(std::count(mixed.err.begin(), mixed.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(dir / "o.json"));

  std::ofstream(dir / "cut.json") << "{\n  \"schema\": \"gpuwise.report/v1\",\n  \"ranks\": [";
  auto cut = runGpuwise(dir, "cut",
                        {"report", dir / "a.json", dir / "cut.json", "--json", dir / "o.json"});
  CHECK(cut.status == 2);
  CHECK(cut.err ==
        "gpuwise report: " + (dir / "cut.json") + ": not valid JSON (a truncated report?)\n");
}
