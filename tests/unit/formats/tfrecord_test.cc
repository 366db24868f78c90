#include "formats/tfrecord/tfrecord.h"

#include <gtest/gtest.h>

#include "formats/example/image_example.h"
#include "testutil/test_util.h"

namespace ferry::tfrecord {
namespace {

std::string Hex(std::string_view s) {
  static const char k[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(k[c >> 4]);
    out.push_back(k[c & 15]);
  }
  return out;
}

// shared/reference/shards.md: TensorFlow's framing of b"" and b"hello".
TEST(TfRecordTest, FramingMatchesTensorFlowVectors) {
  std::string out;
  AppendRecord("", &out);
  EXPECT_EQ(Hex(out),
            "0000000000000000"
            "29039807"
            "d8ea82a2");
  out.clear();
  AppendRecord("hello", &out);
  EXPECT_EQ(Hex(out),
            "0500000000000000"
            "eab2043e"
            "68656c6c6f"
            "bb1f1c19");
  EXPECT_EQ(DaliIndexLine(21, 5), "21 21\n");
}

std::string ThreeRecords() {
  std::string f;
  AppendRecord("first", &f);
  AppendRecord(std::string(1000, 'x'), &f);
  AppendRecord("third", &f);
  return f;
}

TEST(TfRecordTest, ReaderReturnsRecordsWithOffsets) {
  std::string f = ThreeRecords();
  RecordReader r(f);
  std::string_view data;
  uint64_t off;
  bool done;
  ASSERT_OK(r.Next(&data, &off, &done));
  EXPECT_EQ(data, "first");
  EXPECT_EQ(off, 0u);
  ASSERT_OK(r.Next(&data, &off, &done));
  EXPECT_EQ(data.size(), 1000u);
  EXPECT_EQ(off, 21u);
  ASSERT_OK(r.Next(&data, &off, &done));
  ASSERT_OK(r.Next(&data, &off, &done));
  EXPECT_TRUE(done);
  RecordReader empty("");
  ASSERT_OK(empty.Next(&data, &off, &done));
  EXPECT_TRUE(done);
}

// A flipped byte in each region of record 1 (which starts at 21) is found
// and placed: the header errors at the record start, the data CRC at the
// payload start (as TensorFlow reports it).
TEST(TfRecordTest, EveryFlippedRegionIsLocated) {
  struct Case {
    size_t byte;
    const char* want;
  };
  const Case cases[] = {
      {21 + 0, "record 1 at offset 21: length CRC mismatch"},
      {21 + 9, "record 1 at offset 21: length CRC mismatch"},
      {21 + 12 + 500, "record 1 at offset 33: data CRC mismatch"},
      {21 + 12 + 1000 + 2, "record 1 at offset 33: data CRC mismatch"}};
  for (const Case& c : cases) {
    std::string f = ThreeRecords();
    f[c.byte] ^= 0x10;
    RecordReader r(f);
    std::string_view data;
    uint64_t off;
    bool done;
    ASSERT_OK(r.Next(&data, &off, &done));
    Status s = r.Next(&data, &off, &done);
    EXPECT_NE(s.ToString().find(c.want), std::string::npos)
        << c.byte << ": " << s.ToString();
  }
  std::string cut = ThreeRecords().substr(0, 21 + 12 + 10);
  RecordReader r(cut);
  std::string_view data;
  uint64_t off;
  bool done;
  ASSERT_OK(r.Next(&data, &off, &done));
  EXPECT_NE(r.Next(&data, &off, &done).ToString().find("truncated record"),
            std::string::npos);
}

TEST(ImageExampleTest, SerializesDeterministicallyAndParsesBack) {
  example::ImageRecord rec;
  std::string jpeg(300, 'j');
  rec.encoded = jpeg;
  rec.height = 20;
  rec.width = 30;
  rec.channels = 3;
  rec.label = 2;
  rec.label_text = "space";
  rec.filename = "space/a.png";
  rec.key_xxh3 = std::string(32, 'a');
  std::string a = example::SerializeImageExample(rec);
  EXPECT_EQ(a, example::SerializeImageExample(rec));
  auto p = example::ParseImageExample(a);
  ASSERT_OK(p.status());
  EXPECT_EQ(p->encoded, jpeg);
  EXPECT_EQ(p->width, 30);
  EXPECT_EQ(p->label, 2);
  EXPECT_EQ(p->filename, "space/a.png");
  auto fields = example::SummarizeExample(a);
  ASSERT_OK(fields.status());
  EXPECT_EQ(fields->size(), 9u);
  EXPECT_EQ(fields->at("image/height").kind, "int64");
  EXPECT_FALSE(example::ParseImageExample("\xff\xff\xff garbage").ok());
}

}  // namespace
}  // namespace ferry::tfrecord
