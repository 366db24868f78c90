// Boundary refinement of deltas (docs/delta.md "Refining a delta"): the rdiff
// delta command reader and writer (formats/delta/rdiff_delta.h) and
// RefineCommands on constructed old/new pairs: every refined delta patches
// the old bytes into the new ones, and its literals hold only the bytes the
// old object lacks around each edit, not whole signature blocks.
#include "delta/refine.h"

#include <gtest/gtest.h>

#include <string>

#include "formats/delta/rdiff_delta.h"
#include "testutil/delta_bytes.h"
#include "testutil/test_util.h"

namespace ferry::delta {
namespace {

using format::DeltaReader;
using format::DeltaWriter;
using test::Be;
using test::RandomBytes;

ByteSink AppendTo(std::string* out) {
  return [out](std::string_view d) {
    out->append(d);
    return Status::OK();
  };
}

std::string Encoded(const std::function<void(DeltaWriter&)>& write) {
  std::string out;
  DeltaWriter w(AppendTo(&out));
  write(w);
  EXPECT_OK(w.End());
  return out;
}

TEST(DeltaWriterTest, WritesEachCommandInItsShortestEncoding) {
  const std::string m = test::kDeltaMagic;
  EXPECT_EQ(Encoded([](DeltaWriter&) {}), m + '\0');
  EXPECT_EQ(Encoded([](DeltaWriter& w) {
              EXPECT_OK(w.LiteralHeader(1));
              EXPECT_OK(w.Bytes("a"));
            }),
            m +
                "\x01"
                "a" +
                '\0');
  // 1..64 in the opcode; then 1, 2, 4 bytes of length.
  EXPECT_EQ(Encoded([](DeltaWriter& w) { EXPECT_OK(w.LiteralHeader(64)); }),
            m + "\x40" + '\0');
  EXPECT_EQ(Encoded([](DeltaWriter& w) { EXPECT_OK(w.LiteralHeader(65)); }),
            m + "\x41" + Be(65, 1) + '\0');
  EXPECT_EQ(Encoded([](DeltaWriter& w) { EXPECT_OK(w.LiteralHeader(256)); }),
            m + "\x42" + Be(256, 2) + '\0');
  EXPECT_EQ(Encoded([](DeltaWriter& w) { EXPECT_OK(w.LiteralHeader(70000)); }),
            m + "\x43" + Be(70000, 4) + '\0');
  // COPY: 0x45 + 4 × index(position bytes) + index(length bytes).
  EXPECT_EQ(Encoded([](DeltaWriter& w) { EXPECT_OK(w.Copy(0, 1)); }),
            m + "\x45" + Be(0, 1) + Be(1, 1) + '\0');
  EXPECT_EQ(Encoded([](DeltaWriter& w) { EXPECT_OK(w.Copy(0x100, 0x10000)); }),
            m + "\x4b" + Be(0x100, 2) + Be(0x10000, 4) + '\0');
  EXPECT_EQ(Encoded([](DeltaWriter& w) {
              EXPECT_OK(w.Copy(uint64_t{1} << 32, 255));
            }),
            m + "\x51" + Be(uint64_t{1} << 32, 8) + Be(255, 1) + '\0');
  // Length 0 writes nothing.
  EXPECT_EQ(Encoded([](DeltaWriter& w) {
              EXPECT_OK(w.Copy(5, 0));
              EXPECT_OK(w.LiteralHeader(0));
            }),
            m + '\0');
}

TEST(DeltaReaderTest, ListsCommandsPlacedInTheNewFileAndMergesLiterals) {
  const std::string delta = test::kDeltaMagic +
                            "\x02"
                            "ab" +
                            "\x41" + Be(3, 1) + "cde" + "\x4b" + Be(0x100, 2) +
                            Be(0x10000, 4) +
                            "\x01"
                            "f" +
                            '\0';
  DeltaReader r;
  for (char c : delta) ASSERT_OK(r.Update(std::string_view(&c, 1)));
  ASSERT_OK(r.Finish());
  using C = format::DeltaCommand;
  EXPECT_EQ(r.commands(),
            (std::vector<C>{C{false, 0, 5, 0}, C{true, 5, 0x10000, 0x100},
                            C{false, 5 + 0x10000, 1, 0}}));
  EXPECT_EQ(r.literal_bytes(), 6u);
  EXPECT_EQ(r.output_bytes(), 6u + 0x10000);
}

TEST(DeltaReaderTest, RefusesWhatIsNoDelta) {
  auto refused = [](const std::string& d) {
    DeltaReader r;
    Status s = r.Update(d);
    if (s.ok()) s = r.Finish();
    return s.IsCorruption();
  };
  const std::string m = test::kDeltaMagic;
  EXPECT_TRUE(refused("rs\x01G" + std::string(1, '\0')));  // a signature
  EXPECT_TRUE(refused(m + "\x55" + '\0'));                 // reserved
  EXPECT_TRUE(refused(m + "\x41" + Be(0, 1) + '\0'));      // empty literal
  EXPECT_TRUE(refused(m + "\x45" + Be(0, 1) + Be(0, 1) + '\0'));  // empty copy
  EXPECT_TRUE(refused(m + "\x02"
                          "a"));         // cut short
  EXPECT_TRUE(refused(m + '\0' + "x"));  // after END
  EXPECT_FALSE(refused(m + '\0'));
}

// An old object and a new one: the delta librsync makes from the old one's
// signature, the same refined with the old blocks around its literals, both
// applied to the old bytes.
class RefineTest : public ::testing::Test {
 protected:
  struct Made {
    std::string raw;      // librsync's delta
    std::string refined;  // after RefineCommands + WriteDelta
    uint64_t raw_literal = 0, refined_literal = 0;
    RefineStats stats;
  };

