// The analysis engine end to end on the samples: `gpuwise run --simulate` with the real shim, the
// simulated device and the CUDA training loops of samples/, each with one planted inefficiency.
//   input_stall   the host prepares every batch while the GPU idles: a high input stall ratio
//   healthy       prefetching on a side stream: a low one
//   launch_bound  ~1000 tiny kernels per step: most gaps are launch overhead
// Steps are inferred (the samples have no annotations) and must match the sample's own count.
#include "tests/advisor/subprocess.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>

using namespace gpuwise::advisor::test;
using json = nlohmann::json;

namespace {

struct Run {
  json report;
  std::map<std::string, std::string> sample; // the sample's "gwsample k=v ..." line
  std::string err;
};

Run runSample(const TempDir& dir, const std::string& name, const std::vector<std::string>& args) {
  std::vector<std::string> argv{buildDir() + "/bin/gpuwise", "run",       "--simulate",
                                "--report-json",             dir / (name + ".json"),
                                "--report-html",             dir / (name + ".html"),
                                "--",                        buildDir() + "/samples/" + name};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv, {}, dir.path, dir.path, name);
  auto status = p.wait(std::chrono::seconds(180));
  INFO(p.err());
  REQUIRE(status == 0);
  Run r{json::parse(readFile(dir / (name + ".json"))), {}, p.err()};
  auto out = p.out();
  auto at = out.find("gwsample ");
  REQUIRE(at != std::string::npos);
  std::istringstream line(out.substr(at, out.find('\n', at) - at));
  for (std::string w; line >> w;)
    if (auto eq = w.find('='); eq != std::string::npos) r.sample[w.substr(0, eq)] = w.substr(eq + 1);
  return r;
}

} // namespace

TEST_CASE("input_stall: most of each step waits for input; healthy: almost none") {
  TempDir dir;
  auto stall = runSample(dir, "input_stall", {"--steps", "60"});
  INFO(stall.err);
  const auto& s = stall.report["summary"];
  REQUIRE(s["input_stall_ratio"].is_number());
  CHECK(s["input_stall_ratio"].get<double>() > 0.4);
  CHECK(s["steps"]["source"] == "inferred");
  // Every whole step is found: the sample's count, less the first if its start is not seen.
  CHECK(s["steps"]["count"].get<int>() >= std::stoi(stall.sample.at("steps")) - 1);
  CHECK(s["steps"]["count"].get<int>() <= std::stoi(stall.sample.at("steps")));
  const auto& idle = stall.report["idle"];
  CHECK(idle["share_by_cause"]["input"].get<double>() > 0.7);
  // No DataLoader ranges in a live run: all of it is inferred from the host's state.
  CHECK(idle["input_data_loader_seconds"].get<double>() == 0.0);

  auto healthy = runSample(dir, "healthy", {"--steps", "300"});
  INFO(healthy.err);
  const auto& h = healthy.report["summary"];
  REQUIRE(h["input_stall_ratio"].is_number());
  CHECK(h["input_stall_ratio"].get<double>() < 0.02);
  CHECK(h["gpu_idle_ratio"].get<double>() < 0.05);
  CHECK(h["precision_time_ratio"]["bf16"].get<double>() > 0.9);
  CHECK(h["tensor_core_time_ratio"].get<double>() > 0.9);
  CHECK(h["occupancy_theoretical"].is_number());
}

TEST_CASE("launch_bound: the GPU idles between tiny kernels for the launches") {
  TempDir dir;
  auto r = runSample(dir, "launch_bound", {"--steps", "30"});
  INFO(r.err);
  const auto& s = r.report["summary"];
  const auto& idle = r.report["idle"];
  REQUIRE(s["launch_overhead_ratio"].is_number());
  // Most gaps are launch overhead; their time share depends on how often this (shared, loaded)
  // host was descheduled mid-step, which shows up as host-bound gaps instead.
  CHECK(idle["launch_overhead_gaps"].get<double>() > 0.5 * idle["gaps"].get<double>());
  CHECK(s["launch_overhead_ratio"].get<double>() > 0.2);
  CHECK(idle["short_kernels"] == idle["timed_kernels"]);
  CHECK(s["sm_fill"].get<double>() < 0.1); // grids of 16 blocks on 132 SMs
  CHECK(s["input_stall_ratio"].get<double>() < 0.01);
}
