// The table readers of the Nsight Systems importer: one pass over each table, each row appended
// to the record list of its process.
#include "advisor/import/nsys_file_importer.h"

#include "advisor/import/kineto_text.h"
#include "profiler/model/range_names.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string_view>
#include <utility>

namespace gpuwise::advisor::nsys {
namespace {

bool contains(std::string_view s, std::string_view what) {
  return s.find(what) != std::string_view::npos;
}

// An export's ENUM_* table (id -> name), or, where the export has none (schema 2.x), the numbering
// nsys documents for it.
class EnumNames {
public:
  EnumNames(const SqliteDb& db, const char* table,
            std::initializer_list<std::pair<int64_t, const char*>> defaults) {
    if (db.hasTable(table)) {
      auto s = db.query(selectColumns(db, table, {"id", "name"}, {}));
      while (s.step())
        names_[s.integer(0)] = std::string(s.text(1));
    } else {
      for (const auto& [id, name] : defaults)
        names_[id] = name;
    }
  }
  std::string_view operator[](int64_t id) const {
    auto it = names_.find(id);
    return it == names_.end() ? std::string_view() : std::string_view(it->second);
  }

private:
  std::unordered_map<int64_t, std::string> names_;
};

// "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE" -> Pageable. nsys numbers these differently from CUPTI
// (0 is pageable, not unknown), so the id alone must never be read as a CUPTI value.
model::MemoryKind memoryKind(std::string_view name) {
  using K = model::MemoryKind;
  if (contains(name, "PAGEABLE")) return K::Pageable;
  if (contains(name, "PINNED")) return K::Pinned;
  if (contains(name, "MANAGED")) return K::Managed;
  if (contains(name, "DEVICE")) return K::Device; // DEVICE and DEVICE_STATIC
  if (contains(name, "ARRAY")) return K::Array;
  return K::Unknown;
}

// "CUDA_MEMCPY_KIND_HTOD" -> HostToDevice; arrays are device memory, UVM copies count by side.
model::CopyDirection copyDirection(std::string_view name) {
  using D = model::CopyDirection;
  const auto kind = name.substr(std::min(name.size(), name.rfind('_') + 1));
  if (kind == "HTOD" || kind == "HTOA") return D::HostToDevice;
  if (kind == "DTOH" || kind == "ATOH") return D::DeviceToHost;
  if (kind == "DTOD" || kind == "DTOA" || kind == "ATOD" || kind == "ATOA")
    return D::DeviceToDevice;
  if (kind == "HTOH") return D::HostToHost;
  if (kind == "PTOP") return D::PeerToPeer;
  return D::Unknown;
}

model::SyncKind syncKind(std::string_view name) {
  using S = model::SyncKind;
  if (contains(name, "STREAM_WAIT_EVENT")) return S::StreamWaitEvent;
  if (contains(name, "EVENT_SYNCHRONIZE")) return S::Event;
  if (contains(name, "STREAM_SYNCHRONIZE")) return S::Stream;
  if (contains(name, "CONTEXT_SYNCHRONIZE")) return S::Device;
  return S::Unknown;
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": nsys names API calls with the version of the
// entry point; the model (and every analyzer matching call names) uses the plain name. Short
// suffixes are part of the real name ("cuMemAlloc_v2") and stay.
std::string_view apiName(std::string_view name) {
  const size_t v = name.rfind("_v");
  if (v == std::string_view::npos || name.size() - v - 2 < 4) return name;
  for (char c : name.substr(v + 2))
    if (!std::isdigit(static_cast<unsigned char>(c))) return name;
  return name.substr(0, v);
}

} // namespace

void FileImporter::readStrings(const char* table) {
  auto s = db_.query(selectColumns(db_, table, {"id", "value"}, {}));
  while (s.step()) {
    strings_.emplace(s.integer(0), std::string(s.text(1)));
    row();
  }
}

void FileImporter::readKernels(const char* table) {
  const EnumNames launch_types(db_, "ENUM_CUDA_KERNEL_LAUNCH_TYPE",
                               {{0, "UNKNOWN"},
                                {1, "REGULAR"},
                                {2, "COOPERATIVE_SINGLE_DEVICE"},
                                {3, "COOPERATIVE_MULTI_DEVICE"}});
  auto s = db_.query(
      selectColumns(db_, table,
                    {"start", "end", "deviceId", "streamId", "demangledName", "gridX", "gridY",
                     "gridZ", "blockX", "blockY", "blockZ"},
                    {"correlationId", "globalPid", "registersPerThread", "staticSharedMemory",
                     "dynamicSharedMemory", "graphNodeId", "graphId", "launchType"}));
  while (s.step()) {
    row();
    ProcessBuild& p = process(pidOf(s.integer(12)));
    model::KernelExec k;
    k.start = s.integer(0);
    k.end = std::max(k.start, s.integer(1)); // a negative duration is none
    k.device = u32(s.integer(2));
    k.stream = u32(s.integer(3));
    k.name = intern(p, s.integer(4));
    k.grid = {u32(s.integer(5, 1)), u32(s.integer(6, 1)), u32(s.integer(7, 1))};
    k.block = {u32(s.integer(8, 1)), u32(s.integer(9, 1)), u32(s.integer(10, 1))};
    k.correlation = uint64_t(std::max<int64_t>(0, s.integer(11)));
    k.registers_per_thread = u32(s.integer(13));
    k.static_shared_bytes = u32(s.integer(14));
    k.dynamic_shared_bytes = u32(s.integer(15));
    if (const int64_t node = s.integer(16); node > 0) {
      k.flags |= model::kKernelFromGraph;
      k.graph_node_id = uint64_t(node);
      k.graph_id = u32(s.integer(17));
    }
    if (contains(launch_types[s.integer(18, -1)], "COOPERATIVE"))
      k.flags |= model::kKernelCooperative;
    if (isCommunicationKernel(p.t.names.get(k.name))) k.flags |= model::kKernelCommunication;
    p.span(k.start, k.end);
    p.t.kernels.push_back(k);
  }
}

namespace {
// nsys's memory kinds where the export has no ENUM_CUDA_MEM_KIND (schema 2.x).
EnumNames memoryKinds(const SqliteDb& db) {
  return EnumNames(db, "ENUM_CUDA_MEM_KIND",
                   {{0, "PAGEABLE"},
                    {1, "PINNED"},
                    {2, "DEVICE"},
                    {3, "ARRAY"},
                    {4, "MANAGED"},
                    {5, "DEVICE_STATIC"},
                    {6, "MANAGED_STATIC"},
                    {7, "UNKNOWN"}});
}
} // namespace

void FileImporter::readCopies(const char* table) {
  const EnumNames kinds = memoryKinds(db_);
  const EnumNames copy_kinds(db_, "ENUM_CUDA_MEMCPY_OPER",
                             {{0, "UNKNOWN"},
                              {1, "HTOD"},
                              {2, "DTOH"},
                              {3, "HTOA"},
                              {4, "ATOH"},
                              {5, "ATOA"},
                              {6, "ATOD"},
                              {7, "DTOA"},
                              {8, "DTOD"},
                              {9, "HTOH"},
                              {10, "PTOP"},
                              {11, "UVM_HTOD"},
                              {12, "UVM_DTOH"},
                              {13, "UVM_DTOD"}});
  auto s = db_.query(selectColumns(db_, table,
                                   {"start", "end", "deviceId", "streamId", "bytes", "copyKind"},
                                   {"correlationId", "globalPid", "srcKind", "dstKind"}));
  while (s.step()) {
    row();
    ProcessBuild& p = process(pidOf(s.integer(7)));
    model::Copy c;
    c.start = s.integer(0);
    c.end = std::max(c.start, s.integer(1));
    c.device = u32(s.integer(2));
    c.stream = u32(s.integer(3));
    c.bytes = uint64_t(std::max<int64_t>(0, s.integer(4)));
    c.direction = copyDirection(copy_kinds[s.integer(5)]);
    c.correlation = uint64_t(std::max<int64_t>(0, s.integer(6)));
    c.src = memoryKind(kinds[s.integer(8, -1)]);
    c.dst = memoryKind(kinds[s.integer(9, -1)]);
    p.span(c.start, c.end);
    p.t.copies.push_back(c);
  }
}

void FileImporter::readMemsets(const char* table) {
  const EnumNames kinds = memoryKinds(db_);
  auto s = db_.query(selectColumns(db_, table, {"start", "end", "deviceId", "streamId", "bytes"},
                                   {"correlationId", "globalPid", "memKind"}));
  while (s.step()) {
    row();
    ProcessBuild& p = process(pidOf(s.integer(6)));
    model::Memset m;
    m.start = s.integer(0);
    m.end = std::max(m.start, s.integer(1));
    m.device = u32(s.integer(2));
    m.stream = u32(s.integer(3));
    m.bytes = uint64_t(std::max<int64_t>(0, s.integer(4)));
    m.correlation = uint64_t(std::max<int64_t>(0, s.integer(5)));
    m.dst = memoryKind(kinds[s.integer(7, -1)]);
    p.span(m.start, m.end);
    p.t.memsets.push_back(m);
  }
}

void FileImporter::readAllocations(const char* table) {
  const EnumNames kinds = memoryKinds(db_);
  const EnumNames operations(
      db_, "ENUM_CUDA_DEV_MEM_EVENT_OPER",
      {{0, "CUDA_DEV_MEM_EVENT_OPR_ALLOCATION"}, {1, "CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION"}});
  auto s = db_.query(selectColumns(db_, table, {"start", "bytes", "memoryOperationType"},
                                   {"globalPid", "deviceId", "address", "memKind"}));
  while (s.step()) {
    row();
    const std::string_view operation = operations[s.integer(2, -1)];
    const bool is_free = operation.ends_with("DEALLOCATION");
    if (!is_free && !operation.ends_with("ALLOCATION")) continue; // pool operations
    ProcessBuild& p = process(pidOf(s.integer(3)));
    model::Allocation a{.time = s.integer(0),
                        .address = uint64_t(s.integer(5)),
                        .bytes = uint64_t(std::max<int64_t>(0, s.integer(1))),
                        .device = u32(s.integer(4)),
                        .kind = memoryKind(kinds[s.integer(6, -1)]),
                        .is_free = is_free};
    p.span(a.time, a.time);
    p.t.allocations.push_back(a);
  }
}

void FileImporter::readApiCalls(const char* table) {
  const EnumNames classes(
      db_, "ENUM_NSYS_EVENT_CLASS",
      {{0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME"}, {1, "TRACE_PROCESS_EVENT_CUDA_DRIVER"}});
  std::unordered_map<int64_t, std::string> plain; // StringIds id -> name without its version
  auto s = db_.query(selectColumns(db_, table, {"start", "end", "nameId"},
                                   {"globalTid", "correlationId", "eventClass"}));
  while (s.step()) {
    row();
    const int64_t global_tid = s.integer(3);
    ProcessBuild& p = process(pidOf(global_tid));
    const int64_t name_id = s.integer(2);
    auto [name, fresh] = plain.try_emplace(name_id);
    if (fresh) name->second = std::string(apiName(string(name_id)));
    model::ApiCall a{.start = s.integer(0),
                     .end = std::max(s.integer(0), s.integer(1)),
                     .correlation = uint64_t(std::max<int64_t>(0, s.integer(4))),
                     .name = p.t.names.intern(name->second),
                     .thread = tidOf(global_tid)};
    // Schema 2.x exports repeat a call as a "CUDA backtrace" row with the same correlation id:
    // the call is the runtime or driver row.
    const std::string_view cls = classes[s.integer(5, 0)];
    const bool primary = cls.ends_with("CUDA_RUNTIME") || cls.ends_with("CUDA_DRIVER");
    if (a.correlation) {
      auto [it, inserted] = p.api_by_correlation.try_emplace(
          a.correlation, ProcessBuild::ApiRow{uint32_t(p.t.api_calls.size()), primary});
      if (!inserted) {
        ++stats_.duplicate_api_rows;
        if (primary && !it->second.primary) {
          p.t.api_calls[it->second.index] = a;
          it->second.primary = true;
        }
        continue;
      }
    }
    p.span(a.start, a.end);
    p.t.api_calls.push_back(a);
  }
}

void FileImporter::readSyncs(const char* table) {
  const EnumNames types(db_, "ENUM_CUPTI_SYNC_TYPE",
                        {{0, "UNKNOWN"},
                         {1, "EVENT_SYNCHRONIZE"},
                         {2, "STREAM_WAIT_EVENT"},
                         {3, "STREAM_SYNCHRONIZE"},
                         {4, "CONTEXT_SYNCHRONIZE"}});
  auto s = db_.query(selectColumns(db_, table, {"start", "end", "deviceId", "streamId", "syncType"},
                                   {"correlationId", "globalPid"}));
  while (s.step()) {
    row();
    ProcessBuild& p = process(pidOf(s.integer(6)));
    model::HostSync h{.start = s.integer(0),
                      .end = std::max(s.integer(0), s.integer(1)),
                      .correlation = uint64_t(std::max<int64_t>(0, s.integer(5))),
                      .device = u32(s.integer(2)),
                      .stream = u32(s.integer(3)),
                      .kind = syncKind(types[s.integer(4)])};
    p.span(h.start, h.end);
    p.sync_records.push_back(h);
  }
}

void FileImporter::readNvtx(const char* table) {
  const EnumNames types(db_, "ENUM_NSYS_EVENT_TYPE",
                        {{34, "NvtxMark"}, {59, "NvtxPushPopRange"}, {60, "NvtxStartEndRange"}});
  auto s = db_.query(
      selectColumns(db_, table, {"start", "eventType"}, {"end", "text", "textId", "globalTid"}));
  while (s.step()) {
    row();
    const std::string_view type = types[s.integer(1)];
    const bool mark = type == "NvtxMark";
    if (!mark && type != "NvtxPushPopRange" && type != "NvtxStartEndRange")
      continue; // domains, categories
    const TimeNs start = s.integer(0);
    const TimeNs end = mark ? start : s.integer(2, -1);
    if (end < start) continue; // a range still open when the capture stopped
    const std::string_view name = s.isNull(3) ? string(s.integer(4)) : s.text(3);
    int64_t step = -1;
    model::RangeKind kind = model::nvtxRangeKind(name, &step);
    if (kind == model::RangeKind::Operator && !options_.include_operators) continue;
    if (mark && kind == model::RangeKind::Step) kind = model::RangeKind::Annotation; // no length
    ProcessBuild& p = process(pidOf(s.integer(5)));
    p.span(start, end);
    p.t.ranges.push_back({.start = start,
                          .end = end,
                          .name = p.t.names.intern(name),
                          .thread = tidOf(s.integer(5)),
                          .kind = kind,
                          .step = step});
  }
}

} // namespace gpuwise::advisor::nsys
