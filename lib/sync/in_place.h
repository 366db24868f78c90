// ferry sync --in-place (docs/sync.md "--in-place"): DEST is a plain folder
// updated file by file, no view and no symbolic link. Each file is replaced
// by an atomic rename of a hard link (reflink, copy) of its cache object, so
// a reader sees every file whole, but the folder as a mix of the two
// versions while an update runs. DEST keeps its own state:
//   .ferry-sync.json     ViewState (in_place); written last, id "" while an
//                        update runs
//   .ferry-sync-files    the files of the last complete sync: what ferry
//                        placed (path, size, XXH3-128, mode, ETag)
//   .ferry-sync-stamps   each of those files' stamp (view.h), what a no-op
//                        compares; a file whose stamp changed is placed again
//   .ferry-sync-pending  while an update runs: the files it is placing, so a
//                        rerun after a crash knows every file ferry may have
//                        placed
//   ../.<name>.ferry-sync.lock  beside DEST: held for the whole sync, as
//                        for a view (older versions: DEST/.ferry-sync.lock)
// The same file list (.ferry-sync-files) is kept in the views of unmanaged
// remotes, where it records the ETags that the next sync compares.
//
// Thread-safety: functions of the file system's state; two syncs into one
// DEST are kept apart by LockDest.
#ifndef FERRY_LIB_SYNC_IN_PLACE_H_
#define FERRY_LIB_SYNC_IN_PLACE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "ferry/result.h"
#include "sync/cache.h"
#include "sync/plan.h"
#include "sync/view.h"

namespace ferry::sync {

inline constexpr std::string_view kFileListName = ".ferry-sync-files";
inline constexpr std::string_view kPendingListName = ".ferry-sync-pending";

// One JSON array of [path, size, xxh3-128 hex, mode, etag], in the order
// given (callers keep it sorted by path): canonical bytes, so an unmanaged
// remote's file list hashes to one id.
std::string EncodeFileList(const std::vector<Entry>& files);
Result<std::vector<Entry>> ParseFileList(std::string_view text);
// NotFound when there is no such file.
Result<std::vector<Entry>> ReadFileList(Env* env, const std::string& path);

// Temporaries of DEST's state files a killed run left (.ferry-tmp-<pid>-
// <id>-.ferry-sync.json, -files, -pending; only those names). The caller
// holds DEST's lock, so no live run is writing them.
void RemoveStateTemps(Env* env, const std::string& dest);
// On a no-op (DEST complete): those, and a -pending list a run killed after
// its last state write left.
void RemoveStaleState(Env* env, const std::string& dest);

struct InPlaceReport {
  uint64_t placed = 0;          // files written (linked, reflinked or copied)
  uint64_t kept = 0;            // already as the new version has them
  uint64_t removed = 0;         // files ferry had placed that the version drops
  uint64_t others_removed = 0;  // other files (remove_others)
  uint64_t copied = 0, reflinked = 0;
  // Files ferry placed that changed since (kept), state files ignored.
  std::vector<std::string> warnings;
};

// Brings the plain folder dest (existing) to files, whose objects are all in
// the cache; state (in_place) is written last. Files ferry placed earlier
// and not in files are removed if they still are what was placed (same
// inode as the cache object, or same size and XXH3-128; else kept, with a
// warning); paths read from DEST's lists are checked as manifest paths; with
// remove_others every other file too
// (ferry's own state files excepted). No symbolic link below dest is
// followed: one on a file's way fails that sync (FailedPrecondition).
Status UpdateInPlace(Env* env, const Cache& cache,
                     const std::string& remote_key, const std::string& dest,
                     const std::vector<Entry>& files, const ViewState& state,
                     bool remove_others, InPlaceReport* report,
                     const std::function<void(uint64_t)>& on_placed = {});

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_IN_PLACE_H_
