// ferry sync from unmanaged remotes (docs/sync.md "Unmanaged remotes"):
// what DEST records of a file that changed while it was fetched, and what
// a sync takes of the files a killed run left.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ferry/sync.h"
#include "remote/file_backend.h"
#include "remote/journal.h"
#include "sync/fetching.h"
#include "sync/in_place.h"
#include "testutil/stub_server.h"
#include "testutil/sync_fixture.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

using test::ReadFile;
using test::WriteFile;

// Runs `then` once, as the first file whose name ends in `suffix` is
// opened for reading (the file backend's read of a listed file).
class BeforeReadEnv : public EnvWrapper {
 public:
  BeforeReadEnv(std::string suffix, std::function<void()> then)
      : EnvWrapper(Env::Default()),
        suffix_(std::move(suffix)),
        then_(std::move(then)) {}
  Result<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& path) override {
    if (then_ && path.size() >= suffix_.size() &&
        path.compare(path.size() - suffix_.size(), suffix_.size(), suffix_) ==
            0)
      std::exchange(then_, nullptr)();
    return EnvWrapper::NewRandomAccessFile(path);
  }

 private:
  std::string suffix_;
  std::function<void()> then_;
};

class UnmanagedSyncTest : public test::SyncFixture {
 protected:
  // Runs a sync through env in a child process, SIGKILLed as it moves its
  // first download into the cache; true when it was. `server`, when given,
  // is started once the child is forked (test::ForkAlone).
  bool KilledAfterADownload(const SyncOptions& o, Env* env,
                            test::StubServer* server = nullptr) {
    pid_t pid = test::ForkAlone();
    if (pid == 0) {
      test::KillAtCacheEnv killing(env);
      (void)Sync(o, &killing);
      _exit(0);
    }
    if (server != nullptr) server->Start();
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return false;
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }
  // The files left in the cache's partial/ folders.
  std::vector<std::string> Partials() {
    std::vector<std::string> out;
    for (const auto& e :
         std::filesystem::recursive_directory_iterator(cache_ + "/partial"))
      if (e.is_regular_file()) out.push_back(e.path().filename().string());
    return out;
  }
  // An S3 bucket (a stub) of one object, pre/a, of 5 bytes.
  SyncOptions S3Options(const test::StubServer& server) {
    SyncOptions o = Options();
    o.remote = "s3://bkt/pre/";
    o.remote_options.endpoint_url = server.url();
    o.remote_options.addressing = "path";
    o.remote_options.region = "us-east-1";
    o.remote_options.no_sign_request = true;
    o.remote_options.max_retries = 0;
    return o;
  }
  // The stub's answer: a listing of pre/a with the ETag `listed` (none when
  // empty), and pre/a's bytes, `bytes`, with no ETag.
  static test::StubServer::Reply OneObject(const std::string& req,
                                           const std::string& listed,
                                           const std::string& bytes) {
    test::StubServer::Reply r;
    r.headers = "Connection: close\r\n";
    if (req.rfind("GET /bkt?", 0) == 0) {
      r.body =
          "<ListBucketResult><IsTruncated>false</IsTruncated><Contents>"
          "<Key>pre/a</Key><Size>5</Size>" +
          (listed.empty() ? "" : "<ETag>&quot;" + listed + "&quot;</ETag>") +
          "</Contents></ListBucketResult>";
    } else if (req.rfind("GET /bkt/pre/a", 0) == 0) {
      r.body = bytes;
    } else {
      r.status = 404;
      r.body = "<Error><Code>NoSuchKey</Code></Error>";
    }
    return r;
  }
  // The ETag DEST's .ferry-sync-files records for path.
  std::string RecordedEtag(const std::string& path) {
    auto list = sync::ReadFileList(
        env_, JoinPath(dest_, std::string(sync::kFileListName)));
    EXPECT_OK(list.status());
    if (list.ok())
      for (const sync::Entry& e : *list)
        if (e.path == path) return e.etag.str();
    return "";
  }
};

// bucket/big, 5000 bytes of 'a' as listed (its ETag and mtime kept), which
// a test changes in place (Overwrite4 at `later`) when a sync first reads it.
struct ChangingFile {
  std::string file, listed, listed_etag;
  timespec was{}, later{};
};
void MakeChangingFile(const std::string& bucket, Env* env, ChangingFile* c) {
  c->file = JoinPath(bucket, "big");
  c->listed.assign(5000, 'a');
  WriteFile(env, c->file, c->listed);
  auto info = env->Stat(c->file);
  ASSERT_OK(info.status());
  c->listed_etag = remote::FileEtag(*info);
  struct stat st;
  ASSERT_EQ(::stat(c->file.c_str(), &st), 0);
  c->was = st.st_mtim;
  c->later = {c->was.tv_sec + 10, c->was.tv_nsec};
}

