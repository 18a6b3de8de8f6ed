#include "advisor/import/sqlite_db.h"

#include <algorithm>
#include <cstdio>

namespace gpuwise::advisor {

namespace {
std::string quoted(const std::string& name) {
  std::string q = "\"";
  for (char c : name)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + '"';
}
} // namespace

SqliteStmt::SqliteStmt(sqlite3* db, const std::string& sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.c_str(), int(sql.size()), &stmt_, nullptr) != SQLITE_OK)
    throw SqliteError(sqlite3_errmsg(db));
}

bool SqliteStmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw SqliteError(sqlite3_errmsg(db_));
}

SqliteDb::SqliteDb(const std::string& path) {
  // Read-only, no mutex (one thread), and the file taken as it is: an export is never written
  // while we read it, and a read-only folder (a mounted volume of traces) must not stop us.
  const std::string uri = "file:" + [&] {
    std::string escaped;
    for (char c : path) {
      if (c == '%' || c == '?' || c == '#') {
        char buf[4];
        std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
        escaped += buf;
      } else {
        escaped += c;
      }
    }
    return escaped;
  }() + "?immutable=1";
  const int rc = sqlite3_open_v2(
      uri.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError("cannot open as SQLite: " + msg);
  }
  try {
    // The first read of the schema is where a file that only looks like SQLite fails.
    SqliteStmt s(db_, "SELECT name FROM sqlite_master WHERE type = 'table'");
    while (s.step())
      tables_.insert(std::string(s.text(0)));
  } catch (const SqliteError& e) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(std::string("not a readable SQLite database (") + e.what() + ")");
  }
}

std::set<std::string> SqliteDb::columns(const std::string& table) const {
  std::set<std::string> out;
  if (!hasTable(table)) return out;
  SqliteStmt s(db_, "PRAGMA table_info(" + quoted(table) + ")");
  while (s.step())
    out.insert(std::string(s.text(1)));
  return out;
}

uint64_t SqliteDb::rowCount(const std::string& table) const {
  if (!hasTable(table)) return 0;
  // The largest rowid, found in the b-tree's last page, where count(*) would read the whole table
  // once more before the import reads it: exports only append, so it is the number of rows.
  // A WITHOUT ROWID table (nsys writes none) has no rowid: it counts as 0 for progress.
  try {
    SqliteStmt s(db_, "SELECT max(rowid) FROM " + quoted(table));
    return s.step() ? uint64_t(std::max<int64_t>(0, s.integer(0))) : 0;
  } catch (const SqliteError&) {
    return 0;
  }
}

std::string selectColumns(const SqliteDb& db, const std::string& table,
                          const std::vector<std::string>& required,
                          const std::vector<std::string>& optional) {
  const auto have = db.columns(table);
  std::string sql = "SELECT ";
  bool first = true;
  for (const auto& c : required) {
    if (!have.count(c))
      throw SqliteError("table " + table + " has no column " + c +
                        " (an export schema gpuwise cannot read)");
    sql += (first ? "" : ", ") + quoted(c);
    first = false;
  }
  for (const auto& c : optional) {
    sql += (first ? "" : ", ") + (have.count(c) ? quoted(c) : std::string("NULL"));
    first = false;
  }
  return sql + " FROM " + quoted(table);
}

} // namespace gpuwise::advisor
