// One conformance suite for every Backend (docs/remote.md): the same tests
// run against the file backend (a scratch directory), S3 (s3rver behind the
// signature-checking proxy) and plain HTTP (nginx, read-only: objects are
// placed in its root, the write tests skip by caps).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ferry/remote.h"
#include "testutil/byte_io.h"
#include "testutil/test_servers.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

using test::StringSink;
using test::StringSource;

// What differs between the backends under test.
struct Kind {
  std::string name;
  // "a//b" is a key of its own (S3; not on a file system, where it is
  // "a/b", nor on s3rver, which stores objects as files).
  bool empty_segments = false;
  // s3rver 3.7.1 answers "Range: bytes=0-0" with the whole object (206,
  // Content-Range 0-999/1000): the read must fail rather than pass that on.
  bool first_byte_range_broken = false;
  // s3rver 3.7.1 answers a PUT before the object's bytes are on its disk
  // (its filesystem store resolves on the write stream's end(), not its
  // "finish"): a read right after an overwrite may see the file it just
  // truncated, empty (seen once under load, stop 24). Reads after an
  // overwrite wait for the server to settle, never for other bytes.
  bool write_not_settled = false;
};

// GTEST_SKIP returns from the function it is in: the test body's.
#define SKIP_UNLESS_CAP(cap) \
  if (!backend_->caps().cap) GTEST_SKIP() << "backend without " #cap

std::string PrintKind(const testing::TestParamInfo<Kind>& info) {
  return info.param.name;
}