// Overwrites 4 bytes of path in place (same inode) and sets its mtime.
void Overwrite4(const std::string& path, const std::string& bytes,
                const timespec& mtime) {
  int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), 4, 100), 4);
  const timespec times[2] = {mtime, mtime};
  ASSERT_EQ(::futimens(fd, times), 0);
  ::close(fd);
}

// A file that changes while the sync downloads it is fetched again (the
// engine sees another ETag): DEST records the ETag of the bytes it got.
// It recorded the listing's, beside the new bytes' hash: once the file was
// put back as listed, the next sync said "unchanged" over other bytes.
TEST_F(UnmanagedSyncTest, AFileChangedWhileFetchedIsRecordedAsFetched) {
  ChangingFile c;
  ASSERT_NO_FATAL_FAILURE(MakeChangingFile(bucket_, env_, &c));
  const std::string &file = c.file, &listed = c.listed;
  const std::string& listed_etag = c.listed_etag;
  const timespec was = c.was;
  BeforeReadEnv env("/bucket/big", [&] { Overwrite4(file, "XXXX", c.later); });
  auto r = Sync(Options(), &env);
  ASSERT_OK(r.status());
  std::string changed = listed;
  changed.replace(100, 4, "XXXX");
  EXPECT_TRUE(ReadFile(env_, dest_ + "/big") == changed);
  auto info = env_->Stat(file);
  ASSERT_OK(info.status());
  EXPECT_EQ(RecordedEtag("big"), remote::FileEtag(*info));
  // Put back as listed: the same bytes, mtime and inode, so the listing's
  // ETag again; DEST holds other bytes, so the sync fetches them.
  Overwrite4(file, "aaaa", was);
  auto again = Sync(Options(), env_);
  ASSERT_OK(again.status());
  EXPECT_FALSE(again->unchanged);
  EXPECT_TRUE(ReadFile(env_, dest_ + "/big") == listed)
      << "DEST kept the bytes of the change";
  EXPECT_EQ(RecordedEtag("big"), listed_etag);
}

// A file that changes while a sync fetches it lands beside the name of the
// listed version (partial/<rk>/u-<xxh3 of path, ETag, size>.changed), never
// at it. It landed at it: a run killed after that left the new bytes under
// the listed version's name, and once the file was put back as listed the
// next run took them as a complete download of it and installed them.
TEST_F(UnmanagedSyncTest, AChangedFileLeftByAKilledRunIsNotTakenAsListed) {
  ChangingFile c;
  ASSERT_NO_FATAL_FAILURE(MakeChangingFile(bucket_, env_, &c));
  const std::string &file = c.file, &listed = c.listed;
  const std::string& listed_etag = c.listed_etag;
  const timespec was = c.was;
  BeforeReadEnv env("/bucket/big", [&] { Overwrite4(file, "XXXX", c.later); });
  ASSERT_TRUE(KilledAfterADownload(Options(), &env));
  ASSERT_NE(ReadFile(env_, file), listed);  // it changed
  Overwrite4(file, "aaaa", was);  // put back: the listing's ETag again
  auto r = Sync(Options(), env_);
  ASSERT_OK(r.status());
  EXPECT_TRUE(ReadFile(env_, dest_ + "/big") == listed)
      << "the bytes of the change were taken as the listed version";
  EXPECT_EQ(RecordedEtag("big"), listed_etag);
  EXPECT_EQ(Partials(), std::vector<std::string>{});
}

// A listing without ETags: a complete download a killed run left is not
// taken, the file is fetched (the same size may be other bytes now). It
// was taken: after a same-size change the old bytes were installed.
TEST_F(UnmanagedSyncTest, AFileLeftByAKilledRunIsNotTakenWithoutAnEtag) {
  std::string bytes = "alpha";
  test::StubServer server(
      [&](const std::string& req) { return OneObject(req, "", bytes); },
      /*start=*/false);
  ASSERT_TRUE(KilledAfterADownload(S3Options(server), env_, &server));
  ASSERT_EQ(Partials().size(), 1u);  // the complete download
  bytes = "bravo";
  auto r = Sync(S3Options(server), env_);
  ASSERT_OK(r.status());
  EXPECT_EQ(ReadFile(env_, dest_ + "/a"), "bravo");
  EXPECT_EQ(r->bytes_fetched, 5u);  // a GET, not the leftover
}

