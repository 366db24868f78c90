// The bucket layout of publish/sync: key names, tag names, ref objects, and
// reading refs and manifests back (on the file backend), plus ListVersions.
#include "sync/layout.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ferry/publish.h"
#include "formats/manifest/manifest.h"
#include "remote/file_backend.h"
#include "testutil/test_util.h"

namespace ferry::sync {
namespace {

Hash128 H(const char* hex) { return *Hash128::FromHex(hex); }
const char* kHex = "0123456789abcdef0123456789abcdef";

TEST(LayoutTest, KeyNames) {
  EXPECT_EQ(ObjectKey(H(kHex)),
            ".ferry/objects/01/0123456789abcdef0123456789abcdef");
  EXPECT_EQ(ManifestKey(H(kHex)),
            ".ferry/manifests/0123456789abcdef0123456789abcdef");
  EXPECT_EQ(*RefKey("HEAD"), ".ferry/refs/HEAD");
  EXPECT_EQ(*RefKey("tags/v1.0"), ".ferry/refs/tags/v1.0");
  EXPECT_EQ(*TagRef("v1.0"), "tags/v1.0");
  Hash128 h;
  ASSERT_TRUE(ParseObjectKey(ObjectKey(H(kHex)), &h));
  EXPECT_EQ(h, H(kHex));
  ASSERT_TRUE(ParseManifestKey(ManifestKey(H(kHex)), &h));
  EXPECT_EQ(h, H(kHex));
  for (const char* bad :
       {".ferry/objects/02/0123456789abcdef0123456789abcdef",  // wrong fanout
        ".ferry/objects/01/0123456789ABCDEF0123456789abcdef",  // upper case
        ".ferry/objects/01/0123456789abcdef0123456789abcde",   // short
        ".ferry/objects/0123456789abcdef0123456789abcdef",
        ".ferry/objects/01/0123456789abcdef0123456789abcdef.ferry-tmp-1"}) {
    EXPECT_FALSE(ParseObjectKey(bad, &h)) << bad;
  }
  EXPECT_FALSE(ParseManifestKey(".ferry/manifests/x", &h));
}

TEST(LayoutTest, TagNamesAreOneSafeSegment) {
  for (const char* ok : {"v1", "v1.0", "2026-11-30", "release_candidate", "A"})
    EXPECT_TRUE(CheckTagName(ok).ok()) << ok;
  for (const char* bad : {"", ".hidden", "-x", "a/b", "..", "a..b", "HEAD",
                          "x.lock", "a b", "a\nb", "t\xc3\xa9"}) {
    EXPECT_TRUE(CheckTagName(bad).IsInvalidArgument()) << bad;
    EXPECT_FALSE(TagRef(bad).ok()) << bad;
  }
  EXPECT_TRUE(CheckTagName(std::string(128, 'a')).ok());
  EXPECT_FALSE(CheckTagName(std::string(129, 'a')).ok());
  EXPECT_FALSE(RefKey("refs/HEAD").ok());
  EXPECT_FALSE(RefKey("tags/../HEAD").ok());
  EXPECT_FALSE(RefKey("").ok());
}

// A manifest's hashes are its publisher's choice: ones that all hashed
// alike (low = C ^ high * K, for the low ^ high * K this was) made each
// insert and lookup of a sync's missing objects walk them all.
TEST(LayoutTest, HashesAManifestChoseDoNotShareABucket) {
  std::unordered_map<Hash128, int, Hash128Hasher> map;
  std::unordered_set<size_t> values;
  uint64_t x = 12345;
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    Hash128 h;
    h.high = x;
    h.low = 0x1234 ^ (x * 0x9E3779B97F4A7C15u);
    values.insert(Hash128Hasher()(h));
    map.emplace(h, i);
  }
  EXPECT_GE(values.size(), 19990u);
  size_t most = 0;
  for (size_t b = 0; b < map.bucket_count(); ++b)
    most = std::max(most, map.bucket_size(b));
  EXPECT_LE(most, 16u);  // ~8 at most for random keys
}

TEST(LayoutTest, RefText) {
  EXPECT_EQ(FormatRef(H(kHex)), std::string(kHex) + "\n");
  EXPECT_EQ(FormatRef(H(kHex)).size(), 33u);
  EXPECT_EQ(*ParseRef(std::string(kHex) + "\n", "r"), H(kHex));
  EXPECT_EQ(*ParseRef(kHex, "r"), H(kHex));
  EXPECT_EQ(*ParseRef("0123456789ABCDEF0123456789ABCDEF\r\n", "r"), H(kHex));
  for (const char* bad : {"", "\n", "0123", "0123456789abcdef0123456789abcdeg",
                          "0123456789abcdef0123456789abcdef0"}) {
    auto r = ParseRef(bad, "remote/.ferry/refs/HEAD");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().IsCorruption());
    EXPECT_NE(r.status().ToString().find("remote/.ferry/refs/HEAD"),
              std::string::npos);
  }
}

