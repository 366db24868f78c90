#include "sync/cache.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "ferry/atomic_file.h"
#include "sync/fs_util.h"
#include "sync/sqlite_db.h"

namespace ferry::sync {

static_assert(sizeof(CacheKey) <= 64,
              "a million keys in a sync of a million files");
namespace {

constexpr int kBusyTimeoutMs = 60000;
constexpr uint32_t kObjectMode = 0444;

const char kSchema[] =
    "CREATE TABLE IF NOT EXISTS objects("
    " rk TEXT NOT NULL, hash TEXT NOT NULL, size INTEGER NOT NULL,"
    " last_use INTEGER NOT NULL, ino INTEGER NOT NULL DEFAULT 0,"
    " mtime INTEGER NOT NULL DEFAULT 0, ctime INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY(rk, hash)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS objects_lru ON objects(last_use);"
    "CREATE TABLE IF NOT EXISTS pins("
    " view TEXT NOT NULL, rk TEXT NOT NULL, hash TEXT NOT NULL,"
    " PRIMARY KEY(view, rk, hash)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS pins_object ON pins(rk, hash);"
    "CREATE TABLE IF NOT EXISTS listed("
    " rk TEXT NOT NULL, path TEXT NOT NULL, etag TEXT NOT NULL,"
    " size INTEGER NOT NULL, hash TEXT NOT NULL,"
    " PRIMARY KEY(rk, path)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS reserved("
    " owner INTEGER NOT NULL, rk TEXT NOT NULL, hash TEXT NOT NULL,"
    " size INTEGER NOT NULL, PRIMARY KEY(owner, rk, hash)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS reserved_object ON reserved(rk, hash);";

// The reservations' table as a dry run reads an index older than it (none
// there: nothing reserved); unqualified names find temp's first.
const char kNoReservations[] =
    "CREATE TEMP TABLE reserved(owner INTEGER NOT NULL, rk TEXT NOT NULL,"
    " hash TEXT NOT NULL, size INTEGER NOT NULL,"
    " PRIMARY KEY(owner, rk, hash)) WITHOUT ROWID;";

// Room-making's inputs, per connection: views whose pins no longer count
// (a parameter each hit SQLite's limit at as many gone views), and the
// owners of reservations that count (their slot held).
const char kRoomTables[] =
    "CREATE TEMP TABLE IF NOT EXISTS ferry_gone(view TEXT PRIMARY KEY);"
    "CREATE TEMP TABLE IF NOT EXISTS ferry_live(owner INTEGER PRIMARY KEY);";

// Slots of <dir>/locks/reservations a Cache tries for its own (one per
// process sharing the cache at once, in practice).
constexpr int64_t kSlots = int64_t{1} << 20;

bool IsHex(std::string_view s, size_t n) {
  if (s.size() != n) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Runs body inside one write transaction; rolls back when it fails.
// BEGIN IMMEDIATE takes the write lock at once (waiting up to the busy
// timeout), so a read-then-write transaction never deadlocks with another
// process's.
template <typename F>
Status InTransaction(Db* db, F&& body) {
  FERRY_RETURN_IF_ERROR(db->Exec("BEGIN IMMEDIATE"));
  Status s = body();
  if (s.ok()) s = db->Exec("COMMIT");
  if (!s.ok()) (void)db->Exec("ROLLBACK");
  return s;
}

std::string Text(const Stmt& st, int col) { return std::string(st.Blob(col)); }

std::string NameOf(const CacheKey& k) {
  return k.remote_key + "/" + k.hash.ToHex();
}

std::string ReservationsLock(const std::string& dir) {
  return JoinPath(dir, "locks/reservations");
}

// Adds keys to owner's reservation, in key order (as Pin: one B-tree walk).
Status InsertReserved(Db* db, int64_t owner,
                      const std::vector<CacheKey>& keys) {
  FERRY_ASSIGN_OR_RETURN(
      auto ins,
      db->Prepare("INSERT OR IGNORE INTO reserved(owner, rk, hash, size)"
                  " VALUES(?1, ?2, ?3, ?4)"));
  std::vector<std::tuple<std::string_view, std::string, uint64_t>> sorted;
  sorted.reserve(keys.size());
  for (const CacheKey& k : keys)
    sorted.emplace_back(k.remote_key, k.hash.ToHex(), k.size);
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [rk, hex, size] : sorted)
    FERRY_RETURN_IF_ERROR(ins.Bind(1, owner)
                              .Bind(2, rk)
                              .Bind(3, hex)
                              .Bind(4, static_cast<int64_t>(size))
                              .Run());
  return Status::OK();
}

// Caches made before objects had stamps get the columns (0: never matches,
// so such an object is re-hashed once when next looked up).
Status AddStampColumns(Db* db) {
  if (db->Prepare("SELECT ino, mtime, ctime FROM objects LIMIT 0").ok())
    return Status::OK();
  Status s = InTransaction(db, [&] {
    return db->Exec(
        "ALTER TABLE objects ADD COLUMN ino INTEGER NOT NULL DEFAULT 0;"
        "ALTER TABLE objects ADD COLUMN mtime INTEGER NOT NULL DEFAULT 0;"
        "ALTER TABLE objects ADD COLUMN ctime INTEGER NOT NULL DEFAULT 0;");
  });
  if (!s.ok() &&
      db->Prepare("SELECT ino, mtime, ctime FROM objects LIMIT 0").ok())
    return Status::OK();  // another process added them
  return s;
}

// SQLite opens these names itself. Anything but a regular file at the
// journal's, WAL's or shared memory's name holds no index: a FIFO hung every
// sync (SQLite's open waited for a writer), a device or socket failed every
// one ("disk I/O error"), a link had SQLite write where it points. Such a
// name is removed (told in *removed); so is a FIFO, device or socket at the
// index's own name (the object files stay; a lookup indexes them again). A
// link there may lead to a real index (its pins): an error naming it, as a
// folder (which may hold someone's files) is.
Status ClearIndexNames(Env* env, const std::string& db_path,
                       std::vector<std::string>* removed, bool dry = false) {
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) {
    const std::string p = db_path + suffix;
    FERRY_ASSIGN_OR_RETURN(PathKind kind, LinkKind(p));
    if (kind == PathKind::kMissing || kind == PathKind::kFile) continue;
    if (kind == PathKind::kDir)
      return Status::FailedPrecondition(
          p, "is a folder where the cache's index belongs; remove it");
    if (kind == PathKind::kLink && *suffix == '\0')
      return Status::FailedPrecondition(
          p,
          "is a symbolic link; the cache's index must be a file in the cache: "
          "move the index back, or remove the link to start an empty one");
    if (!dry) {
      Status s = env->RemoveFile(p);
      if (!s.ok() && !s.IsNotFound()) return s;
    }
    if (removed) removed->push_back(p);
  }
  return Status::OK();
}

Result<std::unique_ptr<Db>> OpenIndex(const std::string& path, bool durable) {
  FERRY_ASSIGN_OR_RETURN(auto db, Db::Open(path, kBusyTimeoutMs, durable));
  FERRY_RETURN_IF_ERROR(
      InTransaction(db.get(), [&] { return db->Exec(kSchema); }));
  FERRY_RETURN_IF_ERROR(AddStampColumns(db.get()));
  return db;
}

// Drops what reservation slot `owner` holds, in a transaction of its own.
Status DropReservations(Db* db, int64_t owner) {
  return InTransaction(db, [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(
        auto del, db->Prepare("DELETE FROM reserved WHERE owner = ?1"));
    return del.Bind(1, owner).Run();
  });
}

}  // namespace

