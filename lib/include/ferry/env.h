// Env: every piece of operating-system access libferry does (after leveldb's
// Env). Files, directories, rename, locks and the clock all go through it, so
// tests can run against an in-memory Env and inject faults with a wrapper.
//
// Thread-safety: Env implementations are safe to use from several threads at
// once. A file object is used by one thread at a time.
#ifndef FERRY_ENV_H_
#define FERRY_ENV_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/export.h"
#include "ferry/result.h"
#include "ferry/status.h"

namespace ferry {

class FERRY_EXPORT SequentialFile {
 public:
  virtual ~SequentialFile();
  // Reads up to n bytes. *result views the bytes read, which may live in
  // scratch[0..n-1]; it is shorter than n only at the end of the file and
  // empty at the end.
  virtual Status Read(size_t n, std::string_view* result, char* scratch) = 0;
  virtual Status Skip(uint64_t n) = 0;
};

class FERRY_EXPORT RandomAccessFile {
 public:
  virtual ~RandomAccessFile();
  // Reads up to n bytes at offset; short only at the end of the file.
  virtual Status Read(uint64_t offset, size_t n, std::string_view* result,
                      char* scratch) const = 0;
  virtual Result<uint64_t> Size() const = 0;
  // The path of the file this reads, links resolved, as the kernel knows
  // the open file (not its name now: it may have been renamed or replaced
  // since). NotSupported where there is no such thing (in memory).
  virtual Result<std::string> RealPath() const;
};

// Held while a lock is owned; destroying it releases the lock.
class FERRY_EXPORT FileLock {
 public:
  virtual ~FileLock();
};

class FERRY_EXPORT WritableFile {
 public:
  virtual ~WritableFile();
  virtual Status Append(std::string_view data) = 0;
  virtual Status Flush() = 0;
  virtual Status Sync() = 0;  // data durable on return
  virtual Status Close() = 0;
  // Marks the file as being written: an exclusive lock on it that lasts
  // while the returned FileLock lives, after Close too (and while the file
  // is open). POSIX: an OFD write
  // lock (fcntl F_OFD_SETLK) on a duplicate of the descriptor, seen by
  // every process of this machine and, where the file system shares locks
  // (NFS with lockd or v4), of other machines; Env::LockIfNoWriter is
  // refused while it is held. Unavailable when a LockIfNoWriter lock is
  // held, NotFound when the path opened no longer names this file (both: a
  // cleaner is removing it); NotSupported where the Env has no such locks.
  virtual Result<std::unique_ptr<FileLock>> LockWriter();
};

// What a path is. Walks take only regular files (and links to them) as
// inputs: reading a FIFO blocks, a device never ends.
enum class FileType {
  kRegular,
  kDirectory,
  kFifo,
  kCharDevice,
  kBlockDevice,
  kSocket,
  kOther
};

struct FileInfo {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  // Changes whenever the file's contents or metadata do, and cannot be set
  // back by a user (the publish stat cache trusts a file only while size,
  // mtime, ctime and inode all stay the same). An in-memory Env copies mtime.
  int64_t ctime_ns = 0;
  uint32_t mode = 0;  // permission bits (st_mode & 07777)
  bool is_dir = false;
  FileType type = FileType::kRegular;
  // Identity of the file (device, inode): two spellings of one directory
  // compare equal. An in-memory Env makes them up from the path.
  uint64_t dev = 0, ino = 0;
};

// "a FIFO", "a character device", ...: why a walk did not take a path.
FERRY_EXPORT const char* FileTypeName(FileType t);

struct DirEntry {
  std::string name;
  bool is_dir = false;   // a link to a directory is not a directory here
  bool is_link = false;  // a symbolic link (to anything)
  // A regular file, known from the directory itself (no stat needed).
  bool is_regular = false;
};

class FERRY_EXPORT Env {
 public:
  virtual ~Env();

  // The process-wide POSIX Env. Never deleted.
  static Env* Default();

