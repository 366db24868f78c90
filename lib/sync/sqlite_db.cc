#include "sync/sqlite_db.h"

#include <sqlite3.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <thread>

namespace ferry::sync {
namespace {

// sqlite3_open_v2 of name (path, or a URI of it) with flags, never through
// a symbolic link; IOError naming path.
Result<sqlite3*> OpenRaw(const std::string& name, const std::string& path,
                         int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(name.c_str(), &raw,
                           flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    return Status::IOError(path, "cannot open the database: " + msg);
  }
  return raw;
}

}  // namespace

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, int busy_ms,
                                     bool durable) {
  FERRY_ASSIGN_OR_RETURN(
      sqlite3 * raw,
      OpenRaw(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
  std::unique_ptr<Db> db(new Db(raw, path));
  sqlite3_busy_timeout(raw, busy_ms);
  // Switching a new database to WAL while another process opens it too can
  // fail with "database is locked" at once: SQLite does not call the busy
  // handler there. Retried (10 ms steps) for up to busy_ms.
  Status s;
  for (int waited = 0;; waited += 10) {
    // synchronous first: switching a new database to WAL syncs as it says.
    s = db->Exec(durable ? "PRAGMA synchronous=NORMAL; PRAGMA journal_mode=WAL;"
                         : "PRAGMA synchronous=OFF; PRAGMA journal_mode=WAL;");
    if (!s.IsUnavailable() || waited >= busy_ms) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FERRY_RETURN_IF_ERROR(s);
  return db;
}

Result<std::unique_ptr<Db>> Db::OpenImmutable(const std::string& path) {
  // A URI: every byte but the unreserved ones %-escaped ('?', '#', '%').
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' ||
        c == '~') {
      uri += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      uri += buf;
    }
  }
  uri += "?immutable=1";
  FERRY_ASSIGN_OR_RETURN(
      sqlite3 * raw,
      OpenRaw(uri, path, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI));
  return std::unique_ptr<Db>(new Db(raw, path));
}

Db::~Db() { sqlite3_close_v2(db_); }

void Db::NoCheckpointOnClose() {
  sqlite3_db_config(db_, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
}

Status Db::Error(int rc, std::string_view what) const {
  std::string msg = std::string(what) + ": " + sqlite3_errmsg(db_);
  if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB)
    return Status::Corruption(path_, msg);
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
    return Status::Unavailable(path_, msg);
  return Status::IOError(path_, msg);
}

Status Db::Exec(std::string_view sql) {
  std::string s(sql);
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return Error(rc, s.substr(0, 60));
  return Status::OK();
}

Result<Stmt> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()),
                              &stmt, nullptr);
  if (rc != SQLITE_OK) return Error(rc, sql.substr(0, 60));
  return Stmt(this, stmt);
}

Stmt::~Stmt() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Stmt::Stmt(Stmt&& o) noexcept
    : db_(o.db_), stmt_(o.stmt_), bind_error_(std::move(o.bind_error_)) {
  o.stmt_ = nullptr;
}

Stmt& Stmt::Bind(int i, int64_t v) {
  int rc = sqlite3_bind_int64(stmt_, i, v);
  if (rc != SQLITE_OK && bind_error_.ok()) bind_error_ = db_->Error(rc, "bind");
  return *this;
}

Stmt& Stmt::Bind(int i, std::string_view text) {
  int rc = sqlite3_bind_text(stmt_, i, text.data(),
                             static_cast<int>(text.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_error_.ok()) bind_error_ = db_->Error(rc, "bind");
  return *this;
}

Stmt& Stmt::BindBlob(int i, std::string_view bytes) {
  int rc = sqlite3_bind_blob(stmt_, i, bytes.data(),
                             static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_error_.ok()) bind_error_ = db_->Error(rc, "bind");
  return *this;
}

Result<bool> Stmt::Step() {
  if (!bind_error_.ok()) return bind_error_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, sqlite3_sql(stmt_));
}

Status Stmt::Run() {
  auto r = Step();
  Reset();
  if (!r.ok()) return r.status();
  return Status::OK();
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = Status::OK();
}

int64_t Stmt::Int(int col) const { return sqlite3_column_int64(stmt_, col); }

std::string_view Stmt::Blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string_view(static_cast<const char*>(p),
                              static_cast<size_t>(n))
           : std::string_view();
}

}  // namespace ferry::sync