std::string IndexPath(const std::string& cache_dir) {
  return JoinPath(cache_dir, "index.sqlite");
}

bool IsDamagedIndex(const Status& s, const std::string& cache_dir) {
  return s.IsCorruption() &&
         s.message().find(IndexPath(cache_dir) + ": ") != std::string::npos;
}

Result<bool> SetDamagedIndexAside(Env* env, const std::string& cache_dir) {
  // One process at a time (Evict's lock); the first moves the index, the
  // others find a sound one.
  FERRY_ASSIGN_OR_RETURN(auto lock,
                         env->LockFile(JoinPath(cache_dir, "lock"), true));
  const std::string path = IndexPath(cache_dir);
  FERRY_RETURN_IF_ERROR(ClearIndexNames(env, path, nullptr));
  {
    // integrity_check, not quick_check: an index (objects_lru) that
    // disagrees with its table passed the quick one, and every sync failed.
    auto db = OpenIndex(path, /*durable=*/false);
    Status s = db.status();
    if (db.ok()) {
      auto st = (*db)->Prepare("PRAGMA integrity_check(1)");
      s = st.status();
      if (st.ok()) {
        auto row = st->Step();
        s = row.status();
        if (row.ok() && *row && st->Blob(0) != "ok")
          s = Status::Corruption(path, st->Blob(0));
      }
    }
    if (s.ok()) return false;  // another process set it aside already
    if (!s.IsCorruption()) return s;
  }
  // The WAL and shared memory go with it (first: a WAL left beside a new
  // index would be read into it); an older damaged index makes room.
  for (const char* suffix : {"-wal", "-shm", ""}) {
    const std::string aside = path + ".damaged" + suffix;
    FERRY_RETURN_IF_ERROR(RemoveAny(env, aside));
    Status s = env->RenameFile(path + suffix, aside);
    if (!s.ok() && !s.IsNotFound()) return s;
  }
  // The new index gets a row for every object file, so that --cache-limit
  // counts and evicts them before any lookup meets them; stamps 0: each is
  // re-hashed when next looked up.
  FERRY_ASSIGN_OR_RETURN(auto db, OpenIndex(path, /*durable=*/true));
  const std::string objects = JoinPath(cache_dir, "objects");
  FERRY_RETURN_IF_ERROR(InTransaction(db.get(), [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(
        auto st, db->Prepare("INSERT OR IGNORE INTO objects(rk, hash, size,"
                             " last_use) VALUES(?1, ?2, ?3, 0)"));
    auto remotes = env->GetChildren(objects);
    if (!remotes.ok()) return Status::OK();
    for (const DirEntry& r : *remotes) {
      if (!r.is_dir || !IsHex(r.name, 32)) continue;
      auto fans = env->GetChildren(JoinPath(objects, r.name));
      if (!fans.ok()) continue;
      for (const DirEntry& f : *fans) {
        if (!f.is_dir || !IsHex(f.name, 2)) continue;
        const std::string fdir = JoinPath(objects, r.name + "/" + f.name);
        auto files = env->GetChildren(fdir);
        if (!files.ok()) continue;
        for (const DirEntry& e : *files) {
          if (!IsHex(e.name, 32) || e.name.compare(0, 2, f.name) != 0) continue;
          auto stamp = StampOf(JoinPath(fdir, e.name));  // regular files only
          if (!stamp.ok()) continue;
          FERRY_RETURN_IF_ERROR(st.Bind(1, r.name)
                                    .Bind(2, e.name)
                                    .Bind(3, static_cast<int64_t>(stamp->size))
                                    .Run());
        }
      }
    }
    return Status::OK();
  }));
  return true;
}

std::string RemoteKey(std::string_view normalised_url) {
  return HashBytes(normalised_url).ToHex();
}

