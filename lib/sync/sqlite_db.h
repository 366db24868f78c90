// A thin RAII layer over SQLite for ferry's local indexes (the publish stat
// cache, the sync cache index: docs/sync.md). Every sqlite3 result code
// becomes a Status here and nowhere else. Databases are opened in WAL mode
// with a busy timeout, so several processes can share one.
//
// Thread-safety: a Db and its statements are used by one thread at a time.
#ifndef FERRY_LIB_SYNC_SQLITE_DB_H_
#define FERRY_LIB_SYNC_SQLITE_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ferry/result.h"
#include "ferry/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ferry::sync {

class Db;

// A prepared statement: Bind* (1-based), then Step until it returns false
// (no more rows), reading columns (0-based) while it returns true. Reset
// makes it ready to run again with new bindings.
class Stmt {
 public:
  ~Stmt();
  Stmt(Stmt&&) noexcept;
  Stmt& operator=(Stmt&&) = delete;

  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, std::string_view text);
  Stmt& BindBlob(int i, std::string_view bytes);
  // True: a row is ready. False: done. Errors come back as the Status.
  Result<bool> Step();
  // Runs a statement that returns no rows, then resets it.
  Status Run();
  void Reset();

  int64_t Int(int col) const;
  std::string_view Blob(int col) const;  // valid until the next Step/Reset

 private:
  friend class Db;
  Stmt(Db* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Db* db_;
  sqlite3_stmt* stmt_;
  Status bind_error_;
};

class Db {
 public:
  // Opens (creating) the database at path: WAL journal, synchronous=NORMAL
  // (OFF when not durable: no fsync at all; a power loss may roll back
  // the last transactions), a busy timeout of busy_ms. IOError naming the
  // path on failure.
  static Result<std::unique_ptr<Db>> Open(const std::string& path,
                                          int busy_ms = 30000,
                                          bool durable = true);
  // Opens the database at path to read only, writing nothing at all (no
  // lock, no WAL or shared-memory file: SQLite's immutable=1), for a dry
  // run. What a WAL not yet checkpointed holds is not seen.
  static Result<std::unique_ptr<Db>> OpenImmutable(const std::string& path);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Closing does not checkpoint the WAL into the database (SQLite's
  // default on the last connection's close: up to ~4 MB copied while the
  // process waits to exit); the next process to open it, or an automatic
  // checkpoint at 1,000 pages, does.
  void NoCheckpointOnClose();

  Status Exec(std::string_view sql);
  Result<Stmt> Prepare(std::string_view sql);
  // The last error as a Status naming the database and what was attempted.
  Status Error(int rc, std::string_view what) const;
  const std::string& path() const { return path_; }

 private:
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_SQLITE_DB_H_
