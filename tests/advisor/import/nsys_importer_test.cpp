// The Nsight Systems SQLite importer: the two real exports in $GPUWISE_TRACES_DIR/nsys against
// tests/data/nsys/reference.json (tests/tools/nsys_reference.py, Python's sqlite3, no code shared),
// exactly; what each table becomes, on exports built here with the schema nsys writes; and one
// line, nothing partial, for every file that is not an export.
//
// Peer numbers: pipit's golden GPU trace of the CloverLeaf export (hpcgroup/pipit,
// tests/data/cloverleaf-nsys/cloverleaf_gpu_trace.csv) lists 1312 kernels and 279 copies, the
// first starting at 533338240 ns; the reference agrees.
#include "advisor/import/nsys_importer.h"
#include "tests/advisor/import/import_test_util.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

using namespace gpuwise;
using namespace gpuwise::advisor;
namespace fs = std::filesystem;
using model::MemoryKind;
using model::RangeKind;
using model::SyncKind;

namespace {

nlohmann::json loadReference() {
  std::ifstream in(fs::path(test::sourceDir()) / "tests/data/nsys/reference.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

// An export written here, table by table, in the schema nsys 2024 writes (the columns we read).
class Export {
public:
  explicit Export(const std::string& path) : path_(path) {
    std::filesystem::remove(path);
    REQUIRE(sqlite3_open(path.c_str(), &db_) == SQLITE_OK);
  }
  ~Export() { sqlite3_close(db_); }
  Export& sql(const std::string& statements) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, statements.c_str(), nullptr, nullptr, &err);
    INFO((err ? err : ""));
    sqlite3_free(err);
    REQUIRE(rc == SQLITE_OK);
    return *this;
  }
  const std::string& path() const { return path_; }

private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// A global id as nsys serializes it: pid in bits 24..47, tid below.
constexpr int64_t gid(int64_t pid, int64_t tid = 0) {
  return (int64_t(1) << 48) | (pid << 24) | tid;
}

// The schema nsys 2024 writes, the columns we read; shared with scripts/fuzz_nsys_seeds.py.
std::string schemaSql() {
  const std::string sql = test::readFile(test::sourceDir() + "/tests/data/nsys/schema_2024.sql");
  REQUIRE(sql.find("CREATE TABLE") != std::string::npos);
  return sql;
}

const model::ProcessTrace* byPid(const model::Trace& t, int64_t pid) {
  for (const auto& p : t.processes)
    if (p.info.pid == pid) return &p;
  return nullptr;
}

} // namespace

// On the full set, or on the subset in tests/data/traces (one export) where it is absent.
TEST_CASE("every shared Nsight Systems export imports as the reference says") {
  const fs::path root = fs::path(test::tracesDir()) / "nsys";
  const auto reference = loadReference().at("files");
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(root))
    files += e.path().extension() == ".sqlite";
  REQUIRE(files >= 1);
  const bool full = gpuwise::test::haveFullTraces();
  if (full) REQUIRE(files == reference.size()); // regenerate reference.json when the folder changes

