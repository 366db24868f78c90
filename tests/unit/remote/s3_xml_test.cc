// S3's XML answers: listing pages (URL-decoded keys, paging fields), error
// documents, multipart control; malformed input is Corruption.
#include "remote/s3_xml.h"

#include <gtest/gtest.h>

#include "ferry/env.h"

namespace ferry::remote {
namespace {

std::string Corpus(const char* name) {
  auto s = ReadFileToString(Env::Default(), std::string(FERRY_TEST_DATA_DIR) +
                                                "/fuzz/corpus/s3_xml/" + name);
  EXPECT_TRUE(s.ok()) << name;
  return s.ok() ? *s : "";
}

TEST(S3XmlTest, ListPageDecodesKeysAndReadsPaging) {
  auto page = ParseListObjectsV2(Corpus("list_page"));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 2u);
  // '+' is a space, %2B a plus (botocore's unquote_plus).
  EXPECT_EQ(page->objects[0].key, "p/a b+c%");
  EXPECT_EQ(page->objects[0].size, 1234u);
  EXPECT_EQ(page->objects[0].etag, "\"9b2cf535f27731c974343645a3985328\"");
  EXPECT_EQ(page->objects[0].mtime_ns, int64_t{1796054400} * 1000000000);
  EXPECT_EQ(page->objects[1].key, "p/\xC3\xBC");
  EXPECT_EQ(page->objects[1].size, 0u);
  EXPECT_EQ(page->prefixes, std::vector<std::string>{"p/dir/"});
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(S3XmlTest, KeysAreLiteralWithoutUrlEncoding) {
  auto page = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a+b%"
      "20&amp;</Key><Size>1</Size></Contents></ListBucketResult>");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->objects[0].key, "a+b%20&");
  EXPECT_FALSE(page->truncated);
}

TEST(S3XmlTest, MalformedListingsAreCorruption) {
  for (std::string bad :
       {std::string("<ListBucketResult><IsTruncated>true</IsTruncated>"
                    "</ListBucketResult>"),  // no token
        std::string("<ListBucketResult><Contents><Key>a</Key></Contents>"
                    "</ListBucketResult>"),  // no size
        std::string("<ListBucketResult><Contents><Key>a</Key><Size>-1</Size>"
                    "</Contents></ListBucketResult>"),
        std::string("<ListBucketResult><EncodingType>url</EncodingType>"
                    "<Contents><Key>%zz</Key><Size>1</Size></Contents>"
                    "</ListBucketResult>"),
        std::string("<Other/>"), std::string(""), std::string("<a>"),
        Corpus("doctype"), Corpus("truncated_doc"), Corpus("garbage"),
        "<ListBucketResult><Name>" + std::string(70000, 'x') +
            "</Name></ListBucketResult>"}) {
    auto page = ParseListObjectsV2(bad);
    ASSERT_FALSE(page.ok()) << bad.substr(0, 100);
    EXPECT_TRUE(page.status().IsCorruption()) << page.status().ToString();
  }
}

TEST(S3XmlTest, ErrorDocument) {
  auto e = ParseS3Error(Corpus("error_nosuchkey"));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->code, "NoSuchKey");
  EXPECT_EQ(e->key, "a b");
  EXPECT_EQ(e->request_id, "4442587FB7D0A2F9");
  EXPECT_FALSE(ParseS3Error("<html>bad gateway</html>").ok());
  EXPECT_FALSE(ParseS3Error("Bad Gateway").ok());
}

TEST(S3XmlTest, MultipartDocuments) {
  EXPECT_EQ(*ParseUploadId(Corpus("initiate")), "VXBsb2FkIElE");
  S3Error err;
  auto done = ParseCompleteMultipart(
      "<CompleteMultipartUploadResult><ETag>&quot;x-2&quot;</ETag>"
      "</CompleteMultipartUploadResult>",
      &err);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(*done, "\"x-2\"");
  EXPECT_TRUE(err.code.empty());
  // 200 with an error inside.
  auto failed = ParseCompleteMultipart(Corpus("complete_error"), &err);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(*failed, "");
  EXPECT_EQ(err.code, "InternalError");
  auto uploads = ParseListMultipartUploads(Corpus("uploads"));
  ASSERT_TRUE(uploads.ok()) << uploads.status().ToString();
  ASSERT_EQ(uploads->uploads.size(), 2u);
  EXPECT_EQ(uploads->uploads[1].upload_id, "u2");
  EXPECT_TRUE(uploads->truncated);
  EXPECT_EQ(uploads->next_key_marker, "k");
}

TEST(S3XmlTest, Iso8601) {
  EXPECT_EQ(ParseIso8601("1970-01-01T00:00:01Z"), 1000000000);
  EXPECT_EQ(ParseIso8601("1970-01-01T00:00:01.5Z"), 1500000000);
  EXPECT_EQ(ParseIso8601("1970-01-01T00:00:01"), -1);
  EXPECT_EQ(ParseIso8601("1970-13-01T00:00:01Z"), -1);
  EXPECT_EQ(ParseIso8601("garbage"), -1);
  // Beyond int64 nanoseconds (a server that says year 2999): no time.
  EXPECT_EQ(ParseIso8601("2999-01-01T00:00:00.000Z"), -1);
  EXPECT_GT(ParseIso8601("2262-01-01T00:00:00Z"), 0);
}

}  // namespace
}  // namespace ferry::remote
