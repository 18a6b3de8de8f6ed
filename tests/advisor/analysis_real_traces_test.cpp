// The analysis engine on the real GPU traces recorded by other projects
// ($GPUWISE_TRACES_DIR/kineto: V100, A100, H100, B200, MI250/MI210, MTIA; nsys: two Nsight
// Systems exports of A100 jobs):
//   - `gpuwise report` reads every file of the folder: the Chrome traces give a report (exit 0),
//     the others one exit-2 line naming the file; a trace without GPU activity says so;
//   - summary.gpu_idle_ratio matches tests/data/kineto/reference.json (computed independently in
//     Python with the HTA / TraceLens union definition) within 0.002;
//   - the idle causes sum to the idle time on every device, each step's busy and idle time fill
//     its window, shares stay in [0, 1];
//   - the ResNet-50 runs with num_workers=0 lose far more step time to input than num_workers=4.
#include "advisor/analysis/job_analysis.h"
#include "advisor/import/kineto_importer.h"
#include "tests/advisor/advice_invariants.h"
#include "tests/advisor/subprocess.h"
#include "tests/traces_dir.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <vector>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

// The full set, or the subset in tests/data/traces where it is absent (tests/traces_dir.h): each
// case checks the files present, and the folder's totals on the full set only.
fs::path tracesRoot() {
  return gpuwise::test::realTracesDir() / "kineto";
}

bool fullSet() {
  return gpuwise::test::haveFullTraces();
}

// On the subset, the traces a case lists that it does not hold are passed over.
bool absentFromSubset(const std::string& rel) {
  return !fullSet() && !fs::exists(tracesRoot() / rel);
}

json reference() {
  std::ifstream in(fs::path(env("GPUWISE_SOURCE_DIR", ".")) / "tests/data/kineto/reference.json");
  return json::parse(in).at("files");
}

size_t lines(const std::string& s) {
  return size_t(std::count(s.begin(), s.end(), '\n'));
}

JobAnalysis analyse(const std::string& rel) {
  auto r = importKineto({(tracesRoot() / rel).string()});
  INFO(r.error);
  REQUIRE(r.ok());
  return analyzeJob(r.trace);
}

} // namespace

TEST_CASE("gpuwise report reads every file of the Kineto folder; idle ratio as the reference") {
  const auto ref = reference();
  TempDir dir;
  size_t reports = 0, refused = 0, compared = 0, empty = 0, i = 0;
  for (const auto& entry : fs::recursive_directory_iterator(tracesRoot())) {
    if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
    const std::string rel = fs::relative(entry.path(), tracesRoot()).string();
    INFO(rel);
    REQUIRE(ref.contains(rel)); // a new trace: regenerate tests/data/kineto/reference.json
    const auto& want = ref.at(rel);
    const std::string out = dir / ("r" + std::to_string(i) + ".json");
    Process p({buildDir() + "/bin/gpuwise", "report", entry.path().string(), "--json", out}, {},
              dir.path, dir.path, "p" + std::to_string(i++));
    auto status = p.wait(std::chrono::seconds(120));
    INFO(p.err());
    if (!want.at("chrome_trace").get<bool>()) {
      CHECK(status == 2);
      CHECK(lines(p.err()) == 1);
      CHECK(p.err().find(entry.path().string()) != std::string::npos);
      ++refused;
      continue;
    }
    REQUIRE(status == 0);
    ++reports;
    const auto r = json::parse(readFile(out));
    const auto& s = r.at("summary");
    for (const auto& problem : adviceInvariantViolations(r)) {
      INFO(problem);
      CHECK(false);
    }
    CHECK(r.at("source").at("kind") == "kineto");
    if (want.at("gpu_span_ns").get<int64_t>() == 0) {
      // No GPU activity: a report that says so, with unknown (null) GPU figures.
      CHECK(p.out().rfind("gpuwise: no GPU activity recorded", 0) == 0);
      CHECK(s.at("gpu_idle_ratio").is_null());
      CHECK(s.at("input_stall_ratio").is_null());
      ++empty;
      continue;
    }
    if (!want.at("gpu_idle_ratio").is_null()) {
      CHECK(std::abs(s.at("gpu_idle_ratio").get<double>() -
                     want.at("gpu_idle_ratio").get<double>()) <= 0.002);
      ++compared;
    }
    for (const char* f : {"input_stall_ratio", "launch_overhead_ratio"}) {
      INFO(f);
      REQUIRE(s.at(f).is_number());
      CHECK(s.at(f).get<double>() >= 0.0);
      CHECK(s.at(f).get<double>() <= 1.0);
    }
  }
  if (!fullSet()) {
    CHECK(compared >= 4); // the subset's traces with GPU activity
    return;
  }
  CHECK(reports >= 45);
  CHECK(refused == 2); // the execution trace and the memory timeline
  CHECK(empty >= 4);   // CPU-only ranks
  CHECK(compared >= 40);
}

