// scripts/gpu-check --simulate: the GPU lane's script, run on the simulated device so its logic
// (builds skipped, runs, expectations, process checks, the table, the exit status, the files it
// leaves) is tested where there is no GPU. The table is parsed as a person would read it. Also
// scripts/gpu-bundle: what gpu-check runs, packed for a GPU machine without our libraries.
#include "tests/advisor/subprocess.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

using namespace gpuwise::advisor::test;

namespace {

std::string python() {
  const char* p = std::getenv("GPUWISE_PYTHON");
  return p ? p : "/usr/bin/python3";
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

struct Table {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> failures; // "FAIL <check>: <problem>" lines
};

Table parseTable(const std::string& out) {
  Table t;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("FAIL ", 0) == 0) t.failures.push_back(line);
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::istringstream cs(line.substr(1));
    for (std::string c; std::getline(cs, c, '|');)
      cells.push_back(trim(c));
    if (t.header.empty()) {
      t.header = cells;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < cells.size() && i < t.header.size(); ++i)
      row[t.header[i]] = cells[i];
    t.rows.push_back(row);
  }
  return t;
}

} // namespace

TEST_CASE("gpu-check --simulate runs every check and prints one table that says what passed") {
  TempDir dir;
  const std::string out = dir / "out";
  Process p({python(), sourceDir() + "/scripts/gpu-check", "--simulate", "--no-build", "--quick",
             "--repeats", "2", "--build-dir", buildDir(), "--out", out},
            {}, dir.path, dir.path, "gpu-check");
  auto status = p.wait(std::chrono::seconds(1100));
  std::string stdout_text = p.out();
  std::cout << stdout_text;
  INFO(p.err());
  REQUIRE(status.has_value());
  REQUIRE((*status == 0 || *status == 1));

  Table t = parseTable(stdout_text);
  REQUIRE(t.header.size() == 11);
  CHECK(t.header.front() == "check");
  CHECK(t.header.back() == "result");
  std::map<std::string, std::map<std::string, std::string>> by_name;
  for (const auto& r : t.rows)
    by_name[r.at("check")] = r;
  const char* expected_rows[] = {"sample pageable_copies",
                                 "sample fp32_gemm",
                                 "sample launch_bound",
                                 "sample input_stall",
                                 "sample host_sync",
                                 "sample small_footprint",
                                 "sample healthy",
                                 "train.py healthy",
                                 "train.py no_pin_memory",
                                 "train.py num_workers_0",
                                 "train.py amp_none",
                                 "train.py sync_every_1",
                                 "train.py small_batch",
                                 "train.py small_batch_graphs",
                                 "train.py 2 ranks (launch.py)",
                                 "train.py healthy: shim overhead"};
  for (const char* name : expected_rows) {
    INFO(name);
    REQUIRE(by_name.count(name) == 1);
  }
  CHECK(t.rows.size() == std::size(expected_rows)); // no Kineto row: no torch here

  size_t failed = 0;
  for (const auto& r : t.rows) {
    INFO(r.at("check"));
    CHECK((r.at("result") == "PASS" || r.at("result") == "FAIL"));
    failed += r.at("result") == "FAIL";
    if (r.at("check").rfind("train.py", 0) == 0) CHECK(r.at("backend") == "sim");
    // Every profiled run is on the CUPTI tier (the simulated device has CUPTI); a run on the
    // interposer tier would fail its row with the reason.
    if (r.at("check") != "train.py healthy: shim overhead") CHECK(r.at("tier") == "cupti");
  }
  // The exit status and the FAIL lines under the table agree with the result column.
  CHECK((*status == 1) == (failed > 0));
  CHECK(t.failures.size() >= failed);

  // The checks whose outcome does not depend on the shared CPU's timing must pass here: the
  // process lists and ranks, the precision and pageable-copy findings, every run's exit.
  for (const char* name :
       {"train.py 2 ranks (launch.py)", "sample pageable_copies", "sample fp32_gemm",
        "train.py no_pin_memory", "train.py amp_none", "train.py num_workers_0"}) {
    INFO(name);
    CHECK(by_name[name].at("result") == "PASS");
  }
  CHECK(by_name["train.py healthy: shim overhead"].at("got").find("%") != std::string::npos);
  CHECK(by_name["sample healthy"].at("drops") == "0");

  // What it leaves in --out: the table, its JSON, a recorded trace and a report per profiled run.
  namespace fs = std::filesystem;
  CHECK(fs::exists(out + "/gpu-check.txt"));
  CHECK(fs::exists(out + "/gpu-check.json"));
  for (const char* tag : {"sample_healthy", "train_healthy", "train_ranks2"}) {
    INFO(tag);
    CHECK(fs::file_size(out + "/traces/" + tag + ".gwt") > 0);
    CHECK(fs::exists(out + "/reports/" + std::string(tag) + ".json"));
  }
}