  // damage: a block index whose bytes are handed over with one byte flipped.
  Made Make(const std::string& old_bytes, const std::string& new_bytes,
            int64_t damage = -1) {
    Made m;
    std::string sig_bytes;
    auto b = SignatureBuilder::Create(old_bytes.size(), AppendTo(&sig_bytes));
    EXPECT_OK(b.status());
    EXPECT_OK((*b)->Update(old_bytes));
    EXPECT_OK((*b)->Finish());
    SignatureLoader loader(SignatureLimits{});
    EXPECT_OK(loader.Update(sig_bytes));
    auto sig = loader.Finish();
    EXPECT_OK(sig.status());
    auto d = DeltaBuilder::Create(sig->get(), AppendTo(&m.raw));
    EXPECT_OK(d.status());
    EXPECT_OK((*d)->Update(new_bytes));
    EXPECT_OK((*d)->Finish());
    DeltaReader reader;
    EXPECT_OK(reader.Update(m.raw));
    EXPECT_OK(reader.Finish());
    m.raw_literal = reader.literal_bytes();
    const uint32_t bl = (*sig)->params().block_len;
    std::map<uint64_t, std::string> blocks;
    for (uint64_t i : BlocksAround(reader.commands(), bl, old_bytes.size())) {
      blocks[i] = old_bytes.substr(i * bl, bl);
      if (static_cast<int64_t>(i) == damage) blocks[i][0] ^= 1;
    }
    test::WriteFile(env_.get(), "/new", new_bytes);
    auto file = env_->NewRandomAccessFile("/new");
    EXPECT_OK(file.status());
    auto refined = RefineCommands(reader.commands(), **sig, old_bytes.size(),
                                  blocks, **file, &m.stats);
    EXPECT_OK(refined.status());
    EXPECT_OK(WriteDelta(*refined, **file, AppendTo(&m.refined)));
    DeltaReader again;
    EXPECT_OK(again.Update(m.refined));
    EXPECT_OK(again.Finish());
    m.refined_literal = again.literal_bytes();
    EXPECT_EQ(m.refined_literal, m.stats.literal_bytes_after);
    EXPECT_EQ(Patch(old_bytes, m.raw), new_bytes);
    EXPECT_EQ(Patch(old_bytes, m.refined), new_bytes);
    return m;
  }

  std::string Patch(const std::string& basis, std::string_view delta) {
    test::WriteFile(env_.get(), "/basis", basis);
    auto file = env_->NewRandomAccessFile("/basis");
    EXPECT_OK(file.status());
    std::string out;
    auto p = Patcher::Create(file->get(), 1 << 30, AppendTo(&out));
    EXPECT_OK(p.status());
    Status s = (*p)->Update(delta);
    if (!s.ok()) return "<" + s.ToString() + ">";
    auto n = (*p)->Finish();
    if (!n.ok()) return "<" + n.status().ToString() + ">";
    return out;
  }

