// scripts/gpu-check --simulate: the GPU lane's script, run on the simulated device so its logic
// (builds skipped, runs, expectations, process checks, the table, the exit status, the files it
// leaves) is tested where there is no GPU. The table is parsed as a person would read it.
#include "tests/advisor/subprocess.h"

#include <catch2/catch.hpp>

#include <filesystem>
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
    for (std::string c; std::getline(cs, c, '|');) cells.push_back(trim(c));
    if (t.header.empty()) {
      t.header = cells;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < cells.size() && i < t.header.size(); ++i) row[t.header[i]] = cells[i];
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
  REQUIRE(t.header.size() == 10);
  CHECK(t.header.front() == "check");
  CHECK(t.header.back() == "result");
  std::map<std::string, std::map<std::string, std::string>> by_name;
  for (const auto& r : t.rows) by_name[r.at("check")] = r;
  const char* expected_rows[] = {
      "sample pageable_copies", "sample fp32_gemm", "sample launch_bound", "sample input_stall",
      "sample host_sync", "sample small_footprint", "sample healthy", "train.py healthy",
      "train.py no_pin_memory", "train.py num_workers_0", "train.py amp_none",
      "train.py sync_every_1", "train.py small_batch", "train.py small_batch_graphs",
      "train.py 2 ranks (launch.py)", "train.py healthy: shim overhead"};
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
  }
  // The exit status and the FAIL lines under the table agree with the result column.
  CHECK((*status == 1) == (failed > 0));
  CHECK(t.failures.size() >= failed);

  // The checks whose outcome does not depend on the shared CPU's timing must pass here: the
  // process lists and ranks, the precision and pageable-copy findings, every run's exit.
  for (const char* name : {"train.py 2 ranks (launch.py)", "sample pageable_copies",
                           "sample fp32_gemm", "train.py no_pin_memory", "train.py amp_none",
                           "train.py num_workers_0"}) {
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
