// Publish, log and gc on the file backend: the stat cache spares reads, only
// missing objects go up, a racing publisher loses cleanly, a broken remote is
// refused before anything is written, gc keeps what versions reference.
#include "ferry/publish.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <functional>
#include <set>
#include <thread>
#include <utility>

#include "ferry/backend_wrapper.h"
#include "formats/manifest/manifest.h"
#include "remote/file_backend.h"
#include "remote/s3_backend.h"
#include "sync/layout.h"
#include "sync/plan.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

// CollectGarbage's report, or its error.
Result<GcReport> Gc(Backend* backend, const GcOptions& options) {
  GcReport report;
  FERRY_RETURN_IF_ERROR(
      CollectGarbage(backend, options, Env::Default(), &report));
  return report;
}

// Counts the files opened for reading below a folder; fails listing the
// named folders as an unreadable one does (tests run as root).
class CountingEnv : public EnvWrapper {
 public:
  CountingEnv(Env* target, std::string below)
      : EnvWrapper(target), below_(std::move(below)) {}
  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& path) override {
    if (path.rfind(below_, 0) == 0) ++reads;
    return EnvWrapper::NewSequentialFile(path);
  }
  Result<std::vector<DirEntry>> GetChildren(const std::string& dir) override {
    if (unreadable.count(dir)) return Status::IOError(dir, "Permission denied");
    return EnvWrapper::GetChildren(dir);
  }
  std::atomic<int> reads{0};
  std::set<std::string> unreadable;

 private:
  std::string below_;
};

// Rewrites one file (same size, other bytes) when an upload opens it.
class RewriteOnUpload : public EnvWrapper {
 public:
  RewriteOnUpload(Env* target, std::string path, std::string bytes)
      : EnvWrapper(target), path_(std::move(path)), bytes_(std::move(bytes)) {}
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    if (path == path_ && !rewritten.exchange(true))
      test::WriteFile(target(), path, bytes_);
    return EnvWrapper::NewRandomAccessFile(path);
  }
  std::atomic<bool> rewritten{false};

 private:
  std::string path_, bytes_;
};

// A backend that promises no conditional writes and ignores conditions (a
// server that does not enforce If-Match): publish must check HEAD itself.
class UnconditionalBackend : public BackendWrapper {
 public:
  explicit UnconditionalBackend(Backend* b) : BackendWrapper(b) {
    caps_ = b->caps();
    caps_.conditional_writes = false;
  }
  const BackendCaps& caps() const override { return caps_; }
  Result<ObjectInfo> Write(std::string_view k, ByteSource* s,
                           const WriteOptions&) override {
    auto r = BackendWrapper::Write(k, s, {});
    if (k.rfind(".ferry/manifests/", 0) == 0 && on_manifest_written) {
      auto f = std::move(on_manifest_written);
      on_manifest_written = nullptr;
      f();
    }
    return r;
  }
  // Runs once, after the next manifest is written (before HEAD is checked).
  std::function<void()> on_manifest_written;

 private:
  BackendCaps caps_;
};

class PublishTest : public ::testing::Test {
 protected:
  PublishTest()
      : env_(Env::Default(), dir_.Join("src")),
        backend_(remote::NewFileBackend(dir_.Join("bucket"), "bucket",
                                        Env::Default())) {
    opt_.cache_dir = dir_.Join("cache");
    opt_.transfer.connections = 2;
    // The tests below count objects; packs have tests of their own.
    opt_.packs = false;
  }
  std::string Src(const std::string& rel = "") {
    return rel.empty() ? dir_.Join("src") : dir_.Join("src/" + rel);
  }
  void Write(const std::string& rel, const std::string& data) {
    EXPECT_OK(Env::Default()->CreateDirs(DirName(Src(rel))));
    test::WriteFile(Env::Default(), Src(rel), data);
  }
  // Files written now are "racily clean" for the stat cache for 100 ms.
  void LetFilesAge() {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  PublishReport Publish(const PublishOptions& o) {
    auto r = ferry::Publish(Src(), backend_.get(), o, &env_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : PublishReport{};
  }
  PublishReport Publish() { return Publish(opt_); }
  // Publishes, and expects the version to have v's as its parent and HEAD.
  void ExpectNextVersionOf(const PublishReport& v) {
    PublishReport next = Publish();
    EXPECT_TRUE(next.has_parent);
    EXPECT_EQ(next.parent, v.id);
    EXPECT_EQ(Head(), next.id);
  }
  std::vector<std::string> Keys() {
    std::vector<std::string> keys;
    EXPECT_TRUE(backend_
                    ->List("", {},
                           [&](const ObjectInfo& i) {
                             keys.push_back(i.key);
                             return Status::OK();
                           })
                    .ok());
    return keys;
  }
  Hash128 Head() { return sync::ReadRef(backend_.get(), "HEAD")->id; }
  // Every entry of the bucket on disk by type, links not followed: what a
  // listing of keys leaves out too (links, FIFOs, ferry's temporary files).
  std::vector<std::string> Entries() {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    const fs::path root = dir_.Join("bucket");
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      out.push_back(
          std::to_string(static_cast<int>(e.symlink_status().type())) + " " +
          fs::relative(e.path(), root).string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  test::ScratchDir dir_;
  CountingEnv env_;
  std::unique_ptr<Backend> backend_;
  PublishOptions opt_;
};

TEST_F(PublishTest, RepublishOfAnUnchangedTreeReadsNoFile) {
  for (int i = 0; i < 20; ++i)
    Write("d/f" + std::to_string(i), "x" + std::to_string(i));
  LetFilesAge();
  PublishReport first = Publish();
  EXPECT_EQ(first.files, 20u);
  EXPECT_EQ(first.files_read, 20u);
  EXPECT_EQ(first.objects_uploaded, 20u);
  EXPECT_EQ(env_.reads.load(), 20);
  env_.reads = 0;
  PublishReport again = Publish();
  EXPECT_EQ(env_.reads.load(), 0);  // not one byte of content read
  EXPECT_EQ(again.files_read, 0u);
  EXPECT_TRUE(again.unchanged);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(Head(), first.id);
  // Same size, new bytes: that one file is read again, a new version made.
  Write("d/f3", "y3");
  LetFilesAge();
  PublishReport changed = Publish();
  EXPECT_EQ(changed.files_read, 1u);
  EXPECT_FALSE(changed.unchanged);
  EXPECT_EQ(changed.objects_uploaded, 1u);
  EXPECT_EQ(changed.objects_present, 19u);
  EXPECT_EQ(Head(), changed.id);
}

TEST_F(PublishTest, RacilyCleanFilesAreReadAgain) {
  // A file whose mtime is not older than the moment it was hashed may have
  // been written again within the same timestamp tick: never trusted.
  Write("a", "1");
  Write("old", "2");
  LetFilesAge();
  struct timespec t[2];
  ::clock_gettime(CLOCK_REALTIME, &t[0]);
  t[0].tv_sec += 3600;
  t[1] = t[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, Src("a").c_str(), t, 0), 0);
  EXPECT_EQ(Publish().files_read, 2u);
  PublishReport r = Publish();
  EXPECT_EQ(r.files_read, 1u);  // "a" again, "old" from the cache
  EXPECT_TRUE(r.unchanged);
}

TEST_F(PublishTest, SkipsSpecialFilesAndFerryWorkingFiles) {
  Write("a", "1");
  Write(".ferry-pack.lock", "");
  Write("x.bin.ferry-part", "partial");
  Write("sub/.ferry/refs/HEAD", "not ours to publish");
  Write("line\nbreak", "odd name");
  ASSERT_EQ(::mkfifo(Src("fifo").c_str(), 0644), 0);
  std::vector<std::string> notes;
  opt_.note = [&](std::string_view n) { notes.emplace_back(n); };
  PublishReport r = Publish();
  EXPECT_EQ(r.files, 2u);  // a, line\nbreak
  EXPECT_EQ(r.skipped, 1u);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("fifo"), std::string::npos);
  std::vector<std::string> paths;
  ASSERT_TRUE(
      ListVersions(backend_.get(), "HEAD", 1, [&](const VersionInfo& v) {
        EXPECT_EQ(v.files, 2u);
        return Status::OK();
      }).ok());
}

TEST_F(PublishTest, AnUnreadableFolderPublishesNothing) {
  Write("ok/a", "1");
  Write("locked/b", "2");
  env_.unreadable.insert(Src("locked"));
  auto r = ferry::Publish(Src(), backend_.get(), opt_, &env_);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsIOError()) << r.status().ToString();
  EXPECT_NE(r.status().ToString().find("locked"), std::string::npos);
  EXPECT_TRUE(Keys().empty());
}

TEST_F(PublishTest, AFileRewrittenWhileItIsUploadedPublishesNothing) {
  Write("a.bin", "old bytes");
  Write("b.bin", "other");
  RewriteOnUpload env(Env::Default(), Src("a.bin"), "new bytes");
  auto r = ferry::Publish(Src(), backend_.get(), opt_, &env);
  ASSERT_TRUE(env.rewritten.load());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsIOError()) << r.status().ToString();
  // Caught by the upload's own check (the file as opened is not the one
  // stat-ed before) or by publish's hash after it: either names the file.
  EXPECT_NE(r.status().ToString().find("a.bin: changed while"),
            std::string::npos)
      << r.status().ToString();
  // No version, and no object under a hash of bytes it does not hold.
  EXPECT_TRUE(sync::ReadRef(backend_.get(), "HEAD").status().IsNotFound());
  auto old = backend_->Stat(sync::ObjectKey(HashBytes("old bytes")));
  EXPECT_TRUE(old.status().IsNotFound()) << old.status().ToString();
}