  std::unique_ptr<Env> env_ = NewMemEnv();
};

// 64 KiB: 256 blocks of 256 bytes (rs_sig_args), so an edit sits inside one.
std::string Old() { return RandomBytes(64 << 10, 31); }
// Bytes that differ from old's at both ends (a replacement that happens to
// start or end with the old byte would rightly be shorter).
std::string Other(const std::string& old, size_t at, size_t n) {
  std::string s = RandomBytes(n, 32);
  s.front() = static_cast<char>(old[at] ^ 0x55);
  s.back() = static_cast<char>(old[at + n - 1] ^ 0x55);
  return s;
}

TEST_F(RefineTest, AnInsertInsideABlockCostsOnlyItsBytes) {
  const std::string old = Old();
  std::string now = old;
  now.insert(1000, RandomBytes(37, 33));
  Made m = Make(old, now);
  EXPECT_GE(m.raw_literal, 256u);  // librsync: at least the block around it
  EXPECT_EQ(m.refined_literal, 37u);
  EXPECT_LT(m.refined.size(), m.raw.size());
}

TEST_F(RefineTest, ADeleteInsideABlockCostsNoLiteral) {
  const std::string old = Old();
  std::string now = old;
  now.erase(1000, 50);
  Made m = Make(old, now);
  EXPECT_GT(m.raw_literal, 0u);
  EXPECT_EQ(m.refined_literal, 0u);
}

TEST_F(RefineTest, AReplaceInsideABlockCostsOnlyItsBytes) {
  const std::string old = Old();
  std::string now = old;
  now.replace(1000, 20, Other(old, 1000, 20));
  Made m = Make(old, now);
  EXPECT_EQ(m.raw_literal, 256u);
  EXPECT_EQ(m.refined_literal, 20u);
}

TEST_F(RefineTest, ChangesAtTheStartAndTheEndCostOnlyTheirBytes) {
  const std::string old = Old();
  std::string now = old;
  now.replace(0, 10, Other(old, 0, 10));
  Made start = Make(old, now);
  EXPECT_EQ(start.raw_literal, 256u);
  EXPECT_EQ(start.refined_literal, 10u);  // the copy after grows backward
  now = old;
  now.replace(old.size() - 10, 10, Other(old, old.size() - 10, 10));
  Made end = Make(old, now);
  EXPECT_EQ(end.raw_literal, 256u);
  EXPECT_EQ(end.refined_literal, 10u);  // the copy before grows forward
  now = old + "appended";
  Made appended = Make(old, now);
  EXPECT_EQ(appended.refined_literal, 8u);
}

TEST_F(RefineTest, AdjacentChangesEachCostOnlyTheirBytes) {
  const std::string old = Old();
  // Edits in blocks 19 and 21 (block 20 between them unchanged), and two
  // in block 35, 30 bytes apart (the 30 old bytes between stay literal: no
  // copy reaches them).
  std::string now = old;
  now.insert(9030, RandomBytes(5, 35));
  now.insert(9000, RandomBytes(6, 36));
  now.insert(5400, RandomBytes(11, 34));
  now.replace(5000, 7, Other(old, 5000, 7));
  Made m = Make(old, now);
  EXPECT_EQ(m.raw_literal, 3 * 256u + 11 + 11);
  EXPECT_EQ(m.refined_literal, 7u + 11u + (6u + 30u + 5u));
}

TEST_F(RefineTest, AnOldObjectShorterThanABlockIsLeftAlone) {
  const std::string old = RandomBytes(100, 37);
  std::string now = old;
  now.insert(50, "xyz");
  Made m = Make(old, now);  // no copy at all: nothing to grow
  EXPECT_EQ(m.refined_literal, m.raw_literal);
  EXPECT_EQ(m.refined_literal, now.size());
}

TEST_F(RefineTest, AShortLastBlockIsUsedAtItsLength) {
  const std::string old = RandomBytes(1000, 38);  // 3 blocks + 232 bytes
  std::string now = old;
  now.insert(800, "ab");
  Made m = Make(old, now);
  // The copy of blocks 0-2 grows over the short block up to the insert; the
  // old bytes after it have no copy after them to grow from.
  EXPECT_EQ(m.refined_literal, 2u + 200u);
  EXPECT_EQ(m.stats.blocks_used, 1u);
}

TEST_F(RefineTest, ABlockThatDoesNotMatchItsSignatureIsNotUsed) {
  const std::string old = Old();
  std::string now = old;
  now.insert(1000, RandomBytes(37, 33));
  // The insert sits in block 3: the blocks around it are 3 (after the copy
  // of 0-2) and 3 again (before the copy from 4); damaged, it is refused.
  Made m = Make(old, now, /*damage=*/3);
  EXPECT_EQ(m.stats.blocks_refused, 1u);
  EXPECT_EQ(m.refined_literal, m.raw_literal);
}

TEST_F(RefineTest, WritingLibrsyncsOwnCommandsGivesItsBytes) {
  const std::string old = Old();
  std::string now = old;
  now.insert(1000, RandomBytes(37, 33));
  now.erase(30000, 3000);
  now += RandomBytes(300, 39);
  Made m = Make(old, now);
  DeltaReader reader;
  ASSERT_OK(reader.Update(m.raw));
  ASSERT_OK(reader.Finish());
  test::WriteFile(env_.get(), "/new", now);
  auto file = env_->NewRandomAccessFile("/new");
  ASSERT_OK(file.status());
  std::string again;
  ASSERT_OK(WriteDelta(reader.commands(), **file, AppendTo(&again)));
  EXPECT_TRUE(again == m.raw);
}

}  // namespace
}  // namespace ferry::delta