// S3 credentials for the test servers, and only those: never the user's
// ~/.aws.
void SetS3Credentials(const std::string& key, const std::string& secret) {
  setenv("AWS_ACCESS_KEY_ID", key.c_str(), 1);
  setenv("AWS_SECRET_ACCESS_KEY", secret.c_str(), 1);
  unsetenv("AWS_SESSION_TOKEN");
  unsetenv("AWS_PROFILE");
  setenv("AWS_CONFIG_FILE", "/nonexistent/ferry-test", 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/ferry-test", 1);
  setenv("AWS_REGION", "us-east-1", 1);
}

class BackendConformanceTest : public testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    const Kind& kind = GetParam();
    static std::atomic<int> counter{0};
    const auto* test = testing::UnitTest::GetInstance()->current_test_info();
    // A fresh prefix per test, so tests never see each other's objects.
    prefix_ = "conf-" + std::to_string(::getpid()) + "-" +
              std::to_string(counter++) + "-" + test->name();
    std::replace(prefix_.begin(), prefix_.end(), '/', '_');
    // A refused answer (s3rver's "bytes=0-0") is retried: not for long
    // here, but enough for s3rver's own hiccups under load.
    options_.max_retries = 4;
    if (kind.name == "file") {
      url_ = "file://" + scratch_.path() + "/" + prefix_;
    } else {
      auto servers = test::TestServers::FromEnv();
      if (!servers.ok()) GTEST_SKIP() << servers.status().ToString();
      servers_ = *servers;
      if (kind.name == "s3") {
        url_ = "s3://" + servers_.s3_bucket + "/" + prefix_ + "/";
        options_.endpoint_url = servers_.s3_url;
        SetS3Credentials(servers_.s3_access_key, servers_.s3_secret_key);
      } else {
        url_ = servers_.http_url + "/" + prefix_ + "/";
      }
    }
    auto b = OpenBackend(url_, options_, Env::Default());
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    backend_ = std::move(*b);
  }

  bool writable() const { return backend_->caps().writes; }

  // Places an object: through the backend, or into nginx's root for the
  // read-only HTTP backend.
  void Put(const std::string& key, const std::string& data) {
    if (writable()) {
      StringSource src(data);
      auto r = backend_->Write(key, &src, {});
      ASSERT_TRUE(r.ok()) << key << ": " << r.status().ToString();
      EXPECT_EQ(r->size, data.size());
      return;
    }
    test::WriteFile(Env::Default(),
                    servers_.http_root + "/" + prefix_ + "/" + key, data);
  }

  // Get after an overwrite: on a server that answers before its write is
  // done (write_not_settled), read again while it shows no bytes, for up to
  // 2 s; then what it holds, to be compared with what was written.
  Result<std::string> GetAfterWrite(const std::string& key) {
    Result<std::string> got = Get(key);
    for (int i = 0;
         GetParam().write_not_settled && i < 100 && got.ok() && got->empty();
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      got = Get(key);
    }
    return got;
  }

  Result<std::string> Get(const std::string& key, ByteRange range = {},
                          const std::string& if_match = "") {
    StringSink sink;
    ReadOptions o;
    o.if_match = if_match;
    FERRY_RETURN_IF_ERROR(backend_->Read(key, range, o, &sink));
    return sink.out;
  }

  // The listing as "key size" lines ("key/" for a folder).
  std::vector<std::string> Listing(const std::string& prefix,
                                   bool recursive = true) {
    std::vector<std::string> out;
    ListOptions o;
    o.recursive = recursive;
    Status s = backend_->List(prefix, o, [&](const ObjectInfo& info) {
      if (info.is_prefix) {
        out.push_back(info.key);
      } else {
        EXPECT_FALSE(info.etag.empty()) << info.key;
        out.push_back(info.key + " " + std::to_string(info.size));
      }
      return Status::OK();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  test::ScratchDir scratch_;
  test::TestServers servers_;
  RemoteOptions options_;
  std::string prefix_, url_;
  std::unique_ptr<Backend> backend_;
};

TEST_P(BackendConformanceTest, EmptyPrefixListsNothing) {
  SKIP_UNLESS_CAP(listing);
  EXPECT_TRUE(Listing("").empty());
  EXPECT_TRUE(Listing("", false).empty());
}

TEST_P(BackendConformanceTest, ListingIsSortedByKeyWithSizes) {
  SKIP_UNLESS_CAP(listing);
  for (const char* k : {"b/c", "a", "b-x", "b/a/z", "c"}) Put(k, k);
  EXPECT_EQ(Listing(""), (std::vector<std::string>{"a 1", "b-x 3", "b/a/z 5",
                                                   "b/c 3", "c 1"}));
}

TEST_P(BackendConformanceTest, PrefixIsAStringPrefix) {
  SKIP_UNLESS_CAP(listing);
  for (const char* k : {"dir/a", "dir/b", "dir2/c", "di", "other"}) Put(k, "x");
  EXPECT_EQ(Listing("dir/"), (std::vector<std::string>{"dir/a 1", "dir/b 1"}));
  EXPECT_EQ(Listing("di"), (std::vector<std::string>{"di 1", "dir/a 1",
                                                     "dir/b 1", "dir2/c 1"}));
  EXPECT_TRUE(Listing("nothing/").empty());
}

TEST_P(BackendConformanceTest, OneLevelListsFoldersAsPrefixes) {
  SKIP_UNLESS_CAP(listing);
  for (const char* k : {"a", "b/c", "b/d/e", "b-x", "f/g"}) Put(k, "xy");
  EXPECT_EQ(Listing("", false),
            (std::vector<std::string>{"a 2", "b-x 2", "b/", "f/"}));
  EXPECT_EQ(Listing("b/", false), (std::vector<std::string>{"b/c 2", "b/d/"}));
}

// More keys than one S3 listing page (1000) holds.
TEST_P(BackendConformanceTest, ListingSpansPages) {
  SKIP_UNLESS_CAP(listing);
  constexpr int kKeys = 1100;
  std::vector<std::string> want;
  for (int i = 0; i < kKeys; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "k/%05d", i);
    want.push_back(std::string(buf) + " 1");
  }
  std::atomic<int> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 8; ++t) {
    workers.emplace_back([&] {
      for (int i; (i = next++) < kKeys;)
        Put(want[i].substr(0, want[i].size() - 2), "z");
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(Listing(""), want);
  EXPECT_EQ(
      Listing("k/0109"),
      (std::vector<std::string>{
          "k/01090 1", "k/01091 1", "k/01092 1", "k/01093 1", "k/01094 1",
          "k/01095 1", "k/01096 1", "k/01097 1", "k/01098 1", "k/01099 1"}));
  // A visitor's error stops the listing and comes back.
  int seen = 0;
  Status s = backend_->List("", {}, [&](const ObjectInfo&) {
    return ++seen == 1005 ? Status::Cancelled("enough") : Status::OK();
  });
  EXPECT_EQ(s.code(), Status::Code::kCancelled);
  EXPECT_EQ(seen, 1005);
}

TEST_P(BackendConformanceTest, OddKeysRoundTrip) {
  std::vector<std::string> keys = {
      "sp ace",         "plus+sign",  "per%cent", "per%20cent", "tilde~",
      "eq=ual",         "q?mark",     "hash#tag", "amp&er",     "colon:x",
      "star*",          "semi;colon", "comma,",   "quote'",     "paren(1)",
      "ütf8-ключ-日本", "dots..x",    ".hidden",  "br[a]ce{s}", "at@",
      "dollar$"};
  if (GetParam().empty_segments) keys.push_back("double//slash");
  // Long: S3 allows 1024 bytes; a file name 255, so in several folders.
  keys.push_back(std::string(200, 'L') + "/" + std::string(200, 'M') + "/" +
                 std::string(200, 'N') + "/" + std::string(200, 'O'));
  for (size_t i = 0; i < keys.size(); ++i) Put(keys[i], keys[i] + "!");
  for (const std::string& k : keys) {
    auto info = backend_->Stat(k);
    ASSERT_TRUE(info.ok()) << k << ": " << info.status().ToString();
    EXPECT_EQ(info->size, k.size() + 1) << k;
    auto data = Get(k);
    ASSERT_TRUE(data.ok()) << k << ": " << data.status().ToString();
    EXPECT_EQ(*data, k + "!");
  }
  if (!backend_->caps().listing) return;
  std::vector<std::string> want;
  for (const std::string& k : keys)
    want.push_back(k + " " + std::to_string(k.size() + 1));
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Listing(""), want);
}

TEST_P(BackendConformanceTest, MissingObjectIsNotFound) {
  Put("present", "x");
  auto info = backend_->Stat("absent");
  ASSERT_FALSE(info.ok());
  EXPECT_TRUE(info.status().IsNotFound()) << info.status().ToString();
  auto data = Get("absent");
  ASSERT_FALSE(data.ok());
  EXPECT_TRUE(data.status().IsNotFound()) << data.status().ToString();
  EXPECT_NE(data.status().ToString().find("absent"), std::string::npos)
      << data.status().ToString();
}

TEST_P(BackendConformanceTest, StatReportsSizeAndStableEtag) {
  Put("obj", "hello");
  auto a = backend_->Stat("obj");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->size, 5u);
  EXPECT_FALSE(a->etag.empty());
  auto b = backend_->Stat("obj");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->etag, b->etag);
}

