// The POSIX Env: plain file descriptors, no stdio.
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>  // renameat2
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "ferry/env.h"

namespace ferry {
namespace {

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string path, int fd)
      : path_(std::move(path)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  Status Read(size_t n, std::string_view* result, char* scratch) override {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::read(fd_, scratch + got, n - got);
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError(path_, errno);
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    *result = std::string_view(scratch, got);
    return Status::OK();
  }

  Status Skip(uint64_t n) override {
    if (::lseek(fd_, static_cast<off_t>(n), SEEK_CUR) < 0) {
      return PosixError(path_, errno);
    }
    return Status::OK();
  }

 private:
  std::string path_;
  int fd_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string path, int fd)
      : path_(std::move(path)), fd_(fd) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  Status Read(uint64_t offset, size_t n, std::string_view* result,
              char* scratch) const override {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::pread(fd_, scratch + got, n - got,
                          static_cast<off_t>(offset + got));
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError(path_, errno);
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    *result = std::string_view(scratch, got);
    return Status::OK();
  }

  Result<uint64_t> Size() const override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return PosixError(path_, errno);
    return static_cast<uint64_t>(st.st_size);
  }

  Result<std::string> RealPath() const override {
    const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(proc.c_str(), buf, sizeof buf);
    if (n < 0) return PosixError(proc, errno);
    if (size_t(n) >= sizeof buf)
      return Status::NotSupported(path_, "a path longer than PATH_MAX");
    return std::string(buf, size_t(n));
  }

 private:
  std::string path_;
  int fd_;
};

class PosixWritableFile final : public WritableFile {
 public:
  static constexpr size_t kBufferSize = 64 * 1024;
  PosixWritableFile(std::string path, int fd)
      : path_(std::move(path)), fd_(fd) {
    buf_.reserve(kBufferSize);
  }
  ~PosixWritableFile() override {
    if (fd_ >= 0) (void)Close();
  }

  Status Append(std::string_view data) override {
    if (fd_ < 0) return Status::IOError(path_, "append after close");
    if (buf_.size() + data.size() <= kBufferSize) {
      buf_.append(data);
      return Status::OK();
    }
    FERRY_RETURN_IF_ERROR(Flush());
    if (data.size() < kBufferSize) {
      buf_.append(data);
      return Status::OK();
    }
    return WriteRaw(data);
  }

  Status Flush() override {
    if (buf_.empty()) return Status::OK();
    Status s = WriteRaw(buf_);
    buf_.clear();
    return s;
  }

  Status Sync() override {
    FERRY_RETURN_IF_ERROR(Flush());
    if (::fdatasync(fd_) != 0) return PosixError(path_, errno);
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return Status::OK();
    Status s = Flush();
    if (::close(fd_) != 0 && s.ok()) s = PosixError(path_, errno);
    fd_ = -1;
    return s;
  }

  Result<std::unique_ptr<FileLock>> LockWriter() override;

 private:
  Status WriteRaw(std::string_view data) {
    while (!data.empty()) {
      ssize_t w = ::write(fd_, data.data(), data.size());
      if (w < 0) {
        if (errno == EINTR) continue;
        return PosixError(path_, errno);
      }
      data.remove_prefix(static_cast<size_t>(w));
    }
    return Status::OK();
  }

  std::string path_;
  int fd_;
  std::string buf_;
};

class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }

 private:
  int fd_;
};

// An OFD lock (F_OFD_SETLK) held through its own descriptor: the lock
// belongs to the open file description, so it stays while this descriptor
// does, whatever becomes of the others.
class OfdLock final : public FileLock {
 public:
  explicit OfdLock(int fd) : fd_(fd) {}
  ~OfdLock() override { ::close(fd_); }  // releases the lock

 private:
  int fd_;
};

// Takes an OFD lock of type on the whole file fd refers to, without
// waiting: Unavailable when another open file holds a conflicting one.
Status OfdLockWhole(int fd, short type, const std::string& path) {
  struct flock fl = {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  while (::fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EACCES)
      return Status::Unavailable(path, "locked");
    if (errno == ENOLCK || errno == EINVAL || errno == EOPNOTSUPP)
      return Status::NotSupported(path, std::strerror(errno));
    return PosixError(path, errno);
  }
  return Status::OK();
}

