#include "advisor/cli/cli.h"
#include "advisor/cli/sidecar_report_name.h"
#include "tests/advisor/subprocess.h"
#include "tests/skip_test.h"

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <nlohmann/json.hpp>
#include <set>

#include <map>
#include <streambuf>
#include <vector>

using namespace gpuwise::advisor::test;
using json = nlohmann::json;

namespace {

std::string gpuwiseExe() {
  return buildDir() + "/bin/gpuwise";
}
std::string fakeShim() {
  return buildDir() + "/tests/advisor_fake_shim";
}
std::string emptyShim() {
  return buildDir() + "/tests/libadvisor_empty_shim.so";
}

std::string firstLine(const std::string& s) {
  return s.substr(0, s.find('\n'));
}
size_t lineCount(const std::string& s) {
  size_t n = 0;
  for (char c : s)
    n += c == '\n';
  return n;
}

json readJson(const std::string& path) {
  return json::parse(readFile(path));
}

std::map<std::string, std::string> readEnvFile(const std::string& path) {
  std::map<std::string, std::string> env;
  std::istringstream in(readFile(path));
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

} // namespace

TEST_CASE("gpuwise run: reports the fake shim's run and exits with its code") {
  TempDir dir;
  Process p({gpuwiseExe(), "run", "--", fakeShim(), "--pageable", "--exit-code", "3", "--env-out",
             dir / "env"},
            {"GPUWISE_SHIM=" + emptyShim(), "LD_PRELOAD=libm.so.6"}, dir.path, dir.path, "run");
  REQUIRE(p.wait() == 3);
  INFO(p.err());
  // The environment the shim gets.
  auto env = readEnvFile(dir / "env");
  CHECK(env["LD_PRELOAD"] ==
        emptyShim() + ":" + gpuwise::test::sanitizerPreloadPrefix() + "libm.so.6");
  CHECK(env["CUDA_INJECTION64_PATH"] == emptyShim());
  CHECK(env["GPUWISE_ENDPOINT"].rfind("ipc:///", 0) == 0);
  // The private socket directory is gone after the run.
  auto socket = env["GPUWISE_ENDPOINT"].substr(6);
  CHECK_FALSE(std::filesystem::exists(std::filesystem::path(socket).parent_path()));

  // The terminal summary on stderr, verdict first.
  CHECK(firstLine(p.err()).rfind("gpuwise: GPU busy ", 0) == 0);
  CHECK(p.err().find("tier cupti") != std::string::npos);

  REQUIRE(std::filesystem::exists(dir / "gpuwise-report.json"));
  REQUIRE(std::filesystem::exists(dir / "gpuwise-report.html"));
  auto r = readJson(dir / "gpuwise-report.json");
  CHECK(r["schema"] == "gpuwise.report/v1");
  CHECK(r["source"]["kind"] == "live");
  CHECK(r["source"]["simulated"] == false);
  REQUIRE(r["processes"].size() == 1);
  CHECK(r["processes"][0]["command"] == "fake_training --epochs 1");
  CHECK(r["processes"][0]["final_received"] == true);
  CHECK(r["processes"][0]["events_dropped"] == 3);
  CHECK(r["processes"][0]["events"] == 11);
  CHECK(r["summary"]["kernel_count"] == 10);
  CHECK(r["summary"]["kernel_seconds"].get<double>() == Approx(0.9));
  CHECK(r["summary"]["gpu_span_seconds"].get<double>() == Approx(1.09));
  CHECK(r["summary"]["wall_seconds"].get<double>() > 0);
  // The fake shim's FP32 GEMMs on an H100 also get mixed precision, with TF32 as its
  // alternative (one recommendation); the pageable copies get use_pinned_memory; its small
  // grids, outside a training loop, the under-filled launch (increase_batch_size).
  std::set<std::string> ids;
  for (const auto& rec : r["recommendations"]) {
    ids.insert(rec["id"].get<std::string>());
    if (rec["id"] == "enable_mixed_precision")
      CHECK(rec["parameters"]["alternatives"][0]["id"] == "enable_tf32");
  }
  CHECK(ids == std::set<std::string>{"use_pinned_memory", "enable_mixed_precision",
                                     "increase_batch_size"});
  CHECK(r["top_kernels"][0]["name"] == "gemm(float const*, float const*, float*, int)");
  CHECK(readFile(dir / "gpuwise-report.html").find("Pin host memory") != std::string::npos);
  // GPU activity was recorded: no hint about the simulated device, driver or none.
  CHECK(p.err().find("--simulate") == std::string::npos);
}

// Issue 18: on a machine without a GPU driver, a CUDA program fails (cudaErrorInsufficientDriver)
// and the run records nothing; the simulated device is then worth a line.
TEST_CASE("gpuwise run: without a GPU driver, a run that recorded nothing suggests --simulate",
          "[.nodriver]") {
  std::error_code ec;
  const bool node =
      std::filesystem::exists("/dev/nvidiactl", ec) || std::filesystem::exists("/dev/dxg", ec);
  void* cuda = node ? ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) : nullptr;
  if (cuda) {
    ::dlclose(cuda);
    gpuwise::test::skipTest("this machine has a GPU driver: gpuwise rightly gives no hint");
  }
  TempDir dir;
  Process p({gpuwiseExe(), "run", "--", "/bin/sh", "-c", "exit 1"}, {"GPUWISE_SHIM=" + emptyShim()},
            dir.path, dir.path, "run");
  REQUIRE(p.wait() == 1); // CMD's own status, as ever
  INFO(p.err());
  CHECK(p.err().find("no GPU activity recorded") != std::string::npos);
  CHECK(p.err().find("gpuwise run: no GPU driver on this machine") != std::string::npos);
  CHECK(p.err().find("try the simulated device: gpuwise run --simulate -- /bin/sh -c 'exit 1'\n") !=
        std::string::npos);
  // The hint is one line, after the summary.
  CHECK(
      p.err().substr(p.err().rfind('\n', p.err().size() - 2) + 1).rfind("gpuwise run: no GPU", 0) ==
      0);
}