std::string DefaultCacheDir() {
  if (const char* c = std::getenv("FERRY_CACHE"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return JoinPath(x, "ferry");
  const char* home = std::getenv("HOME");
  return JoinPath(home && *home ? home : ".", ".cache/ferry");
}

Cache::Cache(Env* env, std::string dir, std::unique_ptr<Db> db)
    : env_(env), dir_(std::move(dir)), db_(std::move(db)) {}

Cache::~Cache() {
  // The reservation's rows, then its slot (another process may take it
  // once free, and drops what it finds there).
  if (slot_ >= 0) (void)DropReservations(db_.get(), slot_);
  slot_lock_.reset();
  db_.reset();  // closed before its private copy goes
  if (!temp_dir_.empty()) (void)RemoveTree(env_, temp_dir_);
}

Result<std::unique_ptr<Cache>> Cache::Open(Env* env, std::string dir,
                                           bool durable) {
  for (const char* sub : {"objects", "partial", "manifests"})
    FERRY_RETURN_IF_ERROR(env->CreateDirs(JoinPath(dir, sub)));
  std::vector<std::string> removed;
  FERRY_RETURN_IF_ERROR(ClearIndexNames(env, IndexPath(dir), &removed));
  FERRY_ASSIGN_OR_RETURN(auto db, OpenIndex(IndexPath(dir), durable));
  // --no-fsync syncs nothing anyway: the WAL is left for the next opener
  // (an old view's cleaner, after the sync exited) to checkpoint.
  if (!durable) db->NoCheckpointOnClose();
  std::unique_ptr<Cache> cache(new Cache(env, std::move(dir), std::move(db)));
  for (const std::string& p : removed)
    cache->warnings_.push_back(
        "removed " + p +
        ": not a regular file, at a name of the cache's index (SQLite's)");
  return cache;
}

Result<std::unique_ptr<Cache>> Cache::OpenForDryRun(Env* env, std::string dir) {
  // Read as it is, writing nothing in the cache (no folder, lock, WAL or
  // migration); an index that cannot be read so (missing, a name a sync
  // would clear, an older format, damaged) is read as an empty one. A link
  // or folder at its names is the error a sync gives.
  const std::string path = IndexPath(dir);
  std::vector<std::string> would;
  FERRY_RETURN_IF_ERROR(ClearIndexNames(env, path, &would, /*dry=*/true));
  std::string why, temp;
  if (!would.empty()) {
    why = "a sync would remove " + would[0] + ", not a regular file";
  } else if (env->FileExists(path)) {
    Result<std::unique_ptr<Db>> db = Status::NotFound(path);
    auto wal = env->Stat(path + "-wal");
    if (wal.ok() && wal->size > 0) {
      // A WAL not yet checkpointed (a --no-fsync sync, or one running)
      // holds rows immutable=1 does not see: a private copy of both is read.
      const char* t = std::getenv("TMPDIR");
      std::string tmpl =
          std::string(t && *t ? t : "/tmp") + "/ferry-dry-XXXXXX";
      if (::mkdtemp(tmpl.data()) == nullptr) {
        db = PosixError("a private copy of the index in TMPDIR " + tmpl, errno);
      } else {
        temp = tmpl;
        Hash128 h;
        uint64_t n = 0;
        Status c = Status::OK();
        for (const char* suffix : {"", "-wal"})
          if (c.ok())
            c = CopyFileHashing(env, path + suffix,
                                JoinPath(temp, "index.sqlite") + suffix, &h,
                                &n);
        db = c.ok() ? Db::Open(JoinPath(temp, "index.sqlite"), kBusyTimeoutMs,
                               false)
                    : Result<std::unique_ptr<Db>>(c);
      }
    } else {
      db = Db::OpenImmutable(path);
    }
    Status s = db.status();
    // This version's tables and columns (Open would add what is missing).
    for (const char* probe :
         {"SELECT rk, hash, size, last_use, ino, mtime, ctime FROM objects",
          "SELECT view, rk, hash FROM pins",
          "SELECT rk, path, etag, size, hash FROM listed"}) {
      if (s.ok()) s = (*db)->Prepare(std::string(probe) + " LIMIT 0").status();
    }
    // An index older than reservations has none.
    if (s.ok() &&
        !(*db)
             ->Prepare("SELECT owner, rk, hash, size FROM reserved LIMIT 0")
             .ok())
      s = (*db)->Exec(kNoReservations);
    if (s.ok()) {
      std::unique_ptr<Cache> cache(
          new Cache(env, std::move(dir), std::move(*db)));
      cache->temp_dir_ = std::move(temp);
      return cache;
    }
    why = s.ToString();
  }
  if (!temp.empty()) (void)RemoveTree(env, temp);
  FERRY_ASSIGN_OR_RETURN(auto db, Db::Open(":memory:", kBusyTimeoutMs, false));
  FERRY_RETURN_IF_ERROR(
      InTransaction(db.get(), [&] { return db->Exec(kSchema); }));
  std::unique_ptr<Cache> cache(new Cache(env, std::move(dir), std::move(db)));
  if (!why.empty())
    cache->warnings_.push_back("the cache's index cannot be read (" + why +
                               "): predicted as if it were empty");
  return cache;
}

std::string Cache::ObjectPath(const CacheKey& key) const {
  std::string hex = key.hash.ToHex();
  return dir_ + "/objects/" + key.remote_key + "/" + hex.substr(0, 2) + "/" +
         hex;
}

std::string Cache::PartialPath(const CacheKey& key) const {
  return dir_ + "/partial/" + key.remote_key + "/" + key.hash.ToHex();
}

void Cache::ListLeftovers(const std::string& remote_key) {
  leftovers_.clear();
  leftovers_rk_ = remote_key;
  auto children = env_->GetChildren(dir_ + "/partial/" + remote_key);
  leftovers_listed_ = children.ok() || children.status().IsNotFound();
  if (!children.ok()) return;
  odd_leftovers_.clear();
  for (const DirEntry& e : *children) {
    leftovers_.insert(e.name.substr(0, 32));
    if (!e.is_regular) odd_leftovers_.emplace(e.name.substr(0, 32), e.name);
  }
}

Status Cache::RemoveOddLeftovers(const std::string& remote_key,
                                 std::string_view name) {
  if (!leftovers_listed_ || remote_key != leftovers_rk_) return Status::OK();
  auto [from, to] = odd_leftovers_.equal_range(std::string(name.substr(0, 32)));
  for (auto it = from; it != to; ++it) {
    // The listing may not know a file's type (DT_UNKNOWN): asked again.
    FERRY_RETURN_IF_ERROR(RemoveUnlessRegular(
        env_, JoinPath(dir_ + "/partial/" + remote_key, it->second)));
  }
  return Status::OK();
}

bool Cache::MayHaveLeftovers(const CacheKey& key) const {
  return !leftovers_listed_ || key.remote_key != leftovers_rk_ ||
         leftovers_.count(key.hash.ToHex()) > 0;
}

std::string Cache::ManifestPath(const Hash128& id) const {
  return dir_ + "/manifests/" + id.ToHex();
}

Status Cache::IndexRow(const CacheKey& key) { return IndexRows({key}); }

// Each object's stamp is taken now: callers index a file only right after
// they verified (or moved in) its bytes.
Status Cache::IndexRows(const std::vector<CacheKey>& keys) {
  if (keys.empty()) return Status::OK();
  std::vector<FileStamp> stamps;
  stamps.reserve(keys.size());
  for (const CacheKey& key : keys) {
    auto st = StampOf(ObjectPath(key));
    stamps.push_back(st.ok() ? *st : FileStamp{});
  }
  return InTransaction(db_.get(), [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(
        auto st,
        db_->Prepare("INSERT INTO objects(rk, hash, size, last_use, ino,"
                     " mtime, ctime) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
                     " ON CONFLICT(rk, hash) DO UPDATE SET"
                     " last_use = excluded.last_use, ino = excluded.ino,"
                     " mtime = excluded.mtime, ctime = excluded.ctime"));
    const int64_t now = static_cast<int64_t>(env_->NowMicros());
    for (size_t i = 0; i < keys.size(); ++i)
      FERRY_RETURN_IF_ERROR(st.Bind(1, keys[i].remote_key)
                                .Bind(2, keys[i].hash.ToHex())
                                .Bind(3, static_cast<int64_t>(keys[i].size))
                                .Bind(4, now)
                                .Bind(5, static_cast<int64_t>(stamps[i].ino))
                                .Bind(6, stamps[i].mtime_ns)
                                .Bind(7, stamps[i].ctime_ns)
                                .Run());
    return Status::OK();
  });
}

Status Cache::RestampObjects(const std::vector<CacheKey>& keys) {
  std::vector<std::pair<CacheKey, FileStamp>> now;
  now.reserve(keys.size());
  for (const CacheKey& k : keys) {
    auto st = StampOf(ObjectPath(k));
    if (st.ok()) now.emplace_back(k, *st);
  }
  return Restamp(now);
}

Result<bool> Cache::StampMatches(const CacheKey& key, const FileStamp& stamp) {
  FERRY_ASSIGN_OR_RETURN(
      auto st, db_->Prepare("SELECT size, ino, mtime, ctime FROM objects"
                            " WHERE rk = ?1 AND hash = ?2"));
  st.Bind(1, key.remote_key).Bind(2, key.hash.ToHex());
  FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return false;
  FileStamp rec;
  rec.size = static_cast<uint64_t>(st.Int(0));
  rec.ino = static_cast<uint64_t>(st.Int(1));
  rec.mtime_ns = st.Int(2);
  rec.ctime_ns = st.Int(3);
  (void)st.Step();
  return rec.size == key.size && rec == stamp;
}

Status Cache::Restamp(
    const std::vector<std::pair<CacheKey, FileStamp>>& linked) {
  if (linked.empty()) return Status::OK();
  return InTransaction(db_.get(), [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(
        auto st, db_->Prepare("UPDATE objects SET ctime = ?1 WHERE rk = ?2"
                              " AND hash = ?3 AND size = ?4 AND ino = ?5 AND"
                              " mtime = ?6"));
    for (const auto& [k, f] : linked)
      FERRY_RETURN_IF_ERROR(st.Bind(1, f.ctime_ns)
                                .Bind(2, k.remote_key)
                                .Bind(3, k.hash.ToHex())
                                .Bind(4, static_cast<int64_t>(f.size))
                                .Bind(5, static_cast<int64_t>(f.ino))
                                .Bind(6, f.mtime_ns)
                                .Run());
    return Status::OK();
  });
}

Status Cache::DropRow(const CacheKey& key) {
  return InTransaction(db_.get(), [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(
        auto st,
        db_->Prepare("DELETE FROM objects WHERE rk = ?1 AND hash = ?2"));
    return st.Bind(1, key.remote_key).Bind(2, key.hash.ToHex()).Run();
  });
}

// A file under objects/ without a row: a crash between the rename and the
// index transaction. Trusted only after it hashes to its name.
Result<bool> Cache::RecoverFile(const CacheKey& key, const std::string& path,
                                bool read_only) {
  // An object's mode first (a chmod through a view's hard link undone): one
  // made unreadable (chmod 000 by its owner) failed every later sync of the
  // cache with "Permission denied", and was never fetched again.
  const Status mode = read_only ? Status::OK() : SetMode(path, kObjectMode);
  uint64_t size = 0;
  auto h = HashFile(env_, path, &size);
  if (!h.ok() && read_only && !h.status().IsNotFound()) {
    auto info = env_->Stat(path);
    return info.ok() && info->size == key.size;
  }
  if (!h.ok())
    return h.status().IsNotFound() ? false : Result<bool>(h.status());
  if (!(*h == key.hash) || size != key.size) {
    if (read_only) return false;
    Status s = env_->RemoveFile(path);
    if (!s.ok() && !s.IsNotFound()) return s;
    return false;
  }
  if (read_only) return true;
  FERRY_RETURN_IF_ERROR(mode);  // the object, but its mode stays wrong
  FERRY_RETURN_IF_ERROR(IndexRow(key));
  return true;
}

Result<bool> Cache::Lookup(const CacheKey& key, bool touch) {
  std::vector<bool> hit;
  FERRY_RETURN_IF_ERROR(LookupAll({key}, &hit));
  if (hit[0] && touch) FERRY_RETURN_IF_ERROR(Touch({key}));
  return bool{hit[0]};
}

Status Cache::LookupAll(const std::vector<CacheKey>& keys,
                        std::vector<bool>* hit) {
  return FindAll(keys, /*read_only=*/false, hit);
}

Status Cache::ProbeAll(const std::vector<CacheKey>& keys, Probe* probe) {
  probe->keys = keys;
  return FindAll(keys, /*read_only=*/true, &probe->hit, &probe->row);
}

Status Cache::FindAll(const std::vector<CacheKey>& keys, bool read_only,
                      std::vector<bool>* hit, std::vector<bool>* row) {
  // The rows first, in one read transaction (a snapshot: no lock per
  // statement); the files after it, where a row may be dropped or written.
  std::vector<FileStamp> recs(keys.size());
  std::vector<bool> have_row(keys.size());
  FERRY_RETURN_IF_ERROR(db_->Exec("BEGIN"));
  Status s = [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(
        auto st, db_->Prepare("SELECT size, ino, mtime, ctime FROM objects"
                              " WHERE rk = ?1 AND hash = ?2"));
    for (size_t i = 0; i < keys.size(); ++i) {
      st.Bind(1, keys[i].remote_key).Bind(2, keys[i].hash.ToHex());
      FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
      if (row) {
        FileStamp& rec = recs[i];
        rec.size = static_cast<uint64_t>(st.Int(0));
        rec.ino = static_cast<uint64_t>(st.Int(1));
        rec.mtime_ns = st.Int(2);
        rec.ctime_ns = st.Int(3);
        // Same hash, other size: not this object.
        have_row[i] = rec.size == keys[i].size;
      }
      st.Reset();
    }
    return Status::OK();
  }();
  Status end = db_->Exec(s.ok() ? "COMMIT" : "ROLLBACK");
  FERRY_RETURN_IF_ERROR(s);
  FERRY_RETURN_IF_ERROR(end);
  if (row) *row = have_row;
  hit->assign(keys.size(), false);
  // An object without a row is looked for only where its folders exist
  // (one stat per folder): a cold cache has none of them, and a stat per
  // object (twice per object: before and after its lock) was a sixth of
  // the time before a cold sync's first request.
  std::unordered_map<std::string, bool> folder_there;
  auto there = [&](const std::string& dir) {
    auto [it, fresh] = folder_there.try_emplace(dir, true);
    if (fresh) {
      struct stat st;
      it->second = ::stat(dir.c_str(), &st) == 0 ||
                   (errno != ENOENT && errno != ENOTDIR);
    }
    return it->second;
  };
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!have_row[i]) {
      const std::string path = ObjectPath(keys[i]);
      const std::string fanout = DirName(path);
      if (!there(DirName(fanout)) || !there(fanout)) continue;
    }
    FERRY_ASSIGN_OR_RETURN(
        bool h,
        CheckObject(keys[i], have_row[i] ? &recs[i] : nullptr, read_only));
    (*hit)[i] = h;
  }
  return Status::OK();
}