TEST_F(PublishTest, DryRunWritesNothing) {
  Write("a", "1");
  opt_.dry_run = true;
  opt_.mirror = true;
  PublishReport r = Publish();
  EXPECT_EQ(r.objects_uploaded, 1u);
  EXPECT_EQ(r.mirrored, 1u);
  EXPECT_TRUE(Keys().empty());
  EXPECT_FALSE(Env::Default()->FileExists(dir_.Join("bucket")));
  EXPECT_FALSE(Env::Default()->FileExists(dir_.Join("cache")));
  // And on top of a published version.
  opt_.dry_run = false;
  opt_.mirror = false;
  Publish();
  auto before = Keys();
  Write("b", "2");
  opt_.dry_run = true;
  r = Publish();
  EXPECT_EQ(r.objects_uploaded, 1u);
  EXPECT_EQ(Keys(), before);
}

TEST_F(PublishTest, TagMovesEvenWhenTheTreeIsUnchanged) {
  Write("a", "1");
  opt_.tag = "v1";
  PublishReport v1 = Publish();
  Write("b", "2");
  opt_.tag.clear();
  PublishReport v2 = Publish();
  EXPECT_EQ(sync::ReadRef(backend_.get(), "tags/v1")->id, v1.id);
  opt_.tag = "v1";
  PublishReport again = Publish();
  EXPECT_TRUE(again.unchanged);
  EXPECT_TRUE(again.tag_moved);
  EXPECT_EQ(sync::ReadRef(backend_.get(), "tags/v1")->id, v2.id);
  opt_.tag = "bad/name";
  auto bad = ferry::Publish(Src(), backend_.get(), opt_, &env_);
  EXPECT_TRUE(bad.status().IsInvalidArgument());
}

// Another publisher moves HEAD while this one works (at the moment `arm`
// picks): this one must fail naming both versions, and leave HEAD to the
// other.
void RaceTest(
    Backend* backend, test::ScratchDir* dir, PublishOptions opt, Env* env,
    const std::string& src,
    const std::function<void(PublishOptions*, std::function<void()>)>& arm) {
  test::WriteFile(Env::Default(), JoinPath(src, "base"), "0");
  auto base = ferry::Publish(src, backend, opt, env);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  const std::string other = dir->Join("other");
  ASSERT_OK(Env::Default()->CreateDirs(other));
  test::WriteFile(Env::Default(), JoinPath(other, "theirs"), "t");
  Hash128 theirs;
  PublishOptions o2 = opt;
  arm(&opt, [&] {
    auto r = ferry::Publish(other, backend, o2, env);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    theirs = r->id;
  });
  test::WriteFile(Env::Default(), JoinPath(src, "mine"), "m");
  auto mine = ferry::Publish(src, backend, opt, env);
  ASSERT_FALSE(mine.ok());
  EXPECT_TRUE(mine.status().IsFailedPrecondition()) << mine.status().ToString();
  const std::string want =
      "remote changed since this publish started (parent " + base->id.ToHex() +
      ", now " + theirs.ToHex() + ")";
  EXPECT_NE(mine.status().ToString().find(want), std::string::npos)
      << mine.status().ToString();
  EXPECT_EQ(sync::ReadRef(backend, "HEAD")->id, theirs);
}

TEST_F(PublishTest, ARacingPublisherLosesOnConditionalWrites) {
  // The other publisher lands right before the HEAD write: only the
  // backend's condition (If-Match, the file lock) can refuse it.
  ASSERT_TRUE(backend_->caps().conditional_writes);
  RaceTest(backend_.get(), &dir_, opt_, &env_, Src(),
           [](PublishOptions* o, std::function<void()> race) {
             o->before_ref_write = std::move(race);
           });
}

TEST_F(PublishTest, ARacingPublisherLosesOnCheckThenWrite) {
  // A backend that enforces no condition: HEAD is read again just before
  // it is written; the other publisher lands before that.
  UnconditionalBackend plain(backend_.get());
  Write("x", "x");
  RaceTest(&plain, &dir_, opt_, &env_, Src(),
           [&](PublishOptions*, std::function<void()> race) {
             plain.on_manifest_written = std::move(race);
           });
}

TEST_F(PublishTest, AHeadNamingAMissingOrCorruptManifestIsRefused) {
  Write("a", "1");
  PublishReport v1 = Publish();
  Write("b", "2");
  const std::string mkey = sync::ManifestKey(v1.id);
  const std::string good = *sync::ReadObject(backend_.get(), mkey, 1 << 20);
  ASSERT_TRUE(backend_->Delete(mkey).ok());
  auto keys = Keys();
  auto r = ferry::Publish(Src(), backend_.get(), opt_, &env_);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsIOError()) << r.status().ToString();
  EXPECT_NE(r.status().ToString().find("nothing published"), std::string::npos);
  EXPECT_NE(r.status().ToString().find(v1.id.ToHex()), std::string::npos);
  EXPECT_EQ(Keys(), keys);
  std::string bad = good;
  bad[bad.size() - 3] ^= 0x40;
  ASSERT_TRUE(sync::WriteObject(backend_.get(), mkey, bad).ok());
  keys = Keys();
  r = ferry::Publish(Src(), backend_.get(), opt_, &env_);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  EXPECT_EQ(Keys(), keys);
  EXPECT_EQ(Head(), v1.id);
}