TEST_CASE("gpuwise run --nvtx: NVTX is routed to CUPTI unless something else already takes it") {
  TempDir dir;
  auto envOf = [&](const std::vector<std::string>& flags, const std::vector<std::string>& env,
                   const std::string& tag) {
    std::vector<std::string> cmd{gpuwiseExe(), "run"};
    cmd.insert(cmd.end(), flags.begin(), flags.end());
    for (const std::string& a :
         {std::string("--report-json"), dir / (tag + ".json"), std::string("--report-html"),
          dir / (tag + ".html"), std::string("--"), fakeShim(), std::string("--exit-code"),
          std::string("0"), std::string("--env-out"), dir / tag})
      cmd.push_back(a);
    std::vector<std::string> e{"GPUWISE_SHIM=" + emptyShim()};
    e.insert(e.end(), env.begin(), env.end());
    Process p(cmd, e, dir.path, dir.path, tag);
    REQUIRE(p.wait() == 0);
    return readEnvFile(dir / tag);
  };
  CHECK(envOf({"--nvtx"}, {}, "on")["NVTX_INJECTION64_PATH"] == "libcupti.so.13");
  CHECK(envOf({}, {}, "off")["NVTX_INJECTION64_PATH"].empty()); // written as "NAME=" when unset
  CHECK(envOf({"--nvtx"}, {"NVTX_INJECTION64_PATH=/opt/nsys/libToolsInjection64.so"},
              "theirs")["NVTX_INJECTION64_PATH"] == "/opt/nsys/libToolsInjection64.so");
}

