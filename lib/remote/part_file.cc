#include "remote/part_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace ferry::remote {
namespace {

Status WriteAll(int fd, const std::string& path, uint64_t offset,
                std::string_view data, bool positional) {
  while (!data.empty()) {
    ssize_t n = positional ? ::pwrite(fd, data.data(), data.size(), offset)
                           : ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return PosixError(path, errno);
    }
    data.remove_prefix(size_t(n));
    offset += uint64_t(n);
  }
  return Status::OK();
}

// Why path (an existing non-regular file) is refused.
Status NotRegular(const std::string& path, const struct stat& st) {
  const char* what = S_ISLNK(st.st_mode)   ? "a symbolic link (not followed)"
                     : S_ISDIR(st.st_mode) ? "a folder"
                                           : "not a regular file";
  return Status::IOError(path, std::string("is ") + what);
}

// fd of the folder path below dir_fd (named shown), created if missing.
Result<int> OpenDirNoFollow(int dir_fd, const std::string& name,
                            const std::string& shown) {
  if (::mkdirat(dir_fd, name.c_str(), 0755) != 0 && errno != EEXIST)
    return PosixError(shown, errno);
  int fd = ::openat(dir_fd, name.c_str(),
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) return fd;
  int err = errno;
  struct stat st;
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      !S_ISDIR(st.st_mode)) {
    if (S_ISLNK(st.st_mode)) return NotRegular(shown, st);
    return Status::IOError(shown, "is a file, a folder is needed here");
  }
  return PosixError(shown, err);
}

}  // namespace

Status CreateDirsBelow(const std::string& root, const std::string& dir) {
  std::string_view rel(dir);
  std::string_view r(root);
  while (r.size() > 1 && r.back() == '/') r.remove_suffix(1);
  if (rel.substr(0, r.size()) != r ||
      (rel.size() > r.size() && rel[r.size()] != '/' && r != "/"))
    return Status::InvalidArgument(dir, "is not below " + root);
  rel.remove_prefix(r.size());
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return PosixError(root, errno);
  Status s;
  std::string shown(r);
  for (size_t start = 0; s.ok() && start < rel.size();) {
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    std::string name(rel.substr(start, end - start));
    start = end + 1;
    if (name.empty()) continue;
    shown += "/" + name;
    auto next = OpenDirNoFollow(fd, name, shown);
    ::close(fd);
    fd = -1;
    if (!next.ok()) {
      s = next.status();
    } else {
      fd = *next;
    }
  }
  if (fd >= 0) ::close(fd);
  return s;
}

Status CheckRegularOrMissing(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    return errno == ENOENT ? Status::OK() : PosixError(path, errno);
  return S_ISREG(st.st_mode) ? Status::OK() : NotRegular(path, st);
}

PartFile::~PartFile() { ::close(fd_); }  // releases the flock

Result<std::unique_ptr<PartFile>> PartFile::Open(const std::string& path,
                                                 bool wait) {
  for (;;) {
    // Never through a link, and without blocking on a FIFO.
    int fd =
        ::open(path.c_str(),
               O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd < 0) {
      int err = errno;
      FERRY_RETURN_IF_ERROR(CheckRegularOrMissing(path));
      return PosixError(path, err);
    }
    struct stat held;
    Status s = ::fstat(fd, &held) != 0  ? PosixError(path, errno)
               : !S_ISREG(held.st_mode) ? NotRegular(path, held)
                                        : Status::OK();
    if (!s.ok()) {
      ::close(fd);
      return s;
    }
    while (::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
      int err = errno;
      if (err == EINTR) continue;
      ::close(fd);
      if (err == EWOULDBLOCK) {
        return Status::Unavailable(
            path, "another ferry run is downloading to this destination");
      }
      return PosixError(path + ": flock", err);
    }
    // The run that held the lock may have renamed the file into place: the
    // lock is then on a file that is no longer the part file.
    struct stat now;
    if (::lstat(path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
        held.st_ino == now.st_ino) {
      return std::unique_ptr<PartFile>(new PartFile(path, fd));
    }
    ::close(fd);
  }
}

Status PartFile::WriteAt(uint64_t offset, std::string_view data) {
  return WriteAll(fd_, path_, offset, data, true);
}

Status PartFile::ReadAt(uint64_t offset, size_t n, char* scratch,
                        size_t* got) const {
  *got = 0;
  while (*got < n) {
    ssize_t r = ::pread(fd_, scratch + *got, n - *got, offset + *got);
    if (r < 0) {
      if (errno == EINTR) continue;
      return PosixError(path_, errno);
    }
    if (r == 0) break;
    *got += size_t(r);
  }
  return Status::OK();
}

Status PartFile::Sync() {
  if (::fdatasync(fd_) != 0) return PosixError(path_ + ": fdatasync", errno);
  return Status::OK();
}

Status PartFile::Truncate(uint64_t size) {
  // Emptying an empty file is skipped: on ext4 (auto_da_alloc) a truncate
  // to 0 makes the close flush the file, which held up the end of a
  // 1 GiB download's close by ~0.2 s (--no-fsync) for nothing.
  if (size == 0) {
    FERRY_ASSIGN_OR_RETURN(uint64_t now, Size());
    if (now == 0) return Status::OK();
  }
  if (::ftruncate(fd_, off_t(size)) != 0) return PosixError(path_, errno);
  return Status::OK();
}

Result<uint64_t> PartFile::Size() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return PosixError(path_, errno);
  return uint64_t(st.st_size);
}

JournalFile::~JournalFile() { ::close(fd_); }

Result<std::unique_ptr<JournalFile>> JournalFile::Create(
    const std::string& path, std::string_view header, bool durable) {
  FERRY_RETURN_IF_ERROR(CheckRegularOrMissing(path));
  int fd = ::open(path.c_str(),
                  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return PosixError(path, errno);
  std::unique_ptr<JournalFile> j(new JournalFile(path, fd, durable));
  FERRY_RETURN_IF_ERROR(j->Append(header));
  return j;
}

Result<std::unique_ptr<JournalFile>> JournalFile::OpenForAppend(
    const std::string& path, bool durable) {
  FERRY_RETURN_IF_ERROR(CheckRegularOrMissing(path));
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return PosixError(path, errno);
  return std::unique_ptr<JournalFile>(new JournalFile(path, fd, durable));
}

Status JournalFile::Append(std::string_view record) {
  FERRY_RETURN_IF_ERROR(WriteAll(fd_, path_, 0, record, false));
  if (durable_ && ::fdatasync(fd_) != 0)
    return PosixError(path_ + ": fdatasync", errno);
  return Status::OK();
}

}  // namespace ferry::remote
