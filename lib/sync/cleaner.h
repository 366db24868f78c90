// Removing old views off the critical path (docs/sync.md "Old views").
// After the swap, an old view no reader holds is renamed, under DEST's
// lock, to `<views>/.trash-<name>-<µs>` (a dot name: never a view, never
// reused); its files (one unlink each: 0.1-0.35 s for 2,000)
// are then removed by a cleaner process that sync starts and does not wait
// for, which then restamps the objects those unlinks touched (an unlink
// changes an inode's ctime) and drops the old view's pins. While it runs it
// holds
//   - the trash's `.ferry-view.lock` exclusively: a later sync that finds a
//     trash folder whose lock is free (a cleaner killed midway) removes it;
//   - `<cache>/locks/cleaners` shared: a sync waits for that lock (taken
//     exclusively, then dropped) before it reads objects' stamps from the
//     index, so it never takes a ctime the cleaner is about to record for a
//     change of the object (which would re-hash it, or rebuild a view).
//
// Thread-safety: functions of the file system's state.
#ifndef FERRY_LIB_SYNC_CLEANER_H_
#define FERRY_LIB_SYNC_CLEANER_H_

#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "ferry/status.h"
#include "sync/cache.h"

namespace ferry::sync {

// A renamed old view and the objects its files link to.
// view: its name as a view, whose pins the cleaner drops (the index's
// biggest change of an incremental: one row per object; pins of a view
// folder that no longer exists are dropped before any eviction anyway).
struct Trash {
  std::string path;
  std::vector<CacheKey> objects;
  std::string view;
};

inline constexpr std::string_view kTrashPrefix = ".trash-";

// Removes trash's files, restamps its objects in cache and drops the pins of
// trash.view (if any).
Status RemoveTrash(Env* env, Cache* cache, const Trash& trash);

// Removes each trash folder in a process of its own (detached: it outlives
// this one, its standard streams /dev/null, no other descriptor kept) and
// returns once that process holds the locks above. Where a process cannot
// be forked safely (this one runs other threads) or the fork fails, removes
// them here and now. No SQLite connection may be open in this process (the
// child opens its own). Errors are the cleaner's own: a trash folder left
// is removed by a later sync.
void RemoveTrashDetached(Env* env, const std::string& cache_dir, bool durable,
                         std::vector<Trash> trash);

// Waits until no cleaner of this cache runs (returns at once when none
// does, or the cache has no locks folder).
void WaitForCleaners(const std::string& cache_dir);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_CLEANER_H_
