// Per-part checks of GetObjects (GetItem::part_hashes, docs/remote.md "Part
// hashes"): a part whose bytes do not match its XXH3-64 is fetched again, a
// part that never matches fails the item with Corruption and nothing under
// the final name, and a resume checks its journalled parts on disk and
// fetches only the bad ones again. Through a test backend in front of a
// file:// bucket that flips one byte of what it serves.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ferry/backend_wrapper.h"
#include "ferry/remote.h"
#include "ferry/transfer.h"
#include "formats/manifest/manifest.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

constexpr uint64_t kPart = 64 << 10;

// Forwards to a file:// backend; a read that covers byte flip_at flips it
// (flips_left times; -1: always); reads that start at or after fail_from
// fail for good. Counts the bytes it served.
class FlakyBackend : public BackendWrapper {
 public:
  explicit FlakyBackend(std::unique_ptr<Backend> base)
      : BackendWrapper(std::move(base)) {}
  Status Read(std::string_view key, const ByteRange& range,
              const ReadOptions& options, ByteSink* sink) override {
    if (range.offset >= fail_from)
      return Status::IOError(std::string(key), "injected failure");
    Sink s(this, range.offset, sink);
    return BackendWrapper::Read(key, range, options, &s);
  }

  uint64_t flip_at = UINT64_MAX;
  int flips_left = 0;
  uint64_t fail_from = UINT64_MAX;
  uint64_t served = 0;

 private:
  class Sink : public ByteSink {
   public:
    Sink(FlakyBackend* b, uint64_t offset, ByteSink* next)
        : b_(b), offset_(offset), next_(next) {}
    Status Append(std::string_view data) override {
      std::string copy(data);
      if (b_->flips_left != 0 && b_->flip_at >= offset_ &&
          b_->flip_at < offset_ + copy.size()) {
        copy[b_->flip_at - offset_] ^= 0x20;
        if (b_->flips_left > 0) --b_->flips_left;
      }
      offset_ += copy.size();
      b_->served += copy.size();
      return next_->Append(copy);
    }

   private:
    FlakyBackend* b_;
    uint64_t offset_;
    ByteSink* next_;
  };
};

class PartHashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = test::RandomBytes(5 * kPart + 1000, 11);  // 6 parts
    test::WriteFile(env_, dir_.Join("bucket/obj"), data_);
    auto b = OpenBackend("file://" + dir_.Join("bucket"), {}, env_);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    backend_ = std::make_unique<FlakyBackend>(std::move(*b));
    opt_.part_size = 1 << 20;  // the item's part size wins
    opt_.max_retries = 3;
  }

  GetItem Item() {
    GetItem item;
    item.key = "obj";
    item.dest = dest_;
    item.have_expected = true;
    item.expected = HashBytes(data_);
    for (uint64_t off = 0; off < data_.size(); off += kPart)
      item.part_hashes.push_back(
          manifest::PartHash(std::string_view(data_).substr(off, kPart)));
    item.part_hash_size = kPart;
    return item;
  }

  TransferReport Get() {
    auto r = GetObjects(backend_.get(), {Item()}, opt_, env_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : TransferReport{};
  }

  uint64_t Retries(const TransferReport& r, const std::string& cause) {
    auto it = r.retries.find(cause);
    return it == r.retries.end() ? 0 : it->second;
  }

  Env* env_ = Env::Default();
  test::ScratchDir dir_;
  std::string data_;
  std::string dest_ = dir_.Join("out/obj");
  std::unique_ptr<FlakyBackend> backend_;
  TransferOptions opt_;
};

TEST_F(PartHashTest, APartCorruptedOnceIsFetchedAgain) {
  backend_->flip_at = 3 * kPart + 5;
  backend_->flips_left = 1;
  TransferReport r = Get();
  ASSERT_EQ(r.files_failed, 0u) << r.failures[0].second.ToString();
  EXPECT_EQ(r.files_done, 1u);
  EXPECT_EQ(Retries(r, "part-hash"), 1u);
  EXPECT_TRUE(test::ReadFile(env_, dest_) == data_);
  // Only the bad part came twice.
  EXPECT_EQ(backend_->served, data_.size() + kPart);
}

