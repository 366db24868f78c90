// --in-place and unmanaged-remote pieces of ferry sync: the file list, the
// MD5 an ETag states, PlaceObject's checked copy, and UpdateInPlace's rules
// (kept, placed, removed, links not followed).
#include "sync/in_place.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "sync/fs_util.h"
#include "sync/unmanaged.h"
#include "testutil/test_util.h"

namespace ferry::sync {
namespace {

using test::ReadFile;
using test::ScratchDir;
using test::WriteFile;

TEST(EtagMd5Test, OnlyAPlainMd5Counts) {
  EXPECT_EQ(EtagMd5("\"D41D8CD98F00B204E9800998ECF8427E\""),
            "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(EtagMd5("d41d8cd98f00b204e9800998ecf8427e"),
            "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(EtagMd5("\"d41d8cd98f00b204e9800998ecf8427e-2\""),
            "");  // multipart
  EXPECT_EQ(EtagMd5("W/\"d41d8cd98f00b204e9800998ecf8427e\""), "");  // weak
  EXPECT_EQ(EtagMd5("\"5f3a1b2c-1b\""), "");                         // nginx
  EXPECT_EQ(EtagMd5("\"z41d8cd98f00b204e9800998ecf8427e\""), "");
  EXPECT_EQ(EtagMd5(""), "");
}

TEST(FileListTest, RoundTripsAnyPathBytes) {
  std::vector<Entry> files(3);
  files[0].path = "a\nb \"q\"";
  files[0].size = 7;
  files[0].hash = HashBytes("x");
  files[0].etag = "\"e\"";
  files[1].path = std::string("bad\xff", 4);
  files[1].mode = 0755;
  files[2].path = "sub/c";
  auto back = ParseFileList(EncodeFileList(files));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*back)[i].path, files[i].path);
    EXPECT_EQ((*back)[i].size, files[i].size);
    EXPECT_EQ((*back)[i].hash, files[i].hash);
    EXPECT_EQ((*back)[i].mode, files[i].mode);
    EXPECT_EQ((*back)[i].etag, files[i].etag);
  }
  EXPECT_TRUE(ParseFileList("{}").status().IsCorruption());
  EXPECT_TRUE(ParseFileList("[[\"a\", 1]]").status().IsCorruption());
}

// No hard links: PlaceObject must copy (a wrapped Env never reflinks).
class NoLinkEnv : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;
  Status LinkFile(const std::string& from, const std::string& to) override {
    return Status::NotSupported(from + " -> " + to, "no links");
  }
};

TEST(PlaceObjectTest, CopyIsCheckedAgainstTheObject) {
  ScratchDir dir;
  NoLinkEnv env(Env::Default());
  WriteFile(&env, dir.Join("obj"), "object bytes");
  auto how = PlaceObject(&env, dir.Join("obj"), dir.Join("good"),
                         HashBytes("object bytes"), 12, 0640);
  ASSERT_TRUE(how.ok()) << how.status().ToString();
  EXPECT_EQ(*how, PlaceHow::kCopied);
  EXPECT_EQ(ReadFile(&env, dir.Join("good")), "object bytes");
  // The object changed on disk since it was verified: refused, nothing left.
  how = PlaceObject(&env, dir.Join("obj"), dir.Join("bad"),
                    HashBytes("other bytes!"), 12, 0640);
  EXPECT_TRUE(how.status().IsCorruption());
  EXPECT_FALSE(env.FileExists(dir.Join("bad")));
  how = PlaceObject(Env::Default(), dir.Join("obj"), dir.Join("linked"),
                    HashBytes("object bytes"), 12, 0640);
  ASSERT_TRUE(how.ok());
  EXPECT_EQ(*how, PlaceHow::kLinked);
}

class UpdateInPlaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = Cache::Open(env_, dir_.Join("cache"));
    ASSERT_TRUE(c.ok());
    cache_ = std::move(*c);
    ASSERT_TRUE(env_->CreateDirs(dest()).ok());
  }
  std::string dest() const { return dir_.Join("dest"); }
  // An entry whose object is in the cache.
  Entry Object(const std::string& path, const std::string& data) {
    Entry e;
    e.path = path;
    e.size = data.size();
    e.hash = HashBytes(data);
    CacheKey k{kRk, e.hash, e.size};
    const std::string src = cache_->PartialPath(k);
    EXPECT_TRUE(env_->CreateDirs(DirName(src)).ok());
    WriteFile(env_, src, data);
    EXPECT_TRUE(cache_->Insert(k, src).ok());
    return e;
  }
  Status Update(const std::vector<Entry>& files, bool others,
                InPlaceReport* r) {
    ViewState st;
    st.id = "0123456789abcdef0123456789abcdef";
    st.remote_key = kRk;
    st.in_place = true;
    return UpdateInPlace(env_, *cache_, kRk, dest(), files, st, others, r);
  }
  static constexpr const char* kRk = "00000000000000000000000000000001";
  Env* env_ = Env::Default();
  ScratchDir dir_;
  std::unique_ptr<Cache> cache_;
};

TEST_F(UpdateInPlaceTest, KeepsPlacesAndRemovesOnlyWhatFerryPlaced) {
  WriteFile(env_, dest() + "/user.txt", "mine");
  std::vector<Entry> v1 = {Object("a", "A1"), Object("d/b", "B1")};
  InPlaceReport r;
  ASSERT_TRUE(Update(v1, false, &r).ok());
  EXPECT_EQ(r.placed, 2u);
  EXPECT_EQ(ReadFile(env_, dest() + "/d/b"), "B1");
  std::vector<Entry> v2 = {Object("a", "A1"), Object("c", "C2")};
  r = {};
  ASSERT_TRUE(Update(v2, false, &r).ok());
  EXPECT_EQ(r.kept, 1u);
  EXPECT_EQ(r.placed, 1u);
  EXPECT_EQ(r.removed, 1u);
  EXPECT_FALSE(env_->FileExists(dest() + "/d"));  // emptied folder gone
  EXPECT_EQ(ReadFile(env_, dest() + "/user.txt"), "mine");
  EXPECT_FALSE(env_->FileExists(dest() + "/" + std::string(kPendingListName)));
  r = {};
  ASSERT_TRUE(Update(v2, true, &r).ok());
  EXPECT_EQ(r.others_removed, 1u);
  EXPECT_FALSE(env_->FileExists(dest() + "/user.txt"));
  EXPECT_TRUE(env_->FileExists(dest() + "/" + std::string(kViewStateName)));
}

TEST_F(UpdateInPlaceTest, ALinkOnTheWayIsNotFollowed) {
  ASSERT_TRUE(env_->CreateDirs(dir_.Join("outside")).ok());
  ASSERT_EQ(::symlink(dir_.Join("outside").c_str(), (dest() + "/d").c_str()),
            0);
  InPlaceReport r;
  Status s = Update({Object("d/x", "X")}, false, &r);
  EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition) << s.ToString();
  EXPECT_FALSE(env_->FileExists(dir_.Join("outside/x")));
}

}  // namespace
}  // namespace ferry::sync