// A HEAD that is there but cannot be read — a file:// HEAD that became a
// FIFO, a folder, a device, a link out of the bucket or a dangling one — is
// no first version: publish refuses, writes nothing (no object, manifest or
// ref) and never opens the FIFO. Read as missing, it started a new history
// over it.
TEST_F(PublishTest, PublishRefusesWhileHeadCannotBeRead) {
  Write("a", "1");
  PublishReport v1 = Publish();
  Write("b", "2");  // a new object and a new version, were it published
  const std::string head = dir_.Join("bucket/.ferry/refs/HEAD");
  const std::string outside = dir_.Join("outside-head");
  test::WriteFile(Env::Default(), outside,
                  test::ReadFile(Env::Default(), head));
  ASSERT_OK(Env::Default()->RenameFile(head, head + ".kept"));
  auto keys_now = [&] {  // every key (HEAD itself, told as a problem, not)
    std::vector<std::string> keys;
    ListOptions lo;
    lo.problem = [](const std::string&, const Status&) {};
    EXPECT_OK(backend_->List("", lo, [&](const ObjectInfo& i) {
      keys.push_back(i.key);
      return Status::OK();
    }));
    return keys;
  };
  auto refused = [&](const std::string& what, mode_t type) {
    auto keys = keys_now();
    auto r = ferry::Publish(Src(), backend_.get(), opt_, &env_);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_TRUE(r.status().IsFailedPrecondition())
        << what << ": " << r.status().ToString();
    EXPECT_NE(r.status().ToString().find("bucket/.ferry/refs/HEAD"),
              std::string::npos)
        << r.status().ToString();
    EXPECT_EQ(keys_now(), keys) << what;
    struct stat st;
    ASSERT_EQ(::lstat(head.c_str(), &st), 0) << what;
    EXPECT_EQ(st.st_mode & S_IFMT, type) << what << ": HEAD replaced";
    if (::rmdir(head.c_str()) != 0) ASSERT_OK(Env::Default()->RemoveFile(head));
  };
  ASSERT_EQ(::mkfifo(head.c_str(), 0644), 0);
  refused("a FIFO", S_IFIFO);
  ASSERT_OK(Env::Default()->CreateDirs(head));
  refused("a folder", S_IFDIR);
  ASSERT_EQ(::symlink(outside.c_str(), head.c_str()), 0);
  refused("a link out of the bucket", S_IFLNK);
  ASSERT_EQ(::symlink("nowhere", head.c_str()), 0);
  refused("a dangling link", S_IFLNK);
  if (::geteuid() == 0) {
    ASSERT_EQ(::mknod(head.c_str(), S_IFCHR | 0644, ::makedev(1, 3)), 0);
    refused("a device", S_IFCHR);
  }
  // HEAD readable again: the next version has v1 as its parent.
  ASSERT_OK(Env::Default()->RenameFile(head + ".kept", head));
  ExpectNextVersionOf(v1);
}

// .ferry/refs that is no folder — a dangling link, a file, a FIFO, a link
// to /dev/null or to a folder out of the bucket — is no first version
// either: publish refuses naming .ferry/refs and writes nothing. Read as no
// HEAD, it uploaded objects and a parentless manifest, then failed at the
// HEAD write (the others failed with a bare "Not a directory").
TEST_F(PublishTest, PublishRefusesWhileTheRefsFolderIsNoFolder) {
  Write("a", "1");
  PublishReport v1 = Publish();
  Write("b", "2");  // a new object and a new version, were it published
  const std::string refs = dir_.Join("bucket/.ferry/refs");
  const std::string kept = dir_.Join("refs-kept");
  ASSERT_OK(Env::Default()->RenameFile(refs, kept));
  auto refused = [&](const std::string& what, mode_t type) {
    auto entries = Entries();
    auto r = ferry::Publish(Src(), backend_.get(), opt_, &env_);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_TRUE(r.status().IsFailedPrecondition())
        << what << ": " << r.status().ToString();
    EXPECT_NE(r.status().ToString().find("bucket/.ferry/refs: is there but is "
                                         "no folder"),
              std::string::npos)
        << what << ": " << r.status().ToString();
    EXPECT_EQ(Entries(), entries) << what << ": the bucket was written";
    struct stat st;
    ASSERT_EQ(::lstat(refs.c_str(), &st), 0) << what;
    EXPECT_EQ(st.st_mode & S_IFMT, type) << what << ": refs replaced";
    ASSERT_OK(Env::Default()->RemoveFile(refs));
  };
  ASSERT_EQ(::symlink("/nonexistent", refs.c_str()), 0);
  refused("a dangling link", S_IFLNK);
  test::WriteFile(Env::Default(), refs, "not a folder");
  refused("a file", S_IFREG);
  ASSERT_EQ(::mkfifo(refs.c_str(), 0644), 0);
  refused("a FIFO", S_IFIFO);
  ASSERT_EQ(::symlink("/dev/null", refs.c_str()), 0);
  refused("a link to /dev/null", S_IFLNK);
  ASSERT_EQ(::symlink(kept.c_str(), refs.c_str()), 0);
  refused("a link to a folder out of the bucket", S_IFLNK);
  // A folder again: the next version has v1 as its parent.
  ASSERT_OK(Env::Default()->RenameFile(kept, refs));
  ExpectNextVersionOf(v1);
}