TEST_CASE("gpuwise run --simulate --trace: the recording replays into the same report") {
  TempDir dir;
  std::filesystem::create_directory(dir / "sim");
  Process p({gpuwiseExe(), "run", "--simulate", "--trace", dir / "run.gwt", "--report-json",
             dir / "live.json", "--report-html", dir / "live.html", "--", fakeShim(), "--exit-code",
             "0", "--env-out", dir / "env", "--simulated"},
            {"GPUWISE_SHIM=" + emptyShim(), "GPUWISE_SIMDEVICE_DIR=" + (dir / "sim"),
             "LD_LIBRARY_PATH=/opt/x"},
            dir.path, dir.path, "run");
  REQUIRE(p.wait() == 0);
  INFO(p.err());
  CHECK(readEnvFile(dir / "env")["LD_LIBRARY_PATH"] == (dir / "sim") + ":/opt/x");
  CHECK(firstLine(p.err()).rfind("gpuwise [SIMULATED DEVICE]: GPU busy ", 0) == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "gpuwise-report.json"));
  auto live = readJson(dir / "live.json");
  CHECK(live["source"]["simulated"] == true);
  CHECK(live["source"]["files"][0] == dir / "run.gwt");
  // No pageable copies: mixed precision for the fake shim's FP32 GEMMs on an H100, and its
  // under-filled launches.
  for (const auto& rec : live["recommendations"])
    CHECK((rec["id"] == "enable_mixed_precision" || rec["id"] == "increase_batch_size"));
  REQUIRE(std::filesystem::exists(dir / "live.html"));

  Process rep({gpuwiseExe(), "report", dir / "run.gwt", "--json", dir / "offline.json"}, {},
              dir.path, dir.path, "report");
  REQUIRE(rep.wait() == 0);
  INFO(rep.err());
  auto offline = readJson(dir / "offline.json");
  CHECK(offline["source"]["kind"] == "gwt");
  CHECK(offline["summary"]["kernel_count"] == live["summary"]["kernel_count"]);
  CHECK(offline["summary"]["gpu_busy_seconds"] == live["summary"]["gpu_busy_seconds"]);
  CHECK(offline["processes"] == live["processes"]);
  CHECK_FALSE(std::filesystem::exists(dir / "gpuwise-report.html")); // only --json was asked for
  CHECK(firstLine(rep.out()).rfind("gpuwise [SIMULATED DEVICE]: GPU busy", 0) == 0);
  // The change to make is under each recommendation in the terminal.
  CHECK(rep.out().find("     -> ") != std::string::npos);

  // --advice-floor: findings saving less are notes (JSON notes[], one terminal line); --verbose
  // shows the evidence.
  Process floor({gpuwiseExe(), "report", dir / "run.gwt", "--json", dir / "floor.json",
                 "--advice-floor", "0.99", "--verbose"},
                {}, dir.path, dir.path, "floor");
  REQUIRE(floor.wait() == 0);
  auto high = readJson(dir / "floor.json");
  CHECK(high["recommendations"].empty());
  REQUIRE(high["notes"].size() == offline["recommendations"].size() + offline["notes"].size());
  CHECK(floor.out().find("notes (under the 99.0% advice floor): enable_mixed_precision") !=
        std::string::npos);
  Process verbose({gpuwiseExe(), "report", dir / "run.gwt", "--json", dir / "v.json", "--verbose"},
                  {}, dir.path, dir.path, "verbose");
  REQUIRE(verbose.wait() == 0);
  CHECK(verbose.out().find("     evidence: ") != std::string::npos);
}

TEST_CASE("gpuwise run: a command that cannot be executed exits 127 with one line") {
  TempDir dir;
  for (const auto& cmd : {std::string("no-such-command-gpuwise"), dir / "missing"}) {
    Process p({gpuwiseExe(), "run", "--", cmd, "arg"}, {"GPUWISE_SHIM=" + emptyShim()}, dir.path,
              dir.path, "run");
    REQUIRE(p.wait() == 127);
    CHECK(lineCount(p.err()) == 1);
    CHECK(p.err().find(cmd) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "gpuwise-report.json"));
  }
}

TEST_CASE("gpuwise run: SIGTERM is forwarded to the command, the report still written") {
  TempDir dir;
  Process p({gpuwiseExe(), "run", "--", fakeShim(), "--wait-signal", dir / "ready"},
            {"GPUWISE_SHIM=" + emptyShim()}, dir.path, dir.path, "run");
  REQUIRE(eventually([&] { return std::filesystem::exists(dir / "ready"); }));
  ::kill(p.pid(), SIGTERM);
  REQUIRE(p.wait() == 128 + SIGTERM);
  INFO(p.err());
  auto r = readJson(dir / "gpuwise-report.json");
  // Killed, the process sent no final batch: the report says so.
  for (const auto& proc : r["processes"])
    CHECK(proc["final_received"] == false);
}

