// An Env held in memory, for tests and dry runs. Files are shared between
// open handles, as on a real file system.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <set>

#include "ferry/env.h"

namespace ferry {
namespace {

struct MemFile {
  std::mutex mu;
  std::string data;
  int64_t mtime_ns = 0;
  // WritableFile::LockWriter and Env::LockIfNoWriter locks held.
  int writers = 0, readers = 0;
};

// One writer or reader lock on a MemFile.
class MemFileHold final : public FileLock {
 public:
  MemFileHold(std::shared_ptr<MemFile> f, int MemFile::*count)
      : f_(std::move(f)), count_(count) {}
  ~MemFileHold() override {
    std::lock_guard<std::mutex> l(f_->mu);
    --(*f_.*count_);
  }

 private:
  std::shared_ptr<MemFile> f_;
  int MemFile::*count_;
};

class MemSequentialFile final : public SequentialFile {
 public:
  explicit MemSequentialFile(std::shared_ptr<MemFile> f) : f_(std::move(f)) {}
  Status Read(size_t n, std::string_view* result, char* scratch) override {
    std::lock_guard<std::mutex> l(f_->mu);
    size_t avail = pos_ < f_->data.size() ? f_->data.size() - pos_ : 0;
    size_t take = std::min(n, avail);
    if (take > 0) std::memcpy(scratch, f_->data.data() + pos_, take);
    pos_ += take;
    *result = std::string_view(scratch, take);
    return Status::OK();
  }
  Status Skip(uint64_t n) override {
    pos_ += n;
    return Status::OK();
  }

 private:
  std::shared_ptr<MemFile> f_;
  uint64_t pos_ = 0;
};

class MemRandomAccessFile final : public RandomAccessFile {
 public:
  explicit MemRandomAccessFile(std::shared_ptr<MemFile> f) : f_(std::move(f)) {}
  Status Read(uint64_t offset, size_t n, std::string_view* result,
              char* scratch) const override {
    std::lock_guard<std::mutex> l(f_->mu);
    size_t avail = offset < f_->data.size() ? f_->data.size() - offset : 0;
    size_t take = std::min(n, avail);
    if (take > 0) std::memcpy(scratch, f_->data.data() + offset, take);
    *result = std::string_view(scratch, take);
    return Status::OK();
  }
  Result<uint64_t> Size() const override {
    std::lock_guard<std::mutex> l(f_->mu);
    return static_cast<uint64_t>(f_->data.size());
  }

 private:
  std::shared_ptr<MemFile> f_;
};

class MemEnv;

class MemWritableFile final : public WritableFile {
 public:
  MemWritableFile(std::shared_ptr<MemFile> f, MemEnv* env, std::string path);
  Status Append(std::string_view data) override {
    if (closed_) return Status::IOError("append after close");
    std::lock_guard<std::mutex> l(f_->mu);
    f_->data.append(data);
    f_->mtime_ns = static_cast<int64_t>(env_->NowMicros()) * 1000;
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override {
    closed_ = true;
    return Status::OK();
  }
  Result<std::unique_ptr<FileLock>> LockWriter() override;

 private:
  std::shared_ptr<MemFile> f_;
  Env* env_;  // a MemEnv
  std::string path_;
  bool closed_ = false;
};

class MemFileLock final : public FileLock {
 public:
  MemFileLock(MemEnv* env, std::string path)
      : env_(env), path_(std::move(path)) {}
  ~MemFileLock() override;

 private:
  MemEnv* env_;
  std::string path_;
};

bool IsRootLike(const std::string& p) {
  return p.empty() || p == "." || p == "/";
}

class MemEnv final : public Env {
 public:
  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(path);
    if (it == files_.end()) return NotFound(path);
    return std::unique_ptr<SequentialFile>(
        std::make_unique<MemSequentialFile>(it->second));
  }

  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(path);
    if (it == files_.end()) return NotFound(path);
    return std::unique_ptr<RandomAccessFile>(
        std::make_unique<MemRandomAccessFile>(it->second));
  }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) override {
    std::lock_guard<std::mutex> l(mu_);
    if (dirs_.count(path)) return Status::IOError(path, "Is a directory");
    if (!ParentExists(path)) return NotFound(path);
    auto f = std::make_shared<MemFile>();
    f->mtime_ns = static_cast<int64_t>(NowMicros()) * 1000;
    files_[path] = f;
    return std::unique_ptr<WritableFile>(
        std::make_unique<MemWritableFile>(f, this, path));
  }

