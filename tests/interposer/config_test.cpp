#include "interposer/config.h"
#include "interposer/process_identity.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

using namespace gpuwise::interposer;

namespace {
GetEnv envOf(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}
} // namespace

TEST_CASE("Defaults when nothing is set") {
  Config c = readConfig(envOf({}));
  CHECK(c.endpoint.empty());
  CHECK_FALSE(c.disabled);
  CHECK(c.cupti);
  CHECK(c.log == LogLevel::Warn);
  CHECK(c.ring_events == 8192);
  CHECK(c.batch_ms == 50);
  CHECK(c.rank == -1);
  CHECK(c.problems.empty());
}

TEST_CASE("Where CUPTI is looked for: GPUWISE_CUPTI_LIBRARY, and CUDA_HOME before CUDA_PATH") {
  Config none = readConfig(envOf({}));
  CHECK(none.cupti_library.empty());
  CHECK(none.cuda_home.empty());
  Config both = readConfig(envOf({{"GPUWISE_CUPTI_LIBRARY", "/opt/cupti/libcupti.so.13"},
                                  {"CUDA_HOME", "/opt/cuda-13.0"},
                                  {"CUDA_PATH", "/usr/local/cuda-12"}}));
  CHECK(both.cupti_library == "/opt/cupti/libcupti.so.13");
  CHECK(both.cuda_home == "/opt/cuda-13.0");
  CHECK(readConfig(envOf({{"CUDA_HOME", ""}, {"CUDA_PATH", "/usr/local/cuda-12"}})).cuda_home ==
        "/usr/local/cuda-12");
}

TEST_CASE("Every variable is read, bad values are named and defaults kept") {
  Config c = readConfig(envOf({{"GPUWISE_ENDPOINT", "tcp://127.0.0.1:5555"},
                               {"GPUWISE_DISABLE", "1"},
                               {"GPUWISE_CUPTI", "0"},
                               {"GPUWISE_LOG", "debug"},
                               {"GPUWISE_RING_EVENTS", "1024"},
                               {"GPUWISE_BATCH_MS", "abc"},
                               {"GPUWISE_MAX_THREADS", "0"},
                               {"GPUWISE_CLOCK", "monotonic"},
                               {"RANK", "3"},
                               {"LOCAL_RANK", "1"},
                               {"WORLD_SIZE", "8"},
                               {"POD_NAME", "trainer-0"},
                               {"GPUWISE_NAMESPACE", "ml"},
                               {"POD_NAMESPACE", "ignored"},
                               {"CONTAINER_NAME", "main"},
                               {"GPUWISE_JOB", "resnet-ddp"},
                               {"GPUWISE_NODE", "gpu-node-7"}}));
  CHECK(c.endpoint == "tcp://127.0.0.1:5555");
  CHECK(c.disabled);
  CHECK_FALSE(c.cupti);
  CHECK(c.log == LogLevel::Debug);
  CHECK(c.ring_events == 1024);
  CHECK(c.batch_ms == 50);
  CHECK(c.max_threads == 256);
  CHECK_FALSE(c.allow_counter_clock);
  CHECK(c.problems.find("GPUWISE_BATCH_MS='abc' is not a number") != std::string::npos);
  CHECK(c.problems.find("GPUWISE_MAX_THREADS='0' is outside 1..4096") != std::string::npos);
  CHECK(c.rank == 3);
  CHECK(c.local_rank == 1);
  CHECK(c.world_size == 8);
  CHECK(c.pod == "trainer-0");
  CHECK(c.ns == "ml"); // GPUWISE_* wins over the downward-API names
  CHECK(c.container == "main");
  CHECK(c.job == "resnet-ddp");
  CHECK(c.node == "gpu-node-7");
}

TEST_CASE("Process identity reads the command line from a proc tree") {
  auto root = std::filesystem::temp_directory_path() / ("gwproc" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "self");
  {
    std::ofstream f(root / "self" / "cmdline", std::ios::binary);
    f.write("python\0train.py\0--epochs\0003\0", 27);
  }
  Config c;
  c.rank = 2;
  c.pod = "p";
  auto p = readProcessInfo(c, root.c_str());
  CHECK(p.command == "python train.py --epochs 3");
  CHECK(p.pid == getpid());
  CHECK(p.ppid == getppid());
  CHECK_FALSE(p.host.empty());
  CHECK(p.rank == 2);
  CHECK(p.pod == "p");
  CHECK(p.node == p.host); // no GPUWISE_NODE: the host name
  c.node = "gpu-node-7";
  CHECK(readProcessInfo(c, root.c_str()).node == "gpu-node-7");
  std::filesystem::remove_all(root);
}

TEST_CASE("A MIG instance's profile is read from the device name CUDA reports") {
  CHECK(migProfileFromName("NVIDIA A100-SXM4-40GB MIG 1g.5gb") == "1g.5gb");
  CHECK(migProfileFromName("NVIDIA H100 80GB HBM3 MIG 3g.40gb") == "3g.40gb");
  CHECK(migProfileFromName("NVIDIA H200 MIG 1g.18gb") == "1g.18gb");
  CHECK(migProfileFromName("NVIDIA A100-SXM4-80GB MIG 1c.2g.20gb") == "1c.2g.20gb");
  CHECK(migProfileFromName("A100-SXM4-40GB MIG 7g.40gb ") == "7g.40gb");
  CHECK(migProfileFromName("NVIDIA H200") == "");
  CHECK(migProfileFromName("Tesla V100-DGXS-32GB") == "");
  CHECK(migProfileFromName("NVIDIA MIG") == "");
  CHECK(migProfileFromName("Weird MIG name here") == "");
}
