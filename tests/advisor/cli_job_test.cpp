// `gpuwise report` and `gpuwise export` on the rank traces of one job, through the real CLI: a
// folder of traces, ranks from the traces or their names, each rank's GPUs its own, the job's
// missing ranks, and the inputs that cannot be one job (one line naming the files, exit 2,
// nothing written).
#include "advisor/analysis/collection_analyzer.h"
#include "advisor/analysis/nvml_analyzer.h"
#include "advisor/cli/job_inputs.h"
#include "tests/advisor/subprocess.h"
#include "tests/traces_dir.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <optional>

using namespace gpuwise::advisor::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string gpuwiseExe() {
  return buildDir() + "/bin/gpuwise";
}

// A tiny Kineto trace of one step with one kernel on device 0 (an A100), of process `pid`;
// distributedInfo only with a rank or a world size.
std::string kinetoTrace(std::optional<int> rank, std::optional<int> world_size, int64_t pid = 100) {
  json t;
  t["schemaVersion"] = 1;
  if (rank || world_size) {
    t["distributedInfo"] = {{"backend", "nccl"}};
    if (rank) t["distributedInfo"]["rank"] = *rank;
    if (world_size) t["distributedInfo"]["world_size"] = *world_size;
  }
  t["deviceProperties"] = {{{"id", 0},
                            {"name", "NVIDIA A100-SXM4-80GB"},
                            {"totalGlobalMem", 85899345920},
                            {"computeMajor", 8},
                            {"computeMinor", 0},
                            {"numSms", 108}}};
  t["traceEvents"] = {{{"ph", "X"},
                       {"cat", "user_annotation"},
                       {"name", "ProfilerStep#1"},
                       {"pid", pid},
                       {"tid", pid},
                       {"ts", 1000},
                       {"dur", 500}},
                      {{"ph", "X"},
                       {"cat", "cuda_runtime"},
                       {"name", "cudaLaunchKernel"},
                       {"pid", pid},
                       {"tid", pid},
                       {"ts", 1010},
                       {"dur", 5},
                       {"args", {{"correlation", 1}}}},
                      {{"ph", "X"},
                       {"cat", "kernel"},
                       {"name", "gemm"},
                       {"pid", 0},
                       {"tid", 7},
                       {"ts", 1020},
                       {"dur", 100},
                       {"args", {{"device", 0}, {"stream", 7}, {"correlation", 1}}}}};
  return t.dump();
}

void writeFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

std::string gzip(const std::string& s) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, s.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = uInt(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct Run {
  int rc = -1;
  std::string out, err;
};

Run runGpuwise(const TempDir& dir, const std::vector<std::string>& args, const std::string& tag) {
  std::vector<std::string> argv{gpuwiseExe()};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv, {}, dir.path, dir.path, tag);
  const auto rc = p.wait(std::chrono::seconds(120));
  REQUIRE(rc.has_value());
  return {*rc, p.out(), p.err()};
}

