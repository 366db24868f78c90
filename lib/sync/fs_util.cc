#include "sync/fs_util.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "ferry/atomic_file.h"

namespace ferry::sync {

Status ReadChunks(Env* env, const std::string& path,
                  const std::function<Status(std::string_view)>& each) {
  FERRY_ASSIGN_OR_RETURN(auto in, env->NewSequentialFile(path));
  std::vector<char> buf(1 << 20);
  while (true) {
    std::string_view got;
    FERRY_RETURN_IF_ERROR(in->Read(buf.size(), &got, buf.data()));
    if (got.empty()) return Status::OK();
    FERRY_RETURN_IF_ERROR(each(got));
  }
}

Status CopyFileHashing(Env* env, const std::string& src, const std::string& dst,
                       Hash128* hash, uint64_t* size) {
  FERRY_ASSIGN_OR_RETURN(auto out, AtomicFileWriter::Create(env, dst));
  Hasher128 hasher;
  uint64_t n = 0;
  FERRY_RETURN_IF_ERROR(ReadChunks(env, src, [&](std::string_view got) {
    hasher.Update(got);
    n += got.size();
    return out->Append(got);
  }));
  FERRY_RETURN_IF_ERROR(out->CommitWithoutSync());
  *hash = hasher.Digest();
  *size = n;
  return Status::OK();
}

Status ReflinkFile(const std::string& from, const std::string& to,
                   uint32_t mode) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return PosixError(from, errno);
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0) {
    Status s = PosixError(to, errno);
    ::close(in);
    return s;
  }
  Status s;
  if (::ioctl(out, FICLONE, in) != 0) {
    s = Status::NotSupported(from + " -> " + to, std::strerror(errno));
  } else if (::fchmod(out, mode) != 0) {
    s = PosixError(to, errno);
  }
  ::close(in);
  if (::close(out) != 0 && s.ok()) s = PosixError(to, errno);
  if (!s.ok()) ::unlink(to.c_str());
  return s;
}

Result<PlaceHow> PlaceObject(Env* env, const std::string& from,
                             const std::string& to, const Hash128& hash,
                             uint64_t size, uint32_t mode) {
  Status s = env->LinkFile(from, to);
  if (s.ok()) return PlaceHow::kLinked;
  if (s.code() != Status::Code::kNotSupported) return s;
  if (env == Env::Default()) {
    s = ReflinkFile(from, to, mode);
    if (s.ok()) return PlaceHow::kReflinked;
    if (s.code() != Status::Code::kNotSupported) return s;
  }
  Hash128 h;
  uint64_t n = 0;
  FERRY_RETURN_IF_ERROR(CopyFileHashing(env, from, to, &h, &n));
  if (!(h == hash) || n != size) {
    (void)env->RemoveFile(to);
    return Status::Corruption(from, "cache object changed on disk");
  }
  FERRY_RETURN_IF_ERROR(SetMode(to, mode));
  return PlaceHow::kCopied;
}

Status SetMode(const std::string& path, uint32_t mode) {
  if (::chmod(path.c_str(), mode) != 0) return PosixError(path, errno);
  return Status::OK();
}

Result<std::unique_ptr<ByteLockSet>> ByteLockSet::Open(
    const std::string& path) {
  // As Env::LockFile: no link followed, no wait on a FIFO.
  int fd = ::open(path.c_str(),
                  O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) return LockFileError(path, errno);
  return std::unique_ptr<ByteLockSet>(new ByteLockSet(path, fd));
}

ByteLockSet::~ByteLockSet() { ::close(fd_); }  // releases every byte

Status ByteLockSet::Set(short type, uint64_t offset, uint64_t len, bool wait) {
  struct flock fl = {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(offset & ((uint64_t{1} << 63) - 1));
  fl.l_len = static_cast<off_t>(len);
  while (::fcntl(fd_, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) != 0) {
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EACCES)
      return Status::Unavailable(path_, "locked");
    return PosixError(path_, errno);
  }
  return Status::OK();
}

Status ByteLockSet::Lock(uint64_t offset, bool wait) {
  return Set(F_WRLCK, offset, 1, wait);
}

Status ByteLockSet::Unlock(uint64_t offset) {
  return Set(F_UNLCK, offset, 1, false);
}

Status ByteLockSet::UnlockAll() { return Set(F_UNLCK, 0, 0, false); }