Result<bool> Cache::CheckObject(const CacheKey& key, const FileStamp* rec,
                                bool read_only) {
  const std::string path = ObjectPath(key);
  auto stamp = StampOf(path);
  if (!stamp.ok() &&
      stamp.status().code() == Status::Code::kFailedPrecondition) {
    // Not a regular file (a symbolic link, even to the right bytes, a
    // folder, a FIFO): never an object, which a view links to. Removed, so
    // that the object is fetched again; left in place, every sync failed
    // on it ("is not a regular file").
    if (read_only) return false;
    if (rec) FERRY_RETURN_IF_ERROR(DropRow(key));
    FERRY_ASSIGN_OR_RETURN(PathKind kind, LinkKind(path));
    Status gone = kind == PathKind::kDir ? RemoveTree(env_, path)
                                         : env_->RemoveFile(path);
    if (!gone.ok() && !gone.IsNotFound()) return gone;  // gone meanwhile: OK
    return false;
  }
  const bool there = stamp.ok();
  if (rec) {
    if (stamp.ok() && *stamp == *rec) return true;
    // Gone, or changed since its bytes were verified (written through a
    // view, chmod-ed, replaced): re-hashed before it is trusted again,
    // removed if it is no longer the object.
    if (!read_only) FERRY_RETURN_IF_ERROR(DropRow(key));
  }
  if (!there) return false;
  return RecoverFile(key, path, read_only);
}

