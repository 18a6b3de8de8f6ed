// What a viewer sees in the Chrome-trace export: the API call of every launch, copy and memset
// (made from the call times a live run records on the GPU record when the trace has no call list),
// flow arrows from each call to its GPU work paired by correlation id, demangled kernel names, and
// the CPU operators of a Kineto trace, counted against the source file parsed independently.
#include "advisor/export/chrome_trace.h"
#include "advisor/import/kineto_importer.h"
#include "tests/advisor/import/import_test_util.h"
#include "tests/advisor/trace_builder.h"

#include <catch2/catch.hpp>
#include <libdeflate.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

using namespace gpuwise;
using namespace gpuwise::advisor;
using namespace gpuwise::model;
using nlohmann::json;
namespace fs = std::filesystem;
namespace tb = gpuwise::advisor::test;

namespace {

constexpr const char* kMangled = "_Z20dense_forward_kernelIfEvPKT_S2_PS0_ii";
constexpr const char* kDemangled =
    "void dense_forward_kernel<float>(float const*, float const*, float*, int, int)";
constexpr uint32_t kThread = 4243;

json exportJson(const Trace& t, ChromeTraceStats* stats = nullptr) {
  std::ostringstream out;
  std::string error;
  REQUIRE(writeChromeTrace(t, out, &error, {}, stats));
  return json::parse(out.str()); // throws on invalid JSON
}

// A live run as the shim on the interposer tier records it (pageable_copies' loop): GPU records
// that carry their launching call's times and thread but no correlation id, no API call list,
// and the host wait of each synchronous copy as a HostSync of its own.
Trace liveInterposerTrace(int steps) {
  ProcessTrace p = tb::process(777);
  const NameId forward = p.names.intern(kMangled);
  const NameId update = p.names.intern("_Z17sgd_update_kernelIfEvPT_PKS0_iS0_");
  p.api_calls.push_back({.start = 1'000,
                         .end = 90'000,
                         .name = p.names.intern("cudaMalloc"),
                         .thread = kThread}); // a call of its own, no GPU work
  for (int s = 0; s < steps; ++s) {
    const TimeNs t0 = 100'000 + s * 1'000'000;
    Copy c = tb::copy(t0 + 5'000, t0 + 205'000, 4 << 20);
    c.call_start = t0;
    c.call_end = t0 + 210'000; // pageable: the async call blocks for the copy
    c.thread = kThread;
    p.copies.push_back(c);
    for (int k = 0; k < 2; ++k) {
      KernelExec e = tb::kernel(t0 + 220'000 + k * 310'000, t0 + 520'000 + k * 310'000);
      e.launch_start = t0 + 211'000 + k * 3'000;
      e.launch_end = t0 + 213'500 + k * 3'000;
      e.name = k ? update : forward;
      e.thread = kThread;
      p.kernels.push_back(e);
    }
    p.syncs.push_back({.start = t0 + 218'000,
                       .end = t0 + 845'000,
                       .device = 0,
                       .stream = 7,
                       .thread = kThread,
                       .kind = SyncKind::Stream});
  }
  // One synchronous copy back and a synchronous memset, each with the host wait the shim records.
  const TimeNs end = 100'000 + steps * 1'000'000;
  Copy back = tb::copy(end + 2'000, end + 12'000, 4096, CopyDirection::DeviceToHost,
                       MemoryKind::Pageable, /*async=*/false);
  back.call_start = end;
  back.call_end = end + 13'000;
  back.thread = kThread;
  p.copies.push_back(back);
  p.syncs.push_back({.start = end,
                     .end = end + 13'000,
                     .device = 0,
                     .stream = 7,
                     .thread = kThread,
                     .kind = SyncKind::SyncCopy});
  p.memsets.push_back({.start = end + 20'000,
                       .end = end + 21'000,
                       .call_start = end + 15'000,
                       .call_end = end + 22'000,
                       .bytes = 512,
                       .stream = 7,
                       .thread = kThread,
                       .dst = MemoryKind::Device});
  // The hook times the wait, CUPTI the call: the two differ by a few hundred nanoseconds.
  p.syncs.push_back({.start = end + 15'200,
                     .end = end + 22'300,
                     .device = 0,
                     .stream = 7,
                     .thread = kThread,
                     .kind = SyncKind::SyncCopy});
  p.sortByTime();
  Trace t = tb::trace(std::move(p));
  t.source.kind = SourceKind::Live;
  return t;
}

double us(TimeNs ns) {
  return double(ns) / 1000.0;
}

// The X events of category `cat` and name `name` (any name when empty).
std::vector<json> spans(const json& doc, const std::string& cat, const std::string& name = "") {
  std::vector<json> v;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") == "X" && e.value("cat", "") == cat && (name.empty() || e.at("name") == name))
      v.push_back(e);
  return v;
}

struct FlowCheck {
  size_t pairs = 0;
  std::vector<std::string> problems;
};

// Every flow has one start and at least one end of its id (a call launching several pieces of
// work, a graph launch, has an end on each), starts on a host call span that begins at its time
// on its thread, ends on GPU work that begins at its time on its stream (the slices a viewer binds
// them to), each carrying the flow's id as correlation, and never ends before it starts. `pairs`
// counts the ends.
FlowCheck checkFlows(const json& doc) {
  std::map<uint64_t, std::vector<json>> starts, ends;
  // (pid, tid, ts) -> correlation ids of the X events beginning there.
  std::map<std::tuple<int64_t, int64_t, double>, std::vector<uint64_t>> calls, work;
  for (const auto& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "s") starts[e.at("id").get<uint64_t>()].push_back(e);
    if (ph == "f") ends[e.at("id").get<uint64_t>()].push_back(e);
    if (ph != "X" || !e.contains("args") || !e.at("args").contains("correlation")) continue;
    const std::string cat = e.at("cat");
    const auto key = std::tuple{e.at("pid").get<int64_t>(), e.at("tid").get<int64_t>(),
                                e.at("ts").get<double>()};
    const uint64_t corr = e.at("args").at("correlation").get<uint64_t>();
    if (cat == "cuda_runtime" || cat == "cuda_driver") calls[key].push_back(corr);
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") work[key].push_back(corr);
  }
  FlowCheck r;
  auto has = [](const auto& index, const json& f, uint64_t id) {
    auto it = index.find(std::tuple{f.at("pid").get<int64_t>(), f.at("tid").get<int64_t>(),
                                    f.at("ts").get<double>()});
    return it != index.end() && std::count(it->second.begin(), it->second.end(), id) > 0;
  };
  for (const auto& [id, s] : starts) {
    auto it = ends.find(id);
    if (s.size() != 1 || it == ends.end()) {
      r.problems.push_back("flow " + std::to_string(id) + " is not one start with ends");
      continue;
    }
    if (!has(calls, s[0], id))
      r.problems.push_back("flow " + std::to_string(id) + " starts on no call of its id");
    for (const json& f : it->second) {
      if (f.value("bp", "") != "e") r.problems.push_back("flow end without bp e");
      if (f.at("ts").get<double>() < s[0].at("ts").get<double>())
        r.problems.push_back("flow " + std::to_string(id) + " ends before it starts");
      if (!has(work, f, id))
        r.problems.push_back("flow " + std::to_string(id) + " ends on no GPU work of its id");
      ++r.pairs;
    }
  }
  for (const auto& [id, f] : ends)
    if (!starts.count(id)) r.problems.push_back("flow " + std::to_string(id) + " has no start");
  return r;
}

