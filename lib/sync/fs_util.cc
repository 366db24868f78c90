#include "sync/fs_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <vector>

#include "ferry/atomic_file.h"

namespace ferry::sync {

Status CopyFileHashing(Env* env, const std::string& src, const std::string& dst,
                       Hash128* hash, uint64_t* size) {
  FERRY_ASSIGN_OR_RETURN(auto in, env->NewSequentialFile(src));
  FERRY_ASSIGN_OR_RETURN(auto out, AtomicFileWriter::Create(env, dst));
  Hasher128 hasher;
  std::vector<char> buf(1 << 20);
  uint64_t n = 0;
  while (true) {
    std::string_view got;
    FERRY_RETURN_IF_ERROR(in->Read(buf.size(), &got, buf.data()));
    if (got.empty()) break;
    hasher.Update(got);
    n += got.size();
    FERRY_RETURN_IF_ERROR(out->Append(got));
  }
  FERRY_RETURN_IF_ERROR(out->CommitWithoutSync());
  *hash = hasher.Digest();
  *size = n;
  return Status::OK();
}

Status SetMode(const std::string& path, uint32_t mode) {
  if (::chmod(path.c_str(), mode) != 0) return PosixError(path, errno);
  return Status::OK();
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

}  // namespace ferry::sync
