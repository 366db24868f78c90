// Views (docs/sync.md): DEST is a symbolic link to
// `<DEST parent>/.<name>.ferry-views/<view>/`, a folder of hard links into
// the cache (copies where the cache is on another file system). A view is
// complete once its `.ferry-sync.json` exists (written last); DEST switches
// to a new view with one rename; an old view goes once its
// `.ferry-view.lock` can be taken exclusively (a reader holds it shared).
//
// Thread-safety: functions of the file system's state; two syncs into one
// DEST are kept apart by DestLock.
#ifndef FERRY_LIB_SYNC_VIEW_H_
#define FERRY_LIB_SYNC_VIEW_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ferry/env.h"
#include "ferry/result.h"
#include "ferry/sync.h"
#include "sync/cache.h"
#include "sync/cleaner.h"
#include "sync/fs_util.h"
#include "sync/plan.h"

namespace ferry::sync {

// Each placed file's stamp (a view's, an --in-place DEST's): what a no-op
// compares (ViewIntact).
inline constexpr std::string_view kStampsName = ".ferry-sync-stamps";

// What a view records about itself, in its .ferry-sync.json.
struct ViewState {
  std::string remote;      // the remote as given
  std::string remote_key;  // the cache's key for it
  std::string ref, etag;   // the ref read and its ETag then
  std::string id;          // the manifest id (hex)
  std::string cache;       // the cache folder (absolute)
  std::string selection;   // SelectionKey(); "" for all files
  int rank = 0, world_size = 1;
  std::vector<std::pair<bool, std::string>> filters;
  uint64_t files = 0, bytes = 0;
  // --in-place: DEST is a plain folder holding this state (docs/sync.md).
  bool in_place = false;
  // A remote without .ferry/refs/HEAD: id names the file list (file_list.h).
  bool unmanaged = false;
};
std::string EncodeViewState(const ViewState& state);
Result<ViewState> ParseViewState(std::string_view json);

struct DestPaths {
  std::string dest;      // absolute
  std::string parent;    // its folder
  std::string name;      // its last part
  std::string views;     // <parent>/.<name>.ferry-views
  std::string tmp_link;  // <parent>/.<name>.ferry-tmp
};
Result<DestPaths> ResolveDest(const std::string& dest);

// OK if path is missing or a real folder owned by this process's user that
// others may not write; FailedPrecondition if it is a link (not followed),
// another user's folder or world-writable. DEST's parent may be shared
// (1777): another user could otherwise pre-make the views folder (or a
// link to their own) and change the views in it. Once ours there, the
// sticky bit keeps others from renaming it away.
Status CheckOwnFolder(const std::string& path);

enum class DestKind {
  kMissing,
  kView,      // a link into our views folder
  kEmptyDir,  // a real, empty folder
  kDir,       // a real folder with files: adopted, then moved aside
  kInPlace,   // a real folder synced with --in-place (has .ferry-sync.json)
  kOther,     // a file, a foreign link, a device: refused
};
// What DEST is now; for kView, *view gets the view folder (for kInPlace,
// DEST itself).
Result<DestKind> InspectDest(Env* env, const DestPaths& paths,
                             std::string* view);

// The state of the view DEST points to (NotFound if none or incomplete).
Result<ViewState> CurrentState(Env* env, const DestPaths& paths);

// The view DEST shows, its lock held shared while this lives, as a job
// reading DEST holds it (docs/sync.md): a sync switching DEST meanwhile
// keeps that view until then. For ferry sync --check and ferry verify, which
// read a view's files one by one.
class ViewReadLock {
 public:
  ViewReadLock() = default;
  ViewReadLock(const ViewReadLock&) = delete;
  ViewReadLock& operator=(const ViewReadLock&) = delete;
  ~ViewReadLock();

  // *view and *kind as InspectDest gives them; for a view, once its lock is
  // held at its own name (not a trash's it was renamed to meanwhile). A
  // view without a lock file is read as it is.
  Status Take(Env* env, const DestPaths& paths, std::string* view,
              DestKind* kind);

 private:
  int fd_ = -1;
};

// Held for a whole sync into one DEST, whatever the mode:
// <parent>/.<name>.ferry-sync.lock, not waited for (in_place: DEST created
// once it is held, if missing).
Result<std::unique_ptr<FileLock>> LockDest(Env* env, const DestPaths& paths,
                                           bool in_place = false);

struct BuildReport {
  uint64_t copied = 0;     // files copied because a link was not possible
  uint64_t reflinked = 0;  // ... or reflinked (FICLONE) instead
};
// Fills view (created empty by the caller) with one entry per file from the
// cache, then .ferry-sync-stamps (each file's FileStamp once all are placed;
// the cache restamps the objects it linked), then its lock file, then state
// (last). Every object must be in the
// cache.
Status BuildView(Env* env, Cache* cache, const std::string& remote_key,
                 const std::string& view, const std::vector<Entry>& files,
                 const ViewState& state, BuildReport* report);

// BuildView in steps, so that the view is built while the downloads run:
// Start places the files whose objects are cached (an incremental sync's
// view is mostly these), on a thread of its own; Landed hands that thread
// objects as they enter the cache (a cold sync's, one by one as they
// download), whose files it places too; Finish waits for it, places the
// rest, then writes the stamps, the lock file and the state as BuildView.
// The thread uses only the file system and Cache::ObjectPath, never the
// cache's index.
// Not finished (the sync failed, or returned early): the destructor waits
// for the thread, removes what was placed (the view is left empty, as
// created) and restamps the objects it linked (a link and an unlink change
// an object's ctime), so that none is re-hashed at its next lookup.
//
// Thread-safety: Landed may be called from any thread, at any time between
// Start and Finish; the other calls from the owner's thread.
class ViewBuilder {
 public:
  // files outlives the builder; view exists, empty.
  ViewBuilder(Env* env, Cache* cache, std::string remote_key, std::string view,
              const std::vector<Entry>* files);
  ~ViewBuilder();
  ViewBuilder(const ViewBuilder&) = delete;
  ViewBuilder& operator=(const ViewBuilder&) = delete;

