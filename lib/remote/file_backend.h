// The file backend: a local directory seen as a bucket (file:///abs/path or a
// plain path). Keys are '/'-separated paths below the root; a key that would
// leave the root ('..', '.', an absolute path, an empty segment as in "a//b")
// is refused. Objects are written atomically (temporary file, fsync, rename,
// directory fsync: AtomicFileWriter); the temporaries and the lock files of
// conditional writes never show in listings.
//
// Temporaries killed writers left are removed by the next write into their
// folder (once per folder and backend: RemoveStaleTemps, shared, so by the
// writer's lock and the file's age, never by pid: the folder may be written
// from other machines) and by StaleTempSweeper (gc).
//
// The ETag of a file is made of its size, mtime and inode: it stays the same
// while the file is unchanged and changes when it is replaced (a rename gives
// a new inode) or written in place (a new mtime).
//
// Thread-safety: safe from several threads and processes at once; conditional
// writes are serialised by a lock file per directory (".ferry-lock").
#ifndef FERRY_LIB_REMOTE_FILE_BACKEND_H_
#define FERRY_LIB_REMOTE_FILE_BACKEND_H_

#include <memory>
#include <string>
#include <string_view>

#include "ferry/atomic_file.h"
#include "ferry/env.h"
#include "ferry/remote.h"

namespace ferry::remote {

// What the file backend offers PutObjects besides Backend::Write: an
// object's bytes in a temporary file beside the key's file, neither synced
// nor renamed, so that the caller publishes many at once with an
// AtomicBatch (one syncfs, then the renames, then one sync per folder) as
// file:// get does. No file ever has its final name before its bytes are
// durable.
class UnpublishedWriter {
 public:
  virtual ~UnpublishedWriter() = default;
  // Copies source into a temporary file for key (folders created); the
  // key's file is untouched. The writer's Detach hands it to a batch; its
  // destructor removes it otherwise.
  virtual Result<std::unique_ptr<AtomicFileWriter>> WriteUnpublished(
      std::string_view key, ByteSource* source) = 0;
  // A path on the file system the objects are written to (for syncfs).
  virtual const std::string& root() const = 0;
};

// What the file backend offers gc: its temporary files never show in a
// listing, so gc cannot find them through Backend.
class StaleTempSweeper {
 public:
  virtual ~StaleTempSweeper() = default;
  // SweepStaleTemps (shared) on the folder of dir_key and every folder
  // below it: how many were (dry_run: would be) removed, and how many
  // stale ones could not be.
  virtual StaleTempSweep RemoveStaleTempsBelow(std::string_view dir_key,
                                               bool dry_run) = 0;
};

// root: the directory (or, for a URL naming one file, that file; its key is
// ""). It need not exist yet: the first write creates it. `describe` is what
// messages call it (the URL or path as the user wrote it).
std::unique_ptr<Backend> NewFileBackend(std::string root, std::string describe,
                                        Env* env);

// The ETag of a file as FileBackend reports it.
std::string FileEtag(const FileInfo& info);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_FILE_BACKEND_H_
