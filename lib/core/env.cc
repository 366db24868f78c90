#include "ferry/env.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ferry/walk.h"

namespace ferry {

SequentialFile::~SequentialFile() = default;
RandomAccessFile::~RandomAccessFile() = default;
Result<std::string> RandomAccessFile::RealPath() const {
  return Status::NotSupported("the path of an open file");
}
WritableFile::~WritableFile() = default;
FileLock::~FileLock() = default;
Env::~Env() = default;

bool Env::FileExists(const std::string& path) { return Stat(path).ok(); }

Status Env::CreateDirs(const std::string& dir) {
  if (dir.empty() || dir == "." || dir == "/") return Status::OK();
  auto info = Stat(dir);
  if (info.ok()) {
    return info->is_dir ? Status::OK()
                        : Status::IOError(dir, "exists and is not a directory");
  }
  std::string parent = DirName(dir);
  if (parent != dir) FERRY_RETURN_IF_ERROR(CreateDirs(parent));
  return CreateDir(dir);
}

Result<std::unique_ptr<SequentialFile>> EnvWrapper::NewSequentialFile(
    const std::string& path) {
  return target_->NewSequentialFile(path);
}
Result<std::unique_ptr<RandomAccessFile>> EnvWrapper::NewRandomAccessFile(
    const std::string& path) {
  return target_->NewRandomAccessFile(path);
}
Result<std::unique_ptr<WritableFile>> EnvWrapper::NewWritableFile(
    const std::string& path) {
  return target_->NewWritableFile(path);
}
Result<std::unique_ptr<WritableFile>> EnvWrapper::NewTempFile(
    const std::string& path) {
  return target_->NewTempFile(path);
}
Result<std::unique_ptr<WritableFile>> Env::NewTempFile(
    const std::string& path) {
  auto children = GetChildren(DirName(path));
  if (children.ok()) {
    const std::string name = path.substr(path.rfind('/') + 1);
    for (const DirEntry& e : *children) {
      if (e.name == name) return Status::FailedPrecondition(path, "exists");
    }
  }
  return NewWritableFile(path);
}
Result<FileInfo> EnvWrapper::Stat(const std::string& path) {
  return target_->Stat(path);
}
Result<std::vector<DirEntry>> EnvWrapper::GetChildren(const std::string& dir) {
  return target_->GetChildren(dir);
}
Status EnvWrapper::CreateDir(const std::string& dir) {
  return target_->CreateDir(dir);
}
Status EnvWrapper::RemoveFile(const std::string& path) {
  return target_->RemoveFile(path);
}
Status EnvWrapper::RemoveDir(const std::string& dir) {
  return target_->RemoveDir(dir);
}
Status EnvWrapper::RenameFile(const std::string& from, const std::string& to) {
  return target_->RenameFile(from, to);
}
Status EnvWrapper::ExchangePaths(const std::string& a, const std::string& b) {
  return target_->ExchangePaths(a, b);
}
Status EnvWrapper::LinkFile(const std::string& from, const std::string& to) {
  return target_->LinkFile(from, to);
}
Result<std::string> EnvWrapper::RealPath(const std::string& path) {
  return target_->RealPath(path);
}
Result<std::string> Env::RealPath(const std::string& path) { return path; }
Status Env::ExchangePaths(const std::string& a, const std::string& b) {
  return Status::NotSupported(a + " <-> " + b, "cannot exchange paths here");
}
Status Env::LinkFile(const std::string& from, const std::string& to) {
  return Status::NotSupported(from + " -> " + to, "no hard links here");
}
Status EnvWrapper::SyncDir(const std::string& dir) {
  return target_->SyncDir(dir);
}
Status EnvWrapper::SyncFileSystem(const std::string& path) {
  return target_->SyncFileSystem(path);
}
Result<std::unique_ptr<FileLock>> EnvWrapper::LockFile(const std::string& path,
                                                       bool wait) {
  return target_->LockFile(path, wait);
}
Result<std::unique_ptr<FileLock>> EnvWrapper::LockIfNoWriter(
    const std::string& path, FileInfo* info) {
  return target_->LockIfNoWriter(path, info);
}
bool EnvWrapper::OnLocalFileSystem(const std::string& path) {
  return target_->OnLocalFileSystem(path);
}
uint64_t EnvWrapper::NowMicros() { return target_->NowMicros(); }

Result<std::unique_ptr<FileLock>> WritableFile::LockWriter() {
  return Status::NotSupported("writer locks");
}
Result<std::unique_ptr<FileLock>> Env::LockIfNoWriter(const std::string& path,
                                                      FileInfo*) {
  return Status::NotSupported(path, "writer locks");
}
bool Env::OnLocalFileSystem(const std::string&) { return false; }

std::string JoinPath(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  std::string out(a);
  if (out.back() != '/') out.push_back('/');
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  out.append(b);
  return out;
}

std::string DirName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

Result<std::vector<std::string>> ListFilesRecursive(Env* env,
                                                    const std::string& root) {
  FERRY_ASSIGN_OR_RETURN(WalkResult walk, WalkTree(env, root));
  if (!walk.errors.empty()) return walk.errors.front().status;
  return std::move(walk.files);
}

Result<std::string> ReadFileToString(Env* env, const std::string& path,
                                     uint64_t max_bytes) {
  // A device never ends (/dev/zero): it is no list or manifest.
  auto info = env->Stat(path);
  if (info.ok() && (info->type == FileType::kCharDevice ||
                    info->type == FileType::kBlockDevice ||
                    info->type == FileType::kSocket)) {
    return Status::InvalidArgument(path, std::string("not a regular file (") +
                                             FileTypeName(info->type) + ")");
  }
  if (info.ok() && info->size > max_bytes) {
    return Status::ResourceExhausted(
        path, "larger than " + std::to_string(max_bytes) + " bytes");
  }
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewSequentialFile(path));
  // Read straight into the string, sized from a stat (it may still change).
  size_t want = info.ok() ? static_cast<size_t>(info->size) + 1 : 1 << 16;
  // At most one byte past max_bytes: a Read fills all it asks for, so a
  // buffer doubled past it read a FIFO fed for ever to twice max_bytes.
  const uint64_t cap = max_bytes < SIZE_MAX ? max_bytes + 1 : SIZE_MAX;
  std::string out;
  size_t len = 0;
  for (;;) {
    if (out.size() - len < 4096)
      out.resize(std::min<uint64_t>(cap, std::max(want, out.size() * 2)));
    std::string_view got;
    FERRY_RETURN_IF_ERROR(file->Read(out.size() - len, &got, out.data() + len));
    if (got.empty()) break;
    if (got.data() != out.data() + len)
      std::memmove(out.data() + len, got.data(), got.size());
    len += got.size();
    if (len > max_bytes) {
      return Status::ResourceExhausted(
          path, "larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  out.resize(len);
  return out;
}

}  // namespace ferry