// A duplicate of the descriptor holds the lock, so that it outlives Close
// (a temporary file stays locked until it is renamed; Close still closes
// the descriptor written, which is where NFS reports a failed write-back).
// Then the file must still have a name: a cleaner that took its shared lock
// first removed it (nobody else renames or removes a temporary).
Result<std::unique_ptr<FileLock>> PosixWritableFile::LockWriter() {
  if (fd_ < 0) return Status::InvalidArgument(path_, "lock after close");
  int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return PosixError(path_, errno);
  auto lock = std::make_unique<OfdLock>(fd);
  FERRY_RETURN_IF_ERROR(OfdLockWhole(fd, F_WRLCK, path_));
  struct stat held;
  if (::fstat(fd, &held) != 0) return PosixError(path_, errno);
  if (held.st_nlink == 0)
    return Status::NotFound(path_, "removed while it was opened");
  return std::unique_ptr<FileLock>(std::move(lock));
}

FileType TypeOf(mode_t mode) {
  if (S_ISREG(mode)) return FileType::kRegular;
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISFIFO(mode)) return FileType::kFifo;
  if (S_ISCHR(mode)) return FileType::kCharDevice;
  if (S_ISBLK(mode)) return FileType::kBlockDevice;
  if (S_ISSOCK(mode)) return FileType::kSocket;
  return FileType::kOther;
}

FileInfo InfoOf(const struct stat& st) {
  FileInfo info;
  info.size = static_cast<uint64_t>(st.st_size);
  info.mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  info.ctime_ns =
      static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  info.mode = static_cast<uint32_t>(st.st_mode & 07777);
  info.is_dir = S_ISDIR(st.st_mode);
  info.type = TypeOf(st.st_mode);
  info.dev = static_cast<uint64_t>(st.st_dev);
  info.ino = static_cast<uint64_t>(st.st_ino);
  return info;
}

// Opens for reading. Devices are opened without blocking (a tty or modem
// line could wait for ever), then reads block as usual. A FIFO named for
// reading waits for its writer, as cat or xxhsum do: opened without blocking
// it would read as empty before the writer comes. (Walks never open FIFOs.)
Result<int> OpenForReading(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return PosixError(path, errno);
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
    ::close(fd);
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError(path, errno);
    return fd;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

class PosixEnv final : public Env {
 public:
  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override {
    FERRY_ASSIGN_OR_RETURN(int fd, OpenForReading(path));
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return std::unique_ptr<SequentialFile>(
        std::make_unique<PosixSequentialFile>(path, fd));
  }

  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    FERRY_ASSIGN_OR_RETURN(int fd, OpenForReading(path));
    return std::unique_ptr<RandomAccessFile>(
        std::make_unique<PosixRandomAccessFile>(path, fd));
  }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) override {
    int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(path, errno);
    return std::unique_ptr<WritableFile>(
        std::make_unique<PosixWritableFile>(path, fd));
  }

  Result<std::unique_ptr<WritableFile>> NewTempFile(
      const std::string& path) override {
    int fd = ::open(path.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      if (errno == EEXIST) return Status::FailedPrecondition(path, "exists");
      return PosixError(path, errno);
    }
    return std::unique_ptr<WritableFile>(
        std::make_unique<PosixWritableFile>(path, fd));
  }

  Result<FileInfo> Stat(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return PosixError(path, errno);
    return InfoOf(st);
  }

  Result<std::vector<DirEntry>> GetChildren(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError(dir, errno);
    std::vector<DirEntry> out;
    errno = 0;
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0)
        continue;
      DirEntry entry{e->d_name, e->d_type == DT_DIR, e->d_type == DT_LNK,
                     e->d_type == DT_REG};
      if (e->d_type == DT_UNKNOWN) {
        struct stat st;
        std::string p = JoinPath(dir, e->d_name);
        if (::lstat(p.c_str(), &st) == 0) {
          entry.is_dir = S_ISDIR(st.st_mode);
          entry.is_link = S_ISLNK(st.st_mode);
          entry.is_regular = S_ISREG(st.st_mode);
        }
      }
      out.push_back(std::move(entry));
    }
    int err = errno;
    ::closedir(d);
    if (err != 0) return PosixError(dir, err);
    std::sort(out.begin(), out.end(), [](const DirEntry& a, const DirEntry& b) {
      return a.name < b.name;
    });
    return out;
  }

  Status CreateDir(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return PosixError(dir, errno);
    }
    return Status::OK();
  }

  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return PosixError(path, errno);
    return Status::OK();
  }

  Status RemoveDir(const std::string& dir) override {
    if (::rmdir(dir.c_str()) != 0) return PosixError(dir, errno);
    return Status::OK();
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) {
      return PosixError(from + " -> " + to, errno);
    }
    return Status::OK();
  }

  Status ExchangePaths(const std::string& a, const std::string& b) override {
#ifdef RENAME_EXCHANGE
    if (::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(),
                    RENAME_EXCHANGE) == 0) {
      return Status::OK();
    }
    const int err = errno;
    if (err == EINVAL || err == ENOSYS || err == ENOTSUP) {
      return Status::NotSupported(a + " <-> " + b, std::strerror(err));
    }
    return PosixError(a + " <-> " + b, err);