  for (const auto& [name, ref] : reference.items()) {
    INFO(name);
    if (!full && !fs::exists(root / name)) continue; // the subset: not every export
    const auto r = importNsys({(root / name).string()});
    INFO(r.error);
    REQUIRE(r.ok());
    CHECK(r.trace.source.kind == model::SourceKind::Nsys);
    REQUIRE(r.trace.processes.size() == ref.at("processes").size());
    for (const auto& [pid, want] : ref.at("processes").items()) {
      INFO("pid " << pid);
      const auto* p = byPid(r.trace, std::stoll(pid));
      REQUIRE(p != nullptr);
      CHECK(p->info.command == want.at("command").get<std::string>());
      CHECK(p->info.tier == model::CollectionTier::Imported);
      CHECK(p->kernels.size() == want.at("kernel_count").get<size_t>());
      CHECK(p->copies.size() == want.at("memcpy_count").get<size_t>());
      CHECK(p->memsets.size() == want.at("memset_count").get<size_t>());
      CHECK(p->api_calls.size() == want.at("api_calls").get<size_t>());
      const auto all = test::unionSpan(test::gpuIntervals(*p));
      CHECK(all.span == want.at("gpu_span_ns").get<int64_t>());
      CHECK(all.busy == want.at("gpu_busy_ns").get<int64_t>());
      for (const auto& [device, d] : want.at("devices").items()) {
        const auto one = test::unionSpan(test::gpuIntervals(*p, std::stoi(device)));
        CHECK(one.span == d.at("gpu_span_ns").get<int64_t>());
        CHECK(one.busy == d.at("gpu_busy_ns").get<int64_t>());
        const auto* info = p->device(uint32_t(std::stoi(device)));
        REQUIRE(info != nullptr);
        CHECK(info->name == d.at("name").get<std::string>());
        CHECK(info->sm_count == d.at("sm_count").get<uint32_t>());
      }
      uint64_t h2d = 0, pageable = 0;
      for (const auto& c : p->copies) {
        if (c.direction == model::CopyDirection::HostToDevice) h2d += c.bytes;
        if (c.src == MemoryKind::Pageable || c.dst == MemoryKind::Pageable) pageable += c.bytes;
      }
      CHECK(h2d == want.at("h2d_bytes").get<uint64_t>());
      CHECK(pageable == want.at("pageable_bytes").get<uint64_t>());
      const auto waits =
          std::count_if(p->syncs.begin(), p->syncs.end(), [](const model::HostSync& s) {
            return s.kind == SyncKind::Device || s.kind == SyncKind::Stream ||
                   s.kind == SyncKind::Event;
          });
      CHECK(size_t(waits) == want.at("sync_calls").get<size_t>());
      CHECK(p->ranges.size() == want.at("nvtx_ranges").get<size_t>());
      CHECK(p->allocations.size() == want.at("allocations").get<size_t>());
    }
  }
}

TEST_CASE("real exports: CloverLeaf's launches joined, each wait counted once", "[.full_traces]") {
  const fs::path root = gpuwise::test::requireFullTraces("nsys");
  SECTION("CloverLeaf on an A100 (schema 3.13, exported by Nsight Systems 2024.5)") {
    const auto r = importNsys({(root / "perlmutter-cloverleaf-cuda.sqlite").string()});
    REQUIRE(r.ok());
    const auto& p = r.trace.processes.at(0);
    CHECK(std::all_of(p.kernels.begin(), p.kernels.end(), [](const model::KernelExec& k) {
      return k.launch_start > 0 && k.launch_start <= k.start && k.thread == 1701896 &&
             k.registers_per_thread > 0;
    }));
    std::set<std::string> names;
    for (const auto& a : p.api_calls)
      names.insert(std::string(p.names.get(a.name)));
    CHECK(names == std::set<std::string>{"cudaLaunchKernel", "cudaDeviceSynchronize", "cudaMemcpy",
                                         "cudaMalloc", "cudaFree", "cuModuleGetLoadingMode"});
    // 2024 exports label these cudaDeviceSynchronize calls "event sync": the call's name decides,
    // and the wait is not counted twice.
    CHECK(std::count_if(p.syncs.begin(), p.syncs.end(),
                        [](auto& s) { return s.kind == SyncKind::Device; }) == 1312);
    CHECK(std::count_if(p.syncs.begin(), p.syncs.end(),
                        [](auto& s) { return s.kind == SyncKind::Event; }) == 0);
    CHECK(std::count_if(p.syncs.begin(), p.syncs.end(),
                        [](auto& s) { return s.kind == SyncKind::SyncCopy; }) == 279);
    CHECK(std::none_of(p.copies.begin(), p.copies.end(), [](auto& c) { return c.async; }));
    REQUIRE(p.devices.size() == 1);
    CHECK(p.devices[0].compute_major == 8);
    CHECK(p.devices[0].uuid == "GPU-cf6b97c0-bf53-a39e-febd-9532190b5766");
    CHECK(p.devices[0].max_threads_per_sm == 2048);
    CHECK(p.info.host == "nid008553");
    CHECK(p.info.tier_reason ==
          "Nsight Systems SQLite export (Nsight Systems 2024.5.1.113, schema 3.13.2)");
    CHECK(p.wall_start > 0);
    CHECK(p.wall_end > p.wall_start);
  }
}

