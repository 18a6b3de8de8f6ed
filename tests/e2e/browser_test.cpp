// The HTML report in a real headless Chromium: the report of a sample run on the simulated device
// and the report of a real PyTorch profiler trace load without console errors, make no request
// but the page itself, and render a page that is not blank (many colours, much content).
//
// Skipped (exit 77, CTest "Skipped") only when no Chromium is installed or it cannot run at all
// (`chromium --version` fails): install it with `scripts/install-deps chromium`. A browser that
// runs but fails to load or render the page fails the test. Screenshots are kept in
// <build>/tests/browser_*.png for a person to look at.
#include "advisor/precision/demangle.h"
#include "advisor/report/html_report.h"
#include "tests/advisor/html_xml_check.h"
#include "tests/advisor/subprocess.h"
#include "tests/e2e/browser_cdp.h"
#include "tests/e2e/browser_png.h"
#include "tests/traces_dir.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>

using namespace gpuwise::advisor;
using namespace gpuwise::advisor::test;
using json = nlohmann::json;

namespace {

// The browser, or exit 77 with the reason when there is none that runs.
std::string browserOrSkip() {
  static std::optional<std::string> binary = [] {
    std::optional<std::string> found = Chromium::findBinary();
    std::string version;
    if (!found) {
      gpuwise::test::skipTest(
          "no Chromium found (chromium, chromium-browser, google-chrome or "
          "$GPUWISE_CHROMIUM); install it with `scripts/install-deps chromium`");
    }
    if (!Chromium::runs(*found, &version))
      gpuwise::test::skipTest(*found + " --version does not run on this machine");
    std::cout << "browser: " << version << " (" << *found << ")" << std::endl;
    return found;
  }();
  return *binary;
}

void writeFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

// The HTML without the embedded JSON report (data, where '<' is written \u003c).
std::string withoutEmbeddedReport(const std::string& html) {
  auto open = html.find("<script type=\"application/json\" id=\"gpuwise-report\">");
  if (open == std::string::npos) return html;
  return html.substr(0, open) + html.substr(html.find("</script>", open) + 9);
}

// What must hold of the file before any browser sees it.
void checkSelfContained(const std::string& html, const json& report) {
  INFO("static checks of the HTML");
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';") !=
        std::string::npos);
  // Nothing that could make a request: no src/href attributes, no CSS url() or @import, and no
  // http(s) URL except the SVG namespace name (never fetched).
  for (const char* banned : {"src=", "href=", "url(", "@import", "<link", "<iframe", "<img"})
    CHECK(html.find(banned) == std::string::npos);
  std::string rest = html;
  const std::string ns = "xmlns=\"http://www.w3.org/2000/svg\"";
  for (auto at = rest.find(ns); at != std::string::npos; at = rest.find(ns))
    rest.erase(at, ns.size());
  CHECK(rest.find("http://") == std::string::npos);
  CHECK(rest.find("https://") == std::string::npos);
  // Each chart is well-formed XML.
  size_t charts = 0;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    auto end = html.find("</svg>", at);
    REQUIRE(end != std::string::npos);
    INFO("chart " << charts);
    CHECK(xmlProblem(html.substr(at, end + 6 - at)) == "");
    ++charts;
  }
  CHECK(charts >= 3);
  // Kernel names with <, > or & appear escaped, never raw, outside the embedded data.
  std::string page = withoutEmbeddedReport(html);
  for (const auto& k : report["top_kernels"]) {
    std::string name = k["name"];
    std::string shown = gpuwise::profiler::shortKernelName(name);
    if (shown.find_first_of("<>&") == std::string::npos) continue;
    INFO(name);
    CHECK(page.find(htmlEscape(shown)) != std::string::npos);
    CHECK(page.find(shown) == std::string::npos);
  }
}