TEST_CASE("every command exits 2 with one line on bad usage or bad input") {
  TempDir dir;
  std::ofstream(dir / "garbage.bin") << "this is not a trace";
  // JSON, but a PyTorch execution trace, not a Chrome trace (an empty Chrome trace is a valid
  // trace without GPU activity: it gets a report).
  std::ofstream(dir / "trace.json") << "{\"nodes\": []}";
  // The magic, then a record that says 16 bytes and holds 3.
  const char truncated[] = {'G', 'W', 'T', 'R', 'A', 'C', 'E', '1', 16, 0, 0, 0, 'a', 'b', 'c'};
  std::ofstream(dir / "truncated.gwt", std::ios::binary).write(truncated, sizeof truncated);
  // An Nsight Systems report rather than its SQLite export, and SQLite's magic over garbage.
  std::ofstream(dir / "profile.nsys-rep") << "not ours to read";
  std::ofstream(dir / "broken.sqlite", std::ios::binary)
      << std::string("SQLite format 3\0", 16) << std::string(500, 'x');
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  std::vector<Case> cases = {
      {{}, "subcommand"},
      {{"frobnicate"}, "frobnicate"},
      {{"frobnicate", "--now"}, "frobnicate"},
      {{"run", "--bogus", "--", "true"}, "--bogus"},
      {{"run"}, "CMD"},
      {{"run", "--endpoint", "ipc:///tmp/x", "--report-json", "r.json", "--", "true"},
       "--endpoint"},
      {{"run", "--simulate", "--", "true"}, "simulated device"},
      {{"run", "--trace", "/nonexistent-dir/t.gwt", "--", "true"}, "/nonexistent-dir/t.gwt"},
      {{"report"}, "INPUT"},
      {{"report", dir / "missing.gwt"}, "missing.gwt"},
      {{"report", dir / "garbage.bin"}, "garbage.bin"},
      {{"report", dir / "trace.json"}, "trace.json: a PyTorch execution trace"},
      {{"report", dir / "truncated.gwt"}, "truncated.gwt"},
      {{"report", dir / "profile.nsys-rep"}, "nsys export --type sqlite"},
      {{"report", dir / "broken.sqlite"}, "broken.sqlite: not a readable SQLite database"},
      {{"report", "--nope", dir / "garbage.bin"}, "--nope"},
      {{"report", "--advice-floor", "2", dir / "garbage.bin"}, "--advice-floor"},
      {{"advisor"}, "--listen"},
      {{"advisor", "--listen", "tcp://127.0.0.1:*", "--metrics-addr", "9400"}, "--metrics-addr"},
      {{"advisor", "--listen", "bogus://x"}, "bogus://x"},
      // A report directory that cannot be created (its parent is a file).
      {{"advisor", "--listen", "tcp://127.0.0.1:*", "--report-dir", dir / "garbage.bin/reports"},
       "garbage.bin/reports"},
      {{"version", "--extra"}, "--extra"},
  };
  int i = 0;
  for (const auto& c : cases) {
    std::vector<std::string> argv{gpuwiseExe()};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    Process p(argv, {"GPUWISE_SIMDEVICE_DIR=" + (dir / "nosim")}, dir.path, dir.path,
              "case" + std::to_string(i++));
    INFO("args: " << json(c.args).dump() << "\nstderr: " << p.err());
    REQUIRE(p.wait() == 2);
    CHECK(lineCount(p.err()) == 1);
    CHECK(p.err().find(c.expect) != std::string::npos);
  }
}

TEST_CASE("a usage error names the help of the command it is about") {
  TempDir dir;
  std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"report", "--nope", "x.json"}, "(see gpuwise report --help)"},
      {{"report"}, "(see gpuwise report --help)"},
      {{"advisor"}, "(see gpuwise advisor --help)"},
      {{"diff", "a.json"}, "(see gpuwise diff --help)"},
      {{"export", "x.gwt"}, "(see gpuwise export --help)"},
      {{"run", "--bogus", "--", "true"}, "see gpuwise run --help)"},
      {{"--bogus"}, "(see gpuwise --help)"},
  };
  int i = 0;
  for (const auto& [args, expect] : cases) {
    std::vector<std::string> argv{gpuwiseExe()};
    argv.insert(argv.end(), args.begin(), args.end());
    Process p(argv, {}, dir.path, dir.path, "usage" + std::to_string(i++));
    INFO("args: " << json(args).dump() << "\nstderr: " << p.err());
    REQUIRE(p.wait() == 2);
    CHECK(lineCount(p.err()) == 1);
    CHECK(p.err().find(expect) != std::string::npos);
  }
}