// The complete events of each row that overlap without nesting, as "row: outer / inner": a viewer
// (Perfetto's JSON importer) cannot place such a slice.
std::vector<std::string> unnested(const json& doc) {
  struct Slice {
    int64_t start, end;
    std::string name;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Slice>> rows;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") == "X") {
      const int64_t start = std::llround(e.at("ts").get<double>() * 1000);
      rows[{e.at("pid").get<int64_t>(), e.at("tid").get<int64_t>()}].push_back(
          {start, start + std::llround(e.at("dur").get<double>() * 1000), e.at("name")});
    }
  std::vector<std::string> bad;
  for (auto& [row, slices] : rows) {
    std::sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<const Slice*> open;
    for (const auto& s : slices) {
      while (!open.empty() && open.back()->end <= s.start)
        open.pop_back();
      if (!open.empty() && s.end > open.back()->end)
        bad.push_back(std::to_string(row.first) + "/" + std::to_string(row.second) + ": " +
                      open.back()->name + " / " + s.name);
      open.push_back(&s);
    }
  }
  return bad;
}

// gunzip by libdeflate, sized from the gzip trailer (single-member files under 4 GiB).
std::string gunzip(const std::string& gz) {
  REQUIRE(gz.size() > 18);
  const auto* tail = reinterpret_cast<const unsigned char*>(gz.data() + gz.size() - 4);
  const size_t size = tail[0] | tail[1] << 8 | tail[2] << 16 | size_t(tail[3]) << 24;
  std::string out(size, '\0');
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  size_t got = 0;
  const auto rc = libdeflate_gzip_decompress(d, gz.data(), gz.size(), out.data(), out.size(), &got);
  libdeflate_free_decompressor(d);
  REQUIRE(rc == LIBDEFLATE_SUCCESS);
  out.resize(got);
  return out;
}

} // namespace