// Loads the file in the browser and checks what a person would see.
void checkInBrowser(const std::string& html_path, const std::string& png_path, const TempDir& dir) {
  Chromium browser(browserOrSkip(), dir.path);
  PageReport page;
  try {
    page = loadPage(browser, "file://" + html_path);
  } catch (const std::exception& e) {
    FAIL("the browser could not load the report: " << e.what());
  }
  writeFile(png_path, page.png);
  INFO("screenshot: " << png_path);
  for (const auto& e : page.errors)
    UNSCOPED_INFO(e);
  CHECK(page.errors.empty());
  // The page itself is the only request: no image, font, style or script fetched.
  REQUIRE(page.requests.size() == 1);
  CHECK(page.requests[0] == "file://" + html_path);

  auto image = decodePng(page.png);
  CHECK(image.width == 1200);
  CHECK(image.height >= 1500); // the whole report, not one screen
  auto stats = imageStats(image);
  INFO("distinct colours " << stats.distinct_colors << ", content " << stats.content_ratio);
  CHECK(stats.distinct_colors >= 64);
  CHECK(stats.content_ratio >= 0.05);
}

// `gpuwise report TRACE --html` when this build reads Kineto traces, else the library through
// browser_report_tool (the same importer, analyzers, rules and sinks).
void reportOfTrace(const std::string& trace, const TempDir& dir, const std::string& html,
                   const std::string& json_path) {
  Process cli({buildDir() + "/bin/gpuwise", "report", trace, "--html", html, "--json", json_path},
              {}, dir.path, dir.path, "report");
  auto status = cli.wait(std::chrono::seconds(120));
  if (status == 0) return;
  INFO(cli.err());
  REQUIRE(cli.err().find("not supported by this build") != std::string::npos);
  WARN("gpuwise report does not read Kineto traces in this build; using browser_report_tool");
  Process tool(
      {buildDir() + "/tests/browser_report_tool", trace, "--html", html, "--json", json_path}, {},
      dir.path, dir.path, "tool");
  auto tool_status = tool.wait(std::chrono::seconds(120));
  INFO(tool.err());
  REQUIRE(tool_status == 0);
}

} // namespace

TEST_CASE("the browser harness sees console errors and network requests (negative control)") {
  TempDir dir;
  Chromium browser(browserOrSkip(), dir.path);
  // A script error and an image fetched from the network: both must be noticed.
  writeFile(dir / "bad.html", "<!DOCTYPE html><html><body><p>bad</p><script>console.error("
                              "'boom')</script><img alt=\"\" src=\"https://gpuwise.invalid/x.png\">"
                              "</body></html>");
  auto bad = loadPage(browser, "file://" + (dir / "bad.html"));
  bool boom = false;
  for (const auto& e : bad.errors)
    boom = boom || e.find("boom") != std::string::npos;
  CHECK(boom);
  CHECK(std::find(bad.requests.begin(), bad.requests.end(), "https://gpuwise.invalid/x.png") !=
        bad.requests.end());

  // The same image under the report's Content-Security-Policy: blocked, and reported as an error.
  writeFile(dir / "csp.html",
            "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" "
            "content=\"default-src 'none'; style-src 'unsafe-inline'\"></head><body><p>csp</p>"
            "<img alt=\"\" src=\"https://gpuwise.invalid/y.png\"></body></html>");
  auto csp = loadPage(browser, "file://" + (dir / "csp.html"));
  for (const auto& e : csp.errors)
    UNSCOPED_INFO(e);
  // Chromium announces the request, then blocks it before it leaves: loadingFailed with
  // blockedReason "csp", and a console error naming the policy.
  bool blocked = false, explained = false;
  for (const auto& e : csp.errors) {
    blocked = blocked || e.find("\"blockedReason\":\"csp\"") != std::string::npos;
    explained = explained || e.find("Content Security Policy") != std::string::npos;
  }
  CHECK(blocked);
  CHECK(explained);

  auto blank = decodePng(bad.png);
  CHECK(blank.width == 1200);
}

TEST_CASE("HTML report of a sample run on the simulated device renders in headless Chromium") {
  browserOrSkip();
  TempDir dir;
  Process run({buildDir() + "/bin/gpuwise", "run", "--simulate", "--report-json", dir / "run.json",
               "--report-html", dir / "run.html", "--gpu-hour-price", "2.5", "--",
               buildDir() + "/samples/pageable_copies"},
              {}, dir.path, dir.path, "run");
  auto status = run.wait(std::chrono::seconds(120));
  INFO(run.err());
  REQUIRE(status == 0);
  auto report = json::parse(readFile(dir / "run.json"));
  std::string html = readFile(dir / "run.html");
  CHECK(report["cost"]["gpu_hour_price"] == 2.5);
  CHECK(report["cost"]["price_source"] == "option");
  CHECK(html.find("SIMULATED DEVICE") != std::string::npos);
  CHECK(html.find("Pin host memory") != std::string::npos);
  checkSelfContained(html, report);
  checkInBrowser(dir / "run.html", buildDir() + "/tests/browser_sample_run.png", dir);
}

