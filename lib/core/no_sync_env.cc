// NewNoSyncEnv: an EnvWrapper whose syncs do nothing (--no-fsync).

#include "core/no_sync_env.h"

#include <memory>
#include <string>
#include <string_view>

namespace ferry {
namespace {

class NoSyncFile : public WritableFile {
 public:
  explicit NoSyncFile(std::unique_ptr<WritableFile> file)
      : file_(std::move(file)) {}
  Status Append(std::string_view data) override { return file_->Append(data); }
  Status Flush() override { return file_->Flush(); }
  Status Sync() override { return file_->Flush(); }
  Status Close() override { return file_->Close(); }
  Result<std::unique_ptr<FileLock>> LockWriter() override {
    return file_->LockWriter();
  }

 private:
  std::unique_ptr<WritableFile> file_;
};

class NoSyncEnv : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;
  Result<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) override {
    FERRY_ASSIGN_OR_RETURN(auto file, EnvWrapper::NewWritableFile(path));
    return std::unique_ptr<WritableFile>(new NoSyncFile(std::move(file)));
  }
  Result<std::unique_ptr<WritableFile>> NewTempFile(
      const std::string& path) override {
    FERRY_ASSIGN_OR_RETURN(auto file, EnvWrapper::NewTempFile(path));
    return std::unique_ptr<WritableFile>(new NoSyncFile(std::move(file)));
  }
  Status SyncDir(const std::string&) override { return Status::OK(); }
  Status SyncFileSystem(const std::string&) override { return Status::OK(); }
};

}  // namespace

std::unique_ptr<Env> NewNoSyncEnv(Env* target) {
  return std::make_unique<NoSyncEnv>(target);
}

}  // namespace ferry