// Each piece the stream's buffer is handed, as it is handed: std::cerr's is unbuffered, so each
// piece becomes its own write(2), which another thread's line, or a reader, can come between.
struct PieceRecorder : std::streambuf {
  std::vector<std::string> pieces;
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pieces.emplace_back(s, size_t(n));
    return n;
  }
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) pieces.emplace_back(1, char(c));
    return c;
  }
};

TEST_CASE("logLine hands the stream each line in one piece, newline included") {
  PieceRecorder buf;
  std::ostream os(&buf);
  gpuwise::advisor::logLine(os, "advisor", "listening on ipc:///run/gpuwise/advisor");
  gpuwise::advisor::logLine(os, "webhook", "");
  CHECK(buf.pieces ==
        std::vector<std::string>{"gpuwise advisor: listening on ipc:///run/gpuwise/advisor\n",
                                 "gpuwise webhook: \n"});
}

TEST_CASE("gpuwise version and --help exit 0") {
  TempDir dir;
  Process v({gpuwiseExe(), "version"}, {}, dir.path, dir.path, "version");
  REQUIRE(v.wait() == 0);
  CHECK(v.out().rfind("gpuwise 0.1.0 (report gpuwise.report/v1", 0) == 0);
  Process h({gpuwiseExe(), "--help"}, {}, dir.path, dir.path, "help");
  REQUIRE(h.wait() == 0);
  CHECK(h.out().find("run") != std::string::npos);
}

// bin/gpuwise starts without ZeroMQ, OpenSSL and their ~20 libraries: run, advisor and webhook
// are in lib/libgpuwise_live.so, loaded when one of them is parsed (advisor/cli/live_commands.h).
TEST_CASE("only run, advisor and webhook load lib/libgpuwise_live.so and its libraries") {
  TempDir dir;
  const std::string trace =
      sourceDir() +
      "/tests/data/traces/kineto/hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz";
  // What the loader maps, from its own log (LD_DEBUG=libs, on stderr).
  Process v({gpuwiseExe(), "version"}, {"LD_DEBUG=libs"}, dir.path, dir.path, "version");
  REQUIRE(v.wait() == 0);
  CHECK(v.err().find("libgpuwise_live") == std::string::npos);
  CHECK(v.err().find("libzmq") == std::string::npos);
  CHECK(v.err().find("libssl") == std::string::npos);
  CHECK(v.err().find("libc.so") != std::string::npos); // the log is there, and names libraries
  Process r({gpuwiseExe(), "report", trace, "--json", dir / "r.json"},
            {"GPUWISE_LIVE_MODULE=/nonexistent/libgpuwise_live.so"}, dir.path, dir.path, "report");
  CHECK(r.wait() == 0);
  CHECK(readJson(dir / "r.json")["schema"] == "gpuwise.report/v1");
  // Without the module, the commands that need it say so in one line.
  for (const char* cmd : {"advisor", "webhook"}) {
    std::vector<std::string> argv{gpuwiseExe(), cmd};
    if (std::string(cmd) == "advisor")
      argv.insert(argv.end(), {"--listen", "tcp://127.0.0.1:*"});
    else
      argv.insert(argv.end(), {"--tls-cert", dir / "c.pem", "--tls-key", dir / "k.pem"});
    Process p(argv, {"GPUWISE_LIVE_MODULE=/nonexistent/libgpuwise_live.so"}, dir.path, dir.path,
              cmd);
    INFO("stderr: " << p.err());
    REQUIRE(p.wait() == 2);
    CHECK(lineCount(p.err()) == 1);
    CHECK(p.err().find("cannot load /nonexistent/libgpuwise_live.so") != std::string::npos);
  }
}