TEST_CASE("HTML report of a real PyTorch profiler trace renders in headless Chromium") {
  browserOrSkip();
  // In the full set and in the subset in tests/data/traces (tests/traces_dir.h).
  std::string trace = gpuwise::test::requireTrace("kineto/kineto_tb_plugin/resnet50_num_workers_0/"
                                                  "worker0.1623143089861.pt.trace.json.gz");
  TempDir dir;
  reportOfTrace(trace, dir, dir / "trace.html", dir / "trace.json");
  auto report = json::parse(readFile(dir / "trace.json"));
  std::string html = readFile(dir / "trace.html");
  CHECK(report["gpus"][0]["name"] == "Tesla V100-DGXS-32GB");
  CHECK(html.find("SIMULATED DEVICE") == std::string::npos);
  CHECK(report["timeline_series"]["busy"].size() >= 1);
  checkSelfContained(html, report);
  checkInBrowser(dir / "trace.html", buildDir() + "/tests/browser_kineto_trace.png", dir);
}

TEST_CASE("HTML report of a merged 100-rank job renders its Ranks section in headless Chromium") {
  browserOrSkip();
  TempDir dir;
  std::string files;
  std::vector<std::string> argv{buildDir() + "/bin/gpuwise", "report"};
  for (int rank = 0; rank < 100; ++rank) {
    const double p50 = rank == 42 ? 1.6 : 1.0 + 0.001 * rank;
    json rank_entry = {{"rank", rank},
                       {"host", "node-" + std::to_string(rank / 8)},
                       {"pid", 100 + rank},
                       {"gpu", "NVIDIA H100 80GB HBM3"},
                       {"steps", 20},
                       {"step_mean_seconds", p50},
                       {"step_p50_seconds", p50},
                       {"gpu_busy_ratio", 0.8},
                       {"compute_seconds", 14.0},
                       {"communication_seconds", 6.0},
                       {"communication_exposed_seconds", 2.0},
                       {"communication_overlap_ratio", 2.0 / 3},
                       {"collective_wait_seconds", rank == 42 ? 0.0 : 1.0},
                       {"input_stall_ratio", 0.0}};
    json report = {
        {"schema", "gpuwise.report/v1"},
        {"source", {{"kind", "kineto"}, {"simulated", false}, {"files", json::array()}}},
        {"gpus", json::array({{{"index", 0}, {"name", "NVIDIA H100 80GB HBM3"}}})},
        {"processes", json::array({{{"pid", 100 + rank}, {"rank", rank}, {"world_size", 100}}})},
        {"ranks", json::array({rank_entry})},
        {"summary",
         {{"gpu_span_seconds", 20.0},
          {"gpu_busy_seconds", 16.0},
          {"idle_seconds_by_cause", {{"input", 1.0}, {"sync", 2.0}, {"other", 1.0}}}}},
        {"recommendations", json::array()},
        {"timeline",
         {{"span_seconds", 20.0},
          {"busy_seconds", 16.0},
          {"kernel_busy_seconds", 15.0},
          {"copy_exposed_seconds", 0.5}}}};
    const std::string path = dir / ("rank-" + std::to_string(rank) + ".json");
    writeFile(path, report.dump(2));
    argv.push_back(path);
  }
  argv.insert(argv.end(), {"--json", dir / "job.json", "--html", dir / "job.html"});
  Process merge(argv, {}, dir.path, dir.path, "merge");
  auto status = merge.wait(std::chrono::seconds(120));
  INFO(merge.err());
  REQUIRE(status == 0);
  auto report = json::parse(readFile(dir / "job.json"));
  std::string html = readFile(dir / "job.html");
  CHECK(report["ranks"].size() == 100);
  CHECK(html.find("<h2 id=\"ranks-h\">Ranks</h2>") != std::string::npos);
  CHECK(html.find("36 more ranks are in the JSON report") != std::string::npos);
  checkSelfContained(html, report);
  checkInBrowser(dir / "job.html", buildDir() + "/tests/browser_merged_job.png", dir);
}