// Exit 2, one line on stderr that contains every one of `names`, no report written.
void requireRefused(const TempDir& dir, const std::vector<std::string>& inputs,
                    const std::vector<std::string>& names, const std::string& tag) {
  std::vector<std::string> args{"report"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  args.insert(args.end(), {"--json", dir / (tag + ".json"), "--html", dir / (tag + ".html")});
  const Run r = runGpuwise(dir, args, tag);
  INFO(r.err);
  CHECK(r.rc == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  for (const auto& name : names)
    CHECK(r.err.find(name) != std::string::npos);
  CHECK_FALSE(fs::exists(dir / (tag + ".json")));
  CHECK_FALSE(fs::exists(dir / (tag + ".html")));
}

json reportOf(const TempDir& dir, const std::vector<std::string>& inputs, const std::string& tag,
              Run* run = nullptr) {
  std::vector<std::string> args{"report"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  args.insert(args.end(), {"--json", dir / (tag + ".json")});
  const Run r = runGpuwise(dir, args, tag);
  INFO(r.err);
  REQUIRE(r.rc == 0);
  if (run) *run = r;
  return json::parse(readFile(dir / (tag + ".json")));
}

std::vector<int> ranksOf(const json& processes) {
  std::vector<int> ranks;
  for (const auto& p : processes)
    ranks.push_back(p.at("rank").get<int>());
  return ranks;
}

} // namespace

TEST_CASE("gpuwise report DIR: the ranks of a job, each with its own GPU, missing ranks as runs",
          "[.full_traces]") {
  const auto folder = gpuwise::test::requireFullTraces("kineto/hta/trace_filter").string();
  TempDir dir;
  Run run;
  const json r = reportOf(dir, {folder}, "dir", &run);
  CHECK(ranksOf(r.at("processes")) == std::vector<int>{0, 1});
  // Both ranks are pid-distinct here, but each reports its own device: two GPUs, each named.
  REQUIRE(r.at("gpus").size() == 2);
  for (int rank = 0; rank < 2; ++rank) {
    const json& g = r.at("gpus")[size_t(rank)];
    CHECK(g.at("rank") == rank);
    CHECK(g.at("label") == "GPU " + std::to_string(rank) + " of rank " + std::to_string(rank));
  }
  CHECK(r.at("job").at("world_size") == 128);
  CHECK(r.at("job").at("ranks") == json::array({0, 1}));
  CHECK(r.at("job").at("missing_ranks") == json::parse("[[2, 127]]"));
  CHECK(r.at("job").at("missing_rank_count") == 126);
  CHECK(run.out.find("ranks: 2 of 128 (missing: 2-127)") != std::string::npos);
  CHECK(run.out.find("2 GPUs (GPU 0 of rank 0, GPU 1 of rank 1)") != std::string::npos);

  // The files given in the other order: the same job, in rank order.
  const json again =
      reportOf(dir, {folder + "/sampled_rank-1.json.gz", folder + "/sampled_rank-0.json.gz"}, "ab");
  CHECK(ranksOf(again.at("processes")) == std::vector<int>{0, 1});
  CHECK(again.at("source").at("files")[0].get<std::string>().ends_with("sampled_rank-0.json.gz"));
  CHECK(again.at("job") == r.at("job"));
}

TEST_CASE("ranks 0-6 of 8 with one pid: seven processes on seven GPUs, rank 7 named missing") {
  TempDir dir;
  fs::create_directory(dir / "job");
  // Written out of order, all pid 100 (as in containers), each on "its" device 0.
  for (int rank : {3, 0, 6, 1, 5, 2, 4})
    writeFile(dir / ("job/trace-" + std::to_string(rank) + ".json"), kinetoTrace(rank, 8));
  Run run;
  const json r = reportOf(dir, {dir / "job"}, "job", &run);
  CHECK(ranksOf(r.at("processes")) == std::vector<int>{0, 1, 2, 3, 4, 5, 6});
  for (const auto& p : r.at("processes"))
    CHECK(p.at("pid") == 100);
  REQUIRE(r.at("gpus").size() == 7);
  for (size_t i = 0; i < 7; ++i) {
    const json& g = r.at("gpus")[i];
    CHECK(g.at("index") == 0);
    CHECK(g.at("rank") == int(i));
    CHECK(g.at("name") == "NVIDIA A100-SXM4-80GB");
    CHECK(g.at("label") == "NVIDIA A100-SXM4-80GB (GPU 0) of rank " + std::to_string(i));
  }
  CHECK(r.at("timeline").at("devices").size() == 7);
  CHECK(r.at("steps").at("processes").size() == 7);
  CHECK(r.at("job") == json::parse(R"({"world_size": 8, "ranks": [0, 1, 2, 3, 4, 5, 6],
                                       "missing_ranks": [[7, 7]], "missing_rank_count": 1})"));
  CHECK(run.out.find("ranks: 7 of 8 (missing: 7)\n") != std::string::npos);
}

TEST_CASE("ranks from file names; files of a folder that are not traces are skipped, one line "
          "each") {
  TempDir dir;
  fs::create_directory(dir / "job");
  writeFile(dir / "job/Worker1.pt.trace.json", kinetoTrace(std::nullopt, std::nullopt));
  writeFile(dir / "job/sampled_rank-0.json.gz", gzip(kinetoTrace(std::nullopt, std::nullopt)));
  writeFile(dir / "job/README.txt", "how these traces were taken\n");
  writeFile(dir / "job/empty.json", "");
  fs::create_directory(dir / "job/old");
  Run run;
  const json r = reportOf(dir, {dir / "job"}, "names", &run);
  CHECK(ranksOf(r.at("processes")) == std::vector<int>{0, 1});
  CHECK(r.at("job") == json::parse(R"({"world_size": null, "ranks": [0, 1],
                                       "missing_ranks": [], "missing_rank_count": 0})"));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 3);
  CHECK(run.err.find(dir / "job/README.txt: skipped: not a gpuwise .gwt recording") !=
        std::string::npos);
  CHECK(run.err.find(dir / "job/empty.json: skipped: empty") != std::string::npos);
  CHECK(run.err.find(dir / "job/old: skipped") != std::string::npos);
  CHECK(run.out.find("ranks:") == std::string::npos); // none missing: no line

  using gpuwise::advisor::rankFromFileName;
  CHECK(rankFromFileName("/x/sampled_rank-1.json.gz") == 1);
  CHECK(rankFromFileName("worker0.pt.trace.json.gz") == 0);
  CHECK(rankFromFileName("worker0.1623143089861.pt.trace.json.gz") == 0);
  CHECK(rankFromFileName("rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz") == 0);
  CHECK(rankFromFileName("inference_RANK_12.json") == 12);
  CHECK(rankFromFileName("rank7.json") == 7);
  CHECK(rankFromFileName("WORKER-3.json") == 3);
  CHECK_FALSE(rankFromFileName("rank_not_found.json.gz"));
  CHECK_FALSE(rankFromFileName("ranking.json"));
  CHECK_FALSE(rankFromFileName("myrank3.json"));
  CHECK_FALSE(rankFromFileName("rank9/trace.json")); // the folder's name is not the file's
  CHECK_FALSE(rankFromFileName("rank99999999999.json"));
}

TEST_CASE("inputs that cannot be one job: one line naming both files, exit 2, nothing written") {
  TempDir dir;
  SECTION("the same rank twice") {
    fs::create_directory(dir / "job");
    writeFile(dir / "job/a.json", kinetoTrace(1, 4));
    writeFile(dir / "job/b.json", kinetoTrace(1, 4));
    requireRefused(dir, {dir / "job"}, {dir / "job/a.json", dir / "job/b.json", "rank 1"}, "dup");
  }
  SECTION("two world sizes") {
    writeFile(dir / "a.json", kinetoTrace(0, 4));
    writeFile(dir / "b.json", kinetoTrace(1, 8));
    requireRefused(dir, {dir / "a.json", dir / "b.json"},
                   {dir / "a.json", dir / "b.json", "world_size 8", "world_size 4"}, "two_jobs");
  }
  SECTION("a trace without a rank among ranked ones") {
    writeFile(dir / "a.json", kinetoTrace(0, 2));
    writeFile(dir / "b.json", kinetoTrace(std::nullopt, std::nullopt));
    requireRefused(dir, {dir / "a.json", dir / "b.json"}, {dir / "b.json: no rank", dir / "a.json"},
                   "unranked");
  }
  SECTION("several traces, none with a rank") {
    writeFile(dir / "a.json", kinetoTrace(std::nullopt, std::nullopt));
    writeFile(dir / "b.json", kinetoTrace(std::nullopt, std::nullopt));
    requireRefused(dir, {dir / "a.json", dir / "b.json"}, {dir / "a.json", dir / "b.json"}, "none");
  }
  SECTION("a rank outside the world size") {
    writeFile(dir / "a.json", kinetoTrace(0, 2));
    writeFile(dir / "b.json", kinetoTrace(2, std::nullopt));
    requireRefused(dir, {dir / "a.json", dir / "b.json"}, {dir / "b.json: rank 2", dir / "a.json"},
                   "outside");
  }
}

TEST_CASE("a folder without traces, and a truncated rank trace in a folder: one line, exit 2") {
  TempDir dir;
  fs::create_directory(dir / "empty");
  requireRefused(dir, {dir / "empty"}, {dir / "empty: no trace in this folder"}, "empty");

  fs::create_directory(dir / "notes");
  writeFile(dir / "notes/a.txt", "not a trace\n");
  const Run r = runGpuwise(dir, {"report", dir / "notes", "--json", dir / "n.json"}, "notes");
  CHECK(r.rc == 2);
  CHECK(r.err.find(dir / "notes/a.txt: skipped: not a gpuwise .gwt recording") !=
        std::string::npos);
  CHECK(r.err.find(dir / "notes: no trace in this folder") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "n.json"));

  fs::create_directory(dir / "cut");
  writeFile(dir / "cut/rank-0.json.gz", gzip(kinetoTrace(0, 2)));
  const std::string whole = gzip(kinetoTrace(1, 2));
  writeFile(dir / "cut/rank-1.json.gz", whole.substr(0, whole.size() / 2));
  requireRefused(dir, {dir / "cut"}, {dir / "cut/rank-1.json.gz"}, "cut");
}

TEST_CASE("one trace without rank information: the job object, minimal") {
  TempDir dir;
  writeFile(dir / "trace.json", kinetoTrace(std::nullopt, std::nullopt));
  Run run;
  const json r = reportOf(dir, {dir / "trace.json"}, "single", &run);
  CHECK(r.at("job") == json::parse(R"({"world_size": null, "ranks": [], "missing_ranks": [],
                                       "missing_rank_count": 0})"));
  REQUIRE(r.at("gpus").size() == 1);
  CHECK(r.at("gpus")[0].at("rank") == nullptr);
  CHECK(r.at("gpus")[0].at("label") == "NVIDIA A100-SXM4-80GB (GPU 0)");
  CHECK(run.out.find("1 GPU (NVIDIA A100-SXM4-80GB)") != std::string::npos);
}

TEST_CASE("gpuwise export reads a folder of ranks as report does, and refuses the same") {
  TempDir dir;
  fs::create_directory(dir / "job");
  writeFile(dir / "job/rank-1.json", kinetoTrace(std::nullopt, 2));
  writeFile(dir / "job/rank-0.json", kinetoTrace(std::nullopt, 2));
  const Run ok = runGpuwise(
      dir, {"export", "--format", "chrome", dir / "job", "-o", dir / "out.json"}, "export");
  INFO(ok.err);
  REQUIRE(ok.rc == 0);
  CHECK(ok.out.find("2 processes") != std::string::npos);
  const json exported = json::parse(readFile(dir / "out.json"));
  const json& processes = exported.at("gpuwise").at("processes");
  REQUIRE(processes.size() == 2);
  CHECK(processes[0].at("rank") == 0);
  CHECK(processes[1].at("rank") == 1);

  fs::copy_file(dir / "job/rank-0.json", dir / "job/worker0.json");
  const Run dup = runGpuwise(
      dir, {"export", "--format", "chrome", dir / "job", "-o", dir / "d.json"}, "export_dup");
  CHECK(dup.rc == 2);
  CHECK(dup.err.find("the same rank twice") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "d.json"));
}