// A manifest of `files` one-byte files with the given parent and message.
std::string MakeManifest(int files, const Hash128* parent, const char* message,
                         Hash128* id) {
  manifest::StringSink sink;
  manifest::ManifestWriter w(&sink);
  manifest::Header h;
  h.set_part_size(manifest::kDefaultPartSize);
  h.set_created_unix_s(1700000000);
  h.set_message(message);
  if (parent) h.set_parent_id(manifest::HashToBytes(*parent));
  EXPECT_TRUE(w.Begin(h).ok());
  for (int i = 0; i < files; ++i) {
    manifest::File f;
    f.set_path("f" + std::to_string(i));
    manifest::FileHasher fh(manifest::kDefaultPartSize);
    fh.Update("x");
    fh.Finish(&f);
    f.set_mode(0644);
    EXPECT_TRUE(w.Add(f).ok());
  }
  auto r = w.Finish();
  EXPECT_TRUE(r.ok());
  *id = *r;
  return sink.bytes();
}

class RemoteTest : public ::testing::Test {
 protected:
  RemoteTest()
      : backend_(
            remote::NewFileBackend(dir_.path(), "bucket", Env::Default())) {}
  void Put(const std::string& key, const std::string& bytes) {
    ASSERT_TRUE(WriteObject(backend_.get(), key, bytes).ok()) << key;
  }
  test::ScratchDir dir_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(RemoteTest, ReadRefGivesIdAndEtag) {
  EXPECT_TRUE(ReadRef(backend_.get(), "HEAD").status().IsNotFound());
  Put(".ferry/refs/HEAD", FormatRef(H(kHex)));
  auto ref = ReadRef(backend_.get(), "HEAD");
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  EXPECT_EQ(ref->id, H(kHex));
  EXPECT_EQ(ref->etag, backend_->Stat(".ferry/refs/HEAD")->etag);
  EXPECT_FALSE(ref->etag.empty());
}

TEST_F(RemoteTest, ReadRefRefusesWhatIsNotARef) {
  Put(".ferry/refs/HEAD", "not a ref\n");
  auto r = ReadRef(backend_.get(), "HEAD");
  EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  EXPECT_NE(r.status().ToString().find("bucket/.ferry/refs/HEAD"),
            std::string::npos);
  Put(".ferry/refs/HEAD", std::string(5000, '0'));  // huge: not even read
  EXPECT_TRUE(ReadRef(backend_.get(), "HEAD").status().IsCorruption());
}

TEST_F(RemoteTest, FetchManifestChecksTheId) {
  Hash128 id;
  std::string bytes = MakeManifest(3, nullptr, "first", &id);
  auto missing = FetchManifest(backend_.get(), id);
  EXPECT_TRUE(missing.status().IsNotFound());
  EXPECT_NE(missing.status().ToString().find("missing"), std::string::npos);
  Put(ManifestKey(id), bytes);
  auto got = FetchManifest(backend_.get(), id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, bytes);
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 1;
  Put(ManifestKey(id), flipped);
  auto bad = FetchManifest(backend_.get(), id);
  EXPECT_TRUE(bad.status().IsCorruption()) << bad.status().ToString();
}

TEST_F(RemoteTest, ListVersionsWalksParentsAndNamesTags) {
  Hash128 a, b;
  Put(ManifestKey(H(kHex)), "");  // unrelated junk is not visited
  std::string ma = MakeManifest(2, nullptr, "first", &a);
  std::string mb = MakeManifest(5, &a, "second", &b);
  Put(ManifestKey(a), ma);
  Put(ManifestKey(b), mb);
  Put(".ferry/refs/HEAD", FormatRef(b));
  Put(".ferry/refs/tags/v1", FormatRef(a));
  Put(".ferry/refs/tags/latest", FormatRef(b));
  std::vector<VersionInfo> seen;
  Status s = ListVersions(backend_.get(), "HEAD", 0, [&](const VersionInfo& v) {
    seen.push_back(v);
    return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].id, b);
  EXPECT_EQ(seen[0].files, 5u);
  EXPECT_EQ(seen[0].bytes, 5u);
  EXPECT_EQ(seen[0].message, "second");
  EXPECT_EQ(seen[0].tags, std::vector<std::string>{"latest"});
  EXPECT_TRUE(seen[0].has_parent);
  EXPECT_EQ(seen[0].parent, a);
  EXPECT_EQ(seen[1].id, a);
  EXPECT_FALSE(seen[1].has_parent);
  EXPECT_EQ(seen[1].tags, std::vector<std::string>{"v1"});
  EXPECT_EQ(seen[1].created_unix_s, 1700000000);

  seen.clear();
  ASSERT_TRUE(
      ListVersions(backend_.get(), "HEAD", 1, [&](const VersionInfo& v) {
        seen.push_back(v);
        return Status::OK();
      }).ok());
  EXPECT_EQ(seen.size(), 1u);

  // A tag that cannot be read (a FIFO, a dangling link, a folder, empty)
  // left its version untagged without a word: it is told, and the versions
  // still listed.
  const std::string tags = dir_.Join(".ferry/refs/tags");
  ASSERT_EQ(::mkfifo((tags + "/odd").c_str(), 0644), 0);
  ASSERT_EQ(::symlink(dir_.Join("nowhere").c_str(), (tags + "/gone").c_str()),
            0);
  Put(".ferry/refs/tags/junk", "no id");  // failed the whole log
  ASSERT_EQ(::mkdir((tags + "/void").c_str(), 0755), 0);  // passed over
  std::vector<std::string> skipped;
  seen.clear();
  ASSERT_TRUE(ListVersions(
                  backend_.get(), "HEAD", 0,
                  [&](const VersionInfo& v) {
                    seen.push_back(v);
                    return Status::OK();
                  },
                  &skipped)
                  .ok());
  EXPECT_EQ(seen.size(), 2u);
  ASSERT_EQ(skipped.size(), 4u);
  std::sort(skipped.begin(), skipped.end());
  EXPECT_NE(skipped[0].find("tags/junk: "), std::string::npos) << skipped[0];
  EXPECT_NE(skipped[1].find("tags/gone: "), std::string::npos) << skipped[1];
  EXPECT_NE(skipped[2].find("tags/odd: "), std::string::npos) << skipped[2];
  EXPECT_NE(skipped[3].find("tags/void/: a folder"), std::string::npos)
      << skipped[3];
  ASSERT_EQ(::rmdir((tags + "/void").c_str()), 0);
  ASSERT_EQ(::unlink((tags + "/odd").c_str()), 0);
  ASSERT_EQ(::unlink((tags + "/gone").c_str()), 0);
  ASSERT_EQ(::unlink((tags + "/junk").c_str()), 0);

  // A parent gc removed ends the history; HEAD's own manifest missing is
  // NotFound naming it.
  ASSERT_TRUE(backend_->Delete(ManifestKey(a)).ok());
  seen.clear();
  s = ListVersions(backend_.get(), "HEAD", 0, [&](const VersionInfo& v) {
    seen.push_back(v);
    return Status::OK();
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0].has_parent);
  ASSERT_TRUE(backend_->Delete(ManifestKey(b)).ok());
  s = ListVersions(backend_.get(), "HEAD", 0,
                   [&](const VersionInfo&) { return Status::OK(); });
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.ToString().find(b.ToHex()), std::string::npos);
}

}  // namespace
}  // namespace ferry::sync