// A --tag that cannot be replaced — a folder, a FIFO, a device, a link out
// of the bucket or a dangling one, or a tags folder that is no folder — is
// refused before HEAD moves, naming it, with nothing written. Read as no
// tag, HEAD moved and then the tag write failed ("Is a directory"), or the
// FIFO was replaced. Absent, or a ref, the tag is written as before.
TEST_F(PublishTest, PublishRefusesATagThatCannotBeReplaced) {
  Write("a", "1");
  PublishReport v1 = Publish();
  Write("b", "2");
  const std::string tags = dir_.Join("bucket/.ferry/refs/tags");
  const std::string tag = tags + "/t2";
  const std::string outside = dir_.Join("outside-tag");
  test::WriteFile(
      Env::Default(), outside,
      test::ReadFile(Env::Default(), dir_.Join("bucket/.ferry/refs/HEAD")));
  ASSERT_OK(Env::Default()->CreateDirs(tags));
  opt_.tag = "t2";
  auto refused = [&](const std::string& what, const std::string& path,
                     const std::string& named, mode_t type) {
    auto entries = Entries();
    auto r = ferry::Publish(Src(), backend_.get(), opt_, &env_);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_TRUE(r.status().IsFailedPrecondition())
        << what << ": " << r.status().ToString();
    EXPECT_NE(r.status().ToString().find(named), std::string::npos)
        << what << ": " << r.status().ToString();
    EXPECT_EQ(Entries(), entries) << what << ": the bucket was written";
    EXPECT_EQ(Head(), v1.id) << what << ": HEAD moved";
    struct stat st;
    ASSERT_EQ(::lstat(path.c_str(), &st), 0) << what;
    EXPECT_EQ(st.st_mode & S_IFMT, type) << what << ": replaced";
    if (::rmdir(path.c_str()) != 0) ASSERT_OK(Env::Default()->RemoveFile(path));
  };
  const std::string named = "bucket/.ferry/refs/tags/t2: is there but cannot";
  ASSERT_OK(Env::Default()->CreateDirs(tag));
  refused("a folder", tag, named, S_IFDIR);
  ASSERT_EQ(::mkfifo(tag.c_str(), 0644), 0);
  refused("a FIFO", tag, named, S_IFIFO);
  ASSERT_EQ(::symlink(outside.c_str(), tag.c_str()), 0);
  refused("a link out of the bucket", tag, named, S_IFLNK);
  ASSERT_EQ(::symlink("nowhere", tag.c_str()), 0);
  refused("a dangling link", tag, named, S_IFLNK);
  if (::geteuid() == 0) {
    ASSERT_EQ(::mknod(tag.c_str(), S_IFCHR | 0644, ::makedev(1, 3)), 0);
    refused("a device", tag, named, S_IFCHR);
  }
  // The tags folder itself no folder.
  ASSERT_OK(Env::Default()->RemoveDir(tags));
  ASSERT_EQ(::symlink("/nonexistent", tags.c_str()), 0);
  refused("the tags folder a dangling link", tags,
          "bucket/.ferry/refs/tags: is there but is no folder", S_IFLNK);
  ASSERT_EQ(::mkfifo(tags.c_str(), 0644), 0);
  refused("the tags folder a FIFO", tags,
          "bucket/.ferry/refs/tags: is there but is no folder", S_IFIFO);
  // Absent: published and tagged; a ref: moved (the tree unchanged too).
  PublishReport v2 = Publish();
  EXPECT_EQ(v2.parent, v1.id);
  EXPECT_EQ(Head(), v2.id);
  EXPECT_EQ(sync::ReadRef(backend_.get(), "tags/t2")->id, v2.id);
  Write("c", "3");
  PublishReport v3 = Publish();
  EXPECT_TRUE(v3.tag_moved);
  EXPECT_EQ(sync::ReadRef(backend_.get(), "tags/t2")->id, v3.id);
}

TEST_F(PublishTest, MirrorWritesFilesAtTheirPathsAndDropsOnlyItsOwn) {
  Write("a", "1");
  Write("d/b", "2");
  opt_.mirror = true;
  PublishReport r = Publish();
  EXPECT_EQ(r.mirrored, 2u);
  ASSERT_TRUE(sync::WriteObject(backend_.get(), "foreign", "f").ok());
  EXPECT_EQ(*sync::ReadObject(backend_.get(), "d/b", 10), "2");
  ASSERT_TRUE(Env::Default()->RemoveFile(Src("a")).ok());
  Write("d/b", "3");
  r = Publish();
  EXPECT_EQ(r.mirrored, 1u);
  EXPECT_EQ(r.mirror_deleted, 1u);
  EXPECT_EQ(*sync::ReadObject(backend_.get(), "d/b", 10), "3");
  EXPECT_TRUE(backend_->Stat("a").status().IsNotFound());
  EXPECT_TRUE(backend_->Stat("foreign").ok());
}

TEST_F(PublishTest, GcKeepsReferencedTaggedAndYoungObjects) {
  Write("a", "shared");
  Write("b", "only-v1");
  opt_.tag = "v1";
  PublishReport v1 = Publish();
  opt_.tag.clear();
  ASSERT_TRUE(Env::Default()->RemoveFile(Src("b")).ok());
  Write("c", "only-v2");
  PublishReport v2 = Publish();
  ASSERT_TRUE(Env::Default()->RemoveFile(Src("c")).ok());
  Write("d", "only-v3");
  PublishReport v3 = Publish();
  GcOptions g;
  g.keep = 1;
  // Everything is younger than the default grace: nothing goes.
  auto r = Gc(backend_.get(), g);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->objects_deleted, 0u);
  EXPECT_EQ(r->young_kept, 2u);  // v2's manifest and c's object
  g.grace_s = 0;
  std::vector<std::string> deleted;
  g.deleted = [&](std::string_view k, uint64_t) { deleted.emplace_back(k); };
  g.dry_run = true;
  auto keys = Keys();
  r = Gc(backend_.get(), g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Keys(), keys);
  EXPECT_EQ(deleted.size(), 2u);
  g.dry_run = false;
  deleted.clear();
  r = Gc(backend_.get(), g);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->versions_kept, 2u);  // HEAD (v3) and the tagged v1
  EXPECT_EQ(r->objects_deleted, 1u);
  EXPECT_EQ(r->manifests_deleted, 1u);
  EXPECT_EQ(r->bytes_deleted, 7u);
  EXPECT_EQ(deleted,
            (std::vector<std::string>{sync::ManifestKey(v2.id),
                                      sync::ObjectKey(HashBytes("only-v2"))}));
  // The log ends where gc removed history; the tagged version still reads.
  std::vector<Hash128> ids;
  ASSERT_TRUE(
      ListVersions(backend_.get(), "HEAD", 0, [&](const VersionInfo& v) {
        ids.push_back(v.id);
        return Status::OK();
      }).ok());
  EXPECT_EQ(ids, std::vector<Hash128>{v3.id});
  EXPECT_TRUE(
      ListVersions(backend_.get(), "tags/v1", 0, [](const VersionInfo&) {
        return Status::OK();
      }).ok());
  g.keep = 0;
  EXPECT_TRUE(Gc(backend_.get(), g).status().IsInvalidArgument());
}

// Lists as S3 does, a page (here the whole listing) read before its first
// entry is visited; before_page runs once, between the listing of `folder`
// and its visits. DeleteIfPresent fails (as a server that stays
// unavailable) from call number fail_from on (0: never).
class PagedBackend : public BackendWrapper {
 public:
  using BackendWrapper::BackendWrapper;
  Status List(std::string_view prefix, const ListOptions& options,
              const std::function<Status(const ObjectInfo&)>& visit) override {
    std::vector<ObjectInfo> page;
    FERRY_RETURN_IF_ERROR(
        BackendWrapper::List(prefix, options, [&](const ObjectInfo& i) {
          page.push_back(i);
          return Status::OK();
        }));
    if (prefix == folder && before_page) std::exchange(before_page, {})();
    for (const ObjectInfo& i : page) FERRY_RETURN_IF_ERROR(visit(i));
    return Status::OK();
  }
  Result<bool> DeleteIfPresent(std::string_view key) override {
    if (fail_from > 0 && ++deletes >= fail_from)
      return Status::Unavailable(std::string(key), "HTTP 503 SlowDown");
    return BackendWrapper::DeleteIfPresent(key);
  }
  std::string folder;
  std::function<void()> before_page;
  int fail_from = 0, deletes = 0;
};