TEST_CASE("gpuwise report . twice in a folder of traces: its own report is skipped, not read") {
  TempDir dir;
  writeFile(dir / "rank-0.json", kinetoTrace(0, 2));
  writeFile(dir / "rank-1.json", kinetoTrace(1, 2));
  const Run first = runGpuwise(dir, {"report", "."}, "first");
  INFO(first.err);
  REQUIRE(first.rc == 0);
  REQUIRE(fs::exists(dir / "gpuwise-report.json"));
  const Run second = runGpuwise(dir, {"report", "."}, "second");
  INFO(second.err);
  CHECK(second.rc == 0);
  CHECK(second.err.find("gpuwise-report.json: skipped: a gpuwise report") != std::string::npos);
  CHECK(second.err.find("gpuwise-report.html: skipped: not a gpuwise .gwt recording") !=
        std::string::npos);
  const json r = json::parse(readFile(dir / "gpuwise-report.json"));
  CHECK(ranksOf(r.at("processes")) == std::vector<int>{0, 1});
}

TEST_CASE("recordings of live ranks: the rank from RANK, one GPU per host and device") {
  TempDir dir;
  std::filesystem::create_directory(dir / "sim");
  auto record = [&](int rank, const std::string& tag) {
    Process p({gpuwiseExe(), "run", "--simulate", "--trace", dir / (tag + ".gwt"), "--report-json",
               dir / (tag + "-live.json"), "--", buildDir() + "/tests/advisor_fake_shim",
               "--exit-code", "0", "--simulated"},
              {"GPUWISE_SHIM=" + buildDir() + "/tests/libadvisor_empty_shim.so",
               "GPUWISE_SIMDEVICE_DIR=" + (dir / "sim"), "RANK=" + std::to_string(rank),
               "WORLD_SIZE=4"},
              dir.path, dir.path, tag);
    REQUIRE(p.wait() == 0);
  };
  record(2, "b");
  record(0, "a");
  const json r = reportOf(dir, {dir / "b.gwt", dir / "a.gwt"}, "live");
  CHECK(ranksOf(r.at("processes")) == std::vector<int>{0, 2});
  CHECK(r.at("job") == json::parse(R"({"world_size": 4, "ranks": [0, 2],
                                       "missing_ranks": [[1, 1], [3, 3]], "missing_rank_count": 2})"));
  // The fake shim names its host: both ranks' device 0 on "testhost" is one GPU, used by both.
  REQUIRE(r.at("gpus").size() == 1);
  CHECK(r.at("gpus")[0].at("host") == "testhost");
  CHECK(r.at("gpus")[0].at("rank") == 0);
  CHECK(r.at("gpus")[0].at("pids").size() == 2);

  record(0, "c");
  requireRefused(dir, {dir / "a.gwt", dir / "c.gwt"}, {dir / "a.gwt", dir / "c.gwt", "rank 0"},
                 "same_rank");
}

