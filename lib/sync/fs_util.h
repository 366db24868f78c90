// File helpers of the sync side that Env does not have as one call: copying
// a file while hashing it, and making a file read-only.
//
// Thread-safety: free functions, safe from any thread.
#ifndef FERRY_LIB_SYNC_FS_UTIL_H_
#define FERRY_LIB_SYNC_FS_UTIL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ferry/env.h"
#include "ferry/hash.h"
#include "ferry/result.h"
#include "ferry/status.h"

namespace ferry::sync {

// Calls each with the bytes of path, in order, a buffer at a time.
Status ReadChunks(Env* env, const std::string& path,
                  const std::function<Status(std::string_view)>& each);

// Copies src to dst atomically (temporary + rename, no fsync: callers sync
// the file system once at the end), hashing the bytes on the way.
Status CopyFileHashing(Env* env, const std::string& src, const std::string& dst,
                       Hash128* hash, uint64_t* size);

// How PlaceObject put a cache object at its place.
enum class PlaceHow { kLinked, kReflinked, kCopied };

// Puts the cache object `from` (hash, size) at `to`, which must not exist: a
// hard link; where none can be made (another file system or mount), a
// reflink (ioctl FICLONE: the blocks are shared, nothing is copied; btrfs,
// xfs, and across mounts of one file system), mode set, not re-hashed;
// else a copy, checked against hash and size as it goes (Corruption if the
// object changed on disk), mode set. Nothing is fsynced: callers sync the
// file system once at the end.
Result<PlaceHow> PlaceObject(Env* env, const std::string& from,
                             const std::string& to, const Hash128& hash,
                             uint64_t size, uint32_t mode);

// Clones from into to (created, must not exist) with FICLONE; NotSupported
// where the file systems cannot (then nothing is left at to).
Status ReflinkFile(const std::string& from, const std::string& to,
                   uint32_t mode);

// chmod; POSIX directly (Env has no permissions).
Status SetMode(const std::string& path, uint32_t mode);

// Exclusive locks on single bytes (offsets below 2^63) of one file (created
// if missing), all held through one open file description (OFD fcntl
// locks): any number of them costs one file descriptor, and no file is
// created or removed per lock. A byte one set holds excludes every other set
// (of this process or another); a set's own bytes never conflict. All are
// released when the set goes (or its process dies).
class ByteLockSet {
 public:
  static Result<std::unique_ptr<ByteLockSet>> Open(const std::string& path);
  ~ByteLockSet();
  ByteLockSet(const ByteLockSet&) = delete;
  ByteLockSet& operator=(const ByteLockSet&) = delete;

  // With wait=false, a byte another set holds gives Unavailable.
  Status Lock(uint64_t offset, bool wait);
  Status Unlock(uint64_t offset);
  Status UnlockAll();

 private:
  ByteLockSet(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status Set(short type, uint64_t offset, uint64_t len, bool wait);

  std::string path_;
  int fd_;
};

// Which of offsets some ByteLockSet (of any process, this one's included)
// holds in the file at path, asked without taking any (F_OFD_GETLK, through
// a descriptor opened read only: nothing is created or written). No file:
// none is held.
Status HeldBytes(const std::string& path, const std::vector<uint64_t>& offsets,
                 std::vector<bool>* held);

// ReadFileToString for a file ferry keeps for itself (a view's state and
// stamps, a cached manifest, an --in-place list): a FIFO in its place is
// refused like a device, never opened (its open waited for a writer: the
// sync hung). A user's file (--list) may be a pipe; not this.
Result<std::string> ReadOwnFile(Env* env, const std::string& path,
                                uint64_t max_bytes = uint64_t{1} << 30);

// Removes path and everything below it (a view folder); OK if missing.
// Never follows a symbolic link out of it.
Status RemoveTree(Env* env, const std::string& path);

// For a file ferry left in its own folders (partial/: a download, a
// .blocks file): true when path is a regular file (through links); anything
// else there (a FIFO, whose open would block, a device, a directory) is
// removed, or left, and false. False when there is nothing.
bool RegularFileOrRemove(Env* env, const std::string& path);

// Removes whatever is at path (a folder with all below it, a link itself);
// OK if missing.
Status RemoveAny(Env* env, const std::string& path);

// Removes what is at path unless it is a regular file (RemoveAny).
Status RemoveUnlessRegular(Env* env, const std::string& path);
// RemoveUnlessRegular of a transfer's file path, path.ferry-part and
// path.ferry-part.journal: in a cache, ferry's own names.
Status RemoveOddEngineFiles(Env* env, const std::string& path);

// CreateDirs for ferry's own folders below base (a cache's
// objects/<remote-key>/<xx>, partial/<remote-key>): anything but a folder
// (or a link to one) at one of their names — a file, a FIFO, a device — is
// removed first. It failed every sync ("exists and is not a directory")
// until removed by hand. base itself is not touched.
Status CreateOwnDirs(Env* env, const std::string& base, const std::string& dir);

// What identifies a file's bytes without reading them: inode, size, and
// the times of its last write and last inode change (ctime cannot be set
// back by a user; a link or chmod changes it too).
struct FileStamp {
  uint64_t ino = 0, size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  bool operator==(const FileStamp& o) const {
    return ino == o.ino && size == o.size && mtime_ns == o.mtime_ns &&
           ctime_ns == o.ctime_ns;
  }
};
// lstat of a regular file: NotFound if missing, FailedPrecondition if not a
// regular file.
Result<FileStamp> StampOf(const std::string& path);

// What a path is without following a final symbolic link.
enum class PathKind { kMissing, kLink, kDir, kFile, kOther };
Result<PathKind> LinkKind(const std::string& path);
// The target of a symbolic link, as stored.
Result<std::string> ReadLink(const std::string& path);
// Creates a symbolic link at path (which must not exist) holding target.
Status MakeSymlink(const std::string& target, const std::string& path);
// An absolute, lexically normal form of path ("." and ".." resolved by
// name, not through links) from the working directory.
Result<std::string> AbsolutePath(const std::string& path);
// path with every link of the part that exists resolved (the rest appended
// by name): where it is on disk.
Result<std::string> ResolvedPath(const std::string& path);
// True for the error of a full file system (ENOSPC; SQLite's "disk is
// full").
bool IsNoSpace(const Status& s);
// True when path is base or below it (both absolute, normal).
bool IsWithin(const std::string& path, const std::string& base);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_FS_UTIL_H_
