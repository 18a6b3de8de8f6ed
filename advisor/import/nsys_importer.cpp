#include "advisor/import/nsys_importer.h"

#include "advisor/import/api_join.h"
#include "advisor/import/heap_tuning.h"
#include "advisor/import/nsys_file_importer.h"
#include "profiler/model/printable_text.h"
#include "profiler/model/record_limits.h"

#include <memory>
#include <new>
#include <set>
#include <utility>

namespace gpuwise::advisor {
namespace nsys {
namespace {

// "GPU-<uuid>", as NVML and the live report spell it.
std::string nvmlUuid(std::string_view uuid) {
  if (uuid.empty() || uuid.starts_with("GPU-") || uuid.starts_with("MIG-"))
    return std::string(uuid);
  return "GPU-" + std::string(uuid);
}

} // namespace

std::vector<std::pair<int64_t, ProcessBuild*>> FileImporter::keptProcesses() {
  std::vector<std::pair<int64_t, ProcessBuild*>> kept;
  for (auto& [pid, p] : procs_)
    kept.emplace_back(pid, &p);
  if (kept.size() <= model::kMaxProcessesPerTrace) return kept;
  // The busiest processes are the ones the capture was made for; the rest are counted.
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second->recordCount() > b.second->recordCount();
  });
  for (size_t i = model::kMaxProcessesPerTrace; i < kept.size(); ++i) {
    ++processes_dropped_;
    process_events_dropped_ += kept[i].second->recordCount();
  }
  kept.resize(model::kMaxProcessesPerTrace);
  std::sort(kept.begin(), kept.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return kept;
}

const std::array<FileImporter::TableReader, 8> FileImporter::kTableReaders = {{
    {"StringIds", &FileImporter::readStrings},
    {"CUPTI_ACTIVITY_KIND_KERNEL", &FileImporter::readKernels},
    {"CUPTI_ACTIVITY_KIND_MEMCPY", &FileImporter::readCopies},
    {"CUPTI_ACTIVITY_KIND_MEMSET", &FileImporter::readMemsets},
    {"CUDA_GPU_MEMORY_USAGE_EVENTS", &FileImporter::readAllocations},
    {"CUPTI_ACTIVITY_KIND_RUNTIME", &FileImporter::readApiCalls},
    {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", &FileImporter::readSyncs},
    {"NVTX_EVENTS", &FileImporter::readNvtx},
}};

FileImporter::FileImporter(const std::string& path, const NsysImportOptions& options,
                           NsysImportStats& stats)
    : db_(path), options_(options), stats_(stats) {
  if (!db_.hasTable("StringIds"))
    throw SqliteError(
        "an SQLite database, but not an Nsight Systems export (it has no StringIds table)");
}

uint64_t FileImporter::rowsToRead() const {
  uint64_t rows = 0;
  for (const auto& r : kTableReaders)
    rows += db_.rowCount(r.table);
  return rows;
}

std::vector<model::DeviceInfo> FileImporter::readDevices() {
  std::vector<model::DeviceInfo> out;
  const char* table = "TARGET_INFO_GPU";
  if (!db_.hasTable(table)) return out;
  auto s =
      db_.query(selectColumns(db_, table, {"id"},
                              {"name", "uuid", "totalMemory", "smCount", "computeMajor",
                               "computeMinor", "maxWarpsPerSm", "threadsPerWarp", "maxBlocksPerSm",
                               "maxRegistersPerSm", "maxShmemPerSm", "maxShmemPerBlockOptin"}));
  std::set<int64_t> seen;
  while (s.step()) {
    // A capture of several nodes lists each node's devices under the same ids; kernels name the
    // id only, so the first listing stands for all.
    if (!seen.insert(s.integer(0)).second) continue;
    model::DeviceInfo d;
    d.index = u32(s.integer(0));
    d.name = std::string(s.text(1));
    d.uuid = nvmlUuid(s.text(2));
    d.memory_total_bytes = uint64_t(std::max<int64_t>(0, s.integer(3)));
    d.sm_count = u32(s.integer(4));
    d.compute_major = int(s.integer(5));
    d.compute_minor = int(s.integer(6));
    d.warp_size = u32(s.integer(8));
    d.max_threads_per_sm = u32(s.integer(7) * s.integer(8));
    d.max_blocks_per_sm = u32(s.integer(9));
    d.registers_per_sm = u32(s.integer(10));
    d.shared_memory_per_sm = u32(s.integer(11));
    d.max_shared_memory_per_block = u32(s.integer(12));
    out.push_back(std::move(d));
  }
  return out;
}

void FileImporter::readIdentity(std::map<int64_t, std::string>* names, std::string* host,
                                std::string* exporter) {
  if (db_.hasTable("PROCESSES")) {
    auto s = db_.query(selectColumns(db_, "PROCESSES", {"pid"}, {"name"}));
    while (s.step())
      (*names)[s.integer(0)] = std::string(s.text(1));
  }
  if (db_.hasTable("TARGET_INFO_SYSTEM_ENV")) {
    auto s = db_.query(selectColumns(db_, "TARGET_INFO_SYSTEM_ENV", {"name", "value"}, {}));
    while (s.step())
      if (s.text(0) == "Hostname") *host = std::string(s.text(1));
  }
  // The exporter's version: META_DATA_EXPORT in schema 3, EXPORT_META_DATA in schema 2.
  for (const char* table : {"META_DATA_EXPORT", "EXPORT_META_DATA"}) {
    if (!db_.hasTable(table)) continue;
    auto s = db_.query(selectColumns(db_, table, {"name", "value"}, {}));
    std::string product, schema;
    while (s.step()) {
      if (s.text(0) == "EXPORT_PRODUCT_VERSION") product = std::string(s.text(1));
      if (s.text(0) == "EXPORT_SCHEMA_VERSION") schema = std::string(s.text(1));
    }
    if (!product.empty()) *exporter = "Nsight Systems " + product;
    if (!schema.empty())
      *exporter += (exporter->empty() ? "" : ", ") + std::string("schema ") + schema;
    break;
  }
}

std::vector<model::ProcessTrace> FileImporter::run(uint64_t* rows_done, uint64_t rows_total) {
  rows_done_ = rows_done;
  rows_total_ = rows_total;
  std::vector<model::DeviceInfo> devices;
  std::map<int64_t, std::string> process_names;
  std::string host, exporter;
  const char* reading = "";
  try {
    for (const auto& r : kTableReaders) {
      reading = r.table;
      if (db_.hasTable(r.table)) (this->*r.read)(r.table);
    }
    reading = "TARGET_INFO_GPU";
    devices = readDevices();
    reading = "the process names";
    readIdentity(&process_names, &host, &exporter);
  } catch (const SqliteError& e) {
    throw SqliteError(std::string("reading ") + reading + ": " + e.what());
  }

  std::vector<model::ProcessTrace> out;
  for (auto& [pid, p] : keptProcesses()) {
    model::ProcessTrace& t = p->t;
    joinApiCalls(t, std::move(p->sync_records), SyncRecordMerge::AnyKind);
    model::dropAbsurdTimes(t);
    t.info.pid = pid;
    if (auto it = process_names.find(pid); it != process_names.end()) t.info.command = it->second;
    t.info.host = host;
    t.info.tier = model::CollectionTier::Imported;
    t.info.tier_reason =
        "Nsight Systems SQLite export" + (exporter.empty() ? "" : " (" + exporter + ")");
    if (p->first <= p->last) {
      t.wall_start = p->first;
      t.wall_end = p->last;
    }
    out.push_back(std::move(t));
  }
  procs_.clear();
  if (!out.empty()) {
    out.front().limits.processes_dropped += processes_dropped_;
    out.front().limits.process_events_dropped += process_events_dropped_;
  }
  model::boundDevices(out);
  for (model::ProcessTrace& t : out) {
    // The devices this process used, as the live report lists them.
    for (uint32_t index : t.activeDevices()) {
      auto it = std::find_if(devices.begin(), devices.end(),
                             [&](const auto& d) { return d.index == index; });
      t.devices.push_back(it != devices.end() ? *it : model::DeviceInfo{.index = index});
    }
    model::boundIdentity(t);
    t.sortByTime();
  }
  return out;
}

} // namespace nsys

NsysImportResult importNsys(const std::vector<std::string>& paths,
                            const NsysImportOptions& options) {
  tuneAdvisorHeap(); // as the Kineto import: freed record vectors' pages are reused
  NsysImportResult result;
  result.trace.source.kind = model::SourceKind::Nsys;
  std::string current;
  try {
    std::vector<std::unique_ptr<nsys::FileImporter>> files;
    uint64_t total = 0;
    for (const auto& path : paths) {
      current = path;
      files.push_back(std::make_unique<nsys::FileImporter>(path, options, result.stats));
      total += files.back()->rowsToRead();
    }
    uint64_t done = 0;
    for (size_t i = 0; i < files.size(); ++i) {
      current = paths[i];
      for (auto& t : files[i]->run(&done, total))
        result.trace.processes.push_back(std::move(t));
      files[i].reset(); // closes the file
      result.trace.source.files.push_back(paths[i]);
    }
  } catch (const SqliteError& e) {
    result = {};
    // SQLite quotes the file (a malformed schema's table name): its bytes are escaped, so the
    // error stays one printable line.
    result.error = current + ": " + model::printableText(e.what());
  } catch (const std::bad_alloc&) {
    result = {};
    result.error = current + ": out of memory while importing";
  }
  return result;
}

} // namespace gpuwise::advisor