Status HeldBytes(const std::string& path, const std::vector<uint64_t>& offsets,
                 std::vector<bool>* held) {
  held->assign(offsets.size(), false);
  if (offsets.empty()) return Status::OK();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    return errno == ENOENT ? Status::OK() : LockFileError(path, errno);
  Status s;
  for (size_t i = 0; i < offsets.size() && s.ok(); ++i) {
    struct flock fl = {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = static_cast<off_t>(offsets[i] & ((uint64_t{1} << 63) - 1));
    fl.l_len = 1;
    if (::fcntl(fd, F_OFD_GETLK, &fl) != 0) {
      s = PosixError(path, errno);
    } else {
      (*held)[i] = fl.l_type != F_UNLCK;
    }
  }
  ::close(fd);
  return s;
}

Result<std::string> ReadOwnFile(Env* env, const std::string& path,
                                uint64_t max_bytes) {
  auto info = env->Stat(path);
  if (info.ok() && info->type == FileType::kFifo)
    return Status::InvalidArgument(path, "not a regular file (FIFO)");
  return ReadFileToString(env, path, max_bytes);
}

Status RemoveTree(Env* env, const std::string& path) {
  auto children = env->GetChildren(path);
  if (!children.ok()) {
    if (children.status().IsNotFound()) return Status::OK();
    return children.status();
  }
  for (const DirEntry& e : *children) {
    std::string p = JoinPath(path, e.name);
    if (e.is_dir && !e.is_link) {
      FERRY_RETURN_IF_ERROR(RemoveTree(env, p));
    } else {
      Status s = env->RemoveFile(p);
      if (!s.ok() && !s.IsNotFound()) return s;
    }
  }
  Status s = env->RemoveDir(path);
  return s.IsNotFound() ? Status::OK() : s;
}

Result<PathKind> LinkKind(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return PathKind::kMissing;
    return PosixError(path, errno);
  }
  if (S_ISLNK(st.st_mode)) return PathKind::kLink;
  if (S_ISDIR(st.st_mode)) return PathKind::kDir;
  if (S_ISREG(st.st_mode)) return PathKind::kFile;
  return PathKind::kOther;
}

Result<FileStamp> StampOf(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return PosixError(path, errno);
  if (!S_ISREG(st.st_mode))
    return Status::FailedPrecondition(path, "is not a regular file");
  FileStamp f;
  f.ino = st.st_ino;
  f.size = static_cast<uint64_t>(st.st_size);
  f.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  f.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
  return f;
}

Result<std::string> ReadLink(const std::string& path) {
  std::string buf(4096, '\0');
  ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
  if (n < 0) return PosixError(path, errno);
  buf.resize(static_cast<size_t>(n));
  return buf;
}

Status MakeSymlink(const std::string& target, const std::string& path) {
  if (::symlink(target.c_str(), path.c_str()) != 0)
    return PosixError(path, errno);
  return Status::OK();
}

Result<std::string> AbsolutePath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  if (ec) return Status::IOError(path, ec.message());
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

Result<std::string> ResolvedPath(const std::string& path) {
  FERRY_ASSIGN_OR_RETURN(std::string abs, AbsolutePath(path));
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(abs, ec);
  if (ec) return Status::IOError(path, ec.message());
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

bool IsNoSpace(const Status& s) {
  if (s.ok()) return false;
  const std::string text = s.ToString();
  return text.find(std::strerror(ENOSPC)) != std::string::npos ||
         text.find("disk is full") != std::string::npos;
}

bool IsWithin(const std::string& path, const std::string& base) {
  if (base == "/") return true;
  return path.compare(0, base.size(), base) == 0 &&
         (path.size() == base.size() || path[base.size()] == '/');
}

bool RegularFileOrRemove(Env* env, const std::string& path) {
  auto st = env->Stat(path);
  if (!st.ok()) return false;
  if (st->type == FileType::kRegular) return true;
  (void)env->RemoveFile(path);
  return false;
}

Status RemoveAny(Env* env, const std::string& path) {
  FERRY_ASSIGN_OR_RETURN(PathKind kind, LinkKind(path));
  if (kind == PathKind::kMissing) return Status::OK();
  if (kind == PathKind::kDir) return RemoveTree(env, path);
  Status s = env->RemoveFile(path);
  return s.IsNotFound() ? Status::OK() : s;
}

Status RemoveUnlessRegular(Env* env, const std::string& path) {
  FERRY_ASSIGN_OR_RETURN(PathKind kind, LinkKind(path));
  if (kind == PathKind::kMissing || kind == PathKind::kFile)
    return Status::OK();
  return RemoveAny(env, path);
}

Status RemoveOddEngineFiles(Env* env, const std::string& path) {
  for (const char* suffix : {"", ".ferry-part", ".ferry-part.journal"})
    FERRY_RETURN_IF_ERROR(RemoveUnlessRegular(env, path + suffix));
  return Status::OK();
}

Status CreateOwnDirs(Env* env, const std::string& base,
                     const std::string& dir) {
  Status s = env->CreateDirs(dir);
  if (s.ok() || dir.size() <= base.size() + 1 ||
      dir.compare(0, base.size() + 1, base + "/") != 0)
    return s;
  for (size_t slash = base.size(); slash != std::string::npos;) {
    slash = dir.find('/', slash + 1);
    const std::string p = dir.substr(0, slash);
    FERRY_ASSIGN_OR_RETURN(PathKind kind, LinkKind(p));
    if (kind == PathKind::kFile || kind == PathKind::kOther) {
      Status r = env->RemoveFile(p);
      if (!r.ok() && !r.IsNotFound()) return r;
    }
  }
  return env->CreateDirs(dir);
}

}  // namespace ferry::sync