  Result<std::unique_ptr<WritableFile>> NewTempFile(
      const std::string& path) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (files_.count(path) || dirs_.count(path))
        return Status::FailedPrecondition(path, "exists");
    }
    return NewWritableFile(path);
  }

  Result<FileInfo> Stat(const std::string& path) override {
    std::lock_guard<std::mutex> l(mu_);
    FileInfo info;
    info.ino = std::hash<std::string>()(path);
    if (dirs_.count(path) || IsRootLike(path)) {
      info.is_dir = true;
      info.type = FileType::kDirectory;
      return info;
    }
    auto it = files_.find(path);
    if (it == files_.end()) return NotFound(path);
    std::lock_guard<std::mutex> fl(it->second->mu);
    info.size = it->second->data.size();
    info.mtime_ns = it->second->mtime_ns;
    info.ctime_ns = info.mtime_ns;
    info.mode = 0644;
    return info;
  }

  Result<std::vector<DirEntry>> GetChildren(const std::string& dir) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!IsRootLike(dir) && !dirs_.count(dir)) return NotFound(dir);
    const std::string prefix = dir == "/"        ? std::string("/")
                               : IsRootLike(dir) ? std::string()
                                                 : dir + "/";
    std::vector<DirEntry> out;
    auto add = [&](const std::string& p, bool is_dir) {
      if (p.compare(0, prefix.size(), prefix) != 0 || p.size() == prefix.size())
        return;
      std::string rest = p.substr(prefix.size());
      if (rest.find('/') != std::string::npos) return;
      out.push_back({rest, is_dir, false, !is_dir});
    };
    for (const auto& [p, f] : files_) add(p, false);
    for (const auto& p : dirs_) add(p, true);
    std::sort(out.begin(), out.end(), [](const DirEntry& a, const DirEntry& b) {
      return a.name < b.name;
    });
    return out;
  }

  Status CreateDir(const std::string& dir) override {
    std::lock_guard<std::mutex> l(mu_);
    if (files_.count(dir)) return Status::IOError(dir, "File exists");
    if (!ParentExists(dir)) return NotFound(dir);
    dirs_.insert(dir);
    return Status::OK();
  }

  Status RemoveFile(const std::string& path) override {
    std::lock_guard<std::mutex> l(mu_);
    if (files_.erase(path) == 0) return NotFound(path);
    return Status::OK();
  }

  Status RemoveDir(const std::string& dir) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!dirs_.count(dir)) return NotFound(dir);
    std::string prefix = dir + "/";
    auto has_child = [&](const std::string& p) {
      return p.compare(0, prefix.size(), prefix) == 0;
    };
    for (const auto& [p, f] : files_)
      if (has_child(p)) return Status::IOError(dir, "Directory not empty");
    for (const auto& p : dirs_)
      if (has_child(p)) return Status::IOError(dir, "Directory not empty");
    dirs_.erase(dir);
    return Status::OK();
  }

  Status RenameFile(const std::string& from, const std::string& to) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(from);
    if (it == files_.end()) return NotFound(from);
    if (dirs_.count(to)) return Status::IOError(to, "Is a directory");
    if (!ParentExists(to)) return NotFound(to);
    auto f = it->second;
    files_.erase(it);
    files_[to] = std::move(f);
    return Status::OK();
  }

  Status ExchangePaths(const std::string& a, const std::string& b) override {
    std::lock_guard<std::mutex> l(mu_);
    const bool a_dir = dirs_.count(a) > 0, b_dir = dirs_.count(b) > 0;
    if (!a_dir && !files_.count(a)) return NotFound(a);
    if (!b_dir && !files_.count(b)) return NotFound(b);
    // Every path at or below a moves below b and the other way round.
    auto swap_prefix = [&](const std::string& p) -> std::string {
      for (const auto* from : {&a, &b}) {
        const std::string& to = from == &a ? b : a;
        if (p == *from) return to;
        if (p.size() > from->size() && p.compare(0, from->size(), *from) == 0 &&
            p[from->size()] == '/')
          return to + p.substr(from->size());
      }
      return p;
    };
    std::map<std::string, std::shared_ptr<MemFile>> files;
    for (auto& [p, f] : files_) files[swap_prefix(p)] = std::move(f);
    std::set<std::string> dirs;
    for (const auto& p : dirs_) dirs.insert(swap_prefix(p));
    files_ = std::move(files);
    dirs_ = std::move(dirs);
    return Status::OK();
  }

  Status LinkFile(const std::string& from, const std::string& to) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(from);
    if (it == files_.end()) return NotFound(from);
    if (files_.count(to) || dirs_.count(to))
      return Status::IOError(to, "File exists");
    if (!ParentExists(to)) return NotFound(to);
    files_[to] = it->second;
    return Status::OK();
  }

  Status SyncDir(const std::string& dir) override {
    std::lock_guard<std::mutex> l(mu_);
    if (!IsRootLike(dir) && !dirs_.count(dir)) return NotFound(dir);
    return Status::OK();
  }

  Status SyncFileSystem(const std::string&) override { return Status::OK(); }

  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path,
                                             bool wait) override {
    std::unique_lock<std::mutex> l(mu_);
    if (!ParentExists(path)) return NotFound(path);
    if (!files_.count(path)) files_[path] = std::make_shared<MemFile>();
    while (locked_.count(path)) {
      if (!wait) return Status::Unavailable(path, "locked");
      unlocked_.wait(l);
    }
    locked_.insert(path);
    return std::unique_ptr<FileLock>(std::make_unique<MemFileLock>(this, path));
  }

  Result<std::unique_ptr<FileLock>> LockIfNoWriter(const std::string& path,
                                                   FileInfo* info) override {
    FERRY_ASSIGN_OR_RETURN(*info, Stat(path));
    if (info->is_dir) return Status::InvalidArgument(path, "not a file");
    std::shared_ptr<MemFile> f = Named(path);
    if (!f) return NotFound(path);
    std::lock_guard<std::mutex> l(f->mu);
    if (f->writers > 0) return Status::Unavailable(path, "locked");
    ++f->readers;
    return std::unique_ptr<FileLock>(
        std::make_unique<MemFileHold>(f, &MemFile::readers));
  }

  bool OnLocalFileSystem(const std::string&) override { return true; }

  uint64_t NowMicros() override { return Env::Default()->NowMicros(); }

  // The file path names now (null if none).
  std::shared_ptr<MemFile> Named(const std::string& path) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(path);
    return it == files_.end() ? nullptr : it->second;
  }

  void Unlock(const std::string& path) {
    std::lock_guard<std::mutex> l(mu_);
    locked_.erase(path);
    unlocked_.notify_all();
  }

 private:
  static Status NotFound(const std::string& path) {
    return Status::NotFound(path, "No such file or directory");
  }
  // REQUIRES: mu_ held.
  bool ParentExists(const std::string& path) const {
    std::string parent = DirName(path);
    return IsRootLike(parent) || dirs_.count(parent) > 0;
  }

  std::mutex mu_;
  std::condition_variable unlocked_;
  std::map<std::string, std::shared_ptr<MemFile>> files_;
  std::set<std::string> dirs_;
  std::set<std::string> locked_;
};

MemFileLock::~MemFileLock() { env_->Unlock(path_); }

MemWritableFile::MemWritableFile(std::shared_ptr<MemFile> f, MemEnv* env,
                                 std::string path)
    : f_(std::move(f)), env_(env), path_(std::move(path)) {}

Result<std::unique_ptr<FileLock>> MemWritableFile::LockWriter() {
  if (closed_) return Status::InvalidArgument(path_, "lock after close");
  {
    std::lock_guard<std::mutex> l(f_->mu);
    if (f_->readers > 0) return Status::Unavailable(path_, "locked");
    ++f_->writers;
  }
  auto lock = std::make_unique<MemFileHold>(f_, &MemFile::writers);
  if (static_cast<MemEnv*>(env_)->Named(path_) != f_)
    return Status::NotFound(path_, "removed while it was opened");
  return std::unique_ptr<FileLock>(std::move(lock));
}

}  // namespace

std::unique_ptr<Env> NewMemEnv() { return std::make_unique<MemEnv>(); }

}  // namespace ferry