TEST_P(BackendConformanceTest, RangesReadExactlyTheirBytes) {
  const std::string data = test::RandomBytes(1000, 1);
  Put("r", data);
  Put("empty", "");
  if (GetParam().first_byte_range_broken) {
    EXPECT_FALSE(Get("r", {0, 1}).ok());
  } else {
    EXPECT_EQ(*Get("r", {0, 1}), data.substr(0, 1));
  }
  EXPECT_EQ(*Get("r", {500, 1}), data.substr(500, 1));
  EXPECT_EQ(*Get("r", {999, 1}), data.substr(999, 1));
  EXPECT_EQ(*Get("r", {100, 250}), data.substr(100, 250));
  EXPECT_EQ(*Get("r", {900, ByteRange::kToEnd}), data.substr(900));
  EXPECT_EQ(*Get("r", {0, 1000}), data);
  EXPECT_EQ(*Get("r"), data);
  auto empty = Get("empty");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(*empty, "");
  auto info = backend_->Stat("empty");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->size, 0u);
  // An explicit range past the end is an error, never fewer bytes.
  EXPECT_FALSE(Get("r", {990, 20}).ok());
  EXPECT_FALSE(Get("r", {2000, 1}).ok());
}

TEST_P(BackendConformanceTest, IfMatchRefusesAChangedObject) {
  if (!backend_->caps().conditional_reads) GTEST_SKIP() << "no If-Match";
  Put("v", "version one");
  auto v1 = backend_->Stat("v");
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(*Get("v", {0, 7}, v1->etag), "version");
  Put("v", "version two, longer");
  auto v2 = backend_->Stat("v");
  ASSERT_TRUE(v2.ok());
  ASSERT_NE(v1->etag, v2->etag);
  for (ByteRange r : {ByteRange{0, 7}, ByteRange{}, ByteRange{3, 2}}) {
    auto stale = Get("v", r, v1->etag);
    ASSERT_FALSE(stale.ok());
    EXPECT_TRUE(stale.status().IsFailedPrecondition())
        << stale.status().ToString();
  }
  EXPECT_EQ(*Get("v", {8, 3}, v2->etag), "two");
}

TEST_P(BackendConformanceTest, WriteReplacesWholeObjects) {
  SKIP_UNLESS_CAP(writes);
  const std::string big =
      test::RandomBytes(3 << 20, 2);  // several write chunks
  StringSource src(big);
  auto w = backend_->Write("w/obj", &src, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->size, big.size());
  auto st = backend_->Stat("w/obj");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->etag, w->etag);
  EXPECT_EQ(*Get("w/obj"), big);
  StringSource small("small");
  ASSERT_TRUE(backend_->Write("w/obj", &small, {}).ok());
  EXPECT_EQ(*GetAfterWrite("w/obj"), "small");
  // Nothing but the object shows (no temporary files).
  if (backend_->caps().listing)
    EXPECT_EQ(Listing(""), std::vector<std::string>{"w/obj 5"});
}