  // Opening never blocks, even on a FIFO without a writer.
  virtual Result<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) = 0;
  virtual Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) = 0;
  // Creates or truncates path.
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) = 0;
  // Creates path, which must not exist: FailedPrecondition when anything is
  // there, a symbolic link (a dangling one too) included, which is never
  // followed (POSIX: O_CREAT | O_EXCL). For temporary files in folders other
  // users may write: a link planted at the name cannot redirect the write.
  // The default checks, then calls NewWritableFile (not atomically).
  virtual Result<std::unique_ptr<WritableFile>> NewTempFile(
      const std::string& path);

  // Follows symbolic links.
  virtual Result<FileInfo> Stat(const std::string& path) = 0;
  // Entries of dir without "." and "..", sorted by name (bytewise).
  virtual Result<std::vector<DirEntry>> GetChildren(const std::string& dir) = 0;
  // Creates one directory; OK if it already exists.
  virtual Status CreateDir(const std::string& dir) = 0;
  virtual Status RemoveFile(const std::string& path) = 0;
  virtual Status RemoveDir(const std::string& dir) = 0;
  // Atomically replaces `to` with `from`.
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  // Atomically swaps two existing paths (e.g. two directories): readers see
  // either both old or both new. NotSupported where the file system cannot.
  virtual Status ExchangePaths(const std::string& a, const std::string& b);
  // Makes `to` a second name (hard link) of the file `from`; `to` must not
  // exist. NotSupported where the file system cannot.
  virtual Status LinkFile(const std::string& from, const std::string& to);
  // path with every symbolic link resolved (realpath(3)): where it is. An Env
  // without links (the base, in-memory) gives path as it is.
  virtual Result<std::string> RealPath(const std::string& path);
  // Makes the directory's entries (creations, renames) durable.
  virtual Status SyncDir(const std::string& dir) = 0;
  // Makes all written data of the file system holding path durable (syncfs):
  // one call instead of an fsync per file when publishing many files.
  virtual Status SyncFileSystem(const std::string& path) = 0;
  // Takes an exclusive advisory lock on path (created if missing), shared
  // between processes. With wait=false, a held lock gives Unavailable.
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path,
                                                     bool wait) = 0;
  // A shared lock on the regular file at path while no writer holds
  // WritableFile::LockWriter's lock on it, held while the returned FileLock
  // lives (a writer's LockWriter fails meanwhile); *info gets the locked
  // file's stat. Never waits, never follows a final symbolic link, never
  // blocks on a FIFO. Unavailable while a writer holds its lock;
  // InvalidArgument for anything but a regular file; NotSupported where the
  // Env or the file system has no such locks (the default).
  virtual Result<std::unique_ptr<FileLock>> LockIfNoWriter(
      const std::string& path, FileInfo* info);
  // Whether the folder path is on a file system that only this machine
  // writes (a local disk, tmpfs; not NFS, SMB, FUSE or a cluster file
  // system), so that every writer of a file there shares this kernel's
  // locks. false when unknown (the default).
  virtual bool OnLocalFileSystem(const std::string& path);
  virtual uint64_t NowMicros() = 0;

  // Helpers built on the calls above.
  bool FileExists(const std::string& path);
  // CreateDir for dir and each missing parent.
  Status CreateDirs(const std::string& dir);
};

// Forwards every call to a target Env; subclasses override what they change.
class FERRY_EXPORT EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}
  Env* target() const { return target_; }

  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override;
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> NewTempFile(
      const std::string& path) override;
  Result<FileInfo> Stat(const std::string& path) override;
  Result<std::vector<DirEntry>> GetChildren(const std::string& dir) override;
  Status CreateDir(const std::string& dir) override;
  Status RemoveFile(const std::string& path) override;
  Status RemoveDir(const std::string& dir) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status ExchangePaths(const std::string& a, const std::string& b) override;
  Status LinkFile(const std::string& from, const std::string& to) override;
  Result<std::string> RealPath(const std::string& path) override;
  Status SyncDir(const std::string& dir) override;
  Status SyncFileSystem(const std::string& path) override;
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path,
                                             bool wait) override;
  Result<std::unique_ptr<FileLock>> LockIfNoWriter(const std::string& path,
                                                   FileInfo* info) override;
  bool OnLocalFileSystem(const std::string& path) override;
  uint64_t NowMicros() override;

 private:
  Env* target_;
};

// An Env that keeps everything in memory (tests, --dry-run). Paths are plain
// strings split on '/'; no "." or ".." handling.
FERRY_EXPORT std::unique_ptr<Env> NewMemEnv();

// Every regular file below root (WalkTree in ferry/walk.h, hidden files
// included), as paths relative to root, sorted bytewise. The first entry that
// cannot be read fails the call; special files are left out. If root is a
// file, the result is {""}.
FERRY_EXPORT Result<std::vector<std::string>> ListFilesRecursive(
    Env* env, const std::string& root);

// Joins two path parts with exactly one '/'.
FERRY_EXPORT std::string JoinPath(std::string_view a, std::string_view b);
// The directory part of path ("." if none).
FERRY_EXPORT std::string DirName(std::string_view path);

// Reads a whole file; for small files only (lists, manifests, indexes):
// devices are refused, and anything above max_bytes (a FIFO fed for ever).
FERRY_EXPORT Result<std::string> ReadFileToString(Env* env,
                                                  const std::string& path,
                                                  uint64_t max_bytes = 1ull
                                                                       << 30);

}  // namespace ferry

#endif  // FERRY_ENV_H_
