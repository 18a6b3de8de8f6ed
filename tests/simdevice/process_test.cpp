// What needs a process of its own: the device model chosen by GWSIM_DEVICE, the busy-CUPTI mode,
// the CUDA_INJECTION64_PATH call (once, on the first runtime call, even when threads race), CUPTI
// resource callbacks for context creation, and fork().
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <cupti.h>

#include "tests/simdevice/test_support.h"

namespace {

using gwsim_test::buildDir;
using gwsim_test::parseKeyValues;
using gwsim_test::runProcess;

const std::string kProbe = buildDir() + "/tests/simdevice_probe";
const std::string kCollector = buildDir() + "/tests/libgwsim_collector.so";

std::map<std::string, std::string> probe(const std::vector<std::string>& args,
                                         const std::vector<std::string>& env,
                                         int expected_exit = 0) {
  std::vector<std::string> argv{kProbe};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto result = runProcess(argv, env, std::chrono::seconds(60));
  INFO("stdout: " << result.out << "\nstderr: " << result.err);
  REQUIRE_FALSE(result.timed_out);
  REQUIRE(result.exit_code == expected_exit);
  return parseKeyValues(gwsim_test::lastLineStartingWith(result.out, "probe "));
}

std::string tempFile() {
  return "/tmp/gwsim-process-test-" + std::to_string(getpid()) + "-" + std::to_string(rand());
}

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

TEST_CASE("GWSIM_DEVICE picks the model and GWSIM_DEVICE_COUNT the number of devices") {
  auto h200 = probe({"props"}, {});
  CHECK(h200["name"] == "NVIDIA H200");
  CHECK(h200["count"] == "1");
  CHECK(h200["sms"] == "132");
  CHECK(h200["memory"] == "150754820096");
  CHECK(h200["cc"] == "9.0");
  auto a100 = probe({"props"}, {"GWSIM_DEVICE=a100-80gb", "GWSIM_DEVICE_COUNT=2"});
  CHECK(a100["name"] == "NVIDIA A100-SXM4-80GB");
  CHECK(a100["count"] == "2");
  CHECK(a100["sms"] == "108");
  CHECK(a100["cc"] == "8.0");
  auto v100 = probe({"props"}, {"GWSIM_DEVICE=v100"});
  CHECK(v100["name"] == "Tesla V100-SXM2-16GB");
  CHECK(v100["sms"] == "80");
  CHECK(v100["cc"] == "7.0");
  const auto unknown = runProcess({kProbe, "props"}, {"GWSIM_DEVICE=tpu"});
  CHECK(unknown.exit_code == 0);
  CHECK(unknown.err.find("gwsim: unknown GWSIM_DEVICE 'tpu'; simulating h200") !=
        std::string::npos);
  CHECK(parseKeyValues(gwsim_test::lastLineStartingWith(unknown.out, "probe "))["name"] ==
        "NVIDIA H200");
}

TEST_CASE("GWSIM_CUPTI_BUSY=1: CUPTI is held by another tool, the device still works") {
  auto busy = probe({"busy"}, {"GWSIM_CUPTI_BUSY=1"});
  const std::string refused = std::to_string(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  CHECK(busy["subscribe"] == refused);
  CHECK(busy["enable"] == refused);
  CHECK(busy["runtime_api"] == refused);
  CHECK(busy["malloc"] == "0");
  auto free = probe({"busy"}, {});
  CHECK(free["subscribe"] == "0");
  CHECK(free["enable"] == "0");
}

TEST_CASE("CUDA_INJECTION64_PATH: InitializeInjection runs once, on the first runtime call") {
  const std::string out = tempFile();
  probe({"threads", "8"}, {"CUDA_INJECTION64_PATH=" + kCollector, "GWSIM_COLLECT_OUT=" + out});
  const auto summary = parseKeyValues(readAll(out));
  unlink(out.c_str());
  CHECK(summary.at("init_calls") == "1");

  // A process that never calls the runtime never loads the injection.
  const std::string quiet = tempFile();
  probe({"nocuda"}, {"CUDA_INJECTION64_PATH=" + kCollector, "GWSIM_COLLECT_OUT=" + quiet});
  CHECK(readAll(quiet).empty());
  unlink(quiet.c_str());

  // A bad path is reported, not fatal.
  const auto bad =
      runProcess({kProbe, "threads", "2"}, {"CUDA_INJECTION64_PATH=/nonexistent/libx.so"});
  CHECK(bad.exit_code == 0);
  CHECK(bad.err.find("CUDA_INJECTION64_PATH: cannot load /nonexistent/libx.so") !=
        std::string::npos);
}

TEST_CASE("CUPTI resource callbacks report the context and stream creation") {
  auto created = probe({"resource"}, {});
  CHECK(created["context_created"] == "1");
  CHECK(created["stream_created"] == "1");
}

TEST_CASE("a forked child initialises its own device and CUPTI state; the parent carries on") {
  auto forked = probe({"fork"}, {});
  CHECK(forked["parent_ok"] == "1");
  CHECK(forked["child_exit"] == "0");
}