// Bytes whose GET answer had no ETag, of a file listed with one, are
// recorded without one (and land at the .changed name): nothing says they
// are the listed version. They were recorded with the listing's ETag: here
// a server that ignores If-Match and gives no ETag served a change, and
// once the file was put back as listed the next sync said "unchanged" over
// the other bytes.
TEST_F(UnmanagedSyncTest, BytesAGetBroughtWithoutAnEtagAreNotRecordedAsListed) {
  std::string bytes = "bravo";
  test::StubServer server(
      [&](const std::string& req) { return OneObject(req, "e1", bytes); });
  auto r = Sync(S3Options(server), env_);
  ASSERT_OK(r.status());
  EXPECT_EQ(ReadFile(env_, dest_ + "/a"), "bravo");
  EXPECT_EQ(RecordedEtag("a"), "");
  bytes = "alpha";  // as listed
  r = Sync(S3Options(server), env_);
  ASSERT_OK(r.status());
  EXPECT_FALSE(r->unchanged);
  EXPECT_EQ(ReadFile(env_, dest_ + "/a"), "alpha");
  EXPECT_EQ(Partials(), std::vector<std::string>{});
}

// The stub's answer for pre/big, `size` bytes of `fill` listed with the
// ETag "e1": a listing, or a GET (ranged: 206) whose answer carries the ETag
// only when `etag` says so.
test::StubServer::Reply BigObject(const std::string& req,
                                  const std::string& head, uint64_t size,
                                  char fill, bool etag) {
  test::StubServer::Reply r;
  r.headers = "Connection: close\r\n";
  if (req.rfind("GET /bkt?", 0) == 0) {
    r.body =
        "<ListBucketResult><IsTruncated>false</IsTruncated><Contents>"
        "<Key>pre/big</Key><Size>" +
        std::to_string(size) +
        "</Size><ETag>&quot;e1&quot;</ETag></Contents></ListBucketResult>";
    return r;
  }
  if (req.rfind("GET /bkt/pre/big", 0) != 0) {
    r.status = 404;
    r.body = "<Error><Code>NoSuchKey</Code></Error>";
    return r;
  }
  uint64_t first = 0, last = size - 1;
  const size_t at = head.find("ange: bytes=");
  if (at != std::string::npos) {
    first = std::stoull(head.substr(at + 12));
    last = std::min<uint64_t>(
        last, std::stoull(head.substr(head.find('-', at + 12) + 1)));
    r.status = 206;
    r.headers += "Content-Range: bytes " + std::to_string(first) + "-" +
                 std::to_string(last) + "/" + std::to_string(size) + "\r\n";
  }
  if (etag) r.headers += "ETag: \"e1\"\r\n";
  r.body.assign(last - first + 1, fill);
  return r;
}

// The bytes a download's journal in dir says are done (0 without one).
uint64_t JournalledBytes(Env* env, const std::string& dir) {
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    const std::string path = e.path().string();
    if (!path.ends_with(".journal")) continue;
    auto bytes = ReadFileToString(env, path, 1u << 20);
    auto state = bytes.ok() ? remote::ParseJournal(*bytes)
                            : Result<remote::JournalState>(bytes.status());
    return state.ok() ? state->done_bytes : 0;
  }
  return 0;
}

