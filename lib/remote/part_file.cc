#include "remote/part_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

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

}  // namespace

PartFile::~PartFile() { ::close(fd_); }  // releases the flock

Result<std::unique_ptr<PartFile>> PartFile::Open(const std::string& path,
                                                 bool wait) {
  for (;;) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(path, errno);
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
    struct stat held, now;
    if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &now) == 0 &&
        held.st_dev == now.st_dev && held.st_ino == now.st_ino) {
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
    const std::string& path, std::string_view header) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return PosixError(path, errno);
  std::unique_ptr<JournalFile> j(new JournalFile(path, fd));
  FERRY_RETURN_IF_ERROR(j->Append(header));
  return j;
}

Result<std::unique_ptr<JournalFile>> JournalFile::OpenForAppend(
    const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return PosixError(path, errno);
  return std::unique_ptr<JournalFile>(new JournalFile(path, fd));
}

Status JournalFile::Append(std::string_view record) {
  FERRY_RETURN_IF_ERROR(WriteAll(fd_, path_, 0, record, false));
  if (::fdatasync(fd_) != 0) return PosixError(path_ + ": fdatasync", errno);
  return Status::OK();
}

}  // namespace ferry::remote