// Two gc runs at once: the second deletes the objects the first has just
// listed. Each deletion is counted by the run that made it; the first
// finds them gone (no error) and counts them apart.
TEST_F(PublishTest, TwoGcRunsAtOnceCountEachDeletionOnce) {
  for (const char* f : {"a", "b", "c"}) Write(f, std::string("v1 ") + f);
  Publish();
  for (const char* f : {"a", "b", "c"}) Write(f, std::string("v2 ") + f);
  Publish();
  GcOptions g;
  g.keep = 1;
  g.grace_s = 0;
  PagedBackend first(backend_.get());
  first.folder = sync::kObjectsDir;
  Result<GcReport> second = Status::IOError("second gc", "not run");
  first.before_page = [&] { second = Gc(backend_.get(), g); };
  auto r = Gc(&first, g);
  ASSERT_OK(r.status());
  ASSERT_OK(second.status());
  EXPECT_EQ(r->manifests_deleted, 1u);  // v1's, before the second began
  EXPECT_EQ(second->manifests_deleted, 0u);
  EXPECT_EQ(second->objects_deleted, 3u);
  EXPECT_EQ(r->objects_deleted, 0u);
  EXPECT_EQ(r->bytes_deleted, 0u);
  EXPECT_EQ(r->already_gone, 3u);
  EXPECT_EQ(second->already_gone, 0u);
  EXPECT_EQ(Keys().size(), 1u + 1u + 3u);  // HEAD, v2's manifest, objects
}

// A publish reusing an old object no version references uploads it again
// (so that a gc spares it for the grace). A gc that listed the object
// before that upload must not delete it after: the new HEAD references it.
// (Reproduced on s3rver: a publish of 0.17 s during a gc with the default
// grace lost its object and sync of HEAD failed.)
TEST_F(PublishTest, GcKeepsAnObjectUploadedAgainSinceItsListing) {
  Write("a", "old");
  Write("b", "same");
  PublishReport v1 = Publish();
  Write("a", "new");
  Publish();
  const std::string old_key = sync::ObjectKey(HashBytes("old"));
  test::AgeFile(dir_.Join("bucket/" + old_key), 48 * 3600);
  test::AgeFile(dir_.Join("bucket/" + sync::ManifestKey(v1.id)), 48 * 3600);
  PagedBackend b(backend_.get());
  b.folder = sync::kObjectsDir;
  PublishReport v3;
  b.before_page = [&] {
    Write("a", "old");
    LetFilesAge();
    v3 = Publish();
  };
  GcOptions g;
  g.keep = 1;  // the default grace: 24 h
  auto r = Gc(&b, g);
  ASSERT_OK(r.status());
  EXPECT_EQ(v3.objects_uploaded, 1u);   // "old" again, not trusted as present
  EXPECT_EQ(r->manifests_deleted, 1u);  // v1's
  EXPECT_EQ(r->objects_deleted, 0u);
  EXPECT_EQ(r->young_kept, 1u);
  EXPECT_EQ(Head(), v3.id);
  EXPECT_TRUE(backend_->Stat(old_key).ok()) << "HEAD references " << old_key;
}

// A server that becomes unavailable in the middle of gc: gc stops (exit 4)
// naming what failed, and its report still says what it deleted before.
TEST_F(PublishTest, GcThatStopsReportsWhatItDeletedBefore) {
  for (const char* f : {"a", "b", "c"}) Write(f, std::string("v1 ") + f);
  Publish();
  for (const char* f : {"a", "b", "c"}) Write(f, std::string("v2 ") + f);
  Publish();
  GcOptions g;
  g.keep = 1;
  g.grace_s = 0;
  std::vector<std::string> deleted;
  g.deleted = [&](std::string_view k, uint64_t) { deleted.emplace_back(k); };
  PagedBackend b(backend_.get());
  b.fail_from = 3;  // v1's manifest and one object go, then 503s
  GcReport r;
  Status s = CollectGarbage(&b, g, Env::Default(), &r);
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  EXPECT_TRUE(r.sweeping);
  EXPECT_EQ(r.versions_kept, 1u);
  EXPECT_EQ(r.manifests_deleted, 1u);
  EXPECT_EQ(r.objects_deleted, 1u);  // not the one that failed
  EXPECT_EQ(r.bytes_deleted, 4u);
  ASSERT_EQ(deleted.size(), 2u);
  EXPECT_FALSE(backend_->Stat(deleted[1]).ok());
  // The error names the key it could not delete, which is still there.
  const std::string failed = s.ToString();
  size_t at = failed.find(".ferry/objects/");
  ASSERT_NE(at, std::string::npos) << failed;
  const std::string key = failed.substr(at, failed.find(':', at) - at);
  EXPECT_TRUE(backend_->Stat(key).ok()) << key;
  EXPECT_EQ(Keys().size(), 1u + 1u + 3u + 2u);  // two of v1's objects left
  // Before the sweep, nothing was deleted, and the report says so.
  g.keep = 0;
  EXPECT_TRUE(CollectGarbage(&b, g, Env::Default(), &r).IsInvalidArgument());
  EXPECT_FALSE(r.sweeping);
}

// A ref that exists but cannot be read — a file:// HEAD or tag that became
// a folder, a FIFO, a link out of the bucket — stops gc before it deletes:
// read as missing, the versions it named were deleted.
TEST_F(PublishTest, GcDeletesNothingWhileARefCannotBeRead) {
  Write("a", "v1");
  opt_.tag = "t1";
  Publish();
  opt_.tag.clear();
  Write("a", "v2");
  Publish();
  Write("a", "v3");
  Publish();
  const std::string refs = dir_.Join("bucket/.ferry/refs");
  const std::string outside = dir_.Join("outside-ref");
  test::WriteFile(Env::Default(), outside,
                  test::ReadFile(Env::Default(), refs + "/HEAD"));
  GcOptions g;
  g.keep = 1;
  g.grace_s = 0;
  // Every key, a dangling link in the bucket told and passed over.
  auto keys_now = [&] {
    std::vector<std::string> keys;
    ListOptions lo;
    lo.problem = [](const std::string&, const Status&) {};
    EXPECT_OK(backend_->List("", lo, [&](const ObjectInfo& i) {
      keys.push_back(i.key);
      return Status::OK();
    }));
    return keys;
  };
  auto refused = [&](const std::string& what) {
    auto keys = keys_now();
    auto r = Gc(backend_.get(), g);
    EXPECT_FALSE(r.ok()) << what;
    EXPECT_EQ(keys_now(), keys) << what;
  };
  auto swap = [&](const std::string& ref, const std::function<void()>& make) {
    ASSERT_OK(Env::Default()->RenameFile(ref, ref + ".kept"));
    make();
  };
  auto restore = [&](const std::string& ref) {
    if (::rmdir(ref.c_str()) != 0) ASSERT_OK(Env::Default()->RemoveFile(ref));
    ASSERT_OK(Env::Default()->RenameFile(ref + ".kept", ref));
  };
  for (const std::string ref : {refs + "/HEAD", refs + "/tags/t1"}) {
    swap(ref, [&] { ASSERT_EQ(::mkfifo(ref.c_str(), 0644), 0); });
    refused(ref + " a FIFO");
    restore(ref);
    swap(ref, [&] { ASSERT_OK(Env::Default()->CreateDirs(ref)); });
    refused(ref + " a folder");
    restore(ref);
    swap(ref, [&] { ASSERT_EQ(::symlink(outside.c_str(), ref.c_str()), 0); });
    refused(ref + " a link out of the bucket");
    restore(ref);
  }
  // The tags folder itself: a link out of the bucket, or a file.
  const std::string tags = refs + "/tags";
  const std::string moved = dir_.Join("outside-tags");
  ASSERT_OK(Env::Default()->RenameFile(tags, moved));
  ASSERT_EQ(::symlink(moved.c_str(), tags.c_str()), 0);
  refused("the tags folder a link out of the bucket");
  ASSERT_OK(Env::Default()->RemoveFile(tags));
  test::WriteFile(Env::Default(), tags, "not a folder");
  refused("the tags folder a file");
  ASSERT_OK(Env::Default()->RemoveFile(tags));
  // A dangling link (the other disk unmounted) listed as no tags: gc
  // deleted every tagged version.
  ASSERT_EQ(::symlink(dir_.Join("nowhere").c_str(), tags.c_str()), 0);
  refused("the tags folder a dangling link");
  ASSERT_OK(Env::Default()->RemoveFile(tags));
  ASSERT_OK(Env::Default()->RenameFile(moved, tags));
  // Readable again: gc runs, and keeps HEAD's and the tag's versions.
  auto r = Gc(backend_.get(), g);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->versions_kept, 2u);
  EXPECT_EQ(r->manifests_deleted, 1u);
}

