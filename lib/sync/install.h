// The last steps of ferry sync, shared by managed and unmanaged remotes:
// the state DEST records, and putting the files (all in the cache) in place
// as a view swapped in, or --in-place.
//
// Thread-safety: functions of the file system's state; callers hold
// LockDest.
#ifndef FERRY_LIB_SYNC_INSTALL_H_
#define FERRY_LIB_SYNC_INSTALL_H_

#include <string>
#include <vector>

#include "ferry/sync.h"
#include "sync/cache.h"
#include "sync/plan.h"
#include "sync/view.h"

namespace ferry::sync {

// A view DEST and an --in-place DEST do not turn into each other:
// InvalidArgument saying how to switch by hand.
Status CheckDestMode(const DestPaths& paths, DestKind kind, bool in_place);

// The cache and DEST (with its views folder) must not hold each other, where
// they are on disk (links resolved): a swap, --delete or a move aside of DEST
// would take the cache with it, or a sync would write into its own objects.
// InvalidArgument naming both.
Status CheckCacheApart(const DestPaths& paths, const std::string& cache_dir);

// Readies the folder of a view: true when it is complete for this id,
// remote and selection (reused as it is). A folder there without a view's
// state is half-built: emptied and created again. A complete view of
// something else (the same manifest id from another remote: a mirrored
// bucket) is never touched — it may be what DEST shows — and *view becomes
// a new name beside it (`.other-<µs>`), swapped in like a new version.
// Nothing to do --in-place (false).
Result<bool> PrepareView(Env* env, bool in_place, std::string* view,
                         const std::string& id, const std::string& remote_key,
                         const std::string& sel_key);

// A view's pins (Cache::Pin) for one sync: a view still incomplete when
// this goes (no .ferry-sync.json: the sync failed before the view was
// built) is unpinned, so that its objects can be evicted; a full cache
// would otherwise stay full. Complete views and an --in-place DEST keep
// theirs.
class ViewPins {
 public:
  ViewPins(Env* env, Cache* cache, std::string view, bool in_place)
      : env_(env), cache_(cache), view_(std::move(view)), in_place_(in_place) {}
  ViewPins(const ViewPins&) = delete;
  ViewPins& operator=(const ViewPins&) = delete;
  ~ViewPins();

  Status Pin(const std::vector<CacheKey>& keys);

 private:
  Env* env_;
  Cache* cache_;
  std::string view_;
  bool in_place_;
  bool pinned_ = false;
};

// The view folder a sync created (PrepareView) and did not complete: when
// the sync ends early (refused, failed, returned with failures) the folder
// goes, and so does the views folder if nothing else is in it (a cold sync's
// first). Left as it is once the view is complete (it has its state; the
// next run reuses it) or DEST links to it. view empty: nothing to do (a
// reused view, --in-place). Lives under DEST's lock.
class HalfBuiltView {
 public:
  HalfBuiltView(Env* env, const DestPaths& paths, std::string view)
      : env_(env), paths_(paths), view_(std::move(view)) {}
  HalfBuiltView(const HalfBuiltView&) = delete;
  HalfBuiltView& operator=(const HalfBuiltView&) = delete;
  ~HalfBuiltView();

 private:
  Env* env_;
  const DestPaths& paths_;
  std::string view_;
};

// For a no-op: whether DEST's files (its view's, or DEST's own --in-place)
// are as the last sync stamped them (ViewIntact). Stamps that another DEST's
// links changed are rewritten as they are now, under DEST's lock (skipped
// while a sync holds it), so the next check opens no index. dry_run: the
// same check, writing nothing (no stamps rewritten; the index read only).
Result<bool> DestIntact(Env* env, const DestPaths& paths,
                        const std::string& cache_dir,
                        const std::string& remote_key, bool in_place,
                        bool dry_run = false);

// For a no-op whose ref was rewritten with the id DEST holds (a backup
// restored, a mirror job, a touch: its ETag changed, its bytes did not):
// DEST's state records the ref and its new ETag (an atomic rewrite, under
// DEST's lock), so that the next sync is the one-request no-op again.
// Skipped while another sync holds the lock, or when DEST no longer holds
// the state checked: that sync records its own.
Status RecordRef(Env* env, const DestPaths& paths, bool in_place,
                 const ViewState& checked, const std::string& ref,
                 const std::string& etag);

// What DEST will record for this sync.
ViewState NewState(const SyncOptions& o, const std::string& remote_key,
                   const std::string& etag, const std::string& id,
                   const std::string& cache_dir, const std::string& sel_key,
                   const SyncReport& report);

// Installs files: --in-place, UpdateInPlace into DEST; else the view (built
// unless reuse, by builder where the caller started one for files; an
// unmanaged remote's file list first), the swap, and old views removed (or
// renamed into *detach: RemoveOldViews).
// Counters go to report.
Status Install(Env* env, Cache* cache, const SyncOptions& o,
               const DestPaths& paths, DestKind kind,
               const std::string& cur_view, const std::string& view, bool reuse,
               const std::vector<Entry>& files, const ViewState& state,
               SyncReport* report, ViewBuilder* builder = nullptr,
               std::vector<Trash>* detach = nullptr);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_INSTALL_H_
