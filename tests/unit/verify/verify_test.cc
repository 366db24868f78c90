#include "ferry/verify.h"

#include <gtest/gtest.h>

#include "formats/example/image_example.h"
#include "formats/tfrecord/tfrecord.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

// Writes the examples as d/s.tfrecord with its DALI index d/s.tfrecord.idx;
// returns the shard's bytes and sets *idx to the index text.
std::string WriteShard(Env* env, const std::vector<std::string>& examples,
                       std::string* idx) {
  std::string shard;
  idx->clear();
  for (const std::string& ex : examples) {
    *idx += tfrecord::DaliIndexLine(shard.size(), ex.size());
    tfrecord::AppendRecord(ex, &shard);
  }
  test::WriteFile(env, "d/s.tfrecord", shard);
  test::WriteFile(env, "d/s.tfrecord.idx", *idx);
  return shard;
}

// Two records whose feature sets differ: the second is reported as schema
// drift, at its own index and offset.
TEST(VerifyTest, SchemaDriftIsLocated) {
  auto env = NewMemEnv();
  example::ImageRecord a;
  std::string jpeg = "not decoded without --deep";
  a.encoded = jpeg;
  a.label = 1;
  a.label_text = "x";
  example::ImageRecord b = a;
  b.label = -1;  // no label features
  std::string idx;
  WriteShard(
      env.get(),
      {example::SerializeImageExample(a), example::SerializeImageExample(b)},
      &idx);
  VerifyOptions o;
  o.env = env.get();
  auto rep = Verify("d/s.tfrecord", o);
  ASSERT_OK(rep.status());
  ASSERT_EQ(rep->problems.size(), 1u);
  EXPECT_EQ(rep->problems[0].what, "schema");
  EXPECT_EQ(rep->problems[0].record, 1);
  EXPECT_EQ(rep->problems[0].offset,
            std::stoll(idx.substr(idx.find('\n') + 1)));
  o.deep = true;
  rep = Verify("d/s.tfrecord", o);
  ASSERT_OK(rep.status());
  EXPECT_GE(rep->problems.size(), 3u);  // plus two undecodable images
}

// A flipped payload byte: a data CRC problem at that record's payload
// offset; the records around it are still read.
TEST(VerifyTest, DataCrcMismatchIsFoundAndPlaced) {
  auto env = NewMemEnv();
  example::ImageRecord rec;
  rec.encoded = "not decoded without --deep";
  rec.label = 1;
  rec.label_text = "x";
  const std::string ex = example::SerializeImageExample(rec);
  std::string idx;
  std::string shard = WriteShard(env.get(), {ex, ex, ex}, &idx);
  const size_t second = tfrecord::kOverhead + ex.size();
  shard[second + tfrecord::kHeaderSize + 5] ^= 0x01;
  test::WriteFile(env.get(), "d/s.tfrecord", shard);
  VerifyOptions o;
  o.env = env.get();
  auto rep = Verify("d/s.tfrecord", o);
  ASSERT_OK(rep.status());
  ASSERT_EQ(rep->problems.size(), 1u);
  EXPECT_EQ(rep->problems[0].what, "data_crc");
  EXPECT_EQ(rep->problems[0].record, 1);
  EXPECT_EQ(rep->problems[0].offset,
            static_cast<int64_t>(second + tfrecord::kHeaderSize));
}

TEST(VerifyTest, NotAnExampleAndAMissingIndex) {
  auto env = NewMemEnv();
  std::string shard;
  tfrecord::AppendRecord("\xff\xff\xff\xff", &shard);
  test::WriteFile(env.get(), "s.tfrecord", shard);
  VerifyOptions o;
  o.env = env.get();
  auto rep = Verify("s.tfrecord", o);
  ASSERT_OK(rep.status());
  ASSERT_EQ(rep->problems.size(), 2u);
  EXPECT_EQ(rep->problems[0].what, "parse");
  EXPECT_EQ(rep->problems[0].offset, 12);
  EXPECT_EQ(rep->problems[1].what, "index");
  EXPECT_TRUE(Verify("nothing", o).status().IsNotFound());
}

}  // namespace
}  // namespace ferry
