// The publish stat cache (docs/sync.md): what ferry learnt by reading each
// file of a source tree — XXH3-128 and part hashes — keyed by what stat says
// about it (size, mtime, ctime, inode), in SQLite (WAL) so a republish of an
// unchanged tree reads no file content.
//
// An entry is used only when size, mtime_ns, ctime_ns, inode and the part
// size all match, and the file was not "racily clean": its mtime and ctime
// were older than the moment its hash was taken minus kRacyMarginNs (a file
// written again within the same coarse timestamp tick keeps its mtime; git's
// racy-index rule). Such a file is simply hashed again next time.
//
// Thread-safety: one thread at a time; several processes may share the file.
#ifndef FERRY_LIB_SYNC_STAT_CACHE_H_
#define FERRY_LIB_SYNC_STAT_CACHE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "formats/manifest/manifest.h"
#include "sync/sqlite_db.h"

namespace ferry::sync {

inline constexpr int64_t kRacyMarginNs = 100'000'000;  // 100 ms

class StatCache {
 public:
  // Opens or creates the cache at path (its folder is created).
  static Result<std::unique_ptr<StatCache>> Open(Env* env,
                                                 const std::string& path);

  // Fills size, xxh3_128 and part_xxh3_64 of *file from the entry for path
  // when it may be trusted for `info`; false otherwise.
  Result<bool> Lookup(std::string_view path, const FileInfo& info,
                      uint64_t part_size, manifest::File* file);
  // Records what reading path gave; hashed_ns is when the read started
  // (wall clock). Buffered in a transaction until Commit.
  Status Store(std::string_view path, const FileInfo& info, uint64_t part_size,
               int64_t hashed_ns, const manifest::File& file);
  // Drops the entries of paths not in `paths` (sorted bytewise): files gone
  // from the tree. Part of the open transaction.
  Status Retain(const std::vector<std::string>& paths);
  Status Commit();

 private:
  StatCache(std::unique_ptr<Db> db, Stmt get, Stmt put)
      : db_(std::move(db)), get_(std::move(get)), put_(std::move(put)) {}
  Status Begin();

  std::unique_ptr<Db> db_;
  Stmt get_, put_;
  bool in_txn_ = false;
};

// Where the stat cache of a source tree lives: <cache_dir>/publish/<XXH3-128
// of the tree's real path>.sqlite. cache_dir "" means DefaultCacheDir()
// (sync/cache.h: $FERRY_CACHE, $XDG_CACHE_HOME/ferry, ~/.cache/ferry): the
// same folder as sync's cache.
Result<std::string> StatCachePath(Env* env, const std::string& cache_dir,
                                  const std::string& source);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_STAT_CACHE_H_
