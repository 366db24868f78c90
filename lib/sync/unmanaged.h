// ferry sync from an unmanaged remote (docs/sync.md "Unmanaged remotes"): a
// prefix without .ferry/refs/HEAD, written by other tools. Its files are
// listed (streamed pages; or named by --list FILE|URL and stat'ed, for
// HTTP), compared by size + ETag with what DEST recorded at the last sync
// (.ferry-sync-files), and the new or changed ones downloaded whole through
// the transfer engine, checked (size; MD5 where the ETag is one), hashed
// (XXH3-128) and put into the cache by content under the remote's key. The
// view (or --in-place DEST) is then built as for a managed remote; its id is
// the XXH3-128 of the file list (paths, sizes, hashes, ETags).
//
// Thread-safety: as Sync.
#ifndef FERRY_LIB_SYNC_UNMANAGED_H_
#define FERRY_LIB_SYNC_UNMANAGED_H_

#include <string>
#include <string_view>

#include "ferry/env.h"
#include "ferry/remote.h"
#include "ferry/result.h"
#include "ferry/sync.h"
#include "sync/view.h"

namespace ferry::sync {

// What Sync knows when it finds the remote unmanaged.
struct UnmanagedRun {
  const SyncOptions& o;
  Env* env;
  const DestPaths& paths;
  const std::string& cache_dir;
  const std::string& remote_key;
  const std::string& sel_key;
  Backend* backend;
  const Result<ViewState>* cur;  // DEST's state now
};

// The rest of the sync (report holds the requests made so far).
Result<SyncReport> SyncUnmanaged(const UnmanagedRun& run, SyncReport report);

// The MD5 (32 lower-case hex) an ETag states: a plain S3 ETag of a
// single-part upload, quotes removed; "" for any other ETag (multipart
// "<hex>-<parts>", weak, nginx's "<mtime>-<size>").
std::string EtagMd5(std::string_view etag);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_UNMANAGED_H_