#else
    return Env::ExchangePaths(a, b);
#endif
  }

  Status LinkFile(const std::string& from, const std::string& to) override {
    if (::link(from.c_str(), to.c_str()) == 0) return Status::OK();
    const int err = errno;
    if (err == EPERM || err == EXDEV || err == ENOTSUP) {
      return Status::NotSupported(from + " -> " + to, std::strerror(err));
    }
    return PosixError(from + " -> " + to, err);
  }

  Result<std::string> RealPath(const std::string& path) override {
    char* real = ::realpath(path.c_str(), nullptr);
    if (real == nullptr) return PosixError(path, errno);
    std::string out(real);
    std::free(real);
    return out;
  }

  Status SyncDir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return PosixError(dir, errno);
    Status s;
    if (::fsync(fd) != 0) s = PosixError(dir, errno);
    ::close(fd);
    return s;
  }

  Status SyncFileSystem(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError(path, errno);
    Status s;
    if (::syncfs(fd) != 0) s = PosixError(path, errno);
    ::close(fd);
    return s;
  }

  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path,
                                             bool wait) override {
    // O_NOFOLLOW: a link in a lock file's place would have it created or
    // locked wherever it points; O_NONBLOCK: a FIFO opens at once.
    int fd =
        ::open(path.c_str(),
               O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd < 0) return LockFileError(path, errno);
    // flock locks belong to the open file description, so two handles in
    // one process exclude each other too (fcntl locks would not).
    while (::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK) return Status::Unavailable(path, "locked");
      return PosixError(path, err);
    }
    return std::unique_ptr<FileLock>(std::make_unique<PosixFileLock>(fd));
  }

  Result<std::unique_ptr<FileLock>> LockIfNoWriter(const std::string& path,
                                                   FileInfo* info) override {
    // O_NONBLOCK: a FIFO opens at once; O_NOFOLLOW: a link is not a file.
    int fd = ::open(path.c_str(),
                    O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
      if (errno == ELOOP)
        return Status::InvalidArgument(path, "a symbolic link");
      return PosixError(path, errno);
    }
    auto lock = std::make_unique<OfdLock>(fd);
    struct stat st;
    if (::fstat(fd, &st) != 0) return PosixError(path, errno);
    if (!S_ISREG(st.st_mode))
      return Status::InvalidArgument(path, "not a regular file");
    FERRY_RETURN_IF_ERROR(OfdLockWhole(fd, F_RDLCK, path));
    *info = InfoOf(st);
    return std::unique_ptr<FileLock>(std::move(lock));
  }

  bool OnLocalFileSystem(const std::string& path) override {
    struct statfs fs;
    if (::statfs(path.c_str(), &fs) != 0) return false;
    // Disk and memory file systems one kernel owns. Anything else (NFS,
    // SMB, FUSE, 9p, Ceph, Lustre, GFS2, OCFS2, ...) may have writers on
    // other machines.
    switch (static_cast<unsigned long>(fs.f_type)) {
      case EXT4_SUPER_MAGIC:  // ext2/3/4
      case XFS_SUPER_MAGIC:
      case BTRFS_SUPER_MAGIC:
      case TMPFS_MAGIC:
      case RAMFS_MAGIC:
      case F2FS_SUPER_MAGIC:
      case OVERLAYFS_SUPER_MAGIC:
      case 0x2fc12fc1:  // ZFS
      case 0xca451a4e:  // bcachefs
        return true;
      default:
        return false;
    }
  }

  uint64_t NowMicros() override {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count());
  }
};

}  // namespace

Env* Env::Default() {
  static PosixEnv* env = new PosixEnv();
  return env;
}

}  // namespace ferry
