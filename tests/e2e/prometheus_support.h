// What the real-Prometheus tests share (tests/e2e/prometheus_test.cpp, prometheus_waste_test.cpp):
// a free port, Prometheus started on a generated configuration with the shipped rules, and its
// HTTP API queried. Every wait is on a condition with a deadline.
#pragma once

#include "tests/advisor/subprocess.h"

#include <catch2/catch.hpp>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <fstream>
#include <map>
#include <netinet/in.h>
#include <regex>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace gpuwise::advisor::test {

using json = nlohmann::json;

// A loopback port free now (the OS picked it); the small race with other tests is acceptable.
inline int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

// The result vector of an instant query, at Unix time `at` when given (else now); empty on any
// error.
inline json query(httplib::Client& prom, const std::string& promql, double at = 0) {
  std::string url = "/api/v1/query?query=" + httplib::detail::encode_query_param(promql);
  if (at > 0) url += "&time=" + std::to_string(at);
  auto r = prom.Get(url.c_str());
  if (!r || r->status != 200) return json::array();
  auto j = json::parse(r->body, nullptr, false);
  if (j.is_discarded() || j.value("status", "") != "success") return json::array();
  return j["data"]["result"];
}

inline double valueOf(const json& sample) {
  return std::stod(sample["value"][1].get<std::string>());
}

inline std::map<std::string, std::string> sampleLine(const std::string& out) {
  std::map<std::string, std::string> kv;
  auto at = out.find("gwsample ");
  if (at == std::string::npos) return kv;
  std::istringstream in(out.substr(at, out.find('\n', at) - at));
  for (std::string word; in >> word;) {
    auto eq = word.find('=');
    if (eq != std::string::npos) kv[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return kv;
}

// A Prometheus configuration in `dir` scraping the advisor's /metrics every `interval` (a
// Prometheus duration), evaluating `rule_file` (when given) as often; its path.
// `dcgm_port`: a dcgm-exporter beside it, scraped as job "dcgm" (0: none).
inline std::string writePrometheusConfig(const TempDir& dir, int metrics_port,
                                         const std::string& rule_file = "", int dcgm_port = 0,
                                         const std::string& interval = "1s") {
  std::ofstream cfg(dir / "prometheus.yml");
  cfg << "global:\n  scrape_interval: " << interval << "\n  scrape_timeout: " << interval
      << "\n  evaluation_interval: " << interval << "\n";
  if (!rule_file.empty()) cfg << "rule_files:\n  - '" << rule_file << "'\n";
  cfg << "scrape_configs:\n  - job_name: gpuwise\n    honor_labels: true\n"
      << "    static_configs:\n      - targets: ['127.0.0.1:" << metrics_port << "']\n";
  if (dcgm_port > 0)
    cfg << "  - job_name: dcgm\n    honor_labels: true\n"
        << "    static_configs:\n      - targets: ['127.0.0.1:" << dcgm_port << "']\n";
  return dir / "prometheus.yml";
}

// A shipped PrometheusRule (containers/kubernetes/monitoring/`manifest`) as a Prometheus rule
// file in `dir`: its `spec:` (the `groups:` Prometheus reads) one level less indented, every
// expression as shipped, every `for:` shortened to `for_` so that a test sees alerts fire, and
// every group's `interval:` set to `interval` (when given) so that a test sees rules evaluated; its
// path.
inline std::string shippedRulesFile(const TempDir& dir, const std::string& for_,
                                    const std::string& manifest = "prometheus-rule.yaml",
                                    const std::string& interval = "") {
  std::istringstream in(readFile(sourceDir() + "/containers/kubernetes/monitoring/" + manifest));
  std::ostringstream out;
  bool in_spec = false;
  static const std::regex for_line(R"(^(\s*)for: .*$)");
  static const std::regex interval_line(R"(^(\s*)interval: .*$)");
  for (std::string line; std::getline(in, line);) {
    if (!in_spec) {
      in_spec = line == "spec:";
      continue;
    }
    if (line.rfind("  ", 0) == 0) line.erase(0, 2);
    line = std::regex_replace(line, for_line, "$1for: " + for_);
    if (!interval.empty())
      line = std::regex_replace(line, interval_line, "$1interval: " + interval);
    out << line << "\n";
  }
  const std::string path = dir / (manifest + ".rules.yml");
  std::ofstream(path) << out.str();
  return path;
}

// The advisor's /healthz answers 200 (waited for).
inline bool answersHealthz(httplib::Client& adv) {
  return eventually([&] {
    auto r = adv.Get("/healthz");
    return r && r->status == 200;
  });
}

// `gpuwise advisor` on ipc `dir`/advisor.sock, reports in `dir`/reports, /metrics on
// `metrics_port`, with `env` (the sidecar's, as the webhook sets it, where a test needs it).
inline Process startAdvisor(const TempDir& dir, int metrics_port,
                            const std::vector<std::string>& env = {}) {
  return Process({buildDir() + "/bin/gpuwise", "advisor", "--listen",
                  "ipc://" + (dir / "advisor.sock"), "--report-dir", dir / "reports",
                  "--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port)},
                 env, dir.path, dir.path, "advisor");
}

// A real Prometheus with `config`, its data in `dir`, its API on `prom_port`.
inline Process startPrometheus(const TempDir& dir, const std::string& config, int prom_port) {
  return Process({which("prometheus"), "--config.file=" + config,
                  "--storage.tsdb.path=" + (dir / "tsdb"),
                  "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                 {}, dir.path, dir.path, "prometheus");
}

// Prometheus is ready and has scraped the advisor successfully.
inline void waitUntilScraping(httplib::Client& prom, const TempDir& dir) {
  INFO(readFile(dir / "prometheus.err"));
  REQUIRE(eventually(
      [&] {
        auto r = prom.Get("/-/ready");
        return r && r->status == 200;
      },
      std::chrono::seconds(30)));
  REQUIRE(eventually(
      [&] {
        auto up = query(prom, "up{job=\"gpuwise\"}");
        return up.size() == 1 && valueOf(up[0]) == 1;
      },
      std::chrono::seconds(20)));
}

} // namespace gpuwise::advisor::test