TEST_F(PartHashTest, APartCorruptedEveryTimeFailsWithCorruption) {
  backend_->flip_at = kPart + 7;
  backend_->flips_left = -1;
  TransferReport r = Get();
  EXPECT_EQ(r.files_done, 0u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_TRUE(r.failures[0].second.IsCorruption())
      << r.failures[0].second.ToString();
  EXPECT_NE(r.failures[0].second.ToString().find("part 1"), std::string::npos)
      << r.failures[0].second.ToString();
  EXPECT_EQ(Retries(r, "part-hash"), uint64_t(opt_.max_retries));
  EXPECT_FALSE(env_->FileExists(dest_));
}

TEST_F(PartHashTest, AResumeFetchesOnlyTheJournalledPartThatGotBad) {
  // A first run fetches parts 0-3 (journalled), then fails.
  backend_->fail_from = 4 * kPart;
  TransferReport first = Get();
  ASSERT_EQ(first.files_failed, 1u);
  ASSERT_TRUE(env_->FileExists(dest_ + ".ferry-part.journal"));
  // One byte of journalled part 2 goes bad on disk.
  {
    std::string part = test::ReadFile(env_, dest_ + ".ferry-part");
    part[2 * kPart + 9] ^= 1;
    test::WriteFile(env_, dest_ + ".ferry-part", part);
  }
  backend_->fail_from = UINT64_MAX;
  backend_->served = 0;
  TransferReport r = Get();
  ASSERT_EQ(r.files_failed, 0u) << r.failures[0].second.ToString();
  EXPECT_TRUE(test::ReadFile(env_, dest_) == data_);
  EXPECT_EQ(Retries(r, "part-hash"), 1u);
  // Parts 2, 4 and 5; the good journalled parts 0, 1 and 3 are not fetched.
  EXPECT_EQ(backend_->served, data_.size() - 3 * kPart);
  EXPECT_EQ(r.bytes, data_.size() - 3 * kPart);
  EXPECT_EQ(r.bytes_resumed, 3 * kPart);
}

TEST_F(PartHashTest, PartHashesOfAnotherSizeThanTheObjectFailWithCorruption) {
  GetItem item = Item();
  item.part_hashes.pop_back();
  auto r = GetObjects(backend_.get(), {item}, opt_, env_);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->failures.size(), 1u);
  EXPECT_TRUE(r->failures[0].second.IsCorruption());
  EXPECT_FALSE(env_->FileExists(dest_));
}

// GetItem::expected_size (a manifest's size) other than the server's, with
// the same part count (the part hashes cannot tell): Corruption before a
// byte is read, no part file, no journal; a resume's journal is not used.
TEST_F(PartHashTest, AServerSizeOtherThanTheExpectedFailsBeforeAByteIsRead) {
  backend_->fail_from = 2 * kPart;  // a journal of parts 0-1 to resume
  ASSERT_EQ(Get().files_failed, 1u);
  ASSERT_TRUE(env_->FileExists(dest_ + ".ferry-part.journal"));
  backend_->fail_from = UINT64_MAX;
  backend_->served = 0;
  GetItem item = Item();
  item.have_expected_size = true;
  item.expected_size = data_.size() + 1;
  auto r = GetObjects(backend_.get(), {item}, opt_, env_);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->failures.size(), 1u);
  const Status& s = r->failures[0].second;
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("has " + std::to_string(data_.size()) +
                              " bytes, the manifest says " +
                              std::to_string(data_.size() + 1)),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(backend_->served, 0u);
  EXPECT_EQ(r->bytes, 0u);
  EXPECT_EQ(r->bytes_resumed, 0u);
  EXPECT_FALSE(env_->FileExists(dest_));
  EXPECT_FALSE(env_->FileExists(dest_ + ".ferry-part"));
  EXPECT_FALSE(env_->FileExists(dest_ + ".ferry-part.journal"));
  // The right size fetches it.
  item.expected_size = data_.size();
  r = GetObjects(backend_.get(), {item}, opt_, env_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->files_done, 1u);
  EXPECT_TRUE(test::ReadFile(env_, dest_) == data_);
}

}  // namespace
}  // namespace ferry