TEST_CASE("gpuwise report reads both Nsight Systems exports; busy time, devices and findings as "
          "expected") {
  const fs::path root = gpuwise::test::realTracesDir() / "nsys";
  std::ifstream in(fs::path(env("GPUWISE_SOURCE_DIR", ".")) / "tests/data/nsys/reference.json");
  const auto ref = json::parse(in).at("files");
  TempDir dir;
  size_t i = 0;
  size_t reports = 0;
  for (const auto& [name, want] : ref.items()) {
    INFO(name);
    if (!fullSet() && !fs::exists(root / name)) continue; // the subset holds one export
    ++reports;
    const std::string out = dir / ("nsys" + std::to_string(i) + ".json");
    Process p({buildDir() + "/bin/gpuwise", "report", (root / name).string(), "--json", out}, {},
              dir.path, dir.path, "nsys" + std::to_string(i++));
    REQUIRE(p.wait(std::chrono::seconds(120)) == 0);
    const auto r = json::parse(readFile(out));
    CHECK(r.at("source").at("kind") == "nsys");
    const auto& proc = want.at("processes").begin().value();
    const auto& s = r.at("summary");
    CHECK(std::llround(s.at("gpu_busy_seconds").get<double>() * 1e9) ==
          proc.at("gpu_busy_ns").get<int64_t>());
    CHECK(std::llround(s.at("gpu_span_seconds").get<double>() * 1e9) ==
          proc.at("gpu_span_ns").get<int64_t>());
    CHECK(s.at("kernel_count") == proc.at("kernel_count"));
    CHECK(s.at("memcpy").at("pageable_bytes") == proc.at("pageable_bytes"));
    REQUIRE(r.at("gpus").size() == 1);
    CHECK(r.at("gpus")[0].at("name") == proc.at("devices").at("0").at("name"));
    CHECK(r.at("gpus")[0].at("compute_capability") == "8.0");
    CHECK(r.at("processes")[0].at("tier") == "imported");
    // Both are FP64 HPC codes: no tensor cores, and no mixed-precision advice for a solver.
    CHECK(s.at("precision_time_ratio").at("fp64").get<double>() > 0.9);
    for (const auto& rec : r.at("recommendations"))
      CHECK(rec.at("id") != "enable_mixed_precision");
  }
  CHECK(reports >= (fullSet() ? 2u : 1u));
}

TEST_CASE("on every real trace the idle causes sum to the idle time and steps fill their windows") {
  const auto ref = reference();
  for (const auto& [rel, want] : ref.items()) {
    if (!want.at("chrome_trace").get<bool>() || absentFromSubset(rel)) continue;
    INFO(rel);
    auto a = analyse(rel);
    for (const auto& d : a.timeline.devices) {
      CHECK(d.idle.total() == d.idleNs());
      CHECK(d.idle.input_data_loader_ns + d.idle.input_inferred_ns == d.idle.at(IdleCause::Input));
      CHECK(d.compute_busy_ns + d.communication_busy_ns >= d.kernel_busy_ns);
    }
    CHECK(a.timeline.idle.total() == a.timeline.span_ns - a.timeline.busy_ns);
    for (const auto& p : a.steps.processes) {
      for (const auto& s : p.steps) {
        model::TimeNs idle = 0;
        for (auto v : s.idle_ns)
          idle += v;
        CHECK(s.gpu_busy_ns + idle == s.durationNs() * model::TimeNs(p.devices));
      }
    }
    if (a.precision.kernel_ns > 0) {
      double sum = 0;
      for (auto prec : profiler::kAllPrecisions)
        sum += *a.precision.share(prec);
      CHECK(sum == Approx(1.0));
    }
    if (auto o = a.kernels.occupancy.occupancy()) {
      CHECK(*o > 0.0);
      CHECK(*o <= 1.0);
    }
  }
}

