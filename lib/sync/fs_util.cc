#include "sync/fs_util.h"

#include <sys/stat.h>

#include <cerrno>
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

}  // namespace ferry::sync
