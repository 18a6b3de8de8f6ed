// Golden report tests: real traces in, an excerpt of the JSON report out, compared with
// tests/data/golden/<name>.json. The excerpt is the part of the report the analysis engine owns
// (summary, idle, steps, precision, occupancy, the top kernels, the timeline split), with every
// non-integer number rounded to 4 significant digits so the files read well and diff cleanly.
// Recommendations are left out: the rules own them and change on their own schedule; the test
// checks instead that each one's saving stays within the part of the breakdown it names.
//
// Update them all in one command after an intended change (then review the diff):
//     scripts/update-golden            # or: GPUWISE_UPDATE_GOLDEN=1
//     build/tests/advisor_golden_test
#include "advisor/import/kineto_importer.h"
#include "advisor/import/nsys_importer.h"
#include "advisor/report/report_json.h"
#include "advisor/rules/rule_set.h"
#include "tests/advisor/advice_invariants.h"

#include "tests/traces_dir.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gpuwise;
using namespace gpuwise::advisor;
namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

namespace {

constexpr int kSignificant = 4;

struct Case {
  const char* name;  // tests/data/golden/<name>.json
  const char* trace; // under $GPUWISE_TRACES_DIR/kineto, or /nsys for an Nsight Systems export
  bool nsys = false;
};

// Two ResNet-50 runs differing only in num_workers, one without step annotations, NCCL on A100,
// a recommender with ns timestamps, HF inference on H100, FP8/FP4 on B200, MI250 (no occupancy).
constexpr Case kCases[] = {
    {"resnet50_num_workers_0",
     "kineto_tb_plugin/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"},
    {"resnet50_num_workers_4",
     "kineto_tb_plugin/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz"},
    {"resnet50_autograd_num_workers_0",
     "kineto_tb_plugin/resnet50_autograd_api_num_workers_0/worker0.pt.trace.json.gz"},
    {"hta_nccl_data", "hta/nccl_parser_config/nccl_data.json.gz"},
    {"hta_ns_resolution_rank0",
     "hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"},
    {"tracelens_h100_qwen", "tracelens/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"},
    {"tracelens_b200_eager", "tracelens/b200/eager_trace.json.gz"},
    {"hta_mi250_minitoy", "hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"},
    // Nsight Systems exports: an FP64 hydro code syncing after every kernel, an MPI saxpy.
    {"nsys_cloverleaf_a100", "perlmutter-cloverleaf-cuda.sqlite", true},
    {"nsys_saxpy_mpi_a100", "saxpy-mpi-cuda_nsys_perlmutter0.sqlite", true},
};

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

json round(const json& v) {
  if (v.is_object()) {
    json out = json::object();
    for (auto it = v.begin(); it != v.end(); ++it)
      out[it.key()] = round(it.value());
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (const auto& x : v)
      out.push_back(round(x));
    return out;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == 0 || !std::isfinite(d)) return d;
    std::ostringstream s;
    s.precision(kSignificant);
    s << d;
    return std::stod(s.str());
  }
  return v;
}

json pick(const json& from, std::initializer_list<const char*> keys) {
  json out = json::object();
  for (const char* k : keys)
    if (from.contains(k)) out[k] = from.at(k);
  return out;
}

json excerpt(const json& r) {
  json e = json::object();
  e["gpus"] = json::array();
  for (const auto& g : r.at("gpus"))
    e["gpus"].push_back(pick(g, {"name", "sm_count", "compute_capability"}));
  e["job"] = r.at("job");
  e["summary"] = r.at("summary");
  e["ranks"] = r.at("ranks");
  e["timeline"] = pick(r.at("timeline"), {"compute_seconds", "communication_seconds",
                                          "communication_exposed_seconds", "memory_seconds"});
  json idle = r.at("idle");
  e["idle"] = pick(idle, {"seconds_by_cause", "input_data_loader_seconds", "input_inferred_seconds",
                          "gaps", "launch_overhead_gaps", "host_bound_gaps", "short_kernels"});
  json steps = r.at("steps");
  json s =
      pick(steps, {"source", "count", "mean_seconds", "p50_seconds", "p90_seconds", "cv",
                   "input_stall_ratio", "host_sync_seconds_per_step", "idle_seconds_by_cause"});
  s["per_step"] = json::array();
  for (const auto& p : steps.at("processes")) {
    s["inferred"] = p.at("inferred");
    for (const auto& st : p.at("steps"))
      s["per_step"].push_back(pick(st, {"number", "seconds", "gpu_busy_seconds",
                                        "input_stall_seconds", "host_sync_seconds", "kernels"}));
  }
  e["steps"] = s;
  e["precision"] =
      pick(r.at("precision"), {"time_ratio", "tensor_core_time_ratio", "fp32_matmul_time_ratio",
                               "unknown_kernel_names", "unknown_kernels"});
  e["occupancy"] = pick(r.at("occupancy"), {"theoretical", "achieved", "sm_fill", "tail_wave_loss",
                                            "limiter", "limiter_time_ratio"});
  e["top_kernels"] = json::array();
  for (size_t i = 0; i < r.at("top_kernels").size() && i < 5; ++i)
    e["top_kernels"].push_back(
        pick(r.at("top_kernels")[i],
             {"name", "count", "seconds", "precision", "tensor_core", "occupancy_theoretical",
              "occupancy_limiter", "sm_fill", "occupancy_achieved"}));
  return round(e);
}

