// What ferry sync's two fetch paths (managed remotes: sync.cc; unmanaged:
// unmanaged.cc) share: the per-object locks that let one process fetch an
// object at a time, making room under --cache-limit, and counting a
// transfer into the sync's report.
//
// Thread-safety: an ObjectLocks is used by one thread; any number of
// processes lock objects in the same cache at once.
#ifndef FERRY_LIB_SYNC_FETCHING_H_
#define FERRY_LIB_SYNC_FETCHING_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferry/env.h"
#include "ferry/result.h"
#include "ferry/status.h"
#include "ferry/sync.h"
#include "ferry/transfer.h"
#include "sync/cache.h"
#include "sync/fs_util.h"

namespace ferry::sync {

// Per-object locks (docs/sync.md "On disk"): each object is one byte (at a
// hash of remote key and object hash) of one of kLockStripes files in
// <cache>/locks/, each file opened once per sync: a lock file per object
// cost two metadata writes each (seconds of a cold sync of a few thousand
// objects on a busy disk) and a descriptor each (100,000 objects: "Too many
// open files"); one file for all made the kernel scan every lock held on it
// for each new one (20,000 locks in one file: 80 s). A sync locks
// kLockBatch objects at a time (about 64 per file), and never waits for a
// lock while it holds any.
constexpr int kLockStripes = 64;
constexpr size_t kLockBatch = 4096;

class ObjectLocks {
 public:
  // dir: <cache>/locks (created at the first lock).
  ObjectLocks(Env* env, std::string dir) : env_(env), dir_(std::move(dir)) {}

  // With wait=false, an object another process holds gives Unavailable.
  Status Lock(const CacheKey& k, bool wait);
  Status Unlock(const CacheKey& k);
  Status UnlockAll();

 private:
  Result<ByteLockSet*> SetOf(const CacheKey& k);

  Env* env_;
  std::string dir_;
  bool made_dir_ = false;
  std::unique_ptr<ByteLockSet> sets_[kLockStripes];
};

// Cache::MakeRoom for use: the objects a sync found missing, and those it
// links that no pin holds (an unmanaged remote's cached files). When the
// room is not there, still (if any) looks the missing ones up again and
// rewrites use, true if it found any: an unmanaged remote's file is
// reserved under its (path, ETag, size) until its hash is known, and one
// another sync fetched since takes no more room once known by its hash
// (counted twice, it failed a sync that one copy fits).
Status MakeRoomForMissing(
    Cache* cache, uint64_t limit, std::vector<CacheKey> use,
    const std::function<Result<bool>(std::vector<CacheKey>*)>& still,
    EvictReport* report);

// Removes each group of names (in dir) under the lock of the object whose
// hash the group's key spells (32 hex), taken without waiting: a group
// whose object another process holds stays. Returns the files removed.
size_t RemoveUnderObjectLocks(
    Env* env, const std::string& cache_dir, const std::string& rk,
    const std::string& dir,
    const std::map<std::string, std::vector<std::string>>& by_object);

// After a sync of a managed remote whose every object came: removes what
// killed runs left in partial/<rk>/ for objects nobody is fetching now
// (docs/sync.md "On disk"): an object's files (<hex>, <hex>.ferry-part,
// .journal, .blocks, .cut, ...) go under the object's lock, taken without
// waiting: a sync fetching it holds that lock, and they stay. A pack's
// download (pack-<id>-<members>) has no lock of its own and is left alone
// (a running sync creates it long before it writes to it: no age says it
// is stale), as are other names (an unmanaged remote's u-*) and a
// partial/<rk> that is not a folder (a link). Best effort. Before, nothing
// removed them: a killed sync of a version the next one did not need left
// its shards' part files for good, outside --cache-limit. Returns the
// files removed.
size_t RemoveStaleManagedPartials(Env* env, const std::string& cache_dir,
                                  const std::string& rk);

// Adds a transfer's requests, bytes, retries and warnings to report.
void CountTransfer(const TransferReport& r, SyncReport* report);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_FETCHING_H_