// What a publish killed mid-upload left (temporary files, never listed):
// the next publish removes it from the folders it writes in, gc from
// anywhere under .ferry/; a live writer's temporary stays, however old.
TEST_F(PublishTest, PublishAndGcRemoveKilledUploadsTemporaries) {
  Write("a", "first");
  Publish();
  auto temp_in = [&](const std::string& key, const std::string& id) {
    return JoinPath(dir_.Join("bucket/" + DirName(key)),
                    ".ferry-tmp-999999-" + id + "-x");
  };
  const std::string b_key = sync::ObjectKey(HashBytes("second"));
  const std::string in_objects = temp_in(b_key, "0123456789ab");
  const std::string in_manifests =
      temp_in(".ferry/manifests/x", "0123456789ab");
  const std::string in_refs = temp_in(".ferry/refs/HEAD", "0123456789ab");
  const std::string elsewhere =
      temp_in(".ferry/objects/zz/x", "0123456789ab");  // no write there
  const std::string held = temp_in(".ferry/refs/HEAD", "0123456789ac");
  for (const std::string& t :
       {in_objects, in_manifests, in_refs, elsewhere, held}) {
    test::WriteFile(Env::Default(), t, "partial");
  }
  // A writer on another machine (its pid means nothing here) holds its lock.
  auto file = Env::Default()->NewWritableFile(held);
  ASSERT_OK(file.status());
  auto lock = (*file)->LockWriter();
  ASSERT_OK(lock.status());
  ASSERT_OK((*file)->Close());
  for (const std::string& t :
       {in_objects, in_manifests, in_refs, elsewhere, held})
    test::AgeFile(t, 120);
  Write("b", "second");
  // Another run (a backend sweeps each folder once).
  backend_ =
      remote::NewFileBackend(dir_.Join("bucket"), "bucket", Env::Default());
  Publish();
  EXPECT_FALSE(Env::Default()->FileExists(in_objects));
  EXPECT_FALSE(Env::Default()->FileExists(in_manifests));
  EXPECT_FALSE(Env::Default()->FileExists(in_refs));
  EXPECT_TRUE(Env::Default()->FileExists(elsewhere));
  EXPECT_TRUE(Env::Default()->FileExists(held));
  GcOptions g;
  g.dry_run = true;
  auto r = Gc(backend_.get(), g);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->temps_deleted, 1u);
  EXPECT_TRUE(Env::Default()->FileExists(elsewhere));
  g.dry_run = false;
  r = Gc(backend_.get(), g);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->temps_deleted, 1u);
  EXPECT_FALSE(Env::Default()->FileExists(elsewhere));
  EXPECT_TRUE(Env::Default()->FileExists(held));
  lock->reset();
  r = Gc(backend_.get(), g);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->temps_deleted, 1u);
  EXPECT_FALSE(Env::Default()->FileExists(held));
}

// A bucket folder whose temporaries cannot be removed (read-only), seen
// through an Env; root would be let through a chmod.
class TempsStayEnv : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;
  Status RemoveFile(const std::string& path) override {
    if (IsAtomicTempName(path))
      return Status::IOError(path, "Read-only file system");
    return EnvWrapper::RemoveFile(path);
  }
};

TEST_F(PublishTest, GcFailsNamingATemporaryItCannotRemove) {
  Write("a", "first");
  Publish();
  const std::string temp =
      dir_.Join("bucket/.ferry/objects/zz/.ferry-tmp-999999-0123456789ab-x");
  test::WriteFile(Env::Default(), temp, "partial");
  test::AgeFile(temp, 120);
  TempsStayEnv env(Env::Default());
  auto b = remote::NewFileBackend(dir_.Join("bucket"), "bucket", &env);
  GcOptions g;
  g.dry_run = true;  // removes nothing, so nothing fails
  auto r = Gc(b.get(), g);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->temps_deleted, 1u);
  g.dry_run = false;
  r = Gc(b.get(), g);
  ASSERT_TRUE(r.status().IsIOError()) << r.status().ToString();
  EXPECT_NE(r.status().ToString().find("1 temporary files"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().ToString().find(temp), std::string::npos)
      << r.status().ToString();
  EXPECT_TRUE(Env::Default()->FileExists(temp));
}

// A bucket whose server keeps incomplete multipart uploads (as S3 does):
// what gc asks of them, and what it is told.
class UploadsBackend : public BackendWrapper,
                       public remote::IncompleteUploadSweeper {
 public:
  explicit UploadsBackend(Backend* b) : BackendWrapper(b) {}
  Status AbortUploadsBelow(std::string_view dir, int64_t cutoff_ns,
                           bool dry_run,
                           const std::function<bool(std::string_view)>& is_ours,
                           remote::UploadSweep* sweep) override {
    asked.push_back(std::string(dir) + (dry_run ? " dry" : ""));
    cutoff = cutoff_ns;
    ours = is_ours;
    *sweep = counts;
    return answer;
  }
  std::function<bool(std::string_view)> ours;
  remote::UploadSweep counts;
  Status answer;
  std::vector<std::string> asked;
  int64_t cutoff = 0;
};