TEST_CASE("gpuwise advisor serves until SIGINT; gpuwise run --endpoint sends to it") {
  TempDir dir;
  std::string endpoint = "ipc://" + (dir / "adv.sock");
  Process adv({gpuwiseExe(), "advisor", "--listen", endpoint, "--report-dir", dir.path}, {},
              dir.path, dir.path, "advisor");
  REQUIRE(
      eventually([&] { return adv.err().find("listening on " + endpoint) != std::string::npos; }));

  std::filesystem::create_directory(dir / "job");
  Process run({gpuwiseExe(), "run", "--endpoint", endpoint, "--", fakeShim(), "--kernels", "6"},
              {"GPUWISE_SHIM=" + emptyShim()}, dir / "job", dir.path, "run");
  REQUIRE(run.wait() == 3);
  CHECK_FALSE(std::filesystem::exists(dir / "job/gpuwise-report.json")); // the advisor writes it

  REQUIRE(
      eventually([&] { return adv.err().find("1 of 1 process finished") != std::string::npos; }));
  ::kill(adv.pid(), SIGINT);
  REQUIRE(adv.wait() == 0);
  INFO(adv.err());
  auto r = readJson(dir / "gpuwise-report.json");
  REQUIRE(r["processes"].size() == 1);
  CHECK(r["summary"]["kernel_count"] == 6);
  CHECK(r["collection"]["messages"] ==
        3); // Hello, the batch after the fourth kernel, the final one
  CHECK(std::filesystem::exists(dir / "gpuwise-report.html"));
  CHECK(adv.err().find("gpuwise: GPU busy") != std::string::npos);
}

TEST_CASE("A sidecar names its report by job and rank, so a job's reports can be gathered") {
  using gpuwise::advisor::sidecarReportBaseName;
  CHECK(sidecarReportBaseName("", {0, 1}, 3) == "gpuwise-report"); // no job: as before
  CHECK(sidecarReportBaseName("resnet", {}, std::nullopt) == "resnet");
  CHECK(sidecarReportBaseName("resnet", {-1}, 4) == "resnet-rank-4"); // the pod's rank
  CHECK(sidecarReportBaseName("resnet", {2, -1, 2}, 4) == "resnet-rank-2");
  CHECK(sidecarReportBaseName("resnet", {11, 8, 9, 10}, 0) == "resnet-ranks-8-11");
  CHECK(sidecarReportBaseName(".hidden/../x y", {1}, std::nullopt) == "_hidden_.._x_y-rank-1");
  CHECK(sidecarReportBaseName(std::string(300, 'j'), {1}, std::nullopt).size() == 207);

  // The advisor as the webhook runs it: GPUWISE_JOB from the pod's labels; the process says its
  // rank (the fake shim's Hello: rank 0), which wins over the pod's GPUWISE_RANK.
  TempDir dir;
  std::string endpoint = "ipc://" + (dir / "adv.sock");
  Process adv({gpuwiseExe(), "advisor", "--listen", endpoint, "--report-dir", dir / "reports"},
              {"GPUWISE_JOB=resnet-ddp", "GPUWISE_RANK=7"}, dir.path, dir.path, "advisor");
  REQUIRE(
      eventually([&] { return adv.err().find("listening on " + endpoint) != std::string::npos; }));
  Process run({gpuwiseExe(), "run", "--endpoint", endpoint, "--", fakeShim(), "--kernels", "2"},
              {"GPUWISE_SHIM=" + emptyShim()}, dir.path, dir.path, "run");
  REQUIRE(run.wait() == 3);
  REQUIRE(
      eventually([&] { return adv.err().find("1 of 1 process finished") != std::string::npos; }));
  ::kill(adv.pid(), SIGINT);
  REQUIRE(adv.wait() == 0);
  INFO(adv.err());
  CHECK(readJson(dir / "reports/resnet-ddp-rank-0.json")["processes"].size() == 1);
  CHECK(std::filesystem::exists(dir / "reports/resnet-ddp-rank-0.html"));
  CHECK_FALSE(std::filesystem::exists(dir / "reports/gpuwise-report.json"));
}
