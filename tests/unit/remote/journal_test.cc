#include "remote/journal.h"

#include <gtest/gtest.h>

#include <string>

namespace ferry::remote {
namespace {

JournalHeader Header() {
  JournalHeader h;
  h.size = 10 * 1000 + 7;
  h.part_size = 1000;
  h.have_expected = true;
  h.expected = {0x0123456789abcdefull, 0xfedcba9876543210ull};
  h.etag = "\"5f3a-1234\"";
  h.url = "http://127.0.0.1:8080/data/big.bin";
  return h;
}

std::string WithParts(const JournalHeader& h,
                      std::initializer_list<uint64_t> parts) {
  std::string head = EncodeJournalHeader(h);
  std::string out = head;
  for (uint64_t p : parts) out += EncodeJournalRecord(head, p, h.PartLength(p));
  return out;
}

TEST(JournalTest, RoundTripsHeaderAndParts) {
  JournalHeader h = Header();
  auto st = ParseJournal(WithParts(h, {0, 3, 10, 3}));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->header, h);
  ASSERT_EQ(st->done.size(), 11u);
  EXPECT_TRUE(st->done[0]);
  EXPECT_TRUE(st->done[3]);
  EXPECT_TRUE(st->done[10]);
  EXPECT_FALSE(st->done[1]);
  EXPECT_EQ(st->done_bytes, 1000u + 1000u + 7u);  // a repeated part counts once
}

TEST(JournalTest, EmptyJournalHasNoParts) {
  auto st = ParseJournal(EncodeJournalHeader(Header()));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->done_bytes, 0u);
}

TEST(JournalTest, EveryTruncationIsRefused) {
  std::string j = WithParts(Header(), {1, 2});
  for (size_t n = 0; n < j.size(); ++n) {
    // A cut exactly at a record boundary is a shorter valid journal.
    size_t head = EncodeJournalHeader(Header()).size();
    if (n >= head && (n - head) % kJournalRecordSize == 0) continue;
    EXPECT_TRUE(ParseJournal(j.substr(0, n)).status().IsCorruption()) << n;
  }
}

TEST(JournalTest, EveryFlippedBitIsRefused) {
  std::string j = WithParts(Header(), {1, 2});
  for (size_t i = 0; i < j.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = j;
      bad[i] = char(bad[i] ^ (1 << bit));
      EXPECT_FALSE(ParseJournal(bad).ok()) << i << ":" << bit;
    }
  }
}

TEST(JournalTest, RecordWithWrongPartLengthOrIndexIsRefused) {
  JournalHeader h = Header();
  std::string head = EncodeJournalHeader(h);
  EXPECT_FALSE(ParseJournal(head + EncodeJournalRecord(head, 1, 999)).ok());
  EXPECT_FALSE(ParseJournal(head + EncodeJournalRecord(head, 11, 7)).ok());
  EXPECT_TRUE(ParseJournal(head + EncodeJournalRecord(head, 10, 7)).ok());
}

TEST(JournalTest, RecordOfAnotherJournalIsRefused) {
  JournalHeader a = Header(), b = Header();
  b.etag = "\"other\"";
  std::string ha = EncodeJournalHeader(a), hb = EncodeJournalHeader(b);
  EXPECT_FALSE(ParseJournal(ha + EncodeJournalRecord(hb, 1, 1000)).ok());
}

}  // namespace
}  // namespace ferry::remote
