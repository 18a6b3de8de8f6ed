// The training job never pays for a missing or dying advisor: real samples on the simulated device,
// the real shim, and a real `gpuwise advisor` process that is absent or killed mid-run.
#include "tests/advisor/subprocess.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>

using namespace gpuwise::advisor::test;

namespace {

std::string gpuwiseExe() {
  return buildDir() + "/bin/gpuwise";
}
std::string sample(const std::string& name) {
  return buildDir() + "/samples/" + name;
}

size_t lineCount(const std::string& text) {
  return size_t(std::count(text.begin(), text.end(), '\n')) +
         (!text.empty() && text.back() != '\n' ? 1 : 0);
}

bool finishedSample(const std::string& out, const std::string& name) {
  return out.find("gwsample name=" + name) != std::string::npos;
}

} // namespace

TEST_CASE("no advisor listening: the program runs to completion, exit code unchanged, quiet") {
  TempDir tmp;
  std::string endpoint = "ipc://" + tmp.path + "/nowhere/advisor.sock";
  Process run({gpuwiseExe(), "run", "--simulate", "--endpoint", endpoint, "--", sample("healthy"),
               "--steps", "300"},
              {}, tmp.path, tmp.path, "run");
  auto status = run.wait(std::chrono::seconds(120));
  REQUIRE(status);
  CHECK(*status == 0);
  CHECK(finishedSample(run.out(), "healthy"));
  INFO("stderr: " << run.err());
  CHECK(lineCount(run.err()) <= 1);
}

TEST_CASE("advisor killed mid-run: the program runs to completion, exit code unchanged, quiet") {
  TempDir tmp;
  std::string endpoint = "ipc://" + tmp.path + "/sock/advisor.sock";
  Process advisor({gpuwiseExe(), "advisor", "--listen", endpoint, "--report-dir", tmp / "reports"},
                  {}, tmp.path, tmp.path, "advisor");
  REQUIRE(eventually([&] { return advisor.err().find("listening on") != std::string::npos; }));

  // Long enough that the advisor dies while the sample is still launching.
  Process run({gpuwiseExe(), "run", "--simulate", "--endpoint", endpoint, "--", sample("healthy"),
               "--steps", "3000"},
              {}, tmp.path, tmp.path, "run");
  REQUIRE(eventually([&] { return advisor.err().find("1 process connected") != std::string::npos; },
                     std::chrono::seconds(60)));
  REQUIRE_FALSE(finishedSample(run.out(), "healthy"));
  ::kill(advisor.pid(), SIGKILL);
  REQUIRE(advisor.wait(std::chrono::seconds(10)));

  auto status = run.wait(std::chrono::seconds(180));
  REQUIRE(status);
  CHECK(*status == 0);
  CHECK(finishedSample(run.out(), "healthy"));
  INFO("stderr: " << run.err());
  CHECK(lineCount(run.err()) <= 1);
}

TEST_CASE("the advisor writes its report for a process it served, into a directory it creates") {
  TempDir tmp;
  std::string endpoint = "ipc://" + tmp.path + "/sock/advisor.sock";
  std::string reports = tmp / "new/reports";
  Process advisor({gpuwiseExe(), "advisor", "--listen", endpoint, "--report-dir", reports}, {},
                  tmp.path, tmp.path, "advisor");
  REQUIRE(eventually([&] { return advisor.err().find("listening on") != std::string::npos; }));
  Process run({gpuwiseExe(), "run", "--simulate", "--endpoint", endpoint, "--",
               sample("pageable_copies"), "--steps", "100"},
              {}, tmp.path, tmp.path, "run");
  auto status = run.wait(std::chrono::seconds(120));
  REQUIRE(status);
  CHECK(*status == 0);
  REQUIRE(eventually(
      [&] { return advisor.err().find("1 of 1 process finished") != std::string::npos; }));
  ::kill(advisor.pid(), SIGTERM);
  auto advisor_status = advisor.wait(std::chrono::seconds(30));
  REQUIRE(advisor_status);
  CHECK(*advisor_status == 0);
  std::string json = readFile(reports + "/gpuwise-report.json");
  CHECK(json.find("\"use_pinned_memory\"") != std::string::npos);
  CHECK(json.find("\"schema\": \"gpuwise.report/v1\"") != std::string::npos);
}
