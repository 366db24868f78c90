// Atomic publication of files: content is written to a temporary file
// ".ferry-tmp-<pid>-<id>-<name>" beside <name>, synced, renamed over <name>,
// and the directory synced. Readers see the old
// content or the new one, never a part; a failure removes the temporary file.
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
  // an AtomicBatch to publish; the writer no longer removes it.
  Status Detach();

  const std::string& temp_path() const { return temp_path_; }
  const std::string& final_path() const { return final_path_; }

 private:
  AtomicFileWriter(Env* env, std::string final_path, std::string temp_path,
                   std::unique_ptr<WritableFile> file);
  Status Finish(bool durable);
  Status CloseTemp(bool durable);
  Env* env_;
  std::string final_path_;
  std::string temp_path_;
  std::unique_ptr<WritableFile> file_;
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
  size_t size() const { return pending_.size(); }
  // Publishes everything added. on_result(i, status) reports each file in
  // the order added; a failed file's temporary is removed.
  void Commit(const std::function<void(size_t, const Status&)>& on_result);

 private:
  Env* env_;
  std::string sync_root_;
  std::vector<std::pair<std::string, std::string>> pending_;
};

// Writes data to path atomically (see above).
FERRY_EXPORT Status WriteFileAtomically(Env* env, const std::string& path,
                                        std::string_view data);

// True if name (or a path's last part) is one of our temporary files
// (".ferry-tmp-<pid>-<12 hex>-<name>"). Nothing else is ever treated as one.
FERRY_EXPORT bool IsAtomicTempName(std::string_view name);

// Removes the temporary files in dir (not below it) whose writing process is
// gone: what a killed run left. A running process's files are kept. Returns
// how many were removed.
FERRY_EXPORT size_t RemoveStaleTemps(Env* env, const std::string& dir);

}  // namespace ferry

#endif  // FERRY_ATOMIC_FILE_H_