TEST_P(BackendConformanceTest, ConditionalWrites) {
  SKIP_UNLESS_CAP(writes);
  if (!backend_->caps().conditional_writes) GTEST_SKIP() << "unconditional";
  WriteOptions create;
  create.if_none_match = true;
  StringSource a("a");
  auto first = backend_->Write("c", &a, create);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  StringSource b("b");
  auto again = backend_->Write("c", &b, create);
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(again.status().IsFailedPrecondition());
  EXPECT_EQ(*Get("c"), "a");

  WriteOptions replace;
  replace.if_match = "\"not-the-etag\"";
  auto wrong = backend_->Write("c", &b, replace);
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(wrong.status().IsFailedPrecondition());
  EXPECT_EQ(*Get("c"), "a");
  replace.if_match = first->etag;
  ASSERT_TRUE(backend_->Write("c", &b, replace).ok());
  EXPECT_EQ(*Get("c"), "b");
  auto gone = backend_->Write("never-was", &b, replace);
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(gone.status().IsFailedPrecondition());

  // Many creators at once: exactly one wins.
  std::atomic<int> won{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      StringSource s(std::to_string(t));
      if (backend_->Write("race", &s, create).ok()) ++won;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(won.load(), 1);
}

TEST_P(BackendConformanceTest, DeleteRemovesAndIsIdempotent) {
  SKIP_UNLESS_CAP(writes);
  Put("d/x", "1");
  Put("d/y", "2");
  ASSERT_TRUE(backend_->Delete("d/x").ok());
  auto st = backend_->Stat("d/x");
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(st.status().IsNotFound());
  EXPECT_TRUE(backend_->Delete("d/x").ok());  // already gone
  EXPECT_TRUE(backend_->Delete("never/was").ok());
  if (backend_->caps().listing) {
    EXPECT_EQ(Listing(""), std::vector<std::string>{"d/y 1"});
    ASSERT_TRUE(backend_->Delete("d/y").ok());
    EXPECT_TRUE(Listing("", false).empty());  // no empty folder left
  }
}

// Of deleters racing for one key, one removed it and the others found it
// gone (two gc runs at once count each object once).
TEST_P(BackendConformanceTest, DeleteIfPresentTellsWhoRemovedIt) {
  SKIP_UNLESS_CAP(writes);
  Put("d/x", "1");
  auto first = backend_->DeleteIfPresent("d/x");
  ASSERT_OK(first.status());
  EXPECT_TRUE(*first);
  EXPECT_TRUE(backend_->Stat("d/x").status().IsNotFound());
  auto again = backend_->DeleteIfPresent("d/x");
  ASSERT_OK(again.status());
  EXPECT_FALSE(*again);
  auto never = backend_->DeleteIfPresent("never/was");
  ASSERT_OK(never.status());
  EXPECT_FALSE(*never);
  for (int round = 0; round < 5; ++round) {
    Put("race", "r");
    std::atomic<int> removed{0}, failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        auto r = backend_->DeleteIfPresent("race");
        if (!r.ok()) {
          ++failed;
        } else if (*r) {
          ++removed;
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(removed.load(), 1) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendConformanceTest,
                         testing::Values(Kind{"file", false},
                                         Kind{"s3", false, true, true},
                                         Kind{"http", false, false}),
                         PrintKind);

// What only S3 has: credentials, buckets, multipart uploads.
class S3BackendTest : public testing::Test {
 protected:
  void SetUp() override {
    auto servers = test::TestServers::FromEnv();
    if (!servers.ok()) GTEST_SKIP() << servers.status().ToString();
    servers_ = *servers;
    options_.endpoint_url = servers_.s3_url;
    SetS3Credentials(servers_.s3_access_key, servers_.s3_secret_key);
    static std::atomic<int> counter{0};
    prefix_ = "s3only-" + std::to_string(::getpid()) + "-" +
              std::to_string(counter++) + "/";
  }
  std::unique_ptr<Backend> Open(const std::string& bucket) {
    auto b =
        OpenBackend("s3://" + bucket + "/" + prefix_, options_, Env::Default());
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return b.ok() ? std::move(*b) : nullptr;
  }
  test::TestServers servers_;
  RemoteOptions options_;
  std::string prefix_;
};

TEST_F(S3BackendTest, WrongSecretSaysCredentialsAndNeverShowsTheSecret) {
  const std::string secret = "wrong-secret-Zq81xK";
  setenv("AWS_SECRET_ACCESS_KEY", secret.c_str(), 1);
  auto b = Open(servers_.s3_bucket);
  ASSERT_TRUE(b);
  std::vector<Status> failures;
  failures.push_back(
      b->List("", {}, [](const ObjectInfo&) { return Status::OK(); }));
  failures.push_back(b->Stat("some/key").status());
  StringSource src("data");
  failures.push_back(b->Write("some/key", &src, {}).status());
  StringSink sink;
  failures.push_back(b->Read("some/key", {}, {}, &sink));
  for (const Status& s : failures) {
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    EXPECT_NE(s.ToString().find("credentials"), std::string::npos)
        << s.ToString();
    EXPECT_EQ(s.ToString().find(secret), std::string::npos) << s.ToString();
  }
}

TEST_F(S3BackendTest, SessionTokenIsSigned) {
  setenv("AWS_SESSION_TOKEN", servers_.s3_session_token.c_str(), 1);
  auto b = Open(servers_.s3_bucket);
  ASSERT_TRUE(b);
  StringSource src("with a token");
  auto w = b->Write("t", &src, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto st = b->Stat("t");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->size, 12u);
  setenv("AWS_SESSION_TOKEN", "not-the-token", 1);
  auto bad = Open(servers_.s3_bucket);
  Status s = bad->Stat("t").status();
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_EQ(s.ToString().find("not-the-token"), std::string::npos);
  unsetenv("AWS_SESSION_TOKEN");
}

TEST_F(S3BackendTest, UnknownBucketIsNotFoundNamingIt) {
  auto b = Open("no-such-bucket-ferry");
  ASSERT_TRUE(b);
  Status s = b->List("", {}, [](const ObjectInfo&) { return Status::OK(); });
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.ToString().find("no-such-bucket-ferry"), std::string::npos);
  Status st = b->Stat("k").status();
  EXPECT_TRUE(st.IsNotFound()) << st.ToString();
  EXPECT_NE(st.ToString().find("no-such-bucket-ferry"), std::string::npos);
}

TEST_F(S3BackendTest, LargeWritesGoMultipart) {
  options_.part_size = 1 << 20;
  std::mutex mu;
  std::vector<std::string> log;
  options_.log = [&](std::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    log.emplace_back(line);
  };
  auto b = Open(servers_.s3_bucket);
  ASSERT_TRUE(b);
  const std::string data = test::RandomBytes((10 << 20) + 123, 7);
  StringSource src(data);
  auto w = b->Write("big", &src, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->size, data.size());
  // Three parts (the part size raised to S3's least, 5 MiB), between a
  // start and a completion.
  int starts = 0, parts = 0, completions = 0;
  for (const std::string& line : log) {
    if (line.rfind("POST ", 0) == 0 &&
        line.find("?uploads") != std::string::npos)
      ++starts;
    if (line.rfind("PUT ", 0) == 0 &&
        line.find("partNumber=") != std::string::npos)
      ++parts;
    if (line.rfind("POST ", 0) == 0 &&
        line.find("?uploadId=") != std::string::npos)
      ++completions;
  }
  EXPECT_EQ(starts, 1);
  EXPECT_EQ(parts, 3);
  EXPECT_EQ(completions, 1);
  StringSink sink;
  ASSERT_TRUE(b->Read("big", {}, {}, &sink).ok());
  EXPECT_TRUE(sink.out == data);
  StringSink part;
  ReadOptions same;
  same.if_match = w->etag;
  ASSERT_TRUE(b->Read("big", {(1 << 20) - 2, 4}, same, &part).ok());
  EXPECT_EQ(part.out, data.substr((1 << 20) - 2, 4));
}

TEST_F(S3BackendTest, UnsignedRequestsWhereThePublicProxyAllows) {
  options_.no_sign_request = true;
  auto refused = Open(servers_.s3_bucket);
  ASSERT_TRUE(refused);
  Status s = refused->Stat("x").status();
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("--no-sign-request"), std::string::npos)
      << s.ToString();
  options_.endpoint_url = servers_.s3_public_url;
  auto open = Open(servers_.s3_bucket);
  ASSERT_TRUE(open);
  StringSource src("public");
  ASSERT_TRUE(open->Write("p", &src, {}).ok());
  EXPECT_EQ(open->Stat("p")->size, 6u);
}

}  // namespace
}  // namespace ferry
