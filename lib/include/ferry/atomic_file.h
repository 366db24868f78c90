// Atomic publication of files: content is written to a temporary file
// ".ferry-tmp-<pid>-<id>-<name>" beside <name>, synced, renamed over <name>,
// and the directory synced. Readers see the old
// content or the new one, never a part; a failure removes the temporary file.
// The temporary file is made new (Env::NewTempFile: no link at its name is
// followed) under a name with 32 random bits, and its writer holds a lock
// on it until it is renamed or removed (WritableFile::LockWriter), detached
// ones included: that is how RemoveStaleTemps tells a live writer's file
// (on any machine) from one a killed process left.
//
// Thread-safety: an AtomicFileWriter is used by one thread at a time.
#ifndef FERRY_ATOMIC_FILE_H_
#define FERRY_ATOMIC_FILE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/env.h"

namespace ferry {

class FERRY_EXPORT AtomicFileWriter {
 public:
  // Opens a temporary file beside final_path.
  static Result<std::unique_ptr<AtomicFileWriter>> Create(
      Env* env, std::string final_path);
  // Abandons the file unless Commit succeeded.
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Errors are sticky: after one, Append and Commit return it.
  Status Append(std::string_view data);
  // Sync, close, rename over the final name, sync the directory. On failure
  // before the rename the temporary file is removed and the final name keeps
  // its old content.
  Status Commit();
  // As Commit, without the fsyncs: the rename is still atomic for readers
  // and against a killed process, but not against a power loss.
  Status CommitWithoutSync();
  // Removes the temporary file; the final name is untouched.
  void Abandon();
  // Closes the temporary file and hands it over (unsynced, unpublished) for
  // an AtomicBatch to publish; the writer no longer removes it. Its lock
  // stays with the writer, and goes to the batch with it.
  Status Detach();

  const std::string& temp_path() const { return temp_path_; }
  const std::string& final_path() const { return final_path_; }

 private:
  friend class AtomicBatch;
  AtomicFileWriter(Env* env, std::string final_path, std::string temp_path,
                   std::unique_ptr<WritableFile> file,
                   std::unique_ptr<FileLock> lock);
  Status Finish(bool durable);
  Status CloseTemp(bool durable);
  Env* env_;
  std::string final_path_;
  std::string temp_path_;
  std::unique_ptr<WritableFile> file_;
  std::unique_ptr<FileLock> lock_;  // the temporary's; null if none
  Status status_;
  bool done_ = false;
};

// Group commit of many files written with Detach(): one SyncFileSystem makes
// all their data durable, then each is renamed over its final name and the
// directories are synced. A crash before Commit leaves only temporary files.
// Thread-safety: one thread at a time.
class FERRY_EXPORT AtomicBatch {
 public:
  AtomicBatch(Env* env, std::string sync_root)
      : env_(env), sync_root_(std::move(sync_root)) {}
  // Removes the temporary files of anything not committed.
  ~AtomicBatch();
  void Add(std::string temp_path, std::string final_path);
  // A writer after a successful Detach: its temporary, final name and lock
  // (held until the file is renamed or removed).
  void Add(std::unique_ptr<AtomicFileWriter> detached);
  size_t size() const { return pending_.size(); }
  // Publishes everything added. on_result(i, status) reports each file in
  // the order added; a failed file's temporary is removed.
  void Commit(const std::function<void(size_t, const Status&)>& on_result);

 private:
  struct Pending {
    std::string temp, final_path;
    std::unique_ptr<FileLock> lock;
  };
  Env* env_;
  std::string sync_root_;
  std::vector<Pending> pending_;
};

// Writes data to path atomically (see above).
FERRY_EXPORT Status WriteFileAtomically(Env* env, const std::string& path,
                                        std::string_view data);

// OK unless path names (through links) a FIFO, a device or a socket: then
// InvalidArgument naming it ("not a regular file (FIFO)"). Asked before a
// file is renamed onto path (here and by downloads): the rename would
// replace the node itself (run as root, `ferry get URL /dev/null` made
// /dev/null a plain file). Nothing there, a file or a folder is OK (a folder
// fails the rename by itself); so is a path that cannot be looked at (the
// write tells why).
FERRY_EXPORT Status CheckNotSpecialFile(Env* env, const std::string& path);

// True if name (or a path's last part) is one of our temporary files
// (".ferry-tmp-<pid>-<12 hex>-<name>"). Nothing else is ever treated as one.
FERRY_EXPORT bool IsAtomicTempName(std::string_view name);

struct StaleTempOptions {
  bool recursive = false;  // the folders below dir too (no link followed)
  bool dry_run = false;    // count what would be removed, remove nothing
  // The folder is shared storage (a file:// bucket) that writers may reach
  // from other machines, also when it is local here (exported over NFS):
  // the pids in names are never asked, only the lock and the age decide.
  bool shared = false;
};

// Removes the temporary files in dir that a killed process left: a regular
// file with our temporary name whose lock no writer holds (Env::
// LockIfNoWriter succeeds; it is held through the removal) and that is
//   - older than 60 s (by mtime), or
//   - unless options.shared, on a local file system (Env::
//     OnLocalFileSystem), named by a pid that is gone here (or ours with
//     another process's tag).
// A file whose lock cannot be tested (no locks on the file system, not
// readable), a link, a folder or a FIFO with such a name is kept. Safe on a
// folder other machines write (NFS): their writers hold their locks, and
// where the file system does not pass locks on, a writer keeps its file's
// mtime young. Returns how many were (or, dry_run, would be) removed.
FERRY_EXPORT size_t RemoveStaleTemps(Env* env, const std::string& dir,
                                     const StaleTempOptions& options = {});

// RemoveStaleTemps, also telling the stale ones it could not remove (a
// read-only folder or file system): for gc, which must not pass them over
// in silence.
struct StaleTempSweep {
  size_t removed = 0;    // (dry_run: would be)
  size_t failed = 0;     // stale, but their removal failed
  Status first_failure;  // the first of those, naming the file
};
FERRY_EXPORT StaleTempSweep SweepStaleTemps(
    Env* env, const std::string& dir, const StaleTempOptions& options = {});

}  // namespace ferry

#endif  // FERRY_ATOMIC_FILE_H_
