// The import of one Nsight Systems SQLite export (nsys_importer.h): one FileImporter per file,
// reading each table once, row by row, into one ProcessBuild per process. The table readers are
// in nsys_tables.cpp; the file's identity, devices and the joins in nsys_importer.cpp.
//
// One thread. Throws SqliteError (the importer turns it into "<file>: <problem>").
#pragma once

#include "advisor/import/nsys_importer.h"
#include "advisor/import/sqlite_db.h"
#include "profiler/model/record_limits.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuwise::advisor::nsys {

using model::TimeNs;

// nsys serializes a process or thread as one integer: hardware and VM ids above bit 48, the pid
// in bits 24..47, the tid in bits 0..23.
inline int64_t pidOf(int64_t global_id) {
  return (global_id >> 24) & 0xFFFFFF;
}
inline uint32_t tidOf(int64_t global_id) {
  return uint32_t(global_id & 0xFFFFFF);
}
inline uint32_t u32(int64_t v) {
  return v < 0 ? 0 : uint32_t(v > int64_t(UINT32_MAX) ? UINT32_MAX : v);
}

struct ProcessBuild {
  model::ProcessTrace t;
  std::unordered_map<int64_t, model::NameId> names; // StringIds id -> this trace's NameId
  struct ApiRow {
    uint32_t index;
    bool primary; // a runtime or driver row, not a repeat of one
  };
  std::unordered_map<uint64_t, ApiRow> api_by_correlation;
  std::vector<model::HostSync> sync_records;
  TimeNs first = LLONG_MAX, last = LLONG_MIN;

  // The process's span, of plausible times only: one absurd row must not stretch it.
  void span(TimeNs start, TimeNs end) {
    if (!model::plausibleTime(start) || !model::plausibleTime(end)) return;
    first = std::min(first, start);
    last = std::max(last, std::max(start, end));
  }
  uint64_t recordCount() const { return t.eventCount() + sync_records.size(); }
};

class FileImporter {
public:
  // Opens the file and checks that it is an Nsight Systems export.
  FileImporter(const std::string& path, const NsysImportOptions& options, NsysImportStats& stats);

  // Rows of the tables run() reads, for progress.
  uint64_t rowsToRead() const;
  // One ProcessTrace per process, in pid order. `rows_done` counts across files, of `rows_total`.
  std::vector<model::ProcessTrace> run(uint64_t* rows_done, uint64_t rows_total);

private:
  // The tables read row by row, in this order (names first: the others refer to them), each by
  // its reader; a table the export lacks is skipped. Progress counts their rows.
  struct TableReader {
    const char* table;
    void (FileImporter::*read)(const char* table);
  };
  static const std::array<TableReader, 8> kTableReaders;

  void readStrings(const char* table);
  void readKernels(const char* table);
  void readCopies(const char* table);
  void readMemsets(const char* table);
  void readAllocations(const char* table); // nsys profile --cuda-memory-usage=true
  void readApiCalls(const char* table);
  void readSyncs(const char* table);
  void readNvtx(const char* table);
  std::vector<model::DeviceInfo> readDevices();
  void readIdentity(std::map<int64_t, std::string>* names, std::string* host,
                    std::string* exporter);

  ProcessBuild& process(int64_t pid) { return procs_[pid]; }
  // The processes run() returns, by pid: all of them, or the kMaxProcessesPerTrace with the most
  // records (the others counted in processes_dropped_).
  std::vector<std::pair<int64_t, ProcessBuild*>> keptProcesses();
  std::string_view string(int64_t id) const {
    auto it = strings_.find(id);
    return it == strings_.end() ? std::string_view() : std::string_view(it->second);
  }
  model::NameId intern(ProcessBuild& p, int64_t string_id) {
    auto [it, inserted] = p.names.try_emplace(string_id, 0);
    if (inserted) it->second = p.t.names.intern(string(string_id));
    return it->second;
  }
  void row() {
    ++stats_.rows;
    if ((++*rows_done_ & 0xFFFF) == 0 && options_.progress)
      options_.progress(*rows_done_, rows_total_);
  }

  SqliteDb db_;
  const NsysImportOptions& options_;
  NsysImportStats& stats_;
  uint64_t* rows_done_ = nullptr;
  uint64_t rows_total_ = 0;
  std::unordered_map<int64_t, std::string> strings_;
  std::map<int64_t, ProcessBuild> procs_; // by pid
  uint64_t processes_dropped_ = 0, process_events_dropped_ = 0;
};

} // namespace gpuwise::advisor::nsys
