// What the sync tests (SyncTest, DryRunSyncTest) share: a fixture with a
// scratch folder holding a source tree, a file:// bucket, a node folder for
// DESTs and a cache, and the options of a sync between them; and a snapshot
// of a tree's entries, to see that a dry run wrote nothing. Single-threaded,
// as a test is.
#ifndef FERRY_TESTS_TESTUTIL_SYNC_FIXTURE_H_
#define FERRY_TESTS_TESTUTIL_SYNC_FIXTURE_H_

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>

#include "ferry/env.h"
#include "ferry/sync.h"
#include "testutil/test_util.h"

namespace ferry::test {

// Every entry below root with its size, inode, mtime and mode (links not
// followed): what a run that writes nothing leaves as it was.
inline std::map<std::string, std::string> Snapshot(const std::string& root) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    struct stat st;
    if (::lstat(e.path().c_str(), &st) != 0) continue;
    out[e.path().string()] =
        std::to_string(st.st_size) + " " + std::to_string(st.st_ino) + " " +
        std::to_string(st.st_mtim.tv_sec) + "." +
        std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_mode);
  }
  return out;
}

// Kills its process (SIGKILL) as a file is renamed into the cache's
// objects/: after a download landed in partial/, before it is cached.
class KillAtCacheEnv : public EnvWrapper {
 public:
  explicit KillAtCacheEnv(Env* target) : EnvWrapper(target) {}
  Status RenameFile(const std::string& from, const std::string& to) override {
    if (to.find("/cache/objects/") != std::string::npos) ::raise(SIGKILL);
    return EnvWrapper::RenameFile(from, to);
  }
};

class SyncFixture : public ::testing::Test {
 protected:
  Env* env_ = Env::Default();
  ScratchDir dir_;
  std::string src_ = dir_.Join("src");
  std::string bucket_ = dir_.Join("bucket");
  std::string dest_ = dir_.Join("nodes/dest");
  std::string cache_ = dir_.Join("cache");

  void SetUp() override { ASSERT_OK(env_->CreateDirs(dir_.Join("nodes"))); }

  // Writes a file of the source tree, to be published.
  void Write(const std::string& rel, const std::string& data) {
    WriteFile(env_, JoinPath(src_, rel), data);
  }
  // A sync of the bucket into dest (dest_ when empty) through the cache.
  SyncOptions Options(const std::string& dest = "") {
    SyncOptions o;
    o.remote = bucket_;
    o.dest = dest.empty() ? dest_ : dest;
    o.cache_dir = cache_;
    return o;
  }
};

}  // namespace ferry::test

#endif  // FERRY_TESTS_TESTUTIL_SYNC_FIXTURE_H_
