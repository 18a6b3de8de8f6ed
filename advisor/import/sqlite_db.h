// A read-only SQLite database and its statements, for the importers of SQLite trace exports
// (Nsight Systems). Errors are one line and thrown as SqliteError, which the importer turns into
// "<file>: <problem>"; nothing here writes to the file, takes a lock a writer would wait on, or
// creates a journal.
//
// One thread per Db.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpuwise::advisor {

struct SqliteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class SqliteStmt {
public:
  SqliteStmt(sqlite3* db, const std::string& sql);
  ~SqliteStmt() { sqlite3_finalize(stmt_); }
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;

  // The next row; false at the end. Throws SqliteError on a read error (a corrupt page).
  bool step();
  bool isNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t integer(int col, int64_t if_null = 0) const {
    return isNull(col) ? if_null : sqlite3_column_int64(stmt_, col);
  }
  std::string_view text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p ? std::string_view(p, size_t(sqlite3_column_bytes(stmt_, col))) : std::string_view();
  }

private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDb {
public:
  // Opens `path` read-only. Throws SqliteError when it cannot be opened or is not a database.
  explicit SqliteDb(const std::string& path);
  ~SqliteDb() { sqlite3_close(db_); }
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  bool hasTable(const std::string& table) const { return tables_.count(table) > 0; }
  // The table's column names, empty when there is no such table.
  std::set<std::string> columns(const std::string& table) const;
  // Rows in the table, as its largest rowid (0 when there is none), for progress.
  uint64_t rowCount(const std::string& table) const;
  SqliteStmt query(const std::string& sql) const { return SqliteStmt(db_, sql); }

private:
  sqlite3* db_ = nullptr;
  std::set<std::string> tables_;
};

// "SELECT a, b, NULL, ... FROM table": `required` columns must exist (else SqliteError naming the
// first one missing), `optional` ones read as NULL where the export's schema lacks them, so one
// query serves every schema version. Column i of a row is the i-th of required then optional.
std::string selectColumns(const SqliteDb& db, const std::string& table,
                          const std::vector<std::string>& required,
                          const std::vector<std::string>& optional);

} // namespace gpuwise::advisor
