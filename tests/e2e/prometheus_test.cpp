// A real Prometheus (Debian's `prometheus`) scrapes a live `gpuwise advisor --metrics-addr` while
// a CUDA sample runs into it on the simulated device; PromQL answers are checked against the
// report the advisor writes at SIGTERM, and `promtool check metrics` against the live /metrics.
//
// Every wait is on a condition with a deadline: the advisor's /healthz, Prometheus's /-/ready,
// the target up, a query result that reflects the finished process.
#include "tests/advisor/metrics_parse.h"
#include "tests/advisor/subprocess.h"
#include "tests/e2e/prometheus_support.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

using namespace gpuwise::advisor::test;
using json = nlohmann::json;

namespace {

// dcgm-exporter beside the advisor: its page (tests/data/dcgm_exporter_metrics.prom, whose GPU 0 is
// the simulated GPU) served at /metrics on a loopback port.
class FakeDcgmExporter {
public:
  FakeDcgmExporter() : page_(readFile(sourceDir() + "/tests/data/dcgm_exporter_metrics.prom")) {
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(page_, "text/plain; version=0.0.4; charset=utf-8");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeDcgmExporter() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }

private:
  std::string page_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// promtool on an exposition of the live advisor: no findings. With `per_gpu_series`, the
// camelCase finding for dcgm-exporter's `modelName` label is accepted, and only it
// (promtoolFindingsBeyondModelName: dcgm-exporter compatibility, issue 18).
void lintWithPromtool(const std::string& exposition, const TempDir& dir, bool per_gpu_series) {
  if (which("promtool").empty()) {
    WARN("promtool is not installed: the live exposition was not linted");
    return;
  }
  {
    std::ofstream f(dir / "live.prom");
    f << exposition;
  }
  Process lint({"/bin/bash", "-c", "promtool check metrics < \"$0\"", dir / "live.prom"}, {},
               dir.path, dir.path, "promtool");
  auto rc = lint.wait(std::chrono::seconds(30));
  INFO(lint.out() << lint.err());
  CHECK(lint.err().find("SUCCESS") == std::string::npos); // only findings would be printed
  if (per_gpu_series && rc == 3) {                        // 3: lint findings, one a line
    CHECK(promtoolFindingsBeyondModelName(exposition, lint.out() + lint.err()) == "");
    return;
  }
  CHECK(rc == 0);
  CHECK(lint.out().empty());
  CHECK(lint.err().empty());
}

// gpuwise's series join dcgm-exporter's on dcgm-exporter's own label names, with no label_replace:
// the queries docs/metrics.md documents return the simulated GPU's pair.
void checkDcgmJoin(httplib::Client& prom, double busy_ratio) {
  auto gpu = query(prom, "gpuwise_gpu_info{pod=\"trainer-0\"}");
  REQUIRE(gpu.size() == 1);
  // The fixture's GPU 0 was edited to be the simulated one: say so if the simulator changes.
  CHECK(gpu[0]["metric"]["UUID"] == "GPU-67777369-6d68-3230-3000-000000000000");
  CHECK(gpu[0]["metric"]["modelName"] == "NVIDIA H200");
  json by_uuid, by_index;
  REQUIRE(eventually(
      [&] {
        by_uuid = query(prom, "gpuwise_gpu_busy_ratio * on (UUID) group_left (modelName) "
                              "DCGM_FI_DEV_GPU_UTIL");
        by_index = query(
            prom, "gpuwise_gpu_busy_ratio * on (Hostname, gpu) group_left DCGM_FI_DEV_GPU_UTIL");
        return by_uuid.size() == 1 && by_index.size() == 1;
      },
      std::chrono::seconds(20)));
  INFO(by_uuid.dump() << "\n" << by_index.dump());
  CHECK(by_uuid[0]["metric"]["pod"] == "trainer-0");
  CHECK(by_uuid[0]["metric"]["rank"] == "3");
  CHECK(by_uuid[0]["metric"]["modelName"] == "NVIDIA H200");
  CHECK(by_uuid[0]["metric"]["UUID"] == "GPU-67777369-6d68-3230-3000-000000000000");
  CHECK(by_index[0]["metric"]["Hostname"] == "gpu-node-7");
  CHECK(by_index[0]["metric"]["gpu"] == "0");
  CHECK(by_index[0]["metric"]["pod"] == "trainer-0");
  CHECK(valueOf(by_uuid[0]) == Approx(busy_ratio * 37)); // DCGM_FI_DEV_GPU_UTIL of GPU 0
  CHECK(valueOf(by_index[0]) == Approx(busy_ratio * 37));
}

} // namespace

TEST_CASE("prometheus scrapes a live advisor; its answers equal the report", "[e2e][prometheus]") {
  if (which("prometheus").empty())
    gpuwise::test::skipTest(
        "prometheus is not installed (Debian: scripts/install-deps installs it)");
  TempDir dir;
  const int metrics_port = freePort(), prom_port = freePort();
  const std::string endpoint = "ipc://" + (dir / "advisor.sock");
  const std::string reports = dir / "reports";

  Process advisor = startAdvisor(dir, metrics_port);
  httplib::Client adv("127.0.0.1", metrics_port);
  adv.set_connection_timeout(1, 0);
  REQUIRE(answersHealthz(adv));

  FakeDcgmExporter dcgm;
  REQUIRE(dcgm.port() > 0);
  Process prometheus =
      startPrometheus(dir, writePrometheusConfig(dir, metrics_port, "", dcgm.port()), prom_port);
  httplib::Client prom("127.0.0.1", prom_port);
  prom.set_connection_timeout(1, 0);
  waitUntilScraping(prom, dir);

  // One rank of a pod, as the injected pod would run it.
  Process sample({buildDir() + "/bin/gpuwise", "run", "--simulate", "--endpoint", endpoint, "--",
                  buildDir() + "/samples/pageable_copies", "--steps", "60"},
                 {"RANK=3", "GPUWISE_NAMESPACE=ml-team", "GPUWISE_POD=trainer-0",
                  "GPUWISE_CONTAINER=pytorch", "GPUWISE_NODE=gpu-node-7"},
                 dir.path, dir.path, "sample");
  auto sample_status = sample.wait(std::chrono::seconds(60));
  INFO("sample: " << sample.err());
  REQUIRE(sample_status == 0);
  auto kv = sampleLine(sample.out());
  REQUIRE(kv.count("kernels"));
  const double kernels = std::stod(kv["kernels"]);

  // Wait for a scrape after the process's final batch: the counter reaches the sample's total.
  // dcgm-exporter's names for the GPU: the node (GPUWISE_NODE), the simulated NVML's index.
  const std::string sel = "{namespace=\"ml-team\",pod=\"trainer-0\",container=\"pytorch\","
                          "rank=\"3\",Hostname=\"gpu-node-7\",gpu=\"0\",cuda_device=\"0\"}";
  json k;
  bool reached = eventually(
      [&] {
        k = query(prom, "gpuwise_kernels_total" + sel);
        return k.size() == 1 && valueOf(k[0]) == kernels;
      },
      std::chrono::seconds(20));
  INFO("advisor: " << advisor.err() << "\nlast answer: " << k.dump());
  REQUIRE(reached);
  json processes;
  REQUIRE(eventually([&] {
    processes = query(prom, "gpuwise_processes{namespace=\"ml-team\",pod=\"trainer-0\"}");
    return processes.size() == 1 && valueOf(processes[0]) == 0;
  }));

  auto live = adv.Get("/metrics");
  REQUIRE(live);
  CHECK(live->get_header_value("Content-Type") == "text/plain; version=0.0.4; charset=utf-8");
  lintWithPromtool(live->body, dir, true);
  auto exposition = parseProm(live->body);

  const double busy = valueOf(query(prom, "gpuwise_gpu_busy_seconds_total" + sel).at(0));
  const double ratio = valueOf(query(prom, "gpuwise_gpu_busy_ratio" + sel).at(0));
  const double idle = valueOf(query(prom, "sum(gpuwise_gpu_idle_seconds_total" + sel + ")").at(0));
  const double pageable = valueOf(
      query(prom, "sum(gpuwise_copy_bytes_total{host_memory=\"pageable\",rank=\"3\"})").at(0));
  auto info = query(prom, "gpuwise_info");
  REQUIRE(info.size() == 1);
  CHECK(info[0]["metric"]["simulated"] == "true");
  CHECK(info[0]["metric"]["collection"] == "cupti");
  auto saving =
      query(prom, "gpuwise_recommendation_expected_saving_ratio{id=\"use_pinned_memory\"}");
  checkDcgmJoin(prom, ratio);

  // The report the advisor writes at SIGTERM is the reference.
  ::kill(advisor.pid(), SIGTERM);
  REQUIRE(advisor.wait(std::chrono::seconds(30)) == 0);
  json report = json::parse(readFile(reports + "/gpuwise-report.json"));
  const json& s = report["summary"];
  INFO(s.dump(2));
  CHECK(s["kernel_count"].get<double>() == kernels);
  CHECK(busy == Approx(s["gpu_busy_seconds"].get<double>()).epsilon(1e-9));
  CHECK(idle == Approx(s["gpu_span_seconds"].get<double>() - s["gpu_busy_seconds"].get<double>())
                    .epsilon(1e-6));
  // The run is shorter than the 60 s window: the busy ratio is over the whole span.
  CHECK(ratio == Approx(1.0 - s["gpu_idle_ratio"].get<double>()).epsilon(1e-6));
  CHECK(pageable == s["memcpy"]["pageable_bytes"].get<double>());
  CHECK(pageable == std::stod(kv["pageable_bytes"]));
  CHECK(exposition.value("gpuwise_kernels_total", {{"rank", "3"}}) == kernels);
  // The sample plants pageable copies: the report recommends pinned memory, and so does
  // Prometheus, with the same expected saving.
  for (const auto& r : report["recommendations"])
    if (r["id"] == "use_pinned_memory") {
      REQUIRE(saving.size() == 1);
      CHECK(valueOf(saving[0]) == Approx(r["expected_saving_ratio"].get<double>()));
    }
}

// An advisor no process reaches (the shim never loaded in the training container): from the first
// scrape it says gpuwise_processes 0 for its own pod, and the shipped alert
// GpuwiseNoProcessConnected (its expression as shipped, its `for` shortened) fires in a real
// Prometheus.
TEST_CASE("prometheus fires GpuwiseNoProcessConnected for an idle advisor", "[e2e][prometheus]") {
  if (which("prometheus").empty())
    gpuwise::test::skipTest(
        "prometheus is not installed (Debian: scripts/install-deps installs it)");
  TempDir dir;
  const int metrics_port = freePort(), prom_port = freePort();
  // The sidecar's environment as the webhook sets it (advisor/webhook/injected_containers.cpp).
  Process advisor =
      startAdvisor(dir, metrics_port,
                   {"GPUWISE_NAMESPACE=ml-team", "GPUWISE_POD=trainer-0", "GPUWISE_NODE=node-7"});
  httplib::Client adv("127.0.0.1", metrics_port);
  adv.set_connection_timeout(1, 0);
  REQUIRE(answersHealthz(adv));
  // The first scrape already carries the advisor's own series.
  auto first = adv.Get("/metrics");
  REQUIRE(first);
  INFO(first->body);
  auto idle = parseProm(first->body);
  CHECK(idle.value("gpuwise_processes", {{"namespace", "ml-team"}, {"pod", "trainer-0"}}) == 0);
  CHECK(idle.value("gpuwise_build_info", {{"pod", "trainer-0"}}) == 1);
  CHECK(idle.value("gpuwise_advisor_received_batches_total") == 0);
  lintWithPromtool(first->body, dir, false); // no per-GPU series: no allowance

  Process prometheus = startPrometheus(
      dir, writePrometheusConfig(dir, metrics_port, shippedRulesFile(dir, "2s")), prom_port);
  httplib::Client prom("127.0.0.1", prom_port);
  prom.set_connection_timeout(1, 0);
  waitUntilScraping(prom, dir);

  json firing;
  bool fired = eventually(
      [&] {
        firing = query(prom, "ALERTS{alertname=\"GpuwiseNoProcessConnected\","
                             "alertstate=\"firing\"}");
        return firing.size() == 1;
      },
      std::chrono::seconds(30));
  INFO("prometheus: " << readFile(dir / "prometheus.err") << "\nlast answer: " << firing.dump());
  REQUIRE(fired);
  CHECK(firing[0]["metric"]["namespace"] == "ml-team");
  CHECK(firing[0]["metric"]["pod"] == "trainer-0");
  CHECK(firing[0]["metric"]["severity"] == "info");
  // The uptime query docs/metrics.md gives: the advisor started within the test.
  auto uptime = query(prom, "time() - gpuwise_advisor_start_time_seconds");
  REQUIRE(uptime.size() == 1);
  CHECK(valueOf(uptime[0]) >= 0);
  CHECK(valueOf(uptime[0]) < 600);
  // No other shipped alert has anything to say about an idle advisor.
  CHECK(query(prom, "ALERTS{alertname!=\"GpuwiseNoProcessConnected\"}").empty());
}
