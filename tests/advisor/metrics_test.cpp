// The Prometheus exposition: every contract metric for a hand-built job with the report's numbers,
// the contract table of docs/metrics.md checked name by name, absent-not-zero for the interposer
// tier, label escaping, counters that never go back, promtool on the output, and the HTTP server.
#include "advisor/metrics/exposition_builder.h"
#include "advisor/metrics/metrics_input.h"
#include "advisor/metrics/metrics_server.h"
#include "advisor/net/listen_address.h"
#include "tests/advisor/metrics_parse.h"
#include "tests/advisor/trace_builder.h"
#include "tests/containers/containers_support.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>
#include <httplib.h>

#include <chrono>
#include <clocale>
#include <cmath>
#include <cstdlib>
#include <cwchar>
#include <iostream>
#include <thread>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using gpuwise::containers::test::metricsContract;
using gpuwise::containers::test::which;

namespace {

constexpr const char* kGemm = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn";
constexpr const char* kFp32 = "void elementwise_kernel<float>(float*, float const*, int)";
constexpr model::TimeNs kT0 = 1 * kSec; // 0 is "unknown" in the model

// One rank of a pod: 3 profiler steps of 10 ms, each waiting 2 ms on the data loader, copying the
// batch in (pinned), a BF16 tensor-core GEMM of 4 ms, an FP32 kernel of 1 ms, a sync and a pageable
// copy out; a device-to-device copy in the last step; 1 GiB reserved.
model::ProcessTrace rankProcess(int64_t pid, int32_t rank) {
  model::ProcessTrace p = process(pid);
  p.info.ns = "ml-team";
  p.info.pod = "resnet-0";
  p.info.container = "pytorch";
  p.info.rank = rank;
  auto gemm = p.names.intern(kGemm);
  auto fp32 = p.names.intern(kFp32);
  for (int i = 0; i < 3; ++i) {
    model::TimeNs s = kT0 + i * 10 * kMs;
    model::Range step{s,
                      s + 10 * kMs,
                      p.names.intern("ProfilerStep#" + std::to_string(i)),
                      1,
                      0,
                      0,
                      model::RangeKind::Step,
                      i};
    p.ranges.push_back(step);
    model::Range loader{s,
                        s + 2 * kMs,
                        p.names.intern("enumerate(DataLoader)#_next__"),
                        1,
                        0,
                        0,
                        model::RangeKind::DataLoader,
                        -1};
    p.ranges.push_back(loader);
    auto in = copy(s + 2 * kMs, s + 3 * kMs, 4 << 20, model::CopyDirection::HostToDevice,
                   model::MemoryKind::Pinned);
    in.call_start = s + 2 * kMs - 10'000;
    in.call_end = in.call_start + 5'000;
    in.thread = 1;
    p.copies.push_back(in);
    auto k1 = kernel(s + 3 * kMs, s + 7 * kMs, 7, 0, gemm);
    auto k2 = kernel(s + 7 * kMs, s + 8 * kMs, 7, 0, fp32);
    k1.thread = k2.thread = 1;
    k1.launch_start = s + 3 * kMs - 20'000;
    k1.launch_end = k1.launch_start + 4'000;
    k2.launch_start = s + 3 * kMs - 10'000;
    k2.launch_end = k2.launch_start + 4'000;
    p.kernels.push_back(k1);
    p.kernels.push_back(k2);
    model::HostSync sync;
    sync.start = s + 3 * kMs;
    sync.end = s + 9500'000;
    sync.thread = 1;
    sync.kind = model::SyncKind::Device;
    p.syncs.push_back(sync);
    auto out = copy(s + 8500'000, s + 9 * kMs, 1 << 20, model::CopyDirection::DeviceToHost,
                    model::MemoryKind::Pageable, false);
    out.thread = 1;
    p.copies.push_back(out);
  }
  p.copies.push_back(
      copy(kT0 + 29 * kMs, kT0 + 29500'000, 8 << 20, model::CopyDirection::DeviceToDevice));
  model::MemorySample m;
  m.time = kT0 + 5 * kMs;
  m.reserved_bytes = 1 << 30;
  m.allocated_bytes = 1 << 29;
  p.memory_samples.push_back(m);
  m.time = kT0 + 25 * kMs;
  m.reserved_bytes = 512 << 20;
  p.memory_samples.push_back(m);
  p.events_dropped = 4;
  return p;
}

metrics::JobFigures handBuiltJob() {
  model::Trace t;
  t.processes.push_back(rankProcess(100, 0));
  t.processes.push_back(rankProcess(101, 1));
  // NVML's energy counter on rank 0's GPU: 1,234.5 J between two samples.
  for (int64_t i = 0; i < 2; ++i)
    t.processes[0].power_samples.push_back(
        {.time = kT0 + i * 20 * kMs, .device = 0, .energy_mj = 9'000'000 + i * 1'234'500});
  auto job = metrics::buildMetricsInput(std::move(t), nullptr);
  Recommendation r;
  r.id = "prefetch_input";
  r.expected_saving_ratio = 0.2;
  r.confidence = Confidence::Medium;
  job.pods = {{"ml-team", "resnet-0", {r}}};
  return job;
}

const std::map<std::string, std::string> kRank0{
    {"namespace", "ml-team"}, {"pod", "resnet-0"}, {"container", "pytorch"}, {"rank", "0"}};

std::map<std::string, std::string> plus(std::map<std::string, std::string> m,
                                        std::map<std::string, std::string> more) {
  m.insert(more.begin(), more.end());
  return m;
}

// promtool's verdict on `text`: empty when it passes with no finding but the camelCase one for
// dcgm-exporter's `modelName` label (promtoolFindingsBeyondModelName: issue 18).
std::string promtool(const std::string& text) {
  TempDir scratch;
  std::string file = scratch / "m.prom";
  {
    std::ofstream f(file);
    f << text;
  }
  auto r = gpuwise::containers::test::run({"bash", "-c", "promtool check metrics < \"$0\"", file},
                                          scratch.path, scratch, "lint");
  if (r.rc == 0) return r.out + r.err;
  // Exit status 3: lint findings only, one a line.
  if (r.rc == 3) return promtoolFindingsBeyondModelName(text, r.out + r.err);
  return "rc " + std::to_string(r.rc) + ": " + r.out + r.err;
}

} // namespace

TEST_CASE("metrics: a hand-built job exports the report's numbers") {
  metrics::ExpositionBuilder b;
  auto job = handBuiltJob();
  auto text = b.build(job);
  auto m = parseProm(text);
  auto g0 = plus(kRank0, {{"cuda_device", "0"}});

  // Per step: copy in 2-3, kernels 3-8, copy out 8.5-9: busy 6.5 ms; span 2 ms .. 29.5 ms.
  CHECK(m.value("gpuwise_gpu_busy_seconds_total", g0) == Approx(3 * 0.0065 + 0.0005));
  double span = 0.0275;
  double idle = 0;
  for (const auto& s : m.find("gpuwise_gpu_idle_seconds_total", g0))
    idle += s.value;
  CHECK(m.find("gpuwise_gpu_idle_seconds_total", g0).size() == 5);
  CHECK(idle == Approx(span - (3 * 0.0065 + 0.0005)));
  // The span is shorter than 60 s: the ratio is over all of it.
  CHECK(m.value("gpuwise_gpu_busy_ratio", g0) == Approx((3 * 0.0065 + 0.0005) / span));
  CHECK(m.value("gpuwise_kernels_total", g0) == 6);
  CHECK(m.value("gpuwise_kernel_seconds_total",
                plus(g0, {{"precision", "bf16"}, {"tensor_core", "true"}})) == Approx(0.012));
  double ksum = 0;
  for (const auto& s : m.find("gpuwise_kernel_seconds_total", g0))
    ksum += s.value;
  CHECK(ksum == Approx(0.015));
  CHECK(m.value("gpuwise_copy_bytes_total",
                plus(g0, {{"direction", "h2d"}, {"host_memory", "pinned"}})) == 3 * (4 << 20));
  CHECK(m.value("gpuwise_copy_bytes_total",
                plus(g0, {{"direction", "d2h"}, {"host_memory", "pageable"}})) == 3 * (1 << 20));
  CHECK(m.value("gpuwise_copy_bytes_total",
                plus(g0, {{"direction", "d2d"}, {"host_memory", "none"}})) == 8 << 20);
  CHECK(m.value("gpuwise_copy_seconds_total",
                plus(g0, {{"direction", "h2d"}, {"host_memory", "pinned"}})) == Approx(0.003));
  CHECK(m.value("gpuwise_host_sync_seconds_total", kRank0) == Approx(3 * 0.0065));
  CHECK(m.value("gpuwise_input_stall_seconds_total", kRank0) > 0);
  CHECK(m.value("gpuwise_memory_used_bytes", g0) == 512 << 20);
  CHECK(m.value("gpuwise_memory_peak_bytes", g0) == 1 << 30);
  CHECK(m.value("gpuwise_device_memory_bytes", g0) == double(80ull << 30));
  CHECK(m.value("gpuwise_step_duration_seconds_count", kRank0) == 3);
  CHECK(m.value("gpuwise_step_duration_seconds_sum", kRank0) == Approx(0.03));
  CHECK(m.value("gpuwise_step_duration_seconds_bucket", plus(kRank0, {{"le", "0.005"}})) == 0);
  CHECK(m.value("gpuwise_step_duration_seconds_bucket", plus(kRank0, {{"le", "0.01"}})) == 3);
  CHECK(m.value("gpuwise_step_duration_seconds_bucket", plus(kRank0, {{"le", "+Inf"}})) == 3);
  CHECK(m.value("gpuwise_events_dropped_total", kRank0) == 4);
  // 3 steps of 7 records (step, loader, 2 copies, 2 kernels, sync), the D2D copy, 2 samples, 2
  // power samples.
  CHECK(m.value("gpuwise_events_total", kRank0) == 26);
  CHECK(m.value("gpuwise_energy_joules_total", g0) == Approx(1234.5));
  // Rank 1 had no NVML power readings: absent, not zero.
  auto rank1 = kRank0;
  rank1["rank"] = "1";
  CHECK(m.find("gpuwise_energy_joules_total", rank1).empty());
  CHECK(m.find("gpuwise_energy_joules_total").size() == 1);
  CHECK(m.value("gpuwise_processes", {{"namespace", "ml-team"}, {"pod", "resnet-0"}}) == 2);
  CHECK(m.value("gpuwise_recommendation_expected_saving_ratio",
                {{"id", "prefetch_input"}, {"confidence", "medium"}}) == Approx(0.2));
  auto info = m.find("gpuwise_info");
  REQUIRE(info.size() == 1);
  CHECK(info[0].value == 1);
  CHECK(info[0].labels["collection"] == "cupti");
  CHECK(info[0].labels["step_source"] == "profiler_step");
  CHECK(info[0].labels["report_schema"] == "gpuwise.report/v1");
  CHECK(info[0].labels["simulated"] == "false");
  auto gpu = m.find("gpuwise_gpu_info", g0);
  REQUIRE(gpu.size() == 1);
  CHECK(gpu[0].labels["modelName"] == "NVIDIA H100 80GB HBM3");
  CHECK(gpu[0].labels["compute_capability"] == "9.0");
  // Both ranks, each with its own series.
  CHECK(m.find("gpuwise_kernels_total").size() == 2);
}

TEST_CASE("metrics: the output matches the contract table of docs/metrics.md") {
  auto contract = metricsContract();
  REQUIRE(contract.size() == 30);
  metrics::ExpositionBuilder b;
  auto m = parseProm(b.build(handBuiltJob()));
  std::set<std::string> seen;
  for (const auto& s : m.series) {
    std::string metric = gpuwise::containers::test::contractMetric(s.name, contract);
    INFO(s.name);
    REQUIRE_FALSE(metric.empty());
    seen.insert(metric);
    std::set<std::string> expected = contract[metric].labels;
    if (s.name == metric + "_bucket") expected.insert("le");
    std::set<std::string> got(s.label_order.begin(), s.label_order.end());
    CHECK(got == expected);
  }
  for (const auto& [name, spec] : contract) {
    INFO(name);
    CHECK(seen.count(name) == 1);
    CHECK(m.help[name] == spec.help);
    CHECK(m.type[name] == spec.type);
  }
  CHECK(m.help.size() == contract.size());
}

TEST_CASE("metrics: without GPU timing the GPU-time series are absent, not zero") {
  model::ProcessTrace p = process(4242, "NVIDIA A100-SXM4-40GB", model::CollectionTier::Interposer);
  p.devices[0].memory_total_bytes = 0; // unknown capacity
  auto name = p.names.intern(kGemm);
  for (int i = 0; i < 5; ++i) {
    auto k = kernel(0, 0, 7, 0, name); // launched, never timed
    k.launch_start = kT0 + i * kMs;
    k.launch_end = k.launch_start + 5'000;
    p.kernels.push_back(k);
  }
  p.copies.push_back(
      copy(0, 0, 1000, model::CopyDirection::HostToDevice, model::MemoryKind::Pageable));
  model::Trace t = trace(std::move(p));
  metrics::ExpositionBuilder b;
  auto text = b.build(metrics::buildMetricsInput(std::move(t), nullptr));
  auto m = parseProm(text);
  for (const char* absent :
       {"gpuwise_gpu_busy_ratio", "gpuwise_gpu_busy_seconds_total",
        "gpuwise_gpu_idle_seconds_total", "gpuwise_kernel_seconds_total",
        "gpuwise_copy_seconds_total", "gpuwise_input_stall_seconds_total",
        "gpuwise_memory_used_bytes", "gpuwise_memory_peak_bytes", "gpuwise_device_memory_bytes",
        "gpuwise_step_duration_seconds_count", "gpuwise_recommendation_expected_saving_ratio"}) {
    INFO(absent);
    CHECK(m.find(absent).empty());
    CHECK(text.find(std::string("# TYPE ") + absent) == std::string::npos);
  }
  // What the interposer does know is there, labelled by pid for a process without RANK.
  std::map<std::string, std::string> l{
      {"rank", "pid-4242"}, {"cuda_device", "0"}, {"namespace", ""}};
  CHECK(m.value("gpuwise_kernels_total", l) == 5);
  CHECK(m.value("gpuwise_copy_bytes_total",
                plus(l, {{"direction", "h2d"}, {"host_memory", "pageable"}})) == 1000);
  auto info = m.find("gpuwise_info");
  REQUIRE(info.size() == 1);
  CHECK(info[0].labels["collection"] == "interposer");
  CHECK(info[0].labels["step_source"] == "none");
  CHECK(m.find("gpuwise_gpu_info", l).at(0).labels["compute_capability"] == "9.0");
}

namespace {

// A process whose pod, container and GPU name need escaping in label values.
std::string escapedLabelsExposition() {
  model::ProcessTrace p = rankProcess(7, 2);
  p.info.pod = "we\"ird\\pod\nname";
  p.info.container = "ünïcode";
  p.devices[0].name = "GPU \"X\"";
  p.devices[0].uuid = "MIG-11223344-5566-7788-99aa-bbccddeeff00"; // from NVML (the shim's Hello)
  p.devices[0].mig_profile = "1g.18gb";
  p.devices[0].nvml_index = 3;
  p.devices[0].gpu_instance = 1;
  p.info.node = "gpu-node-7";
  model::Trace t = trace(std::move(p));
  metrics::ExpositionBuilder b;
  return b.build(metrics::buildMetricsInput(std::move(t), nullptr));
}

// The promtool cases run as advisor_metrics_promtool_test ([.][promtool]): skipped without it.
void requirePromtool() {
  if (which("promtool").empty())
    gpuwise::test::skipTest("promtool is not installed (Debian: scripts/install-deps prometheus)");
}

} // namespace

TEST_CASE("metrics: label values are escaped and read back unchanged") {
  CHECK(metrics::escapeLabelValue("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  auto text = escapedLabelsExposition();
  auto m = parseProm(text);
  auto k = m.find("gpuwise_kernels_total");
  REQUIRE(k.size() == 1);
  CHECK(k[0].labels["pod"] == "we\"ird\\pod\nname");
  CHECK(k[0].labels["container"] == "ünïcode");
  CHECK(m.find("gpuwise_gpu_info").at(0).labels["modelName"] == "GPU \"X\"");
  CHECK(m.find("gpuwise_gpu_info").at(0).labels["UUID"] ==
        "MIG-11223344-5566-7788-99aa-bbccddeeff00");
  CHECK(m.find("gpuwise_gpu_info").at(0).labels["GPU_I_PROFILE"] == "1g.18gb");
  CHECK(m.find("gpuwise_gpu_info").at(0).labels["GPU_I_ID"] == "1");
  // dcgm-exporter's `gpu` is the node's index, from NVML: the parent GPU's on a slice.
  CHECK(k[0].labels["gpu"] == "3");
  CHECK(k[0].labels["cuda_device"] == "0");
  CHECK(k[0].labels["UUID"] == "MIG-11223344-5566-7788-99aa-bbccddeeff00");
  CHECK(k[0].labels["Hostname"] == "gpu-node-7");
}

namespace {

// Three families: one with dcgm-exporter's labels (modelName its only camelCase one), one with
// modelName and another camelCase label, a histogram with a camelCase label that is not modelName.
const char* const kCamelCaseExposition =
    "# HELP gw_gpu_info The GPU.\n# TYPE gw_gpu_info gauge\n"
    "gw_gpu_info{UUID=\"GPU-1\",modelName=\"NVIDIA H200\",Hostname=\"n\","
    "GPU_I_PROFILE=\"1g.18gb\",GPU_I_ID=\"3\"} 1\n"
    "# HELP gw_kernels_total Kernels.\n# TYPE gw_kernels_total counter\n"
    "gw_kernels_total{modelName=\"m\",podName=\"p\"} 1\n"
    "# HELP gw_wait_seconds Waits.\n# TYPE gw_wait_seconds histogram\n"
    "gw_wait_seconds_bucket{le=\"+Inf\",nodeName=\"n\"} 1\n"
    "gw_wait_seconds_sum{nodeName=\"n\"} 1\ngw_wait_seconds_count{nodeName=\"n\"} 1\n";

} // namespace

TEST_CASE("metrics: the promtool allowance drops only modelName's camelCase finding") {
  const std::string camel = kPromtoolCamelCase;
  const std::string findings = "gw_gpu_info" + camel + "\ngw_gpu_info" + camel + "\n" +
                               "gw_gpu_info counter metrics should have \"_total\" suffix\n" +
                               "gw_kernels_total" + camel + "\ngw_wait_seconds" + camel + "\n" +
                               "gw_unknown" + camel + "\n";
  CHECK(promtoolFindingsBeyondModelName(kCamelCaseExposition, findings) ==
        "gw_gpu_info counter metrics should have \"_total\" suffix\n"
        "gw_kernels_total" +
            camel + "\ngw_wait_seconds" + camel + "\ngw_unknown" + camel + "\n");
  CHECK(promtoolFindingsBeyondModelName(kCamelCaseExposition, "gw_gpu_info" + camel + "\n") == "");
  CHECK(promtoolFindingsBeyondModelName(kCamelCaseExposition, "") == "");
}

TEST_CASE("metrics: promtool's camelCase findings are the ones the allowance reads",
          "[.][promtool]") {
  requirePromtool();
  // promtool 2.42 names the family, not the label: the allowance keeps the two families with a
  // camelCase label other than modelName and drops the dcgm-exporter one.
  auto kept = promtool(kCamelCaseExposition);
  CHECK(kept.find("gw_gpu_info") == std::string::npos);
  CHECK(kept.find("gw_kernels_total" + kPromtoolCamelCase) != std::string::npos);
  CHECK(kept.find("gw_wait_seconds" + kPromtoolCamelCase) != std::string::npos);
}

TEST_CASE("metrics: promtool accepts escaped label values", "[.][promtool]") {
  requirePromtool();
  CHECK(promtool(escapedLabelsExposition()) == "");
}

namespace {

// A pod forged to break the exposition: a name with bytes that are no UTF-8 (a stray
// continuation byte, a truncated sequence, an overlong '/', a surrogate), and 64 KiB values in
// the container label and the GPU's name.
model::ProcessTrace hostileLabelsProcess() {
  model::ProcessTrace p = rankProcess(11, 0);
  p.info.pod = std::string("bad\x80pod\xE2\x82-\xC0\xAF-\xED\xA0\x80-\xFF");
  p.info.container = std::string(64 << 10, 'c');
  p.devices[0].name = std::string(64 << 10, 'g');
  return p;
}

// glibc's UTF-8 decoder, as a second opinion on the builder's.
bool validUtf8(const std::string& s) {
  static const bool utf8_locale = std::setlocale(LC_CTYPE, "C.UTF-8") != nullptr;
  REQUIRE(utf8_locale);
  std::mbstate_t state{};
  const char* from = s.data();
  const char* end = s.data() + s.size();
  while (from < end) {
    size_t n = std::mbrlen(from, size_t(end - from), &state);
    if (n == size_t(-1) || n == size_t(-2)) return false;
    from += n ? n : 1;
  }
  return true;
}

} // namespace

TEST_CASE("metrics: label values are valid UTF-8 and bounded, distinct values stay distinct") {
  // Real values come back unchanged, up to the longest Kubernetes name.
  CHECK(metrics::sanitizeLabelValue("ünïcode") == "ünïcode");
  std::string longest_pod(253, 'p');
  CHECK(metrics::sanitizeLabelValue(longest_pod) == longest_pod);
  // Invalid bytes become U+FFFD, with a hash of the original.
  std::string fixed = metrics::sanitizeLabelValue("a\xFF"
                                                  "b");
  CHECK(fixed.rfind("a\xEF\xBF\xBD"
                    "b~",
                    0) == 0);
  CHECK(fixed.size() == 5 + 1 + 16); // "a", U+FFFD, "b", "~" and the hash
  CHECK(fixed != metrics::sanitizeLabelValue("a\xFE"
                                             "b"));
  CHECK(validUtf8(fixed));
  // Long values are cut at a character boundary; values differing only past the cut differ.
  std::string a(64 << 10, 'x'), b = a;
  b.back() = 'y';
  std::string ua;
  for (int i = 0; i < 200; ++i)
    ua += "é";
  for (const std::string& v : {a, b, ua}) {
    std::string s = metrics::sanitizeLabelValue(v);
    CHECK(s.size() <= metrics::kMaxLabelValueBytes);
    CHECK(validUtf8(s));
    CHECK(s[s.size() - 17] == '~');
  }
  CHECK(metrics::sanitizeLabelValue(a) != metrics::sanitizeLabelValue(b));
  CHECK(metrics::sanitizeLabelValue(metrics::sanitizeLabelValue(a)) ==
        metrics::sanitizeLabelValue(a));

  // The whole exposition of such a pod: valid UTF-8, small, and the series still there.
  metrics::ExpositionBuilder builder;
  auto text = builder.build(metrics::buildMetricsInput(trace(hostileLabelsProcess()), nullptr));
  CHECK(validUtf8(text));
  CHECK(text.size() < 64 * 1024); // 64 KiB in each of ~40 series made megabytes
  auto m = parseProm(text);
  auto k = m.find("gpuwise_kernels_total");
  REQUIRE(k.size() == 1);
  CHECK(k[0].labels["pod"].rfind("bad\xEF\xBF\xBDpod", 0) == 0);
  CHECK(k[0].labels["container"].size() <= metrics::kMaxLabelValueBytes);
  CHECK(m.find("gpuwise_gpu_info").at(0).labels["modelName"].size() <=
        metrics::kMaxLabelValueBytes);
}

TEST_CASE("metrics: promtool accepts the exposition of a pod with hostile label values",
          "[.][promtool]") {
  requirePromtool();
  metrics::ExpositionBuilder builder;
  auto text = builder.build(metrics::buildMetricsInput(trace(hostileLabelsProcess()), nullptr));
  CHECK(promtool(text) == "");
}

TEST_CASE("metrics: counters never go back across rebuilds; gauges follow the figures") {
  metrics::ExpositionBuilder b;
  auto job = handBuiltJob();
  auto g0 = plus(kRank0, {{"cuda_device", "0"}});
  auto first = parseProm(b.build(job));
  // A recomputation that comes out lower (a re-attributed window): counters hold, gauges move.
  auto& dev = job.processes[0].gpus[0];
  dev.timeline->busy_ns /= 2;
  dev.kernels.count = 1;
  dev.busy_ratio_60s = 0.1;
  job.processes[0].steps->steps.pop_back();
  job.pods.clear();
  auto second = parseProm(b.build(job));
  CHECK(second.value("gpuwise_gpu_busy_seconds_total", g0) ==
        first.value("gpuwise_gpu_busy_seconds_total", g0));
  CHECK(second.value("gpuwise_kernels_total", g0) == 6);
  CHECK(second.value("gpuwise_step_duration_seconds_count", kRank0) == 3);
  CHECK(second.value("gpuwise_gpu_busy_ratio", g0) == Approx(0.1));
  CHECK(second.find("gpuwise_recommendation_expected_saving_ratio").empty());
  // And a higher figure goes through.
  dev.timeline->busy_ns *= 4;
  auto third = parseProm(b.build(job));
  CHECK(third.value("gpuwise_gpu_busy_seconds_total", g0) >
        first.value("gpuwise_gpu_busy_seconds_total", g0));
}

TEST_CASE("metrics: a multi-GPU process has one series per GPU") {
  model::ProcessTrace p = rankProcess(9, 0);
  model::DeviceInfo d1 = p.devices[0];
  d1.index = 1;
  p.devices.push_back(d1);
  auto gemm = p.names.intern(kGemm);
  for (int i = 0; i < 4; ++i)
    p.kernels.push_back(kernel(kT0 + i * kMs, kT0 + i * kMs + 500'000, 9, 1, gemm));
  metrics::ExpositionBuilder b;
  auto m = parseProm(b.build(metrics::buildMetricsInput(trace(std::move(p)), nullptr)));
  CHECK(m.value("gpuwise_kernels_total", {{"cuda_device", "0"}}) == 6);
  CHECK(m.value("gpuwise_kernels_total", {{"cuda_device", "1"}}) == 4);
  CHECK(m.value("gpuwise_gpu_busy_seconds_total", {{"cuda_device", "1"}}) == Approx(0.002));
  CHECK(m.value("gpuwise_kernel_seconds_total",
                {{"cuda_device", "1"}, {"precision", "bf16"}, {"tensor_core", "true"}}) ==
        Approx(0.002));
  CHECK(m.find("gpuwise_copy_bytes_total", {{"cuda_device", "1"}}).empty());
}

namespace {

std::string sixtyFourProcessesExposition() {
  model::Trace t;
  for (int r = 0; r < 64; ++r)
    t.processes.push_back(rankProcess(1000 + r, r));
  metrics::ExpositionBuilder b64;
  return b64.build(metrics::buildMetricsInput(std::move(t), nullptr));
}

} // namespace

TEST_CASE("metrics: the exposition's size for 1 and 64 processes") {
  metrics::ExpositionBuilder b;
  std::string one = b.build(handBuiltJob());
  std::string many = sixtyFourProcessesExposition();
  auto m = parseProm(many);
  CHECK(m.find("gpuwise_kernels_total").size() == 64);
  WARN("exposition size: 2 processes " << one.size() << " bytes, 64 processes " << many.size()
                                       << " bytes (" << m.series.size() << " series)");
}

TEST_CASE("metrics: promtool accepts the exposition of 1 and 64 processes", "[.][promtool]") {
  requirePromtool();
  metrics::ExpositionBuilder b;
  CHECK(promtool(b.build(handBuiltJob())) == "");
  CHECK(promtool(sixtyFourProcessesExposition()) == "");
}

TEST_CASE("metrics server: /metrics, /healthz, 404, the cache and a bad address") {
  std::atomic<int> produced{0};
  metrics::MetricsServer::Options o;
  o.address = "127.0.0.1:0";
  o.max_age = std::chrono::milliseconds(50);
  o.min_pause = std::chrono::milliseconds(0);
  o.produce = [&] {
    int n = ++produced;
    return "# TYPE x gauge\nx " + std::to_string(n) + "\n";
  };
  std::string error;
  auto server = metrics::MetricsServer::start(o, &error);
  REQUIRE(server);
  REQUIRE(server->port() > 0);
  CHECK(produced == 1); // the first text exists before the first scrape
  httplib::Client c("127.0.0.1", server->port());
  auto r = c.Get("/metrics");
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->get_header_value("Content-Type") == metrics::kContentType);
  CHECK(r->body.rfind("# TYPE x gauge\nx ", 0) == 0);
  auto h = c.Get("/healthz");
  REQUIRE(h);
  CHECK(h->status == 200);
  CHECK(h->body == "ok\n");
  auto nf = c.Get("/nothing");
  REQUIRE(nf);
  CHECK(nf->status == 404);
  // Scrapes back to back reuse the cache; a scrape after max_age gets a newer text.
  auto a = c.Get("/metrics"), bb = c.Get("/metrics");
  REQUIRE((a && bb));
  int before = produced;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::string newer;
  while (std::chrono::steady_clock::now() < deadline) {
    auto x = c.Get("/metrics");
    REQUIRE(x);
    if (x->body != bb->body) {
      newer = x->body;
      break;
    }
  }
  CHECK_FALSE(newer.empty());
  CHECK(produced > before);
  CHECK(server->stats().scrapes >= 4);
  // The port is taken now: a second server says so in one line.
  metrics::MetricsServer::Options o2 = o;
  o2.address = "127.0.0.1:" + std::to_string(server->port());
  CHECK_FALSE(metrics::MetricsServer::start(o2, &error));
  CHECK(error.find("cannot listen on 127.0.0.1:") != std::string::npos);
  o2.address = "9464";
  CHECK_FALSE(metrics::MetricsServer::start(o2, &error));
  CHECK(error.find("not HOST:PORT") != std::string::npos);
  server->stop();
  server->stop(); // idempotent
  std::string host;
  int port = -1;
  CHECK(splitListenAddress(":9464", &host, &port));
  CHECK(host == "0.0.0.0");
  CHECK(port == 9464);
  CHECK(splitListenAddress("[::1]:80", &host, &port));
  CHECK(host == "::1");
}

// Not run by default (ctest runs it with `advisor_metrics_test "[perf]"`): the cost of one refresh
// on a run of 1M kernels, and what a scrape waits for.
TEST_CASE("metrics perf: a refresh and a scrape on 1M kernels", "[.][perf]") {
  using Clock = std::chrono::steady_clock;
  model::ProcessTrace p = rankProcess(1, 0);
  auto gemm = p.names.intern(kGemm), fp32 = p.names.intern(kFp32);
  p.kernels.reserve(1'000'000);
  for (int i = 0; i < 1'000'000; ++i) {
    model::TimeNs s = 2 * kSec + model::TimeNs(i) * 20'000;
    auto k = kernel(s, s + 15'000, 7, 0, i % 3 ? gemm : fp32);
    k.launch_start = s - 8'000;
    k.launch_end = s - 4'000;
    k.thread = 1;
    p.kernels.push_back(k);
  }
  model::Trace full = trace(std::move(p));
  auto t0 = Clock::now();
  model::Trace copy = full; // what IngestServer::snapshot() copies under the ingest lock
  auto t1 = Clock::now();
  metrics::ExpositionBuilder b;
  std::string text = b.build(metrics::buildMetricsInput(std::move(copy), nullptr));
  auto t2 = Clock::now();
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  CHECK(parseProm(text).value("gpuwise_kernels_total") == 1'000'006);

  metrics::MetricsServer::Options o;
  o.address = "127.0.0.1:0";
  o.produce = [&] { return b.build(metrics::buildMetricsInput(full, nullptr)); };
  std::string error;
  auto server = metrics::MetricsServer::start(o, &error);
  REQUIRE(server);
  httplib::Client c("127.0.0.1", server->port());
  auto s0 = Clock::now();
  auto cached = c.Get("/metrics"); // within max_age of start(): served from the cache
  auto s1 = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100)); // let the text age past max_age
  auto s2 = Clock::now();
  auto fresh = c.Get("/metrics"); // stale: a slow refresh is not waited for
  auto s3 = Clock::now();
  REQUIRE((cached && fresh));
  WARN("1M kernels: snapshot copy "
       << ms(t1 - t0) << " ms, analysis + exposition " << ms(t2 - t1) << " ms; scrape from cache "
       << ms(s1 - s0) << " ms, stale scrape (answered at once, starts a refresh) " << ms(s3 - s2)
       << " ms; exposition " << text.size() << " bytes");
}

TEST_CASE("metrics: per-process series carry the job's name the process sent") {
  model::Trace t;
  t.processes.push_back(rankProcess(100, 0));
  t.processes.push_back(rankProcess(101, 1));
  t.processes[0].info.job = "resnet-ddp";
  metrics::ExpositionBuilder b;
  auto m = parseProm(b.build(metrics::buildMetricsInput(std::move(t), nullptr)));
  CHECK(m.value("gpuwise_events_total", plus(kRank0, {{"job_name", "resnet-ddp"}})) == 24);
  CHECK(m.value("gpuwise_events_total", {{"namespace", "ml-team"},
                                         {"pod", "resnet-0"},
                                         {"container", "pytorch"},
                                         {"job_name", ""},
                                         {"rank", "1"}}) == 24);
}

TEST_CASE("metrics: per-rank step p50 and communication, labelled by job and rank") {
  model::Trace t;
  t.processes.push_back(rankProcess(100, 0));
  // An all-reduce per step from 6 to 9 ms: the compute kernels (3-8 ms) hide 2 ms of its 3.
  auto& p = t.processes[0];
  auto nccl =
      p.names.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  for (int i = 0; i < 3; ++i) {
    auto k = kernel(kT0 + i * 10 * kMs + 6 * kMs, kT0 + i * 10 * kMs + 9 * kMs, 8, 0, nccl);
    k.flags |= model::kKernelCommunication;
    p.kernels.push_back(k);
  }
  metrics::ExpositionBuilder b;
  auto text = b.build(metrics::buildMetricsInput(std::move(t), nullptr));
  auto m = parseProm(text);
  const auto labels = plus(kRank0, {{"job_name", ""}});
  CHECK(m.value("gpuwise_rank_step_p50_seconds", labels) == Approx(0.010));
  CHECK(m.value("gpuwise_rank_communication_seconds_total", labels) == Approx(0.009));
  CHECK(m.value("gpuwise_rank_communication_exposed_seconds_total", labels) == Approx(0.003));
  if (!which("promtool").empty()) CHECK(promtool(text).empty());
}
