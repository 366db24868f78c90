#include "sync/stat_cache.h"

#include <climits>
#include <cstdlib>
#include <cstring>

#include "sync/cache.h"

namespace ferry::sync {
namespace {

constexpr char kSchema[] =
    "CREATE TABLE IF NOT EXISTS files("
    " path BLOB PRIMARY KEY, size INT, mtime_ns INT, ctime_ns INT, inode INT,"
    " part_size INT, hashed_ns INT, xxh3 BLOB, parts BLOB) WITHOUT ROWID";

std::string PackParts(const manifest::File& f) {
  std::string out(f.part_xxh3_64_size() * 8, '\0');
  for (int i = 0; i < f.part_xxh3_64_size(); ++i) {
    uint64_t v = f.part_xxh3_64(i);
    std::memcpy(&out[i * 8], &v, 8);
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<StatCache>> StatCache::Open(Env* env,
                                                   const std::string& path) {
  FERRY_RETURN_IF_ERROR(env->CreateDirs(DirName(path)));
  FERRY_ASSIGN_OR_RETURN(auto db, Db::Open(path));
  FERRY_RETURN_IF_ERROR(db->Exec(kSchema));
  FERRY_ASSIGN_OR_RETURN(
      Stmt get, db->Prepare("SELECT size, mtime_ns, ctime_ns, inode, "
                            "part_size, hashed_ns, xxh3, parts FROM files "
                            "WHERE path = ?1"));
  FERRY_ASSIGN_OR_RETURN(Stmt put,
                         db->Prepare("INSERT OR REPLACE INTO files VALUES "
                                     "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"));
  return std::unique_ptr<StatCache>(
      new StatCache(std::move(db), std::move(get), std::move(put)));
}

Result<bool> StatCache::Lookup(std::string_view path, const FileInfo& info,
                               uint64_t part_size, manifest::File* file) {
  get_.BindBlob(1, path);
  auto row = get_.Step();
  auto done = [&](Result<bool> r) {
    get_.Reset();
    return r;
  };
  if (!row.ok()) return done(row.status());
  if (!*row) return done(false);
  const int64_t hashed_ns = get_.Int(5);
  if (static_cast<uint64_t>(get_.Int(0)) != info.size ||
      get_.Int(1) != info.mtime_ns || get_.Int(2) != info.ctime_ns ||
      static_cast<uint64_t>(get_.Int(3)) != info.ino ||
      static_cast<uint64_t>(get_.Int(4)) != part_size ||
      info.mtime_ns > hashed_ns - kRacyMarginNs ||
      info.ctime_ns > hashed_ns - kRacyMarginNs)
    return done(false);
  std::string_view hash = get_.Blob(6), parts = get_.Blob(7);
  if (hash.size() != 16 || parts.size() % 8 != 0 ||
      parts.size() / 8 != manifest::PartCount(info.size, part_size))
    return done(false);  // not what Store writes: ignore it
  file->set_size(info.size);
  file->set_xxh3_128(std::string(hash));
  file->clear_part_xxh3_64();
  for (size_t i = 0; i < parts.size(); i += 8) {
    uint64_t v;
    std::memcpy(&v, parts.data() + i, 8);
    file->add_part_xxh3_64(v);
  }
  return done(true);
}

Status StatCache::Begin() {
  if (in_txn_) return Status::OK();
  FERRY_RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  in_txn_ = true;
  return Status::OK();
}

Status StatCache::Store(std::string_view path, const FileInfo& info,
                        uint64_t part_size, int64_t hashed_ns,
                        const manifest::File& file) {
  FERRY_RETURN_IF_ERROR(Begin());
  return put_.BindBlob(1, path)
      .Bind(2, static_cast<int64_t>(info.size))
      .Bind(3, info.mtime_ns)
      .Bind(4, info.ctime_ns)
      .Bind(5, static_cast<int64_t>(info.ino))
      .Bind(6, static_cast<int64_t>(part_size))
      .Bind(7, hashed_ns)
      .BindBlob(8, file.xxh3_128())
      .BindBlob(9, PackParts(file))
      .Run();
}

Status StatCache::Retain(const std::vector<std::string>& paths) {
  FERRY_RETURN_IF_ERROR(Begin());
  // Both sides in bytewise order (SQLite compares BLOBs with memcmp).
  std::vector<std::string> gone;
  {
    FERRY_ASSIGN_OR_RETURN(
        Stmt all, db_->Prepare("SELECT path FROM files ORDER BY path"));
    size_t i = 0;
    for (;;) {
      FERRY_ASSIGN_OR_RETURN(bool row, all.Step());
      if (!row) break;
      std::string_view p = all.Blob(0);
      while (i < paths.size() && paths[i] < p) ++i;
      if (i == paths.size() || paths[i] != p) gone.emplace_back(p);
    }
  }
  FERRY_ASSIGN_OR_RETURN(Stmt del,
                         db_->Prepare("DELETE FROM files WHERE path = ?1"));
  for (const std::string& p : gone)
    FERRY_RETURN_IF_ERROR(del.BindBlob(1, p).Run());
  return Status::OK();
}

Status StatCache::Commit() {
  if (!in_txn_) return Status::OK();
  in_txn_ = false;
  return db_->Exec("COMMIT");
}

Result<std::string> StatCachePath(Env* env, const std::string& cache_dir,
                                  const std::string& source) {
  (void)env;
  std::string dir = cache_dir.empty() ? DefaultCacheDir() : cache_dir;
  // The tree's identity is its real path (OS call: Env has no realpath).
  char buf[PATH_MAX];
  if (::realpath(source.c_str(), buf) == nullptr)
    return Status::IOError(source, std::strerror(errno));
  return JoinPath(JoinPath(dir, "publish"), HashBytes(buf).ToHex() + ".sqlite");
}

}  // namespace ferry::sync