TEST_F(PublishTest, GcAbortsOldIncompleteUploadsAndNotesWhyItCouldNot) {
  Write("a", "x");
  Publish();
  UploadsBackend b(backend_.get());
  GcOptions g;
  g.grace_s = 3600;
  b.counts = remote::UploadSweep{3, 2};
  const int64_t before = int64_t(Env::Default()->NowMicros()) * 1000;
  auto r = Gc(&b, g);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->uploads_aborted, 3u);
  EXPECT_EQ(r->young_kept, 2u);  // nothing else is unreferenced
  EXPECT_EQ(r->uploads_note, "");
  EXPECT_EQ(b.asked, (std::vector<std::string>{".ferry/"}));
  EXPECT_GE(b.cutoff, before - int64_t{3600} * 1000000000);
  EXPECT_LE(b.cutoff, before - int64_t{3599} * 1000000000);
  // Only keys of ferry's layout are gc's to abort.
  ASSERT_TRUE(b.ours);
  EXPECT_TRUE(b.ours(sync::ObjectKey(HashBytes("x"))));
  EXPECT_TRUE(b.ours(sync::ManifestKey(HashBytes("m"))));
  EXPECT_FALSE(b.ours(".ferry/manifests/m"));
  EXPECT_FALSE(b.ours(".ferry/objects/aa/notahash"));
  // Aborts that failed: the rest went, and a note says how many did not.
  b.counts = remote::UploadSweep{4, 0, 2, Status::IOError("k1", "HTTP 403")};
  r = Gc(&b, g);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->uploads_aborted, 4u);
  EXPECT_NE(r->uploads_note.find("2 could not be aborted"), std::string::npos)
      << r->uploads_note;
  EXPECT_NE(r->uploads_note.find("k1"), std::string::npos) << r->uploads_note;
  g.dry_run = true;
  ASSERT_OK(Gc(&b, g).status());
  EXPECT_EQ(b.asked.back(), ".ferry/ dry");
  // A server without the listing, or a policy without the right: a note,
  // and the rest of gc's work stands.
  g.dry_run = false;
  b.counts = {};
  b.answer = Status::NotSupported("s3://b/p/.ferry/", "no listing (HTTP 501)");
  r = Gc(&b, g);
  ASSERT_OK(r.status());
  EXPECT_NE(r->uploads_note.find("no listing (HTTP 501)"), std::string::npos)
      << r->uploads_note;
  EXPECT_EQ(r->versions_kept, 1u);
  // A server that stays unavailable is a failure (exit 4), as for objects,
  // and what was aborted before counts.
  b.counts = remote::UploadSweep{5};
  b.answer = Status::Unavailable("s3://b/p/.ferry/", "HTTP 503");
  GcReport report;
  EXPECT_TRUE(CollectGarbage(&b, g, Env::Default(), &report).IsUnavailable());
  EXPECT_EQ(report.uploads_aborted, 5u);
}

TEST(GcTest, RefusesARemoteWithoutVersions) {
  test::ScratchDir dir;
  auto b = remote::NewFileBackend(dir.path(), "bucket", Env::Default());
  ASSERT_TRUE(sync::WriteObject(b.get(), ".ferry/objects/aa/x", "x").ok());
  GcOptions g;
  g.grace_s = 0;
  auto r = Gc(b.get(), g);
  EXPECT_TRUE(r.status().IsNotFound()) << r.status().ToString();
  EXPECT_TRUE(b->Stat(".ferry/objects/aa/x").ok());
}

}  // namespace
}  // namespace ferry

namespace ferry {
namespace {

// ---------------------------------------------------------------- packs

class PackPublishTest : public PublishTest {
 protected:
  PackPublishTest() {
    opt_.packs = true;
    opt_.part_size = 1 << 20;  // packs of at most 1 MiB
  }
  // The manifest HEAD names, read as sync reads it.
  sync::ManifestInfo HeadManifest(uint32_t* version = nullptr) {
    const Hash128 id = Head();
    auto bytes = sync::FetchManifest(backend_.get(), id);
    EXPECT_OK(bytes.status());
    if (version) {
      manifest::StringSource src(*bytes);
      manifest::ManifestReader reader(&src);
      EXPECT_OK(reader.Open());
      *version = reader.header().format_version();
    }
    auto m = sync::ReadManifest(*bytes, id);
    EXPECT_OK(m.status());
    return m.ok() ? *m : sync::ManifestInfo{};
  }
  const sync::Entry& EntryOf(const sync::ManifestInfo& m,
                             const std::string& path) {
    for (const sync::Entry& e : m.files)
      if (e.path == path) return e;
    ADD_FAILURE() << path;
    return m.files.front();
  }
  std::vector<std::string> KeysBelow(const std::string& prefix) {
    std::vector<std::string> out;
    for (const std::string& k : Keys())
      if (k.rfind(prefix, 0) == 0) out.push_back(k);
    return out;
  }
};

TEST_F(PackPublishTest, NewSmallFilesGoUpInPacksInPathOrder) {
  const std::string a = test::RandomBytes(300000, 1),
                    b = test::RandomBytes(300000, 2),
                    c = test::RandomBytes(300000, 3),
                    d = test::RandomBytes(300000, 4);
  Write("a", a);
  Write("b", b);
  Write("c", c);
  Write("d", d);
  Write("dup", a);
  Write("empty", "");
  Write("big", test::RandomBytes(2 << 20, 5));
  PublishReport r = Publish();
  EXPECT_EQ(r.objects_uploaded, 6u);  // a b c d, empty, big
  EXPECT_EQ(r.objects_packed, 4u);
  EXPECT_EQ(r.packs_uploaded, 2u);  // a b c (900,000 bytes), then d
  EXPECT_EQ(KeysBelow(".ferry/packs/").size(), 2u);
  EXPECT_EQ(KeysBelow(".ferry/objects/").size(), 2u);  // empty, big
  uint32_t version = 0;
  sync::ManifestInfo m = HeadManifest(&version);
  EXPECT_EQ(version, 2u);
  ASSERT_EQ(m.packs.size(), 2u);
  EXPECT_EQ(m.packs[0].size, 900000u);
  EXPECT_EQ(m.packs[1].size, 300000u);
  EXPECT_EQ(EntryOf(m, "a").pack, 1u);
  EXPECT_EQ(EntryOf(m, "a").pack_offset, 0u);
  EXPECT_EQ(EntryOf(m, "b").pack_offset, 300000u);
  EXPECT_EQ(EntryOf(m, "c").pack_offset, 600000u);
  EXPECT_EQ(EntryOf(m, "d").pack, 2u);
  EXPECT_EQ(EntryOf(m, "dup").pack, 1u);  // a's bytes, a's place
  EXPECT_EQ(EntryOf(m, "dup").pack_offset, 0u);
  EXPECT_EQ(EntryOf(m, "big").pack, 0u);
  EXPECT_EQ(EntryOf(m, "empty").pack, 0u);
  // The pack: the files' bytes one after another, named by what it holds.
  manifest::PackIdHasher id;
  id.Add(HashBytes(a), a.size());
  id.Add(HashBytes(b), b.size());
  id.Add(HashBytes(c), c.size());
  EXPECT_EQ(m.packs[0].id, id.Digest());
  auto bytes =
      sync::ReadObject(backend_.get(), sync::PackKey(id.Digest()), 1 << 20);
  ASSERT_OK(bytes.status());
  EXPECT_TRUE(*bytes == a + b + c);

  // Unchanged: the same records, nothing published.
  LetFilesAge();
  PublishReport again = Publish();
  EXPECT_TRUE(again.unchanged);
  EXPECT_EQ(again.id, r.id);
  // One new small file: one new pack of it; the others keep their places.
  Write("e", "echo");
  PublishReport next = Publish();
  EXPECT_FALSE(next.unchanged);
  EXPECT_EQ(next.objects_uploaded, 1u);
  EXPECT_EQ(next.packs_uploaded, 1u);
  sync::ManifestInfo m2 = HeadManifest();
  ASSERT_EQ(m2.packs.size(), 3u);
  EXPECT_EQ(m2.packs[EntryOf(m2, "a").pack - 1].id, id.Digest());
  EXPECT_EQ(EntryOf(m2, "c").pack_offset, 600000u);
  EXPECT_EQ(m2.packs[EntryOf(m2, "e").pack - 1].size, 4u);
}

TEST_F(PackPublishTest, NoPacksWritesEveryFileAsItsOwnObjectInVersionOne) {
  Write("a", "alpha");
  Write("b", "bravo");
  opt_.packs = false;
  PublishReport r = Publish();
  EXPECT_EQ(r.packs_uploaded, 0u);
  EXPECT_EQ(KeysBelow(".ferry/objects/").size(), 2u);
  EXPECT_TRUE(KeysBelow(".ferry/packs/").empty());
  uint32_t version = 0;
  HeadManifest(&version);
  EXPECT_EQ(version, 1u);
}

TEST_F(PackPublishTest, AFileRewrittenWhileItsPackIsUploadedPublishesNothing) {
  Write("a", "alpha");
  Write("b", "bravo");
  RewriteOnUpload rewrite(Env::Default(), Src("b"), "BRAVO");
  auto r = ferry::Publish(Src(), backend_.get(), opt_, &rewrite);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("changed while"), std::string::npos)
      << r.status().ToString();
  EXPECT_TRUE(KeysBelow(".ferry/refs/").empty());
  EXPECT_TRUE(KeysBelow(".ferry/packs/").empty());
}

// Files an older version packed, removed, then added again pack alike: the
// same pack id. A file of them rewritten between its hash and its pack's
// upload uploaded the new bytes over that pack, then deleted it ("changed
// while it was published"): the older version lost both files. Now a young
// pack is not uploaded again, and an old one (uploaded again to refresh it
// for gc's grace) has its members' bytes checked against their hashes as
// they go, and is never deleted.
// Rewrites `path` when `trigger` is opened for an upload: a file of a pack
// rewritten while the pack's earlier files go, after its hash and before
// its own open (which then takes the new bytes' size and stamps).
class RewriteOnOpenOf : public EnvWrapper {
 public:
  RewriteOnOpenOf(Env* target, std::string trigger, std::string path,
                  std::string bytes)
      : EnvWrapper(target),
        trigger_(std::move(trigger)),
        path_(std::move(path)),
        bytes_(std::move(bytes)) {}
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    if (path == trigger_ && !rewritten.exchange(true))
      test::WriteFile(target(), path_, bytes_);
    return EnvWrapper::NewRandomAccessFile(path);
  }
  std::atomic<bool> rewritten{false};