TEST_CASE("Nsight exports of ranks in a folder: ranks from their names, one GPU per host and "
          "device") {
  const auto trace =
      gpuwise::test::requireTrace("nsys/saxpy-mpi-cuda_nsys_perlmutter0.sqlite").string();
  TempDir dir;
  fs::create_directory(dir / "job");
  fs::copy_file(trace, dir / "job/saxpy_rank_1.sqlite");
  fs::copy_file(trace, dir / "job/saxpy_rank_0.sqlite");
  const json r = reportOf(dir, {dir / "job"}, "nsys");
  CHECK(ranksOf(r.at("processes")) == std::vector<int>{0, 1});
  // The same pid on the same host, twice: two processes still (they are two ranks), and the
  // host's device 0 is one GPU.
  CHECK(r.at("processes")[0].at("pid") == r.at("processes")[1].at("pid"));
  REQUIRE(r.at("gpus").size() == 1);
  CHECK(r.at("gpus")[0].at("host") == "nid001608");
}

TEST_CASE("a file name's rank goes to the input's one process on a GPU") {
  using namespace gpuwise;
  auto process = [](int64_t pid, bool on_gpu, int32_t rank = -1) {
    model::ProcessTrace p;
    p.info.pid = pid;
    p.info.rank = rank;
    if (on_gpu) p.devices.push_back(model::DeviceInfo{.index = 0});
    return p;
  };
  advisor::LoadedInputs loaded;
  // b: a launcher and its worker; a: one process (listed second, rank 0 by its name).
  loaded.trace.processes = {process(10, false), process(11, true), process(20, false)};
  loaded.health.streams.resize(3);
  loaded.trace.source.files = {"job/b_rank1.sqlite", "job/a_rank0.sqlite"};
  std::string error;
  REQUIRE(advisor::arrangeAsJob({{"job/b_rank1.sqlite", 0, 2}, {"job/a_rank0.sqlite", 2, 1}},
                                &loaded, &error));
  const auto& p = loaded.trace.processes;
  REQUIRE(p.size() == 3);
  CHECK((p[0].info.pid == 20 && p[0].info.rank == 0));
  CHECK((p[1].info.pid == 10 && p[1].info.rank == -1));
  CHECK((p[2].info.pid == 11 && p[2].info.rank == 1));
  CHECK(loaded.trace.source.files ==
        std::vector<std::string>{"job/a_rank0.sqlite", "job/b_rank1.sqlite"});

  // Two processes on a GPU in one input: the name cannot say which is the rank, so the input
  // has none, and several inputs need one each.
  loaded.trace.processes = {process(10, true), process(11, true), process(20, false)};
  CHECK_FALSE(advisor::arrangeAsJob({{"job/b_rank1.sqlite", 0, 2}, {"job/a_rank0.sqlite", 2, 1}},
                                    &loaded, &error));
  CHECK(error.find("job/b_rank1.sqlite: no rank") == 0);
}