// A download journalled from answers without an ETag is not resumed as the
// listed version: bytes are taken as a version only when every answer that
// brought them named it. A run whose GETs came without an ETag journalled
// its parts under the listing's; once it was killed, a run whose answers
// carried that ETag resumed them and recorded the whole file as the listed
// version (here its first part(s) were another version's: 'b', not 'a').
TEST_F(UnmanagedSyncTest, PartsAnswersWithoutAnEtagBroughtAreNotResumed) {
  constexpr uint64_t kSize = 4096, kPart = 1024;
  bool etag = false;
  char fill = 'b';
  std::atomic<pid_t> child{-1};  // the first run, until killed
  test::StubServer* srv = nullptr;
  test::StubServer server(
      [&](const std::string& req) {
        const std::string head = srv->heads().back();
        // The first run is killed as it asks for part 2, once its journal
        // holds a part (or is gone).
        if (child > 0 && head.find("bytes=" + std::to_string(2 * kPart)) !=
                             std::string::npos) {
          for (int i = 0; i < 500; ++i) {
            if (!Partials().empty() &&
                (JournalledBytes(env_, cache_ + "/partial") > 0 ||
                 std::ranges::none_of(Partials(), [](const std::string& n) {
                   return n.ends_with(".journal");
                 })))
              break;
            ::usleep(10000);
          }
          const pid_t pid = child.exchange(-1);
          ::kill(pid, SIGKILL);
          ::waitpid(pid, nullptr, 0);
        }
        return BigObject(req, head, kSize, fill, etag);
      },
      /*start=*/false);
  srv = &server;
  SyncOptions o = S3Options(server);
  o.transfer.part_size = kPart;
  o.transfer.connections = 1;  // the parts in order
  const pid_t pid = test::ForkAlone();
  if (pid == 0) {
    (void)Sync(o, env_);
    _exit(0);
  }
  ASSERT_GT(pid, 0);
  child = pid;
  server.Start();
  ::waitpid(pid, nullptr, 0);  // (or reaped by the stub)
  ASSERT_EQ(child, -1) << "the first run was not killed";
  ASSERT_FALSE(Partials().empty());  // what the killed run left
  etag = true;  // the listed version now, its ETag in every answer
  fill = 'a';
  auto r = Sync(o, env_);
  ASSERT_OK(r.status());
  ASSERT_TRUE(r->failures.empty()) << r->failures[0].second.ToString();
  EXPECT_EQ(r->bytes_resumed, 0u);
  EXPECT_TRUE(ReadFile(env_, dest_ + "/big") == std::string(kSize, 'a'))
      << "bytes of answers without an ETag were taken as the listed version";
  EXPECT_EQ(RecordedEtag("big"), "\"e1\"");
  EXPECT_EQ(Partials(), std::vector<std::string>{});
}

// What killed runs leave in partial/<rk>/ under names no later listing
// gives (the file's ETag moved on) is removed by the next sync: a changing
// bucket's partials do not pile up. They stayed for ever, one more (a
// download, or its .changed) per killed run.
TEST_F(UnmanagedSyncTest, PartialsOfAChangingBucketDoNotPileUp) {
  const std::string file = JoinPath(bucket_, "big");
  std::vector<size_t> left;
  for (int run = 0; run < 4; ++run) {
    // Another size each time, so another ETag; on odd runs the file also
    // changes as it is read (its bytes land at u-<...>.changed).
    WriteFile(env_, file, std::string(5000 + run, 'a'));
    const timespec later{::time(nullptr) + 100 + run, 0};
    BeforeReadEnv env("/bucket/big", [&] {
      if (run % 2) Overwrite4(file, "XXXX", later);
    });
    ASSERT_TRUE(KilledAfterADownload(Options(), &env));
    left.push_back(Partials().size());
  }
  EXPECT_EQ(left, (std::vector<size_t>{1, 1, 1, 1}))
      << "partials of earlier runs stayed";
  WriteFile(env_, file, "settled");
  auto r = Sync(Options(), env_);
  ASSERT_OK(r.status());
  EXPECT_EQ(ReadFile(env_, dest_ + "/big"), "settled");
  EXPECT_EQ(Partials(), std::vector<std::string>{});
}

