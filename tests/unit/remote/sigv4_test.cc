#include "remote/sigv4.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace ferry::remote {
namespace {

// The examples of Amazon S3's "Signature Version 4 — header authentication"
// documentation (sync.md §11).
const AwsCredentials kDocCreds{"AKIAIOSFODNN7EXAMPLE",
                               "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
constexpr std::int64_t k20130524 = 1369353600;  // 20130524T000000Z
constexpr char kEmptySha[] =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string Header(const SigV4Result& r, std::string_view name) {
  std::string out;
  int found = 0;
  for (const auto& [n, v] : r.headers)
    if (n == name) out = v, ++found;
  EXPECT_LE(found, 1) << name;
  return out;
}

SigV4Request DocRequest(std::string method, std::string path) {
  SigV4Request req;
  req.method = std::move(method);
  req.host = "examplebucket.s3.amazonaws.com";
  req.path = std::move(path);
  req.payload_sha256 = kEmptySha;
  return req;
}

// Signs req as the documentation does and checks the URL and Authorization.
SigV4Result ExpectDocSignature(const SigV4Request& req, std::string_view url,
                               std::string_view signed_headers,
                               std::string_view signature) {
  SigV4Result r = SignV4(req, kDocCreds, "us-east-1", "s3", k20130524);
  EXPECT_EQ(r.url_path_and_query, url);
  EXPECT_EQ(Header(r, "Authorization"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/"
            "us-east-1/s3/aws4_request, SignedHeaders=" +
                std::string(signed_headers) +
                ", Signature=" + std::string(signature));
  return r;
}

TEST(SigV4DocVectors, GetObjectWithRange) {
  SigV4Request req = DocRequest("GET", "/test.txt");
  req.headers = {{"Range", "bytes=0-9"}};
  SigV4Result r = ExpectDocSignature(
      req, "/test.txt", "host;range;x-amz-content-sha256;x-amz-date",
      "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  EXPECT_EQ(Header(r, "x-amz-date"), "20130524T000000Z");
  EXPECT_EQ(Header(r, "x-amz-content-sha256"), kEmptySha);
  EXPECT_EQ(Header(r, "Range"), "bytes=0-9");
}

TEST(SigV4DocVectors, PutObjectWithDollarInKey) {
  SigV4Request req = DocRequest("PUT", "/test$file.text");
  req.headers = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                 {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
  req.payload_sha256 = Sha256Hex("Welcome to Amazon S3.");
  ExpectDocSignature(
      req, "/test%24file.text",
      "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
      "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SigV4DocVectors, GetBucketLifecycleValuelessKey) {
  SigV4Request req = DocRequest("GET", "/");
  req.query = {{"lifecycle", ""}};
  ExpectDocSignature(
      req, "/?lifecycle=", "host;x-amz-content-sha256;x-amz-date",
      "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

TEST(SigV4DocVectors, ListObjectsQuerySortedWhateverTheInputOrder) {
  SigV4Request req = DocRequest("GET", "/");
  req.query = {{"prefix", "J"}, {"max-keys", "2"}};
  ExpectDocSignature(
      req, "/?max-keys=2&prefix=J", "host;x-amz-content-sha256;x-amz-date",
      "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST(SigV4, Sha256HexOfKnownInputs) {
  EXPECT_EQ(Sha256Hex(""), kEmptySha);
  EXPECT_EQ(Sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(AwsUriEncode, KeepsOnlyUnreservedAndOptionallySlash) {
  EXPECT_EQ(AwsUriEncode("AZaz09-._~", false), "AZaz09-._~");
  EXPECT_EQ(AwsUriEncode("a b+c%d=e&f", false), "a%20b%2Bc%25d%3De%26f");
  EXPECT_EQ(AwsUriEncode("a/b//c", true), "a/b//c");
  EXPECT_EQ(AwsUriEncode("a/b", false), "a%2Fb");
  EXPECT_EQ(AwsUriEncode("*!'()$,;:@?#[]", false),
            "%2A%21%27%28%29%24%2C%3B%3A%40%3F%23%5B%5D");
}

TEST(AwsUriEncode, EncodesUtf8AndInvalidBytesAsBytes) {
  EXPECT_EQ(AwsUriEncode("\xc3\xa9t\xc3\xa9", false), "%C3%A9t%C3%A9");  // été
  EXPECT_EQ(AwsUriEncode("\xe6\x97\xa5", false), "%E6%97%A5");           // 日
  EXPECT_EQ(AwsUriEncode(std::string("\xff\xfe\x80\x00z", 5), false),
            "%FF%FE%80%00z");
}

SigV4Result SignLocal(const SigV4Request& req, const AwsCredentials& creds) {
  return SignV4(req, creds, "us-east-1", "s3", 1700000000);
}

SigV4Request LocalRequest(std::string path) {
  SigV4Request req;
  req.method = "GET";
  req.host = "127.0.0.1:9000";
  req.path = std::move(path);
  req.payload_sha256 = std::string(kUnsignedPayload);
  return req;
}

const AwsCredentials kS3rver{"S3RVER", "S3RVER", ""};

TEST(SigV4, UrlPathIsTheCanonicalEncodingOfOddKeys) {
  struct Case {
    std::string path, url;
  } cases[] = {
      {"/bucket/a b+c/%.png", "/bucket/a%20b%2Bc/%25.png"},
      {"/bucket/x~y=z", "/bucket/x~y%3Dz"},
      {"/bucket//double//slash/", "/bucket//double//slash/"},  // not normalised
      {"/bucket/./a/../b", "/bucket/./a/../b"},
      {"/bucket/\xc3\xa9t\xc3\xa9", "/bucket/%C3%A9t%C3%A9"},
      {std::string("/bucket/\xff\x80", 10), "/bucket/%FF%80"},
      {"", "/"},
      {"bucket/k", "/bucket/k"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(SignLocal(LocalRequest(c.path), kS3rver).url_path_and_query,
              c.url)
        << c.path;
}

TEST(SigV4, SignatureChangesWithEveryByteOfTheKey) {
  // "a b" and "a+b" and "a%20b" are three different keys: three signatures.
  std::string s1 =
      Header(SignLocal(LocalRequest("/b/a b"), kS3rver), "Authorization");
  std::string s2 =
      Header(SignLocal(LocalRequest("/b/a+b"), kS3rver), "Authorization");
  std::string s3 =
      Header(SignLocal(LocalRequest("/b/a%20b"), kS3rver), "Authorization");
  EXPECT_NE(s1, s2);
  EXPECT_NE(s1, s3);
  EXPECT_NE(s2, s3);
}

TEST(SigV4, ListObjectsV2QueryWithReservedCharactersInToken) {
  SigV4Request req = LocalRequest("/bucket");
  req.query = {
      {"prefix", "data/train +x"}, {"list-type", "2"},
      {"encoding-type", "url"},    {"continuation-token", "1/ab+cd==/x"},
      {"start-after", "data/a~b"}, {"max-keys", "1000"},
      {"delimiter", "/"}};
  SigV4Result r = SignLocal(req, kS3rver);
  EXPECT_EQ(r.url_path_and_query,
            "/bucket?continuation-token=1%2Fab%2Bcd%3D%3D%2Fx&delimiter=%2F&"
            "encoding-type=url&list-type=2&max-keys=1000&prefix=data%2Ftrain%"
            "20%2Bx&start-after=data%2Fa~b");
  // Same pairs in another order: same URL, same signature.
  std::reverse(req.query.begin(), req.query.end());
  SigV4Result r2 = SignLocal(req, kS3rver);
  EXPECT_EQ(r2.url_path_and_query, r.url_path_and_query);
  EXPECT_EQ(Header(r2, "Authorization"), Header(r, "Authorization"));
}

TEST(SigV4, QuerySortsByKeyThenValueNotByPair) {
  SigV4Request req = LocalRequest("/b");
  // As strings "a-b=1" < "a=2", but the key "a" sorts before "a-b".
  req.query = {{"a-b", "1"}, {"a", "2"}, {"a", "1"}, {"A", ""}};
  EXPECT_EQ(SignLocal(req, kS3rver).url_path_and_query, "/b?A=&a=1&a=2&a-b=1");
}

TEST(SigV4, HeadersLowerCasedTrimmedCollapsedAndSorted) {
  SigV4Request req = LocalRequest("/b/k");
  req.headers = {{"X-Amz-Meta-B", "  two   spaces\there  "},
                 {"Content-Type", "image/png"},
                 {"x-amz-meta-a", "1"},
                 {"X-AMZ-META-A", "2"}};
  SigV4Result r = SignLocal(req, kS3rver);
  EXPECT_EQ(Header(r, "X-Amz-Meta-B"), "two spaces here");
  std::string auth = Header(r, "Authorization");
  EXPECT_NE(auth.find("SignedHeaders=content-type;host;x-amz-content-sha256;"
                      "x-amz-date;x-amz-meta-a;x-amz-meta-b,"),
            std::string::npos)
      << auth;
  // Sending the value already collapsed signs the same.
  req.headers[0].second = "two spaces here";
  EXPECT_EQ(Header(SignLocal(req, kS3rver), "Authorization"), auth);
  // The order of repeated values matters (the server joins them in order).
  std::swap(req.headers[2], req.headers[3]);
  EXPECT_NE(Header(SignLocal(req, kS3rver), "Authorization"), auth);
}

TEST(SigV4, ContentSha256AlwaysSentAndSigned) {
  SigV4Request req = LocalRequest("/b/k");
  SigV4Result r = SignLocal(req, kS3rver);
  EXPECT_EQ(Header(r, "x-amz-content-sha256"), "UNSIGNED-PAYLOAD");
  req.payload_sha256 = kEmptySha;
  SigV4Result r2 = SignLocal(req, kS3rver);
  EXPECT_EQ(Header(r2, "x-amz-content-sha256"), kEmptySha);
  EXPECT_NE(Header(r, "Authorization"), Header(r2, "Authorization"));
}

TEST(SigV4, SignerOwnedHeadersFromTheCallerAreReplaced) {
  SigV4Request req = LocalRequest("/b/k");
  req.headers = {{"Authorization", "Bearer x"},
                 {"X-Amz-Date", "19990101T000000Z"},
                 {"Host", "evil"},
                 {"x-amz-content-sha256", "0000"}};
  SigV4Result r = SignLocal(req, kS3rver);
  EXPECT_EQ(r.headers.size(), 3u);  // sha256, date, Authorization
  EXPECT_EQ(Header(r, "x-amz-date"), "20231114T221320Z");
  EXPECT_EQ(Header(r, "x-amz-content-sha256"), "UNSIGNED-PAYLOAD");
  EXPECT_EQ(Header(SignLocal(LocalRequest("/b/k"), kS3rver), "Authorization"),
            Header(r, "Authorization"));
}

TEST(SigV4, SessionTokenSentAndSigned) {
  AwsCredentials creds{"ASIAEXAMPLE", "secret", "tok/en+=="};
  SigV4Result r = SignLocal(LocalRequest("/b/k"), creds);
  EXPECT_EQ(Header(r, "x-amz-security-token"), "tok/en+==");
  EXPECT_NE(Header(r, "Authorization")
                .find("SignedHeaders=host;x-amz-content-sha256;x-amz-date;"
                      "x-amz-security-token,"),
            std::string::npos);
  creds.session_token.clear();
  SigV4Result r2 = SignLocal(LocalRequest("/b/k"), creds);
  EXPECT_EQ(Header(r2, "x-amz-security-token"), "");
  EXPECT_EQ(r2.headers.size(), 3u);
}

TEST(SigV4, KeyCacheGivesTheSameSignaturesAcrossThreadsAndDays) {
  // Many threads, two secrets, several days and regions: every signature must
  // equal the one computed alone first (a cache mix-up would show here).
  std::vector<std::string> expect;
  auto sign = [](int i) {
    AwsCredentials c{"AK", i % 2 ? "secret-one" : "secret-two", ""};
    return Header(
        SignV4(LocalRequest("/b/k"), c, i % 3 ? "us-east-1" : "eu-west-1", "s3",
               1700000000 + 86400 * (i % 5)),
        "Authorization");
  };
  for (int i = 0; i < 30; ++i) expect.push_back(sign(i));
  std::vector<std::thread> threads;
  std::vector<int> bad(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int n = 0; n < 200; ++n)
        if (sign((n + t) % 30) != expect[(n + t) % 30]) ++bad[t];
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(bad[t], 0);
  EXPECT_NE(expect[0], expect[2]);  // secret two, two days apart
}

}  // namespace
}  // namespace ferry::remote