Status Cache::Insert(const CacheKey& key, const std::string& src) {
  return InsertAll({{key, src}});
}

Status Cache::InsertAll(
    const std::vector<std::pair<CacheKey, std::string>>& items) {
  std::vector<CacheKey> keys;
  std::string last_dir;
  for (const auto& [key, src] : items) {
    const std::string path = ObjectPath(key);
    if (DirName(path) != last_dir) {
      last_dir = DirName(path);
      FERRY_RETURN_IF_ERROR(
          CreateOwnDirs(env_, JoinPath(dir_, "objects"), last_dir));
    }
    FERRY_RETURN_IF_ERROR(SetMode(src, kObjectMode));
    auto existing = env_->Stat(path);
    if (existing.ok() && existing->size == key.size) {
      // Another process got there first; its file is as good as ours (both
      // were verified) and may already be linked into views.
      Status s = env_->RemoveFile(src);
      if (!s.ok() && !s.IsNotFound()) return s;
    } else {
      FERRY_RETURN_IF_ERROR(env_->RenameFile(src, path));
    }
    keys.push_back(key);
  }
  // The files first, then their rows in one transaction: a crash between
  // leaves files without rows, which Lookup and Recover index.
  return IndexRows(keys);
}

Status Cache::Touch(const std::vector<CacheKey>& keys) {
  if (keys.empty()) return Status::OK();
  return InTransaction(db_.get(), [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(
        auto st,
        db_->Prepare(
            "UPDATE objects SET last_use = ?1 WHERE rk = ?2 AND hash = ?3"));
    const int64_t now = static_cast<int64_t>(env_->NowMicros());
    for (const CacheKey& k : keys)
      FERRY_RETURN_IF_ERROR(
          st.Bind(1, now).Bind(2, k.remote_key).Bind(3, k.hash.ToHex()).Run());
    return Status::OK();
  });
}

Result<bool> Cache::Adopt(const CacheKey& key, const std::string& src) {
  const std::string tmp = PartialPath(key) + ".adopt";
  FERRY_RETURN_IF_ERROR(
      CreateOwnDirs(env_, JoinPath(dir_, "partial"), DirName(tmp)));
  Hash128 h;
  uint64_t size = 0;
  FERRY_RETURN_IF_ERROR(CopyFileHashing(env_, src, tmp, &h, &size));
  if (!(h == key.hash) || size != key.size) {
    (void)env_->RemoveFile(tmp);
    return false;
  }
  FERRY_RETURN_IF_ERROR(Insert(key, tmp));
  return true;
}

Status Cache::Pin(const std::string& view, const std::vector<CacheKey>& keys) {
  return InTransaction(db_.get(), [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(auto del,
                           db_->Prepare("DELETE FROM pins WHERE view = ?1"));
    FERRY_RETURN_IF_ERROR(del.Bind(1, view).Run());
    FERRY_ASSIGN_OR_RETURN(
        auto ins, db_->Prepare("INSERT OR IGNORE INTO pins(view, rk, hash)"
                               " VALUES(?1, ?2, ?3)"));
    // In key order: the rows go into both B-trees one after another, not
    // at random places (a cold sync's 20,000 pins: ~250 ms in the
    // manifest's order, ~80 ms sorted).
    std::vector<std::pair<std::string_view, std::string>> sorted;
    sorted.reserve(keys.size());
    for (const CacheKey& k : keys)
      sorted.emplace_back(k.remote_key, k.hash.ToHex());
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [rk, hex] : sorted)
      FERRY_RETURN_IF_ERROR(ins.Bind(1, view).Bind(2, rk).Bind(3, hex).Run());
    return Status::OK();
  });
}

