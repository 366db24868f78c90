// The files of a download in progress (docs/remote.md): `DEST.ferry-part`,
// written at final offsets by positional writes, held under an exclusive
// flock so that two runs never write one destination, and its journal.
// POSIX directly: Env has no positional writes; the engine still names,
// renames and removes these files through Env.
//
// Thread-safety: one thread at a time per object.
#ifndef FERRY_LIB_REMOTE_PART_FILE_H_
#define FERRY_LIB_REMOTE_PART_FILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "ferry/result.h"
#include "ferry/status.h"

namespace ferry::remote {

// Creates the folders of dir, which lies below root, one at a time from
// root (which must exist; a link there is followed: the user named it) with
// mkdirat + openat(O_NOFOLLOW): a symbolic link on the way is an
// error naming it, never followed; so is a file.
Status CreateDirsBelow(const std::string& root, const std::string& dir);

// OK when path does not exist or is a regular file; an error naming it
// otherwise (a symbolic link is not followed).
Status CheckRegularOrMissing(const std::string& path);

class PartFile {
 public:
  ~PartFile();
  // Opens path (created if missing; never through a symbolic link, and only
  // a regular file) and locks it. Held by another run:
  // waits, or with wait=false fails with Unavailable naming the path. The
  // lock is on the file the path names once it is held (a file renamed away
  // meanwhile is let go and the new one locked).
  static Result<std::unique_ptr<PartFile>> Open(const std::string& path,
                                                bool wait);
  const std::string& path() const { return path_; }
  Status WriteAt(uint64_t offset, std::string_view data);
  Status ReadAt(uint64_t offset, size_t n, char* scratch, size_t* got) const;
  Status Sync();  // the data written so far is durable
  Status Truncate(uint64_t size);
  Result<uint64_t> Size() const;

 private:
  PartFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
};

// The journal beside a part file: created with its header, then one synced
// append per record (not synced when !durable).
class JournalFile {
 public:
  ~JournalFile();
  static Result<std::unique_ptr<JournalFile>> Create(const std::string& path,
                                                     std::string_view header,
                                                     bool durable = true);
  // Opens an existing journal for appending (after ParseJournal accepted it).
  static Result<std::unique_ptr<JournalFile>> OpenForAppend(
      const std::string& path, bool durable = true);
  Status Append(std::string_view record);  // written and synced

 private:
  JournalFile(std::string path, int fd, bool durable)
      : path_(std::move(path)), fd_(fd), durable_(durable) {}
  std::string path_;
  int fd_;
  bool durable_;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_PART_FILE_H_