// The sweep of partial/<rk>/ leaves alone what is not this remote's stale
// download: a download another sync of the cache holds (its object lock),
// another remote's partials, and names that are not an unmanaged file's
// (pack-*, managed objects).
TEST_F(UnmanagedSyncTest, PartialsOthersUseAreKept) {
  const std::string file = JoinPath(bucket_, "big");
  WriteFile(env_, file, std::string(5000, 'a'));
  ASSERT_TRUE(KilledAfterADownload(Options(), env_));
  std::vector<std::string> names = Partials();
  ASSERT_EQ(names.size(), 1u);
  std::string rk;
  for (const auto& e : std::filesystem::directory_iterator(cache_ + "/partial"))
    rk = e.path().filename().string();
  const std::string dir = cache_ + "/partial/" + rk;
  const std::string stale = dir + "/" + names[0];
  auto hash = Hash128::FromHex(names[0].substr(2, 32));
  ASSERT_OK(hash.status());
  // Another sync downloading it (as Fetch does: under its object lock).
  sync::ObjectLocks theirs(env_, cache_ + "/locks");
  ASSERT_OK(theirs.Lock(sync::CacheKey{rk, *hash, 5000}, false));
  const std::string pack =
      dir + "/pack-" + std::string(32, 'c') + "-" + std::string(16, 'd');
  const std::string other_rk = std::string(32, 'e');
  const std::vector<std::string> kept = {
      pack + ".ferry-part", pack + ".ferry-part.journal",
      dir + "/" + std::string(32, 'f'),  // a managed object's download
      cache_ + "/partial/" + other_rk + "/u-" + std::string(32, '1'),
      cache_ + "/partial/" + other_rk + "/u-" + std::string(32, '2') +
          ".changed"};
  for (const std::string& path : kept) WriteFile(env_, path, "x");
  WriteFile(env_, file, std::string(5001, 'a'));  // the ETag moves on
  auto r = Sync(Options(), env_);
  ASSERT_OK(r.status());
  EXPECT_TRUE(env_->FileExists(stale)) << "removed while another sync held it";
  ASSERT_OK(theirs.UnlockAll());
  WriteFile(env_, file, std::string(5002, 'a'));
  r = Sync(Options(), env_);
  ASSERT_OK(r.status());
  EXPECT_FALSE(env_->FileExists(stale));
  for (const std::string& path : kept)
    EXPECT_TRUE(env_->FileExists(path)) << path;
}