// "summary.input_stall_ratio: 0.3384 != 0.3"-style lines for every difference.
std::string differences(const json& want, const json& got) {
  std::string out;
  for (const auto& op : json::diff(want, got)) {
    std::string path = op.at("path").get<std::string>();
    out += "  " + op.at("op").get<std::string>() + " " + path;
    if (op.contains("value")) out += " -> " + op.at("value").dump();
    json::json_pointer ptr(path);
    if (op.at("op") == "replace" && want.contains(ptr)) out += " (was " + want.at(ptr).dump() + ")";
    out += "\n";
  }
  return out;
}

} // namespace

// On the full set, or on the cases whose traces the subset in tests/data/traces holds.
TEST_CASE("golden report excerpts of real traces") {
  const fs::path root = gpuwise::test::realTracesDir();
  const bool full = gpuwise::test::haveFullTraces();
  const fs::path traces = root / "kineto";
  const fs::path golden = fs::path(env("GPUWISE_SOURCE_DIR", ".")) / "tests/data/golden";
  const bool update = std::getenv("GPUWISE_UPDATE_GOLDEN") != nullptr;
  std::map<std::string, json> excerpts;
  for (const auto& c : kCases) {
    INFO(c.name << ": " << c.trace);
    if (!full && !fs::exists(c.nsys ? root / "nsys" / c.trace : traces / c.trace)) continue;
    model::Trace trace;
    if (c.nsys) {
      auto imported = importNsys({(root / "nsys" / c.trace).string()});
      INFO(imported.error);
      REQUIRE(imported.ok());
      trace = std::move(imported.trace);
    } else {
      auto imported = importKineto({(traces / c.trace).string()});
      REQUIRE(imported.ok());
      trace = std::move(imported.trace);
    }
    auto a = analyzeJob(trace);
    const std::vector<Recommendation> no_recommendations;
    json got = excerpt(buildReportJson({a, no_recommendations}));
    excerpts[c.name] = got;
    // The advice on the same report keeps within the breakdown the excerpt pins down.
    auto advice = advise(a, &trace);
    auto full = buildReportJson({a, advice.recommendations, &advice.notes});
    for (const auto& problem : gpuwise::advisor::test::adviceInvariantViolations(full)) {
      INFO(problem);
      CHECK(false);
    }
    const fs::path file = golden / (std::string(c.name) + ".json");
    json doc = {{"trace", c.nsys ? "nsys/" + std::string(c.trace) : std::string(c.trace)},
                {"rounding", std::to_string(kSignificant) + " significant digits"},
                {"excerpt", got}};
    if (update) {
      fs::create_directories(golden);
      std::ofstream(file) << doc.dump(1) << '\n';
      WARN("updated " << file);
      continue;
    }
    REQUIRE(fs::exists(file)); // new case: run scripts/update-golden
    std::ifstream in(file);
    json want = json::parse(in).at("excerpt");
    INFO("differences (scripts/update-golden rewrites the file):\n" << differences(want, got));
    CHECK(want == got);
  }
  // What the excerpts must show whatever their exact numbers: the DataLoader stall of
  // num_workers=0 costs several times the step time it costs with 4 workers.
  double r0 = excerpts["resnet50_num_workers_0"]["summary"]["input_stall_ratio"].get<double>();
  double r4 = excerpts["resnet50_num_workers_4"]["summary"]["input_stall_ratio"].get<double>();
  CHECK(r0 > 0.25);
  CHECK(r0 > 4 * r4);
}
