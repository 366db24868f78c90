#include "ferry/fault_env.h"

namespace ferry {
namespace {

class FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultInjectionEnv* env, std::string path,
                    std::unique_ptr<WritableFile> target)
      : env_(env), path_(std::move(path)), target_(std::move(target)) {}

  Status Append(std::string_view data) override {
    FERRY_RETURN_IF_ERROR(env_->AppendFault(path_));
    FERRY_RETURN_IF_ERROR(env_->Count("append", path_));
    return target_->Append(data);
  }
  Status Flush() override { return target_->Flush(); }
  Status Sync() override {
    FERRY_RETURN_IF_ERROR(env_->SyncFault(path_));
    FERRY_RETURN_IF_ERROR(env_->Count("sync", path_));
    return target_->Sync();
  }
  Status Close() override {
    Status injected = env_->Count("close", path_);
    Status s = target_->Close();  // always release the real handle
    return injected.ok() ? s : injected;
  }
  Result<std::unique_ptr<FileLock>> LockWriter() override {
    return target_->LockWriter();
  }

 private:
  FaultInjectionEnv* env_;
  std::string path_;
  std::unique_ptr<WritableFile> target_;
};

}  // namespace

void FaultInjectionEnv::FailNthOperation(int n) {
  ops_ = 0;
  fail_at_ = n;
}

Status FaultInjectionEnv::Count(const char* op, const std::string& path) {
  int n = ++ops_;
  if (fail_at_ > 0 && n == fail_at_) {
    return Status::IOError(path, std::string("injected fault in ") + op);
  }
  return Status::OK();
}

Status FaultInjectionEnv::AppendFault(const std::string& path) {
  if (no_space_) return Status::IOError(path, "No space left on device");
  return Status::OK();
}

Status FaultInjectionEnv::SyncFault(const std::string& path) {
  if (sync_fails_) return Status::IOError(path, "injected fsync failure");
  return Status::OK();
}

Result<std::unique_ptr<WritableFile>> FaultInjectionEnv::NewWritableFile(
    const std::string& path) {
  FERRY_RETURN_IF_ERROR(Count("open", path));
  FERRY_ASSIGN_OR_RETURN(auto file, target()->NewWritableFile(path));
  return std::unique_ptr<WritableFile>(
      std::make_unique<FaultWritableFile>(this, path, std::move(file)));
}

Result<std::unique_ptr<WritableFile>> FaultInjectionEnv::NewTempFile(
    const std::string& path) {
  FERRY_RETURN_IF_ERROR(Count("open", path));
  FERRY_ASSIGN_OR_RETURN(auto file, target()->NewTempFile(path));
  return std::unique_ptr<WritableFile>(
      std::make_unique<FaultWritableFile>(this, path, std::move(file)));
}

Status FaultInjectionEnv::CreateDir(const std::string& dir) {
  FERRY_RETURN_IF_ERROR(Count("mkdir", dir));
  return target()->CreateDir(dir);
}

Status FaultInjectionEnv::RemoveFile(const std::string& path) {
  FERRY_RETURN_IF_ERROR(Count("remove", path));
  return target()->RemoveFile(path);
}

Status FaultInjectionEnv::RenameFile(const std::string& from,
                                     const std::string& to) {
  FERRY_RETURN_IF_ERROR(Count("rename", from));
  return target()->RenameFile(from, to);
}

Status FaultInjectionEnv::SyncDir(const std::string& dir) {
  FERRY_RETURN_IF_ERROR(SyncFault(dir));
  FERRY_RETURN_IF_ERROR(Count("syncdir", dir));
  return target()->SyncDir(dir);
}

Status FaultInjectionEnv::SyncFileSystem(const std::string& path) {
  FERRY_RETURN_IF_ERROR(SyncFault(path));
  FERRY_RETURN_IF_ERROR(Count("syncfs", path));
  return target()->SyncFileSystem(path);
}

}  // namespace ferry
