// The webhook's /metrics (issue 18): admissions by result, the latency histogram and the version,
// every series from the start, HELP and TYPE exactly as docs/metrics.md lists them.
#include "advisor/webhook/webhook_metrics.h"
#include "tests/advisor/metrics_parse.h"
#include "tests/advisor/subprocess.h"

#include <catch2/catch.hpp>

#include <regex>
#include <set>
#include <sstream>

using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using Result = WebhookMetrics::Result;

namespace {

struct DocFamily {
  std::string type, labels, help;
};

// docs/metrics.md, "The webhook's metrics": "- `name` (type; labels: a, b): HELP".
std::map<std::string, DocFamily> documentedWebhookFamilies() {
  std::istringstream doc(readFile(sourceDir() + "/docs/metrics.md"));
  static const std::regex row(
      R"(^- `(gpuwise_webhook_[a-z_]+)` \((counter|gauge|histogram); labels: ([^)]*)\): (.+)$)");
  std::map<std::string, DocFamily> out;
  for (std::string line; std::getline(doc, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) out[m[1]] = {m[2], m[3], m[4]};
  }
  return out;
}

} // namespace

TEST_CASE("webhook metrics: every series from the start, at 0") {
  WebhookMetrics w;
  auto m = parseProm(w.exposition("1.2.3"));
  for (const char* r : {"injected", "skipped", "rejected", "error"})
    CHECK(m.value("gpuwise_webhook_admissions_total", {{"result", r}}) == 0);
  CHECK(m.value("gpuwise_webhook_admission_duration_seconds_count") == 0);
  CHECK(m.value("gpuwise_webhook_admission_duration_seconds_bucket", {{"le", "+Inf"}}) == 0);
  CHECK(m.value("gpuwise_webhook_build_info", {{"version", "1.2.3"}}) == 1);
}

TEST_CASE("webhook metrics: admissions by result and their latency") {
  WebhookMetrics w;
  w.record(Result::Injected, 0.002);
  w.record(Result::Injected, 0.0004);
  w.record(Result::Skipped, 0.03);
  w.record(Result::Rejected, 7.5); // beyond the last bucket: +Inf only
  w.countError();
  CHECK(w.count(Result::Injected) == 2);
  auto m = parseProm(w.exposition("1.2.3"));
  CHECK(m.value("gpuwise_webhook_admissions_total", {{"result", "injected"}}) == 2);
  CHECK(m.value("gpuwise_webhook_admissions_total", {{"result", "skipped"}}) == 1);
  CHECK(m.value("gpuwise_webhook_admissions_total", {{"result", "rejected"}}) == 1);
  CHECK(m.value("gpuwise_webhook_admissions_total", {{"result", "error"}}) == 1);
  const std::string h = "gpuwise_webhook_admission_duration_seconds";
  // Cumulative buckets: 0.0004 <= 0.001; 0.002 <= 0.0025; 0.03 <= 0.05; 7.5 only in +Inf.
  CHECK(m.value(h + "_bucket", {{"le", "0.001"}}) == 1);
  CHECK(m.value(h + "_bucket", {{"le", "0.0025"}}) == 2);
  CHECK(m.value(h + "_bucket", {{"le", "0.025"}}) == 2);
  CHECK(m.value(h + "_bucket", {{"le", "0.05"}}) == 3);
  CHECK(m.value(h + "_bucket", {{"le", "5"}}) == 3);
  CHECK(m.value(h + "_bucket", {{"le", "+Inf"}}) == 4);
  CHECK(m.value(h + "_count") == 4); // the error's time is unknown: counted, not timed
  CHECK(m.value(h + "_sum") == Approx(0.002 + 0.0004 + 0.03 + 7.5));
}

TEST_CASE("webhook metrics: names, types and HELP texts are those of docs/metrics.md") {
  auto doc = documentedWebhookFamilies();
  REQUIRE(doc.size() == 3);
  WebhookMetrics w;
  auto m = parseProm(w.exposition("1.2.3"));
  CHECK(m.help.size() == doc.size());
  for (const auto& [name, f] : doc) {
    INFO(name);
    CHECK(m.help[name] == f.help);
    CHECK(m.type[name] == f.type);
    std::set<std::string> documented;
    std::istringstream labels(f.labels);
    for (std::string l; std::getline(labels, l, ',');) {
      l.erase(0, l.find_first_not_of(' '));
      if (!l.empty() && l != "none") documented.insert(l);
    }
    for (const auto& s : m.series) {
      if (s.name.rfind(name, 0) != 0) continue;
      std::set<std::string> got(s.label_order.begin(), s.label_order.end());
      got.erase("le");
      CHECK(got == documented);
    }
  }
}