  // Places files[i] for each i with cached[i] (size files.size()), on a
  // thread, then stamps them, then waits for Landed objects. At most once,
  // before Finish. Every file of an object must be cached, or none.
  void Start(std::vector<bool> cached);
  // Objects now in the cache (not cached at Start): their files are placed
  // (all of an object's, then stamped) on Start's thread. Keys of no file
  // of the view, or given again, are ignored.
  void Landed(const std::vector<CacheKey>& keys);
  // Every object must be in the cache now.
  Status Finish(const ViewState& state, BuildReport* report);

 private:
  // Places files[i] for each i in idx (this thread or Start's).
  Status PlaceAll(const std::vector<size_t>& idx);
  // Then their stamps: final once every file of their objects is placed
  // (a link changes the shared inode's ctime).
  Status StampAll(const std::vector<size_t>& idx);
  // Start's thread: the cached files, then each Landed batch.
  void Run();
  // The files of keys not cached at Start (by uncached_).
  std::vector<size_t> FilesOf(const std::vector<CacheKey>& keys) const;
  void Join();

  Env* env_;
  Cache* cache_;
  std::string remote_key_, view_;
  const std::vector<Entry>* files_;
  std::vector<bool> cached_;
  // The files not cached at Start, sorted by (hash, size): Landed's lookup.
  std::vector<size_t> uncached_;
  std::vector<PlaceHow> how_;  // per file, once placed
  std::vector<bool> placed_;
  std::vector<FileStamp> stamps_;  // per file, once stamped
  std::vector<bool> stamped_;
  std::unordered_set<std::string> dirs_;
  std::thread thread_;
  Status thread_status_;
  std::mutex mu_;  // guards landed_, closing_
  std::condition_variable cv_;
  std::vector<CacheKey> landed_;
  bool closing_ = false;
  bool finished_ = false;
};

// Whether every file of a complete view is still as ferry placed it,
// judged by stat alone: its stamp as recorded when the view was built, or,
// for a hard link whose ctime a later link by ferry changed, the stamp the
// cache recorded for its object then (the cache is opened only for such a
// file). False when a file is missing, replaced or written, or the view
// has no stamps (built by an older ferry). When intact but some file was
// judged by the cache's stamp, *fresh_stamps (if not null) gets the view's
// stamps as they are now, for RefreshStamps: the next check of it needs no
// index query. dry_run: the cache opened read only (Cache::OpenForDryRun).
Result<bool> ViewIntact(Env* env, const std::string& view,
                        const std::string& cache_dir,
                        const std::string& remote_key,
                        std::string* fresh_stamps = nullptr,
                        bool dry_run = false);

// The stamps an --in-place DEST keeps as a view does (.ferry-sync-stamps):
// each of files' stamp now (all must be there), written into dir.
Status WriteStamps(Env* env, const std::string& dir,
                   const std::vector<Entry>& files);
// Path -> stamp from dir's .ferry-sync-stamps; NotFound without one.
// hashes (if not null) gets path -> the hash recorded with it.
Result<std::unordered_map<std::string, FileStamp>> ReadStamps(
    Env* env, const std::string& dir,
    std::unordered_map<std::string, Hash128>* hashes = nullptr);

// Replaces the stamps of view (complete; its DEST locked) by fresh_stamps
// from ViewIntact.
Status RefreshStamps(Env* env, const std::string& view,
                     const std::string& fresh_stamps);

// Points DEST at view (a folder inside paths.views) with one rename. A real
// folder at DEST (kEmptyDir, kDir) is swapped out atomically too
// (RENAME_EXCHANGE) and then removed (empty, or remove_replaced) or moved
// to *replaced.
Status SwapDest(Env* env, const DestPaths& paths, const std::string& view,
                DestKind kind, bool remove_replaced, std::string* replaced);

// The files ferry placed in a view (state is its .ferry-sync.json): an
// unmanaged remote's file list, else the manifest (from the cache the view
// records) as selected.
Result<std::vector<Entry>> ViewFiles(Env* env, const std::string& view,
                                     const ViewState& state);

// What view holds besides the files ferry placed and its own state files
// (sorted; a folder no placed file is below is named once, ending in '/').
// A view whose file list cannot be read gets one line saying so; a view
// without state (half-built by a killed run) has none.
// objects (if not null) gets the cache keys of the files ferry placed.
Status FindViewExtras(Env* env, const std::string& view,
                      std::vector<std::string>* extras,
                      std::vector<CacheKey>* objects = nullptr);

// Removes every view of DEST but keep whose lock is free (unpinning it);
// views in use by a reader stay for a later sync. A view holding files ferry
// did not place is not removed but moved to `.<name>.ferry-old-<time>`
// beside DEST (report->kept_old_views). With detach, a view to remove is
// only renamed to a trash folder (cleaner.h) and added to *detach, for
// RemoveTrashDetached once the caller closed the cache. Trash folders a
// killed cleaner left (their lock free) are removed.
Status RemoveOldViews(Env* env, Cache* cache, const DestPaths& paths,
                      const std::string& keep, SyncReport* report,
                      std::vector<Trash>* detach = nullptr);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_VIEW_H_