TEST_CASE("real exports: saxpy's versions dropped from names, its copies pageable") {
  const fs::path root = fs::path(test::tracesDir()) / "nsys";
  SECTION("MPI saxpy on an A100 (schema 2.9: no ENUM tables, backtrace rows, NVTX)") {
    const auto r = importNsys({(root / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite").string()});
    REQUIRE(r.ok());
    CHECK(r.stats.duplicate_api_rows == 38);
    const auto& p = r.trace.processes.at(0);
    for (const auto& a : p.api_calls)
      CHECK(p.names.get(a.name).find("_v") == std::string_view::npos);
    // Copies from pageable memory (nsys's numbering: 0 is pageable), to the device.
    CHECK(std::all_of(p.copies.begin(), p.copies.end(), [](auto& c) {
      return c.direction == model::CopyDirection::HostToDevice
                 ? c.src == MemoryKind::Pageable && c.dst == MemoryKind::Device
                 : c.src == MemoryKind::Device && c.dst == MemoryKind::Pageable;
    }));
    std::map<std::string, int> ranges;
    for (const auto& x : p.ranges) {
      CHECK(x.kind == RangeKind::Annotation);
      ++ranges[std::string(p.names.get(x.name))];
    }
    CHECK(ranges["MPI_Send"] == 10);
    CHECK(ranges["saxpy"] == 5);
  }
}

namespace {

// The rows of process 100 on device 0 for the test below: a launch, a graph node, a cooperative
// kernel; a pinned async copy, a managed memset, a stream sync with its record, a device-side
// wait, NVTX ranges; and its device memory.
void addProcess100(Export& x) {
  x.sql(R"(
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (1000, 1100, 0, )" +
        std::to_string(gid(100, 101)) + R"(, 1, 3, 0),
  (1200, 1250, 0, )" +
        std::to_string(gid(100, 101)) + R"(, 2, 8, 0),
  (1300, 1350, 0, )" +
        std::to_string(gid(100, 101)) + R"(, 3, 5, 0),
  (1400, 1450, 0, )" +
        std::to_string(gid(100, 101)) + R"(, 4, 6, 0),
  (1500, 9000, 0, )" +
        std::to_string(gid(100, 101)) + R"(, 5, 4, 0),
  (1600, 1700, 1, )" +
        std::to_string(gid(100, 102)) + R"(, 6, 7, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (2000, 3000, 0, 1, 7, 1, )" +
        std::to_string(gid(100)) + R"(, 1, 1, 1, 96, 132, 1, 1, 256, 1, 1, 1024, 2048, NULL, NULL),
  (3000, 4000, 0, 1, 7, 2, )" +
        std::to_string(gid(100)) + R"(, 1, 1, 2, 64, 4, 2, 1, 128, 1, 1, 0, 0, 42, 7),
  (4000, 5000, 0, 1, 9, 0, )" +
        std::to_string(gid(100)) + R"(, 2, 2, 3, 64, 8, 1, 1, 512, 1, 1, 0, 0, NULL, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (5000, 5500, 0, 7, 3, )" +
        std::to_string(gid(100)) + R"(, 4096, 1, 1, 2);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (5500, 5600, 0, 7, 4, )" +
        std::to_string(gid(100)) + R"(, 0, 512, 4);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES
  (1500, 9000, 0, 7, 5, )" +
        std::to_string(gid(100)) + R"(, 3, 0),
  (6000, 6100, 0, 9, 0, )" +
        std::to_string(gid(100)) + R"(, 2, 11);
INSERT INTO NVTX_EVENTS VALUES
  (900, 9500, 59, NULL, )" +
        std::to_string(gid(100, 101)) + R"(, 9),
  (950, 8000, 60, 'enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__', )" +
        std::to_string(gid(100, 101)) + R"(, NULL),
  (960, 970, 59, 'aten::mm', )" +
        std::to_string(gid(100, 101)) + R"(, NULL),
  (980, NULL, 34, 'checkpoint saved', )" +
        std::to_string(gid(100, 101)) + R"(, NULL),
  (990, NULL, 59, 'still open', )" +
        std::to_string(gid(100, 101)) + R"(, NULL),
  (995, 996, 75, 'a domain', )" +
        std::to_string(gid(100, 101)) + R"(, NULL);
)");
  // Its device memory (nsys --cuda-memory-usage=true): 1 GiB and 512 MiB, the first freed, pinned
  // host memory, and a pool operation (type 2) that is neither.
  const std::string pid100 = std::to_string(gid(100));
  x.sql("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (800, " + pid100 +
        ", 0, 1, 4096, 0, 1073741824, 2, 0, NULL, 0),"
        " (810, " +
        pid100 +
        ", 0, 1, 8192, 0, 536870912, 2, 0, NULL, 0),"
        " (820, " +
        pid100 +
        ", 0, 1, 4096, 0, 1073741824, 2, 1, NULL, 0),"
        " (830, " +
        pid100 +
        ", 0, 1, 65536, 0, 268435456, 1, 0, NULL, 0),"
        " (840, " +
        pid100 + ", 0, 1, 0, 0, 0, 2, 2, NULL, 0);");
}

} // namespace

TEST_CASE("each table of an export becomes its records, per process") {
  test::TempDir dir;
  Export x(dir.path("built.sqlite"));
  x.sql(schemaSql());
  x.sql(R"(
INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'),
  (3, 'cudaLaunchKernel_v7000'), (4, 'cudaStreamSynchronize_v3020'), (5, 'cudaMemcpyAsync_v3020'),
  (6, 'cudaMemsetAsync_v3020'), (7, 'cuMemAlloc_v2'), (8, 'cudaGraphLaunch_v10000'), (9, 'train_step 3');
INSERT INTO PROCESSES VALUES (0, 100, 'python train.py'), (0, 200, 'python train.py --rank 1');
INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H200', 'abc-def', 150754820096, 132, 9, 0, 32, 64),
  (0, 1, 'NVIDIA H200', 'GPU-123', 150754820096, 132, 9, 0, 32, 64);
)");
  addProcess100(x);
  // Process 200 on device 1: one kernel.
  x.sql("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10000, 11000, 1, 1, 7, 1, " +
        std::to_string(gid(200)) + ", 1, 1, 1, 96, 1, 1, 1, 32, 1, 1, 0, 0, NULL, NULL);");

  const auto r = importNsys({x.path()});
  INFO(r.error);
  REQUIRE(r.ok());
  REQUIRE(r.trace.processes.size() == 2);
  const auto& p = r.trace.processes[0];
  CHECK(p.info.pid == 100);
  CHECK(p.info.command == "python train.py");
  CHECK(r.trace.processes[1].info.pid == 200);
  CHECK(r.trace.processes[1].kernels.size() == 1);
  REQUIRE(r.trace.processes[1].devices.size() == 1);
  CHECK(r.trace.processes[1].devices[0].index == 1);
  CHECK(r.trace.processes[1].devices[0].uuid == "GPU-123");

  REQUIRE(p.kernels.size() == 3);
  const auto& plain = p.kernels[0];
  CHECK(plain.launch_start == 1000);
  CHECK(plain.thread == 101);
  CHECK(plain.grid == model::Dim3{132, 1, 1});
  CHECK(plain.block == model::Dim3{256, 1, 1});
  CHECK(plain.registers_per_thread == 96);
  CHECK(plain.static_shared_bytes == 1024);
  CHECK(plain.dynamic_shared_bytes == 2048);
  CHECK(plain.flags == 0);
  CHECK(p.kernels[1].flags == (model::kKernelFromGraph | model::kKernelCooperative));
  CHECK(p.kernels[1].graph_node_id == 42);
  CHECK(p.kernels[1].graph_id == 7);
  CHECK(p.kernels[2].flags == (model::kKernelCooperative | model::kKernelCommunication));
  CHECK(p.kernels[2].launch_start == 0); // no correlation: no launch

  REQUIRE(p.copies.size() == 1);
  CHECK(p.copies[0].direction == model::CopyDirection::HostToDevice);
  CHECK(p.copies[0].src == MemoryKind::Pinned);
  CHECK(p.copies[0].dst == MemoryKind::Device);
  CHECK(p.copies[0].async);
  REQUIRE(p.memsets.size() == 1);
  CHECK(p.memsets[0].dst == MemoryKind::Managed);
  CHECK(p.memsets[0].async);

  std::set<std::string> api;
  for (const auto& a : p.api_calls)
    api.insert(std::string(p.names.get(a.name)));
  CHECK(api == std::set<std::string>{"cudaLaunchKernel", "cudaGraphLaunch", "cudaMemcpyAsync",
                                     "cudaMemsetAsync", "cudaStreamSynchronize", "cuMemAlloc_v2"});

  REQUIRE(p.syncs.size() == 2);
  CHECK(p.syncs[0].kind == SyncKind::Stream);
  CHECK(p.syncs[0].stream == 7);
  CHECK(p.syncs[0].thread == 101);
  CHECK(p.syncs[0].end - p.syncs[0].start == 7500);
  CHECK(p.syncs[1].kind == SyncKind::StreamWaitEvent);
  CHECK(p.syncs[1].stream == 9);

  REQUIRE(p.ranges.size() == 3); // the operator, the open range and the domain are not ranges
  CHECK(p.ranges[0].kind == RangeKind::Step);
  CHECK(p.ranges[0].step == 3);
  CHECK(p.ranges[1].kind == RangeKind::DataLoader);
  CHECK(p.ranges[2].kind == RangeKind::Annotation);
  CHECK(p.ranges[2].start == p.ranges[2].end);
  CHECK(p.names.get(p.ranges[2].name) == "checkpoint saved");

  REQUIRE(p.devices.size() == 1);
  CHECK(p.devices[0].name == "NVIDIA H200");
  CHECK(p.devices[0].uuid == "GPU-abc-def");
  CHECK(p.devices[0].compute_major == 9);
  CHECK(p.devices[0].max_threads_per_sm == 2048);
  REQUIRE(p.allocations.size() == 4);
  CHECK((p.allocations[0].kind == MemoryKind::Device && !p.allocations[0].is_free &&
         p.allocations[0].bytes == 1u << 30));
  CHECK((p.allocations[2].is_free && p.allocations[2].address == 4096));
  CHECK(p.allocations[3].kind == MemoryKind::Pinned);
  CHECK(p.wall_start == 800);
  CHECK(p.wall_end == 9500); // its own rows only: process 200's kernel ends at 11000
}

TEST_CASE("an export without ENUM tables reads memory kinds in nsys's own numbering") {
  test::TempDir dir;
  Export x(dir.path("old.sqlite"));
  x.sql("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, "
        "streamId INTEGER,"
        " globalPid INTEGER, bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (10, 20, 0, 7, " +
        std::to_string(gid(5)) +
        ", 64, 2, 2, 0),"
        " (30, 40, 0, 7, " +
        std::to_string(gid(5)) + ", 64, 10, 2, 2), (50, 60, 0, 7, " + std::to_string(gid(5)) +
        ", 64, 1, 1, 3);");
  const auto r = importNsys({x.path()});
  INFO(r.error);
  REQUIRE(r.ok());
  const auto& c = r.trace.processes.at(0).copies;
  REQUIRE(c.size() == 3);
  CHECK((c[0].direction == model::CopyDirection::DeviceToHost && c[0].src == MemoryKind::Device &&
         c[0].dst == MemoryKind::Pageable));
  CHECK(c[1].direction == model::CopyDirection::PeerToPeer);
  CHECK((c[2].src == MemoryKind::Pinned && c[2].dst == MemoryKind::Array));
  CHECK(r.trace.processes[0].api_calls.empty()); // no runtime table: nothing joined, nothing lost
}

TEST_CASE("a file that is not an export fails the whole import with one line naming it") {
  test::TempDir dir;
  Export other(dir.path("other.sqlite"));
  other.sql("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);");
  Export old(dir.path("nocolumn.sqlite"));
  old.sql(
      "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER);");
  Export good(dir.path("good.sqlite"));
  good.sql("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);");
  const std::string broken =
      dir.write("broken.sqlite", std::string("SQLite format 3\0", 16) + std::string(4096, 'x'));
  const std::string empty = dir.write("empty.sqlite", "");

  struct Case {
    std::string path, expect;
  };
  for (const auto& c :
       {Case{other.path(), "an SQLite database, but not an Nsight Systems export"},
        Case{old.path(), "reading CUPTI_ACTIVITY_KIND_KERNEL: table CUPTI_ACTIVITY_KIND_KERNEL has "
                         "no column streamId"},
        Case{broken, "not a readable SQLite database"}, Case{empty, "not an Nsight Systems export"},
        Case{dir.path("missing.sqlite"), "cannot open as SQLite"}}) {
    INFO(c.path);
    // The good file first: its processes must not survive the bad one's failure.
    const auto r = importNsys({good.path(), c.path});
    INFO(r.error);
    CHECK_FALSE(r.ok());
    CHECK(r.trace.processes.empty());
    CHECK(r.error.rfind(c.path + ": ", 0) == 0);
    CHECK(r.error.find(c.expect) != std::string::npos);
    CHECK(r.error.find('\n') == std::string::npos);
  }
  CHECK(
      importNsys({good.path()}).ok()); // an export with no activity is an empty trace, not an error
}