Status Cache::Unpin(const std::string& view) {
  return InTransaction(db_.get(), [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(auto del,
                           db_->Prepare("DELETE FROM pins WHERE view = ?1"));
    return del.Bind(1, view).Run();
  });
}

Result<std::vector<std::string>> Cache::PinnedViews() {
  FERRY_ASSIGN_OR_RETURN(auto st,
                         db_->Prepare("SELECT DISTINCT view FROM pins"));
  std::vector<std::string> views;
  while (true) {
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    views.push_back(Text(st, 0));
  }
  return views;
}

Status Cache::RememberListed(const std::string& remote_key,
                             const std::vector<ListedObject>& objects) {
  if (objects.empty()) return Status::OK();
  return InTransaction(db_.get(), [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(
        auto st,
        db_->Prepare("INSERT OR REPLACE INTO listed(rk, path, etag, size, hash)"
                     " VALUES(?1, ?2, ?3, ?4, ?5)"));
    for (const ListedObject& o : objects)
      FERRY_RETURN_IF_ERROR(st.Bind(1, remote_key)
                                .Bind(2, o.path)
                                .Bind(3, o.etag)
                                .Bind(4, static_cast<int64_t>(o.size))
                                .Bind(5, o.hash.ToHex())
                                .Run());
    return Status::OK();
  });
}

Result<bool> Cache::RecallListed(const std::string& remote_key,
                                 ListedObject* o) {
  if (o->etag.empty()) return false;
  FERRY_ASSIGN_OR_RETURN(
      auto st, db_->Prepare("SELECT hash FROM listed WHERE rk = ?1 AND"
                            " path = ?2 AND etag = ?3 AND size = ?4"));
  st.Bind(1, remote_key)
      .Bind(2, o->path)
      .Bind(3, o->etag)
      .Bind(4, static_cast<int64_t>(o->size));
  FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return false;
  auto h = Hash128::FromHex(Text(st, 0));
  (void)st.Step();
  if (!h.ok()) return false;
  o->hash = *h;
  return true;
}

Result<uint64_t> Cache::TotalBytes() {
  FERRY_ASSIGN_OR_RETURN(
      auto st, db_->Prepare("SELECT COALESCE(SUM(size), 0) FROM objects"));
  FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
  uint64_t total = row ? static_cast<uint64_t>(st.Int(0)) : 0;
  if (row) (void)st.Step();
  return total;
}

Status Cache::TakeSlot() {
  if (slot_ >= 0) return Status::OK();
  FERRY_RETURN_IF_ERROR(env_->CreateDirs(JoinPath(dir_, "locks")));
  const std::string path = ReservationsLock(dir_);
  FERRY_ASSIGN_OR_RETURN(auto set, ByteLockSet::Open(path));
  for (int64_t slot = 0; slot < kSlots; ++slot) {
    Status s = set->Lock(static_cast<uint64_t>(slot), false);
    if (s.IsUnavailable()) continue;
    FERRY_RETURN_IF_ERROR(s);
    // Ours now: what is there is a killed process's.
    FERRY_RETURN_IF_ERROR(DropReservations(db_.get(), slot));
    slot_ = slot;
    slot_lock_ = std::move(set);
    return Status::OK();
  }
  return Status::ResourceExhausted(
      path, "every slot is held: " + std::to_string(kSlots) +
                " processes reserve room in the cache at once");
}

Status Cache::Reserve(const std::vector<CacheKey>& keys) {
  if (keys.empty()) return Status::OK();
  FERRY_RETURN_IF_ERROR(TakeSlot());
  return InTransaction(db_.get(),
                       [&] { return InsertReserved(db_.get(), slot_, keys); });
}

Status Cache::Rekey(const std::vector<std::pair<CacheKey, CacheKey>>& from_to) {
  if (slot_ < 0 || from_to.empty()) return Status::OK();
  return InTransaction(db_.get(), [&]() -> Status {
    FERRY_ASSIGN_OR_RETURN(
        auto del, db_->Prepare("DELETE FROM reserved WHERE owner = ?1 AND"
                               " rk = ?2 AND hash = ?3"));
    std::vector<CacheKey> to;
    for (const auto& [f, t] : from_to) {
      FERRY_RETURN_IF_ERROR(del.Bind(1, slot_)
                                .Bind(2, f.remote_key)
                                .Bind(3, f.hash.ToHex())
                                .Run());
      to.push_back(t);
    }
    return InsertReserved(db_.get(), slot_, to);
  });
}

Status Cache::FindLiveOwners(bool drop_stale) {
  FERRY_RETURN_IF_ERROR(db_->Exec(kRoomTables));
  std::vector<uint64_t> owners;
  {
    FERRY_ASSIGN_OR_RETURN(auto st,
                           db_->Prepare("SELECT DISTINCT owner FROM reserved"));
    while (true) {
      FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      if (st.Int(0) >= 0) owners.push_back(static_cast<uint64_t>(st.Int(0)));
    }
  }
  // Held by a running Cache (this one's own included: asked through a
  // descriptor of its own).
  std::vector<bool> held;
  FERRY_RETURN_IF_ERROR(HeldBytes(ReservationsLock(dir_), owners, &held));
  FERRY_RETURN_IF_ERROR(db_->Exec("DELETE FROM temp.ferry_live"));
  FERRY_ASSIGN_OR_RETURN(
      auto live, db_->Prepare("INSERT INTO temp.ferry_live(owner) VALUES(?1)"));
  FERRY_ASSIGN_OR_RETURN(auto stale,
                         db_->Prepare("DELETE FROM reserved WHERE owner = ?1"));
  for (size_t i = 0; i < owners.size(); ++i) {
    const auto owner = static_cast<int64_t>(owners[i]);
    if (held[i]) {
      FERRY_RETURN_IF_ERROR(live.Bind(1, owner).Run());
    } else if (drop_stale) {
      FERRY_RETURN_IF_ERROR(stale.Bind(1, owner).Run());
    }
  }
  return Status::OK();
}