// A --list's names are checked as paths below DEST before any request: a
// HEAD of "../other/s.txt" left the prefix, and "/etc/passwd" failed with
// the server's 404. The error names the list, the entry and why.
TEST_F(UnmanagedSyncTest, AListsNamesAreCheckedBeforeAnyRequest) {
  test::StubServer server([](const std::string&) {
    test::StubServer::Reply r;
    r.status = 404;
    r.headers = "Connection: close\r\n";
    return r;
  });
  const std::string list = dir_.Join("list.txt");
  for (const auto& [name, why] :
       {std::pair<std::string, std::string>{"../other/s.txt", "'..' segment"},
        {"/etc/passwd", "starts with '/'"}}) {
    WriteFile(env_, list, "a.txt\n" + name + "\n");
    SyncOptions o = Options();
    o.remote = server.url() + "/data/";
    o.list = list;
    o.remote_options.max_retries = 0;
    auto r = Sync(o, env_);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
    const std::string text = r.status().ToString();
    EXPECT_NE(text.find("--list " + list + ": names '" + name + "'"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(why), std::string::npos) << text;
  }
  for (const std::string& req : server.requests())
    EXPECT_EQ(req.rfind("HEAD ", 0), std::string::npos) << req;
  EXPECT_FALSE(env_->FileExists(dest_));
}

// --json's paths mean for an unmanaged remote what they mean for a managed
// one: every file came from the cache or whole, bytes too; a dry run says
// the same. They said whole {0, 0} and cache {N, 0} for every sync.
TEST_F(UnmanagedSyncTest, PathsSayHowEachFileCame) {
  WriteFile(env_, JoinPath(bucket_, "a"), std::string(3000, 'a'));
  WriteFile(env_, JoinPath(bucket_, "b"), std::string(5000, 'b'));
  for (const std::string& dest : {dest_, dir_.Join("nodes/second")}) {
    const bool cold = dest == dest_;
    SyncOptions o = Options(dest);
    o.dry_run = true;
    auto plan = Sync(o, env_);
    o.dry_run = false;
    auto r = Sync(o, env_);
    ASSERT_OK(plan.status());
    ASSERT_OK(r.status());
    for (const SyncReport& got : {*plan, *r}) {
      EXPECT_EQ(got.objects_whole, cold ? 2u : 0u);
      EXPECT_EQ(got.bytes_whole, cold ? 8000u : 0u);
      EXPECT_EQ(got.files_cached, cold ? 0u : 2u);
      EXPECT_EQ(got.bytes_cached, cold ? 0u : 8000u);
    }
  }
}

// An S3 bucket (a stub) whose listing gives key "a" twice, the second time
// with the ETag `again`; "a" holds "alpha".
class RepeatedKeyTest : public UnmanagedSyncTest {
 protected:
  static test::StubServer::Reply Bucket(const std::string& req,
                                        const std::string& again) {
    test::StubServer::Reply r;
    r.headers = "Connection: close\r\n";
    auto entry = [](const std::string& etag) {
      return "<Contents><Key>pre/a</Key><Size>5</Size><ETag>&quot;" + etag +
             "&quot;</ETag></Contents>";
    };
    if (req.rfind("GET /bkt?", 0) == 0) {
      r.body = "<ListBucketResult><IsTruncated>false</IsTruncated>" +
               entry("e1-1") + entry(again) + "</ListBucketResult>";
    } else if (req.rfind("GET /bkt/pre/a", 0) == 0 ||
               req.rfind("HEAD /bkt/pre/a", 0) == 0) {
      r.body = "alpha";
      r.headers += "ETag: \"e1-1\"\r\n";
    } else {
      r.status = 404;
      r.body = "<Error><Code>NoSuchKey</Code></Error>";
    }
    return r;
  }
};

// A key listed twice with the same size and ETag (repeated across pages)
// is one file. It was two downloads into one name: "another ferry run is
// downloading to this destination", then every later sync failed ("left
// the cache during the sync", "File exists") over a half-built view.
TEST_F(RepeatedKeyTest, AKeyListedTwiceAlikeIsOneFile) {
  test::StubServer server(
      [](const std::string& req) { return Bucket(req, "e1-1"); });
  for (int run = 0; run < 2; ++run) {
    auto r = Sync(S3Options(server), env_);
    ASSERT_OK(r.status());
    EXPECT_TRUE(r->failures.empty()) << r->failures[0].second.ToString();
    EXPECT_EQ(r->files, 1u);
    EXPECT_EQ(ReadFile(env_, dest_ + "/a"), "alpha");
  }
}

// Listed twice with another ETag: refused, naming the key, before any
// object is read; no view begun.
TEST_F(RepeatedKeyTest, AKeyListedTwiceUnlikeIsRefusedBeforeAnyFetch) {
  test::StubServer server(
      [](const std::string& req) { return Bucket(req, "e2-1"); });
  auto r = Sync(S3Options(server), env_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("/a: is listed twice"),
            std::string::npos)
      << r.status().ToString();
  for (const std::string& req : server.requests())
    EXPECT_EQ(req.find("/bkt/pre/a"), std::string::npos) << req;
  EXPECT_FALSE(env_->FileExists(dest_));
  EXPECT_FALSE(env_->FileExists(dir_.Join("nodes/.dest.ferry-views")));
}

// Entry holds an ETag in one pointer (CompactString): long ones, ones with
// quotes and XML escapes in them, round trip through DEST's record, so a
// second sync is a no-op, and a changed ETag fetches again.
TEST_F(UnmanagedSyncTest, OddEtagsRoundTripThroughDestsRecord) {
  const std::vector<std::string> etags = {std::string(300, 'e'),
                                          "with &quot;inner&quot; quotes",
                                          "a&lt;b&gt;&amp;c"};
  for (bool in_place : {false, true}) {
    for (const std::string& et : etags) {
      std::string etag = et;
      test::StubServer server([&](const std::string& req) {
        test::StubServer::Reply r = OneObject(req, etag, "alpha");
        if (req.rfind("GET /bkt/pre/a", 0) == 0 ||
            req.rfind("HEAD /bkt/pre/a", 0) == 0) {
          std::string raw = etag;  // unescaped, as a header
          for (auto [from, to] :
               std::vector<std::pair<std::string, std::string>>{
                   {"&quot;", "\""},
                   {"&lt;", "<"},
                   {"&gt;", ">"},
                   {"&amp;", "&"}})
            for (size_t at; (at = raw.find(from)) != std::string::npos;)
              raw.replace(at, from.size(), to);
          r.headers += "ETag: \"" + raw + "\"\r\n";
        }
        return r;
      });
      SyncOptions o = S3Options(server);
      o.in_place = in_place;
      if (in_place) o.dest = dest_ = dir_.Join("inplace");
      auto r = Sync(o, env_);
      ASSERT_OK(r.status());
      EXPECT_EQ(ReadFile(env_, dest_ + "/a"), "alpha");
      r = Sync(o, env_);
      ASSERT_OK(r.status());
      EXPECT_TRUE(r->unchanged) << et << " in_place " << in_place;
      etag += "2";
      r = Sync(o, env_);
      ASSERT_OK(r.status());
      EXPECT_FALSE(r->unchanged) << et;
      EXPECT_EQ(r->objects_fetched, 1u) << et;  // listed anew
      r = Sync(o, env_);
      ASSERT_OK(r.status());
      EXPECT_TRUE(r->unchanged) << et << " in_place " << in_place;
    }
  }
}

}  // namespace
}  // namespace ferry