TEST_CASE("ResNet-50 with num_workers=0 loses far more step time to input than num_workers=4") {
  const std::pair<const char*, const char*> pairs[] = {
      {"kineto_tb_plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
       "kineto_tb_plugin/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz"},
      {"kineto_tb_plugin/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz",
       "kineto_tb_plugin/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz"},
      {"kineto_tb_plugin/resnet50_profiler_api_num_workers_0/worker0.pt.trace.json.gz",
       "kineto_tb_plugin/resnet50_profiler_api_num_workers_4/worker0.pt.trace.json.gz"},
      // No ProfilerStep ranges: the steps are inferred from the launch sequence.
      {"kineto_tb_plugin/resnet50_autograd_api_num_workers_0/worker0.pt.trace.json.gz",
       "kineto_tb_plugin/resnet50_autograd_api_num_workers_4/worker0.pt.trace.json.gz"},
  };
  int compared = 0;
  for (const auto& [zero, four] : pairs) {
    INFO(zero << " vs " << four);
    if (absentFromSubset(zero) || absentFromSubset(four)) continue; // the subset holds the first
    ++compared;
    auto a0 = analyse(zero), a4 = analyse(four);
    REQUIRE(a0.steps.count() >= 4);
    REQUIRE(a4.steps.count() >= 4);
    CHECK(a0.steps.source() == a4.steps.source());
    double r0 = *a0.inputStallRatio(), r4 = *a4.inputStallRatio();
    // Input is the idle the DataLoader spans overlap (0.198 on the profiler_api pair).
    CHECK(r0 > 0.15);
    CHECK(r0 > 3 * r4);
    // The stall is the DataLoader's: its ranges explain most of the input time at num_workers=0.
    CHECK(a0.timeline.idle.input_data_loader_ns > a0.timeline.idle.input_inferred_ns);
  }
  CHECK(compared >= 1);
}

TEST_CASE("gpuwise export --format chrome: a Kineto trace round-trips to the same analysis") {
  TempDir dir;
  const std::string trace =
      (tracesRoot() /
       "kineto_tb_plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")
          .string();
  const std::string gw = buildDir() + "/bin/gpuwise";
  auto run = [&](std::vector<std::string> args, const std::string& tag) {
    args.insert(args.begin(), gw);
    Process p(args, {}, dir.path, dir.path, tag);
    auto status = p.wait(std::chrono::seconds(120));
    return std::tuple{status.value_or(-1), p.out(), p.err()};
  };
  auto [rc, out, err] =
      run({"export", "--format", "chrome", trace, "-o", dir / "exported.json"}, "x");
  INFO(err);
  REQUIRE(rc == 0);
  CHECK(out.find("wrote " + (dir / "exported.json")) != std::string::npos);
  // The export reads back as a Kineto trace: the same GPU span, busy time and kernels.
  auto [rc1, out1, err1] = run({"report", trace, "--json", dir / "a.json"}, "a");
  auto [rc2, out2, err2] = run({"report", dir / "exported.json", "--json", dir / "b.json"}, "b");
  INFO(err1 << err2);
  REQUIRE(rc1 == 0);
  REQUIRE(rc2 == 0);
  const auto a = json::parse(readFile(dir / "a.json")).at("summary");
  const auto b = json::parse(readFile(dir / "b.json")).at("summary");
  CHECK(b.at("kernel_count") == a.at("kernel_count"));
  CHECK(b.at("gpu_busy_seconds").get<double>() ==
        Approx(a.at("gpu_busy_seconds").get<double>()).epsilon(1e-4));
  CHECK(b.at("gpu_idle_ratio").get<double>() ==
        Approx(a.at("gpu_idle_ratio").get<double>()).margin(1e-3));

  // Bad usage: one line, exit 2.
  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"export", "--format", "perfetto", trace, "-o", dir / "y.json"},
            "unknown --format 'perfetto'"},
           {{"export", "--format", "chrome", trace}, "--output"},
           {{"export", "--format", "chrome", dir / "missing.json", "-o", dir / "y.json"},
            "missing.json"},
       }) {
    auto [rc3, out3, err3] = run(args, "bad");
    INFO(err3);
    CHECK(rc3 == 2);
    CHECK(lines(err3) == 1);
    CHECK(err3.find(says) != std::string::npos);
  }
}
