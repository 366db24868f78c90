// ferry sync: keeps a local copy (DEST) of a dataset published with
// `ferry publish` (docs/sync.md). DEST is a symbolic link to a view: a
// folder of hard links into a content-addressed local cache, one per
// manifest, built beside the old one and swapped in with one rename, so a
// reader sees the old dataset or the new one, never a mix.
//
// Thread-safety: Sync and CheckView may run in several processes (and
// threads) at once on one cache; two syncs into one DEST exclude each other
// (the second fails at once).
#ifndef FERRY_SYNC_H_
#define FERRY_SYNC_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/env.h"
#include "ferry/export.h"
#include "ferry/remote.h"
#include "ferry/result.h"
#include "ferry/status.h"
#include "ferry/transfer.h"

namespace ferry {

// The two files ferry keeps in every view's top folder.
inline constexpr std::string_view kViewStateName = ".ferry-sync.json";
inline constexpr std::string_view kViewLockName = ".ferry-view.lock";

// Whether a file below a tree (path relative to it, '/'-separated) is one of
// ferry's own working files, which `put -R` and `publish` never upload:
// locks and state of pack, convert and sync views (.ferry-pack.lock,
// .ferry-pack-state, .ferry-convert[.lock], .ferry-sync* (a synced
// DEST's state), .ferry-view.lock, the file backend's .ferry-lock), downloads
// in progress
// (*.ferry-part, *.ferry-part.journal), temporaries of atomic writes
// (.ferry-tmp-*, .<name>.ferry-tmp) and anything below folders ferry works
// in (.<name>.ferry-views/, .ferry-old-*, .*.ferry-split-*).
FERRY_EXPORT bool IsFerryWorkingFile(std::string_view rel);

// Which files of the manifest this node takes.
struct SyncSelection {
  int rank = 0;
  int world_size = 1;
  // --include (true) / --exclude (false) globs on the path, in order; the
  // last one that matches decides.
  std::vector<std::pair<bool, std::string>> filters;
};

struct SyncOptions {
  std::string remote;        // the published prefix (any remote URL)
  std::string ref = "HEAD";  // a ref name (HEAD, a tag) or a manifest id
  std::string dest;          // the symbolic link that names the dataset
  std::string cache_dir;     // "": DefaultCacheDir()
  uint64_t cache_limit = 0;  // bytes; 0: no limit
  // --basis DIR: a tree whose file at a path is a basis for block reuse of
  // that path's new object (docs/delta.md, path 3), besides DEST's own.
  std::string basis_dir;
  SyncSelection selection;
  // A first sync into an existing, non-empty real folder: its files are
  // adopted into the cache by content and the folder is moved aside to
  // `.<name>.ferry-old-<time>` beside DEST; with remove_replaced it is
  // removed instead.
  // With in_place: also remove the files in DEST that ferry did not place.
  bool remove_replaced = false;
  // DEST is a plain folder updated file by file (no view, no link): readers
  // may see a mix of two versions while it runs (docs/sync.md).
  bool in_place = false;
  // An unmanaged remote's files: a local file or a URL of relative paths,
  // one a line, instead of listing the remote (needed for http(s)://). At
  // most 64 MiB and 1,000,000 names (more: InvalidArgument naming it, read
  // no further).
  std::string list;
  bool dry_run = false;
  // --in-place: called after each file is placed (with the count so far);
  // tests stop a sync here to kill it.
  std::function<void(uint64_t placed)> on_placed;
  // After the swap, old views are renamed out of the views folder at once
  // and their files removed by a detached process, which sync does not wait
  // for (docs/sync.md "Old views"); the ferry CLI sets it. false: removed
  // before Sync returns (also where this process runs other threads).
  bool detach_old_view_removal = false;
  RemoteOptions remote_options;
  TransferOptions transfer;
};

struct SyncReport {
  bool unchanged = false;  // the ref and DEST were as recorded: no-op
  std::string manifest_id;
  std::string view;               // the folder DEST points to
  uint64_t files = 0, bytes = 0;  // in the view
  // Distinct (hash, size) the view needs (identical files share one):
  // files_cached + files_adopted + objects_fetched, a killed run's finished
  // downloads and another process's counted as cached.
  uint64_t objects = 0;
  uint64_t files_cached = 0;  // linked from the cache as they were
  uint64_t files_adopted = 0, bytes_adopted = 0;  // taken from DEST's files
  uint64_t objects_fetched = 0, bytes_fetched = 0, bytes_resumed = 0;
  // By the path each fetched object took (docs/delta.md "Sync side"):
  // objects_fetched = objects_patched + objects_whole and bytes_fetched
  // (bytes read from the remote) = delta_bytes_fetched + the whole objects'.
  // Patched: a delta from an object the cache held, applied and verified
  // (delta_bytes_fetched counts the bytes of deltas that failed too);
  // delta_fallbacks: objects whose delta failed (missing, damaged, wrong
  // result), fetched whole. bytes_cached: of the view's objects found in
  // the cache. An unmanaged remote's files are cached or whole, counted by
  // file (their hashes are known only once fetched). A dry run gives the
  // expected figures.
  uint64_t objects_patched = 0, delta_bytes_fetched = 0, bytes_patched = 0;
  uint64_t objects_whole = 0, bytes_whole = 0, delta_fallbacks = 0;
  // Block reuse (path 3): objects assembled from blocks of local files (the
  // same path in DEST, --basis DIR, a delta's cached source) and ranges of
  // the object; block_bytes_fetched: their signatures and ranges (failed
  // ones too); bytes_reused: the objects' bytes; bytes_copied: of those,
  // copied from the local files. block_fallbacks: objects whose block reuse
  // failed, fetched whole.
  uint64_t objects_reused = 0, block_bytes_fetched = 0, bytes_reused = 0;
  uint64_t bytes_copied = 0, block_fallbacks = 0;
  // Of bytes_copied, the blocks the scan took by the manifest's part
  // hashes (whole unchanged parts, no block summed).
  uint64_t bytes_part_matched = 0;
  // A dry run: block_bytes_fetched are the signatures' bytes, and the
  // ranges (which the scan decides) at most this many (the objects' sizes,
  // counted in bytes_fetched: an upper bound).
  uint64_t block_range_bytes_max = 0;
  uint64_t bytes_cached = 0;
  uint64_t requests = 0;      // requests this run sent to the remote
  bool unmanaged = false;     // the remote has no .ferry/refs/HEAD: listed
  uint64_t files_listed = 0;  // unmanaged: objects in the listing
  // How the files reached DEST where a hard link was impossible.
  uint64_t files_copied = 0, files_reflinked = 0;
  // --in-place: files written, kept as they were, and removed (ferry's, and
  // with --delete others).
  uint64_t files_placed = 0, files_kept = 0, files_removed = 0;
  // The transfers' retries by cause ("part-hash": a part that did not
  // match the manifest's XXH3-64 and was fetched again).
  std::map<std::string, uint64_t> retries;
  uint64_t evicted_objects = 0, evicted_bytes = 0;
  uint64_t old_views_removed = 0, old_views_in_use = 0;
  // Old views that held files ferry did not place (a user's): moved aside
  // whole instead of removed, (where to, those files).
  std::vector<std::pair<std::string, std::vector<std::string>>> kept_old_views;
  std::string replaced_folder;  // where a real DEST folder was moved
  // --in-place: files ferry placed that changed since (kept), damaged state
  // files (ignored).
  std::vector<std::string> warnings;
  // Objects that could not be fetched (then DEST was not switched).
  std::vector<std::pair<std::string, Status>> failures;
};

// Syncs DEST to the ref's manifest. A failed object leaves DEST as it was
// (the report lists it; objects that arrived stay in the cache).
FERRY_EXPORT Result<SyncReport> Sync(const SyncOptions& options, Env* env);

struct CheckReport {
  std::string manifest_id;
  uint64_t files = 0, bytes = 0;
  // Each file that is missing, differs or should not be there, and why.
  std::vector<std::pair<std::string, std::string>> problems;
};

// Re-hashes DEST's view against the manifest it was built from (found in
// the cache the view records).
FERRY_EXPORT Result<CheckReport> CheckView(const std::string& dest, Env* env);

}  // namespace ferry

#endif  // FERRY_SYNC_H_
