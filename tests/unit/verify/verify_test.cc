#include "ferry/verify.h"

#include <gtest/gtest.h>

#include "formats/example/image_example.h"
#include "formats/tfrecord/tfrecord.h"
#include "testutil/test_util.h"

namespace ferry {
namespace {

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
  std::string shard, idx;
  for (const auto* r : {&a, &b}) {
    std::string ex = example::SerializeImageExample(*r);
    idx += tfrecord::DaliIndexLine(shard.size(), ex.size());
    tfrecord::AppendRecord(ex, &shard);
  }
  test::WriteFile(env.get(), "d/s.tfrecord", shard);
  test::WriteFile(env.get(), "d/s.tfrecord.idx", idx);
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