Status Cache::SetGoneViews(const std::vector<std::string>& views) {
  FERRY_RETURN_IF_ERROR(db_->Exec(kRoomTables));
  FERRY_RETURN_IF_ERROR(db_->Exec("DELETE FROM temp.ferry_gone"));
  if (views.empty()) return Status::OK();
  FERRY_ASSIGN_OR_RETURN(
      auto ins,
      db_->Prepare("INSERT OR IGNORE INTO temp.ferry_gone(view) VALUES(?1)"));
  for (const std::string& v : views)
    FERRY_RETURN_IF_ERROR(ins.Bind(1, v).Run());
  return Status::OK();
}

Status Cache::CountReserved(const Assumed* assumed, Room* room) {
  FERRY_ASSIGN_OR_RETURN(
      auto st,
      db_->Prepare(
          "SELECT rk, hash, MAX(size), MAX(owner != ?1) FROM reserved r"
          " WHERE owner IN (SELECT owner FROM temp.ferry_live) AND NOT EXISTS"
          " (SELECT 1 FROM objects o WHERE o.rk = r.rk AND o.hash = r.hash)"
          " GROUP BY rk, hash"));
  st.Bind(1, slot_);
  while (true) {
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    const auto size = static_cast<uint64_t>(st.Int(2));
    if (st.Int(3) == 0) {
      room->need += size;
      continue;
    }
    if (assumed && assumed->counted.count(Text(st, 0) + "/" + Text(st, 1)) > 0)
      continue;
    room->total += size;
    room->others += size;
  }
  return Status::OK();
}

Status Cache::MakeRoom(uint64_t limit, const std::vector<CacheKey>& use,
                       EvictReport* report) {
  return Evict(limit, 0, /*strict=*/true, use, report);
}

Status Cache::FreeRoom(uint64_t bytes, EvictReport* report) {
  return Evict(0, bytes, /*strict=*/false, {}, report);
}

Status Cache::PlanRoom(uint64_t limit, uint64_t need,
                       const std::vector<CacheKey>& pinned, const Probe& probe,
                       EvictReport* report) {
  *report = EvictReport{};
  Assumed assumed;
  FERRY_ASSIGN_OR_RETURN(auto views, PinnedViews());
  for (std::string& v : views)
    if (!env_->FileExists(v)) assumed.gone_views.push_back(std::move(v));
  for (const CacheKey& k : pinned) assumed.pinned.insert(NameOf(k));
  // A row whose object the lookup did not find is dropped before the room
  // is made: neither in use nor a victim (counted as both, a damaged object
  // made the dry run refuse where the sync fitted).
  // An object found without a row is indexed again: in use (left out, a
  // lost row made the dry run fit where the sync refused).
  std::unordered_set<std::string> indexed;
  for (size_t i = 0; i < probe.keys.size(); ++i) {
    const CacheKey& k = probe.keys[i];
    const std::string name = NameOf(k);
    if (probe.row[i] && !probe.hit[i] && assumed.dropped.insert(name).second)
      assumed.dropped_bytes += k.size;
    if (!probe.row[i] && probe.hit[i] && indexed.insert(name).second) {
      assumed.indexed.push_back(k);
      assumed.indexed_bytes += k.size;
    }
    // Fetched (in need) or indexed (in use): not again as another sync's
    // download of the same object.
    if (!probe.hit[i] || !probe.row[i]) assumed.counted.insert(name);
  }
  FERRY_RETURN_IF_ERROR(SetGoneViews(assumed.gone_views));
  FERRY_RETURN_IF_ERROR(FindLiveOwners(/*drop_stale=*/false));
  Room room;
  FERRY_ASSIGN_OR_RETURN(room.total, TotalBytes());
  room.total = room.total - std::min(room.total, assumed.dropped_bytes) +
               assumed.indexed_bytes;
  room.need = need;
  FERRY_RETURN_IF_ERROR(CountReserved(&assumed, &room));
  std::vector<CacheKey> victims;
  FERRY_RETURN_IF_ERROR(
      PickVictims(limit, room, /*strict=*/true, &assumed, &victims));
  for (const CacheKey& k : victims) {
    ++report->objects;
    report->bytes += k.size;
  }
  return Status::OK();
}

Status Cache::PickVictims(uint64_t limit, const Room& room, bool strict,
                          const Assumed* assumed,
                          std::vector<CacheKey>* victims) {
  victims->clear();
  const uint64_t total = strict ? room.total : 0;
  if (total + room.need <= limit) return Status::OK();
  // Not strict: need bytes freed (what the file system lacks), as far as
  // there is anything to evict.
  const uint64_t over = strict ? total + room.need - limit : room.need;
  FERRY_ASSIGN_OR_RETURN(
      auto st,
      db_->Prepare(
          "SELECT rk, hash, size FROM objects o WHERE NOT EXISTS"
          " (SELECT 1 FROM pins p WHERE p.rk = o.rk AND p.hash = o.hash AND"
          " p.view NOT IN (SELECT view FROM temp.ferry_gone)) AND NOT EXISTS"
          " (SELECT 1 FROM reserved r WHERE r.rk = o.rk AND r.hash = o.hash"
          " AND r.owner IN (SELECT owner FROM temp.ferry_live))"
          " ORDER BY last_use, rk, hash"));
  uint64_t freed = 0;
  auto take = [&](CacheKey k) {
    freed += k.size;
    victims->push_back(std::move(k));
  };
  // A row a lookup writes (unless pinned) is marked used now: taken after
  // every other (in key order, as equals).
  std::vector<CacheKey> last;
  if (assumed)
    for (const CacheKey& k : assumed->indexed)
      if (!assumed->pinned.count(NameOf(k))) last.push_back(k);
  while (freed < over) {
    FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    CacheKey k;
    k.remote_key = Text(st, 0);
    auto h = Hash128::FromHex(Text(st, 1));
    if (!h.ok()) continue;
    k.hash = *h;
    k.size = static_cast<uint64_t>(st.Int(2));
    if (assumed) {
      const std::string name = NameOf(k);
      if (assumed->dropped.count(name) || assumed->pinned.count(name)) continue;
    }
    take(std::move(k));
  }
  std::sort(last.begin(), last.end(), [](const CacheKey& a, const CacheKey& b) {
    return std::pair(a.remote_key, a.hash.ToHex()) <
           std::pair(b.remote_key, b.hash.ToHex());
  });
  for (size_t i = 0; i < last.size() && freed < over; ++i)
    take(std::move(last[i]));
  if (freed < over && strict) {
    victims->clear();
    const std::string theirs =
        room.others == 0 ? std::string()
                         : " (" + std::to_string(room.others) +
                               " of them reserved by other syncs running now)";
    return Status::ResourceExhausted(
        "cache " + dir_,
        "needs " + std::to_string(room.need) + " more bytes; " +
            std::to_string(total) + " in use" + theirs + ", " +
            std::to_string(freed) +
            " of them evictable (the rest is pinned by views or used by " +
            (room.others == 0 ? "this sync" : "this or other running syncs") +
            "), limit " + std::to_string(limit));
  }
  return Status::OK();
}