 private:
  std::string trigger_, path_, bytes_;
};

TEST_F(PackPublishTest,
       AFileRewrittenWhileItsPackIsUploadedAgainLeavesThePack) {
  const std::string a = test::RandomBytes(300000, 1),
                    b = test::RandomBytes(300000, 2);
  Write("a", a);
  Write("b", b);
  Publish();
  sync::ManifestInfo v1 = HeadManifest();
  ASSERT_EQ(v1.packs.size(), 1u);
  const std::string key = sync::PackKey(v1.packs[0].id);
  ASSERT_OK(Env::Default()->RemoveFile(Src("a")));
  ASSERT_OK(Env::Default()->RemoveFile(Src("b")));
  Write("c", "charlie");
  Publish();
  Write("a", a);
  Write("b", b);
  auto pack_bytes = [&] {
    auto bytes = sync::ReadObject(backend_.get(), key, 1 << 20);
    return bytes.ok() ? *bytes : bytes.status().ToString();
  };
  {
    // Young: not uploaded again (nothing to rewrite), the version is made.
    RewriteOnOpenOf rewrite(Env::Default(), Src("a"), Src("b"),
                            test::RandomBytes(300000, 3));
    auto r = ferry::Publish(Src(), backend_.get(), opt_, &rewrite);
    EXPECT_TRUE(pack_bytes() == a + b) << pack_bytes().substr(0, 200);
    ASSERT_OK(r.status());
    EXPECT_FALSE(rewrite.rewritten.load());
    EXPECT_EQ(r->packs_uploaded, 0u);
    EXPECT_EQ(r->objects_uploaded, 0u);
  }
  // Old (2 hours): uploaded again, and b rewritten on its way.
  ASSERT_OK(Env::Default()->RemoveFile(Src("a")));
  ASSERT_OK(Env::Default()->RemoveFile(Src("b")));
  Publish();
  Write("a", a);
  Write("b", b);
  const std::string path = dir_.Join("bucket/" + key);
  const time_t old = time(nullptr) - 7200;
  struct timeval times[2] = {{old, 0}, {old, 0}};
  ASSERT_EQ(utimes(path.c_str(), times), 0);
  RewriteOnOpenOf rewrite(Env::Default(), Src("a"), Src("b"),
                          test::RandomBytes(300000, 3));
  auto r = ferry::Publish(Src(), backend_.get(), opt_, &rewrite);
  EXPECT_TRUE(rewrite.rewritten.load());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("changed while"), std::string::npos)
      << r.status().ToString();
  EXPECT_TRUE(pack_bytes() == a + b);  // the older version's files
}

// --no-packs after a version with packs: the files the parent packed kept
// their places, so the version was format 2 (a ferry from before packs
// refuses it), against --no-packs' promise. Now they go up as objects too.
TEST_F(PackPublishTest, NoPacksAfterAPackedVersionWritesVersionOne) {
  Write("a", "alpha");
  Write("b", "bravo");
  Publish();
  uint32_t version = 0;
  HeadManifest(&version);
  ASSERT_EQ(version, 2u);
  Write("c", "charlie");
  opt_.packs = false;
  PublishReport r = Publish();
  EXPECT_EQ(r.packs_uploaded, 0u);
  EXPECT_EQ(r.objects_uploaded, 3u);  // a, b (packed before), c
  sync::ManifestInfo m = HeadManifest(&version);
  EXPECT_EQ(version, 1u);
  EXPECT_TRUE(m.packs.empty());
  for (const auto& [path, bytes] :
       std::vector<std::pair<std::string, std::string>>{
           {"a", "alpha"}, {"b", "bravo"}, {"c", "charlie"}}) {
    EXPECT_EQ(EntryOf(m, path).pack, 0u) << path;
    auto got = sync::ReadObject(backend_.get(),
                                sync::ObjectKey(HashBytes(bytes)), 1 << 20);
    ASSERT_OK(got.status());
    EXPECT_EQ(*got, bytes);
  }
  // Unchanged since: nothing to publish.
  LetFilesAge();
  EXPECT_TRUE(Publish().unchanged);
}

TEST_F(PackPublishTest, GcKeepsThePacksKeptVersionsNameAndDeletesTheRest) {
  Write("a", "alpha");
  Write("b", "bravo");
  Publish();
  ASSERT_OK(Env::Default()->RemoveFile(Src("a")));
  ASSERT_OK(Env::Default()->RemoveFile(Src("b")));
  Write("c", "charlie");
  Publish();
  ASSERT_EQ(KeysBelow(".ferry/packs/").size(), 2u);
  GcOptions g;
  g.keep = 1;
  g.grace_s = 0;
  auto r = Gc(backend_.get(), g);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->packs_kept, 1u);
  EXPECT_EQ(r->packs_deleted, 1u);
  sync::ManifestInfo m = HeadManifest();
  ASSERT_EQ(m.packs.size(), 1u);
  EXPECT_EQ(KeysBelow(".ferry/packs/"),
            std::vector<std::string>{sync::PackKey(m.packs[0].id)});
  // Keeping both versions keeps both packs.
  Write("d", "delta");
  Publish();
  g.keep = 2;
  r = Gc(backend_.get(), g);
  ASSERT_OK(r.status());
  EXPECT_EQ(r->packs_kept, 2u);
  EXPECT_EQ(r->packs_deleted, 0u);
}

}  // namespace
}  // namespace ferry