namespace {

// The libraries `ldd file` resolves outside `dir`, but for the C and C++ runtimes (the system's
// own on any machine), one "soname => path" a line.
std::string resolvedOutside(const std::string& file, const std::string& dir) {
  TempDir scratch;
  Process ldd({"/usr/bin/ldd", file}, {}, scratch.path, scratch.path, "ldd");
  REQUIRE(ldd.wait(std::chrono::seconds(60)) == 0);
  std::string outside;
  std::istringstream in(ldd.out());
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string soname, arrow, path;
    words >> soname >> arrow >> path;
    if (arrow != "=>") continue;
    static const char* system[] = {"libc.so",       "libm.so",     "libdl.so",
                                   "libpthread.so", "librt.so",    "libresolv.so",
                                   "libstdc++.so",  "libgcc_s.so", "ld-linux"};
    bool runtime = false;
    for (const char* s : system)
      runtime = runtime || soname.rfind(s, 0) == 0;
    if (!runtime && path.rfind(dir + "/", 0) != 0) outside += soname + " => " + path + "\n";
  }
  return outside;
}

} // namespace

TEST_CASE("gpu-bundle packs what gpu-check runs, with its libraries, and gpu-check runs it") {
  namespace fs = std::filesystem;
  TempDir dir;
  const std::string bundle = dir / "bundle";
  Process pack({sourceDir() + "/scripts/gpu-bundle", "--ordinary-shim", buildDir(), bundle}, {},
               dir.path, dir.path, "gpu-bundle");
  auto packed = pack.wait(std::chrono::seconds(300));
  INFO(pack.err());
  REQUIRE(packed == 0);
  CHECK(pack.out() == bundle + "\n"); // one line: the folder

  // The CLI and the shim load every library but the C/C++ runtimes from the bundle.
  CHECK(resolvedOutside(bundle + "/bin/gpuwise", bundle) == "");
  CHECK(resolvedOutside(bundle + "/lib/libgpuwise.so", bundle) == "");
  // bin/gpuwise's own libraries beside it; ZeroMQ (the shim's, and the live module's: run,
  // advisor, webhook) in lib/deps.
  CHECK(resolvedOutside(bundle + "/lib/libgpuwise_live.so", bundle) == "");
  CHECK(fs::exists(bundle + "/bin/deps/libisal.so.2"));
  CHECK(fs::exists(bundle + "/lib/deps/libzmq.so.5"));
  CHECK_FALSE(fs::exists(bundle + "/bin/deps/libc.so.6"));
  CHECK_FALSE(fs::exists(bundle + "/bin/deps/libstdc++.so.6"));
  for (const char* f : {"samples/fp32_gemm", "samples/healthy", "samples/pytorch/libgwtrain_sim.so",
                        "simdevice/libcudart.so.13", "simdevice/libcupti.so.13"}) {
    INFO(f);
    CHECK(fs::exists(bundle + "/" + f));
  }
  std::string info = readFile(bundle + "/BUNDLE");
  CHECK(info.find("shim: ordinary") != std::string::npos);
  CHECK(info.find("requires: GLIBC_2.") != std::string::npos);
  CHECK(info.find(", libstdc++ with GLIBCXX_3.4.") != std::string::npos);
  CHECK(info.find("samples: fp32_gemm healthy host_sync input_stall launch_bound pageable_copies "
                  "small_footprint") != std::string::npos);

  // gpu-check takes a bundle for a build folder and never builds it.
  const std::string out = dir / "out";
  Process check({python(), sourceDir() + "/scripts/gpu-check", "--simulate", "--only", "samples",
                 "--build-dir", bundle, "--out", out},
                {}, dir.path, dir.path, "gpu-check");
  auto status = check.wait(std::chrono::seconds(600));
  std::cout << check.out();
  INFO(check.err());
  REQUIRE(status.has_value());
  CHECK(check.err().find("running the bundle in " + bundle) != std::string::npos);
  CHECK_FALSE(fs::exists(out + "/logs/build.log"));
  Table t = parseTable(check.out());
  REQUIRE(t.rows.size() == 7);
  for (const auto& r : t.rows) {
    INFO(r.at("check"));
    CHECK(r.at("tier") == "cupti");
    if (r.at("check") == "sample pageable_copies" || r.at("check") == "sample fp32_gemm")
      CHECK(r.at("result") == "PASS");
  }

  // A bundle that cannot run here stops the check at once, with the loader's words and what
  // the bundle needs, before any run.
  { std::ofstream truncate(bundle + "/bin/deps/libisal.so.2", std::ios::trunc); }
  Process broken({python(), sourceDir() + "/scripts/gpu-check", "--simulate", "--build-dir", bundle,
                  "--out", dir / "out2"},
                 {}, dir.path, dir.path, "gpu-check-broken");
  REQUIRE(broken.wait(std::chrono::seconds(120)) == 2);
  CHECK(broken.err().find("bin/gpuwise does not run here: ") != std::string::npos);
  CHECK(broken.err().find("libisal.so.2") != std::string::npos);
  CHECK(broken.err().find("requires: GLIBC_2.") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out2/gpu-check.txt"));
}
