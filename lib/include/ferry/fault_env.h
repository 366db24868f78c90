// FaultInjectionEnv: an EnvWrapper that makes chosen operations fail, so tests
// can prove that no failure loses data or leaves a partial file behind.
//
// Counted operations are the ones that change state: opening a file for
// writing, Append, Sync, Close, RenameFile, RemoveFile, CreateDir, SyncDir,
// SyncFileSystem.
// Thread-safety: safe; the counter is shared by all threads.
#ifndef FERRY_FAULT_ENV_H_
#define FERRY_FAULT_ENV_H_

#include <atomic>
#include <mutex>

#include "ferry/env.h"

namespace ferry {

class FERRY_EXPORT FaultInjectionEnv : public EnvWrapper {
 public:
  explicit FaultInjectionEnv(Env* target) : EnvWrapper(target) {}

  // The nth counted operation from now on (1-based) fails with an IOError;
  // 0 disables. Later operations succeed again.
  void FailNthOperation(int n);
  // While set, every Append fails as a full disk would (ENOSPC).
  void SetNoSpace(bool on) { no_space_ = on; }
  // While set, every Sync and SyncDir fails.
  void SetSyncFails(bool on) { sync_fails_ = on; }
  // Counted operations since construction or the last FailNthOperation.
  int operations() const { return ops_; }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& path) override;
  Result<std::unique_ptr<WritableFile>> NewTempFile(
      const std::string& path) override;
  Status CreateDir(const std::string& dir) override;
  Status RemoveFile(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status SyncDir(const std::string& dir) override;
  Status SyncFileSystem(const std::string& path) override;

  // Used by the wrapped files; returns the injected failure, if any.
  Status Count(const char* op, const std::string& path);
  Status AppendFault(const std::string& path);
  Status SyncFault(const std::string& path);

 private:
  std::atomic<int> ops_{0};
  std::atomic<int> fail_at_{0};
  std::atomic<bool> no_space_{false};
  std::atomic<bool> sync_fails_{false};
};

}  // namespace ferry

#endif  // FERRY_FAULT_ENV_H_