TEST_CASE("two ranks with one pid, each on its device 0: two GPUs, two NVML entries; a merge of "
          "windows keeps them apart") {
  using namespace gpuwise;
  model::Trace trace;
  for (int32_t rank : {0, 1}) {
    model::ProcessTrace p;
    p.info.pid = 1; // pid 1 in each rank's container
    p.info.rank = rank;
    p.info.world_size = 2;
    p.devices.push_back(model::DeviceInfo{.index = 0, .name = "NVIDIA H100 80GB HBM3"});
    p.device_samples.push_back({.time = 1000, .device = 0, .process_used_bytes = 100 + rank});
    trace.processes.push_back(std::move(p));
  }
  const advisor::CollectionResult c = advisor::analyzeCollection(trace, nullptr);
  REQUIRE(c.gpus.size() == 2);
  CHECK(c.gpus[0].rank == 0);
  CHECK(c.gpus[1].rank == 1);
  CHECK(advisor::gpuLabel(c.gpus[1]) == "NVIDIA H100 80GB HBM3 (GPU 0) of rank 1");
  advisor::CollectionResult merged = c;
  merged.merge(c);
  CHECK(merged.gpus.size() == 2);
  CHECK(merged.processes.size() == 2);

  const advisor::NvmlResult nvml = advisor::analyzeNvml(trace);
  REQUIRE(nvml.devices.size() == 2);
  CHECK((nvml.devices[0].rank == 0 && nvml.devices[0].process_used_peak_bytes == 100));
  CHECK((nvml.devices[1].rank == 1 && nvml.devices[1].process_used_peak_bytes == 101));
  advisor::NvmlResult twice = nvml;
  twice.merge(nvml);
  CHECK(twice.devices.size() == 2);

  // With the host known, the host's device 0 is one GPU, whichever rank used it.
  for (auto& p : trace.processes)
    p.info.host = "node-a";
  CHECK(advisor::analyzeCollection(trace, nullptr).gpus.size() == 1);
}
