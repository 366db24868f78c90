// The local side of publish: walk a source tree (ferry/walk.h rules), keep the
// files the filters take, and learn each file's XXH3-128 and part hashes —
// from the stat cache when stat says the file is unchanged, else by reading
// it once (on several threads).
//
// Thread-safety: one call at a time per StatCache.
#ifndef FERRY_LIB_SYNC_TREE_SCAN_H_
#define FERRY_LIB_SYNC_TREE_SCAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "ferry/walk.h"
#include "formats/manifest/manifest.h"
#include "sync/stat_cache.h"

namespace ferry::sync {

// Names ferry itself leaves in a tree (locks, resume state, temporaries,
// partial downloads, a bucket's .ferry folder): never published.
bool IsFerryWorkingName(std::string_view name);

struct LocalFile {
  std::string path;      // relative, '/'-separated
  FileInfo info;         // stat before reading (links followed)
  manifest::File entry;  // path, size, xxh3_128, mode, part hashes
  // A file holding the rdiff signature of the bytes hashed, made in the same
  // pass (ScanOptions::sign_dir); empty when none was made.
  std::string signature;
};

struct ScanOptions {
  uint64_t part_size = manifest::kDefaultPartSize;
  // Which files to take (the CLI's --include/--exclude); null: all.
  std::function<bool(std::string_view path)> take;
  StatCache* cache = nullptr;  // none: every file is read
  bool store = true;           // write what was learnt into the cache
  int jobs = 1;                // reading threads
  // Non-empty: each file read (not answered by the cache) that sign(path,
  // size) takes also gets its rdiff signature (ferry/delta.h), made from the
  // same reads as its hash, in a new file in this folder.
  std::string sign_dir;
  std::function<bool(std::string_view path, uint64_t size)> sign;
};

struct ScanResult {
  std::vector<LocalFile> files;      // sorted bytewise by path
  std::vector<WalkProblem> skipped;  // not files (FIFOs, links to folders)
  uint64_t files_read = 0, bytes_read = 0;  // not answered by the cache
};

// IOError naming the first path that could not be read (a folder, a file, a
// dangling link) or that changed while it was read: a version missing files
// would be published otherwise. InvalidArgument when root is not a folder.
Result<ScanResult> ScanTree(Env* env, const std::string& root,
                            const ScanOptions& options);

// Whether a file still looks as it did when scanned (size, mtime, ctime,
// inode): its bytes then are the ones hashed.
bool SameFile(const FileInfo& a, const FileInfo& b);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_TREE_SCAN_H_