TEST_CASE("a live run's export has a call span per launch, copy and memset, with flows") {
  const Trace t = liveInterposerTrace(5);
  const auto& p = t.processes[0];
  ChromeTraceStats stats;
  const json doc = exportJson(t, &stats);

  // One runtime span per GPU record at its call's times on its thread, plus the call of its own.
  const auto launches = spans(doc, "cuda_runtime", "cudaLaunchKernel");
  REQUIRE(launches.size() == p.kernels.size());
  for (size_t i = 0; i < launches.size(); ++i) {
    const auto& k = p.kernels[i]; // sorted by start, as the export writes them
    CHECK(launches[i].at("ts").get<double>() == us(k.launch_start));
    CHECK(launches[i].at("dur").get<double>() == us(k.launch_end - k.launch_start));
    CHECK(launches[i].at("tid") == kThread);
    CHECK(launches[i].at("pid") == 777);
    CHECK(launches[i].at("args").at("gpuwise.synthesized") == 1);
  }
  const auto async = spans(doc, "cuda_runtime", "cudaMemcpyAsync");
  REQUIRE(async.size() == 5);
  CHECK(async[0].at("ts").get<double>() == us(100'000));
  CHECK(async[0].at("dur").get<double>() == us(210'000));
  REQUIRE(spans(doc, "cuda_runtime", "cudaMemcpy").size() == 1);
  REQUIRE(spans(doc, "cuda_runtime", "cudaMemset").size() == 1);
  CHECK(spans(doc, "cuda_runtime", "cudaMalloc").size() == 1);
  CHECK(stats.api_spans == p.kernels.size() + p.copies.size() + p.memsets.size() + 1);

  // A flow from every call to its work, each id one pair; the ids are synthetic (the records had
  // none) and distinct.
  const auto flows = checkFlows(doc);
  for (const auto& problem : flows.problems)
    FAIL_CHECK(problem);
  CHECK(flows.pairs == p.kernels.size() + p.copies.size() + p.memsets.size());
  CHECK(stats.flows == flows.pairs);
  for (const auto& problem : unnested(doc))
    FAIL_CHECK(problem);
  for (const auto& k : spans(doc, "kernel"))
    CHECK(k.at("args").at("correlation").get<uint64_t>() >= (uint64_t{1} << 36));

  // The synchronous copy's and memset's waits share their call's id (on the GPU row, as Kineto
  // places a wait its call describes); the stream syncs stay on the waiting thread.
  const auto waits = spans(doc, "cuda_sync", "Memcpy Sync");
  REQUIRE(waits.size() == 2);
  for (const auto& s : waits) {
    CHECK(s.at("args").at("correlation").get<uint64_t>() >= (uint64_t{1} << 36));
    CHECK(s.at("pid") == 0); // the GPU row, on its copy's stream
    CHECK(s.at("tid") == 7);
  }
  for (const auto& s : spans(doc, "cuda_sync", "Stream Sync"))
    CHECK(s.at("tid") == kThread);

  // Readable kernel names, the mangled one kept.
  const auto forward = spans(doc, "kernel", kDemangled);
  REQUIRE(forward.size() == 5);
  CHECK(forward[0].at("args").at("mangled name") == kMangled);
  CHECK(spans(doc, "kernel", "void sgd_update_kernel<float>(float*, float const*, int, float)")
            .size() == 5);
  CHECK(spans(doc, "kernel", kMangled).empty());
}

TEST_CASE("a live run's export re-imports with its launches joined and each wait once") {
  const Trace t = liveInterposerTrace(3);
  std::ostringstream out;
  std::string error;
  REQUIRE(writeChromeTrace(t, out, &error));
  const auto back = importKinetoBuffer(out.str(), "live.json");
  INFO(back.error);
  REQUIRE(back.ok());
  const auto& a = t.processes[0];
  const auto& b = back.trace.processes.at(0);
  REQUIRE(b.kernels.size() == a.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    CHECK(b.kernels[i].launch_start == a.kernels[i].launch_start);
    CHECK(b.kernels[i].launch_end == a.kernels[i].launch_end);
    CHECK(b.kernels[i].thread == a.kernels[i].thread);
    CHECK(b.names.get(b.kernels[i].name) != kMangled); // demangled on the way
  }
  REQUIRE(b.copies.size() == a.copies.size());
  for (size_t i = 0; i < a.copies.size(); ++i) {
    CHECK(b.copies[i].call_start == a.copies[i].call_start);
    CHECK(b.copies[i].async == a.copies[i].async);
  }
  // The same waits: the synchronous copy's and memset's are not counted twice.
  auto count = [](const ProcessTrace& p, SyncKind kind) {
    return std::count_if(p.syncs.begin(), p.syncs.end(),
                         [&](const HostSync& s) { return s.kind == kind; });
  };
  CHECK(count(b, SyncKind::SyncCopy) == count(a, SyncKind::SyncCopy));
  CHECK(count(b, SyncKind::Stream) == count(a, SyncKind::Stream));
  CHECK(b.syncs.size() == a.syncs.size());
}

TEST_CASE("names that are not mangled, or that the demangler refuses, are written as they are") {
  ProcessTrace p = tb::process(5);
  const char* names[] = {"volta_sgemm_128x64_nn", "_Z", "_Zbroken(", "void f<int>(int)"};
  for (int i = 0; i < 4; ++i) {
    KernelExec k = tb::kernel(1'000 * (i + 1), 1'000 * (i + 1) + 500);
    k.name = p.names.intern(names[i]);
    p.kernels.push_back(k);
  }
  const json doc = exportJson(tb::trace(std::move(p)));
  const auto kernels = spans(doc, "kernel");
  REQUIRE(kernels.size() == 4);
  for (int i = 0; i < 4; ++i) {
    CHECK(kernels[i].at("name") == names[i]);
    CHECK_FALSE(kernels[i].at("args").contains("mangled name"));
  }
  // No call times: no call span and no flow.
  CHECK(spans(doc, "cuda_runtime").empty());
  CHECK(checkFlows(doc).pairs == 0);
}

// The committed subset holds these three (a current trace, an older one with synchronisation
// records, and a 2021 one whose operators are "Operator" events with steps among them).
TEST_CASE("a Kineto trace's export keeps its CPU operators and its flows") {
  const fs::path root = fs::path(gpuwise::test::tracesDir()) / "kineto";
  int checked = 0;
  for (const char* rel :
       {"tracelens/h100/gaunernst_bert-small-uncased__1016001.json.gz",
        "hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz",
        "kineto_tb_plugin/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz"}) {
    INFO(rel);
    const fs::path path = root / rel;
    if (!fs::exists(path)) continue;
    ++checked;
    // The source's operators, read here with nlohmann/json; the importer turns those naming a
    // step or a data-loader wait (2021 traces) into step and data-loader ranges.
    const json src = json::parse(gunzip(gpuwise::test::readFile(path.string())));
    const json& srcEvents = src.is_array() ? src : src.at("traceEvents");
    size_t ops = 0, stepOps = 0, runtime = 0;
    for (const auto& e : srcEvents) {
      const std::string cat = e.value("cat", ""), ph = e.value("ph", "");
      if (ph != "X") continue;
      if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime") ++runtime;
      if (cat != "cpu_op" && cat != "Operator") continue;
      ++ops;
      const std::string name = e.value("name", "");
      if (name.starts_with("ProfilerStep#") || name.starts_with("enumerate(DataLoader)#"))
        ++stepOps;
    }
    REQUIRE(ops > 0);

    KinetoImportOptions options;
    options.include_operators = true; // as `gpuwise export` imports
    const auto imported = importKineto({path.string()}, options);
    REQUIRE(imported.ok());
    ChromeTraceStats stats;
    const json doc = exportJson(imported.trace, &stats);
    CHECK(spans(doc, "cpu_op").size() == ops - stepOps);
    size_t stepRanges = 0;
    for (const auto& e : spans(doc, "user_annotation")) {
      const std::string name = e.at("name");
      if (name.starts_with("ProfilerStep#") || name.starts_with("enumerate(DataLoader)#"))
        ++stepRanges;
    }
    CHECK(stepRanges >= stepOps);
    // Every runtime call of the source is there, and the launches point at their work.
    CHECK(spans(doc, "cuda_runtime").size() + spans(doc, "cuda_driver").size() == runtime);
    const auto flows = checkFlows(doc);
    for (size_t i = 0; i < std::min<size_t>(flows.problems.size(), 5); ++i)
      FAIL_CHECK(flows.problems[i]);
    CHECK(flows.pairs > 0);
    CHECK(flows.pairs == stats.flows);
    // (Nesting is not checked here: the sources' own rows overlap, a cuda_sync over a copy, two
    // kernels of a stream by a rounding of their times.)
  }
  CHECK(checked >= 1);
}

TEST_CASE("a collective's operator is kept as an operator too when operators are asked for") {
  const std::string text = R"JSON({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 10,
     "dur": 5, "args": {"External id": 7, "Collective name": "_allgather_base",
     "In msg nelems": 100, "Out msg nelems": 800, "Group size": 8, "dtype": "BFloat16"}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 16, "dur": 2},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "pid": 0, "tid": 7, "ts": 20, "dur": 4,
     "args": {"External id": 7, "device": 0, "stream": 7, "correlation": 55}}]})JSON";
  KinetoImportOptions options;
  options.include_operators = true;
  const auto with = importKinetoBuffer(text, "comms.json", options);
  REQUIRE(with.ok());
  const auto& p = with.trace.processes.at(0);
  CHECK(p.collectives.size() == 1); // the collective as before
  const json doc = exportJson(with.trace);
  const auto ops = spans(doc, "cpu_op");
  REQUIRE(ops.size() == 2);
  CHECK(ops[0].at("name") == "record_param_comms");
  // Without operators asked for, the collective alone, as the report reads it.
  const auto without = importKinetoBuffer(text, "comms.json");
  REQUIRE(without.ok());
  CHECK(without.trace.processes.at(0).collectives.size() == 1);
  CHECK(without.trace.processes.at(0).ranges.empty());
}