Status Cache::Evict(uint64_t limit, uint64_t need, bool strict,
                    const std::vector<CacheKey>& use, EvictReport* report) {
  *report = EvictReport{};
  // A view whose folder is gone (removed by hand) pins nothing any more:
  // its pins dropped in one transaction, not one each.
  FERRY_ASSIGN_OR_RETURN(auto views, PinnedViews());
  std::erase_if(views,
                [&](const std::string& v) { return env_->FileExists(v); });
  if (!views.empty())
    FERRY_RETURN_IF_ERROR(InTransaction(db_.get(), [&]() -> Status {
      FERRY_ASSIGN_OR_RETURN(auto del,
                             db_->Prepare("DELETE FROM pins WHERE view = ?1"));
      for (const std::string& v : views)
        FERRY_RETURN_IF_ERROR(del.Bind(1, v).Run());
      return Status::OK();
    }));
  if (!use.empty()) FERRY_RETURN_IF_ERROR(TakeSlot());
  // One process evicts at a time, and what it reserves is in the index
  // before the next one counts: two never count the same free room (each
  // saw only the other's objects already in the cache, not its downloads
  // in flight, and both fetched: 20 MB in a 15 MiB cache).
  FERRY_ASSIGN_OR_RETURN(auto lock,
                         env_->LockFile(JoinPath(dir_, "lock"), true));
  std::vector<CacheKey> victims;
  Status s = InTransaction(db_.get(), [&]() -> Status {
    // Objects the sync will link that no pin holds are reserved: taken,
    // they failed the sync after its fetches, and every rerun the same way.
    if (!use.empty())
      FERRY_RETURN_IF_ERROR(InsertReserved(db_.get(), slot_, use));
    FERRY_RETURN_IF_ERROR(FindLiveOwners(/*drop_stale=*/true));
    FERRY_RETURN_IF_ERROR(SetGoneViews({}));
    Room room;
    room.need = need;
    if (strict) {
      FERRY_ASSIGN_OR_RETURN(room.total, TotalBytes());
      FERRY_RETURN_IF_ERROR(CountReserved(nullptr, &room));
    }
    FERRY_RETURN_IF_ERROR(PickVictims(limit, room, strict, nullptr, &victims));
    FERRY_ASSIGN_OR_RETURN(
        auto del,
        db_->Prepare("DELETE FROM objects WHERE rk = ?1 AND hash = ?2"));
    for (const CacheKey& k : victims)
      FERRY_RETURN_IF_ERROR(
          del.Bind(1, k.remote_key).Bind(2, k.hash.ToHex()).Run());
    return Status::OK();
  });
  if (!s.ok()) return s;
  // The rows are gone; a crash before the files go leaves files without a
  // row, which Recover/Lookup re-index.
  for (const CacheKey& k : victims) {
    Status r = env_->RemoveFile(ObjectPath(k));
    if (!r.ok() && !r.IsNotFound()) return r;
    ++report->objects;
    report->bytes += k.size;
  }
  return Status::OK();
}

Status Cache::Recover(RecoverReport* report) {
  *report = RecoverReport{};
  // Rows first: each must have its file.
  std::vector<CacheKey> rows;
  {
    FERRY_ASSIGN_OR_RETURN(auto st,
                           db_->Prepare("SELECT rk, hash, size FROM objects"));
    while (true) {
      FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      CacheKey k;
      k.remote_key = Text(st, 0);
      auto h = Hash128::FromHex(Text(st, 1));
      if (h.ok()) k.hash = *h;
      k.size = static_cast<uint64_t>(st.Int(2));
      rows.push_back(std::move(k));
    }
  }
  for (const CacheKey& k : rows) {
    auto info = env_->Stat(ObjectPath(k));
    if (!info.ok() || info->size != k.size) {
      FERRY_RETURN_IF_ERROR(DropRow(k));
      ++report->rows_dropped;
    }
  }
  // Then files: each must have its row.
  const std::string objects = JoinPath(dir_, "objects");
  FERRY_ASSIGN_OR_RETURN(auto remotes, env_->GetChildren(objects));
  for (const DirEntry& r : remotes) {
    if (!r.is_dir || !IsHex(r.name, 32)) continue;
    const std::string rdir = JoinPath(objects, r.name);
    FERRY_ASSIGN_OR_RETURN(auto fans, env_->GetChildren(rdir));
    for (const DirEntry& f : fans) {
      if (!f.is_dir || !IsHex(f.name, 2)) continue;
      const std::string fdir = JoinPath(rdir, f.name);
      FERRY_ASSIGN_OR_RETURN(auto files, env_->GetChildren(fdir));
      for (const DirEntry& e : files) {
        const std::string path = JoinPath(fdir, e.name);
        auto h = Hash128::FromHex(e.name);
        if (e.is_link || e.is_dir || !IsHex(e.name, 32) || !h.ok() ||
            e.name.substr(0, 2) != f.name) {
          continue;  // not ours: left alone
        }
        FERRY_ASSIGN_OR_RETURN(auto st,
                               db_->Prepare("SELECT 1 FROM objects WHERE"
                                            " rk = ?1 AND hash = ?2"));
        st.Bind(1, r.name).Bind(2, e.name);
        FERRY_ASSIGN_OR_RETURN(bool row, st.Step());
        if (row) {
          (void)st.Step();
          continue;
        }
        auto info = env_->Stat(path);
        // A FIFO (its open would wait for a writer), a device: not ours.
        if (!info.ok() || info->type != FileType::kRegular) continue;
        CacheKey k{r.name, *h, info->size};
        FERRY_ASSIGN_OR_RETURN(bool ok, RecoverFile(k, path));
        ++(ok ? report->files_indexed : report->files_removed);
      }
    }
  }
  return Status::OK();
}

}  // namespace ferry::sync
