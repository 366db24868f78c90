// The S3 backend's multipart bookkeeping against a scripted stub server
// (s3rver has no ListMultipartUploads): a new multipart upload of a key first
// aborts the incomplete uploads a killed run left for exactly that key (and
// goes on when it may not), a failed upload is aborted, and gc's sweep
// aborts a folder's old incomplete uploads, page by page; gc's deletes are
// conditional (If-Match: *) so that a key gone already is told.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "remote/s3_backend.h"
#include "remote/s3_xml.h"
#include "testutil/byte_io.h"
#include "testutil/stub_server.h"

namespace ferry::remote {
namespace {

using test::StubServer;

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::unique_ptr<HttpBackend> Open(const StubServer& server, int retries = 0,
                                  const std::string& addressing = "path") {
  AwsConfig config;
  config.sign = false;
  config.region = "us-east-1";
  config.endpoint_url = server.url();
  if (addressing == "virtual") {  // *.localhost is the loopback too
    config.endpoint_url.replace(config.endpoint_url.find("127.0.0.1"), 9,
                                "localhost");
  }
  config.addressing = addressing;
  RemoteOptions options;
  options.part_size = 1024;
  options.max_retries = retries;
  auto b = NewS3Backend("bkt", "pre/", config, options);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return b.ok() ? std::move(*b) : nullptr;
}

// AbortUploadsBelow(".ferry/") of all keys: its counts, or its error.
Result<UploadSweep> Sweep(Backend* b, int64_t cutoff_ns, bool dry_run) {
  UploadSweep sweep;
  FERRY_RETURN_IF_ERROR(
      dynamic_cast<IncompleteUploadSweeper*>(b)->AbortUploadsBelow(
          ".ferry/", cutoff_ns, dry_run, nullptr, &sweep));
  return sweep;
}

// Three multipart parts of S3's least size, 5 MiB (the last of 1 MiB).
constexpr uint64_t kObjectSize = uint64_t(11) << 20;

StubServer::Reply S3Script(const std::string& req, int fail_part) {
  StubServer::Reply r;
  if (req == "GET /bkt?encoding-type=url&prefix=pre%2Fk&uploads=") {
    // What killed runs left: two uploads of pre/k, one of pre/k2.
    r.body =
        "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
        "<Upload><Key>pre/k</Key><UploadId>old1</UploadId></Upload>"
        "<Upload><Key>pre/k</Key><UploadId>old2</UploadId></Upload>"
        "<Upload><Key>pre/k2</Key><UploadId>other</UploadId></Upload>"
        "</ListMultipartUploadsResult>";
  } else if (req.rfind("DELETE ", 0) == 0) {
    r.status = 204;
  } else if (req == "POST /bkt/pre/k?uploads=") {
    r.body =
        "<InitiateMultipartUploadResult><UploadId>new</UploadId>"
        "</InitiateMultipartUploadResult>";
  } else if (req.find("partNumber=") != std::string::npos) {
    if (req.find("partNumber=" + std::to_string(fail_part) + "&") !=
        std::string::npos) {
      r.status = 403;
      r.body = "<Error><Code>AccessDenied</Code></Error>";
    } else {
      r.headers = "ETag: \"p\"\r\n";
    }
  } else if (req == "POST /bkt/pre/k?uploadId=new") {
    r.body =
        "<CompleteMultipartUploadResult><ETag>\"e-3\"</ETag>"
        "</CompleteMultipartUploadResult>";
  } else if (req == "HEAD /bkt/pre/k") {
    r.headers = "ETag: \"e-3\"\r\n";
    r.body = std::string(kObjectSize, 'x');  // its Content-Length
  } else {
    r.status = 400;
    r.body = "<Error><Code>Unexpected</Code></Error>";
  }
  return r;
}

TEST(S3MultipartTest, StaleUploadsOfTheKeyAreAbortedFirst) {
  StubServer server([](const std::string& req) { return S3Script(req, 0); });
  auto b = Open(server);
  ASSERT_TRUE(b);
  // Three parts: --part-size 1024 is raised to S3's least, 5 MiB.
  test::StringSource src(std::string(kObjectSize, 'x'));
  auto w = b->Write("k", &src, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->size, kObjectSize);
  std::vector<std::string> reqs = server.requests();
  EXPECT_TRUE(Has(reqs, "DELETE /bkt/pre/k?uploadId=old1"));
  EXPECT_TRUE(Has(reqs, "DELETE /bkt/pre/k?uploadId=old2"));
  EXPECT_FALSE(Has(reqs, "DELETE /bkt/pre/k2?uploadId=other"));  // not ours
  EXPECT_FALSE(Has(reqs, "DELETE /bkt/pre/k?uploadId=new"));
  // The cleanup comes before the new upload starts.
  auto pos = [&](const std::string& s) {
    return std::find(reqs.begin(), reqs.end(), s) - reqs.begin();
  };
  EXPECT_LT(pos("DELETE /bkt/pre/k?uploadId=old2"),
            pos("POST /bkt/pre/k?uploads="));
  EXPECT_TRUE(Has(reqs, "PUT /bkt/pre/k?partNumber=3&uploadId=new"));
  EXPECT_FALSE(Has(reqs, "PUT /bkt/pre/k?partNumber=4&uploadId=new"));
}

TEST(S3MultipartTest, AFailedUploadIsAborted) {
  StubServer server([](const std::string& req) { return S3Script(req, 2); });
  auto b = Open(server);
  ASSERT_TRUE(b);
  test::StringSource src(std::string(kObjectSize, 'x'));
  auto w = b->Write("k", &src, {});
  ASSERT_FALSE(w.ok());
  EXPECT_TRUE(w.status().IsIOError()) << w.status().ToString();
  std::vector<std::string> reqs = server.requests();
  EXPECT_TRUE(Has(reqs, "DELETE /bkt/pre/k?uploadId=new"));
  EXPECT_FALSE(Has(reqs, "PUT /bkt/pre/k?partNumber=3&uploadId=new"));
  EXPECT_FALSE(Has(reqs, "POST /bkt/pre/k?uploadId=new"));
}

TEST(S3MultipartTest, AnUploadGoesOnWhenItsCleanupIsRefused) {
  // Credentials with s3:PutObject only: listing the incomplete uploads is
  // AccessDenied, which must not stop the upload (aws s3 cp does not list).
  StubServer server([](const std::string& req) {
    if (req.find("uploads=") != std::string::npos &&
        req.rfind("GET ", 0) == 0) {
      StubServer::Reply r;
      r.status = 403;
      r.body = "<Error><Code>AccessDenied</Code></Error>";
      return r;
    }
    return S3Script(req, 0);
  });
  auto b = Open(server);
  ASSERT_TRUE(b);
  test::StringSource src(std::string(kObjectSize, 'x'));
  auto w = b->Write("k", &src, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(Has(server.requests(), "POST /bkt/pre/k?uploadId=new"));
}

// gc's sweep of pre/.ferry/: two pages (the second asked for with the
// first's markers, URL-decoded), uploads before and after the cutoff, one
// without a time, one whose key is outside the folder.
StubServer::Reply SweepScript(const std::string& req) {
  StubServer::Reply r;
  if (req == "GET /bkt?encoding-type=url&prefix=pre%2F.ferry%2F&uploads=") {
    r.body =
        "<ListMultipartUploadsResult><IsTruncated>true</IsTruncated>"
        "<EncodingType>url</EncodingType>"
        "<NextKeyMarker>pre/.ferry/objects/ab/a%20b</NextKeyMarker>"
        "<NextUploadIdMarker>u2</NextUploadIdMarker>"
        "<Upload><Key>pre/.ferry/objects/ab/old</Key><UploadId>u1</UploadId>"
        "<Initiated>2020-01-01T00:00:00.000Z</Initiated></Upload>"
        "<Upload><Key>pre/.ferry/objects/ab/a%20b</Key><UploadId>u2</UploadId>"
        "<Initiated>2020-01-02T00:00:00.000Z</Initiated></Upload>"
        "</ListMultipartUploadsResult>";
  } else if (req ==
             "GET /bkt?encoding-type=url&key-marker=pre%2F.ferry%2Fobjects%"
             "2Fab%2Fa%20b&prefix=pre%2F.ferry%2F&upload-id-marker=u2&"
             "uploads=") {
    r.body =
        "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
        "<EncodingType>url</EncodingType>"
        "<Upload><Key>pre/.ferry/objects/cd/young</Key><UploadId>u3</UploadId>"
        "<Initiated>2030-01-01T00:00:00.000Z</Initiated></Upload>"
        "<Upload><Key>pre/.ferry/objects/cd/when</Key><UploadId>u4</UploadId>"
        "</Upload>"
        "<Upload><Key>pre/elsewhere</Key><UploadId>u5</UploadId>"
        "<Initiated>2020-01-01T00:00:00.000Z</Initiated></Upload>"
        "</ListMultipartUploadsResult>";
  } else if (req.rfind("DELETE ", 0) == 0) {
    r.status = 204;
  } else {
    r.status = 400;
    r.body = "<Error><Code>Unexpected</Code></Error>";
  }
  return r;
}

int64_t Utc(const char* iso) { return ParseIso8601(iso); }

TEST(S3MultipartTest, TheSweepAbortsAFoldersOldUploadsOnly) {
  StubServer server(SweepScript);
  auto b = Open(server);
  ASSERT_TRUE(b);
  ASSERT_NE(dynamic_cast<IncompleteUploadSweeper*>(b.get()), nullptr);
  auto r = Sweep(b.get(), Utc("2025-01-01T00:00:00.000Z"), false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->aborted, 2u);
  EXPECT_EQ(r->young_kept, 2u);
  std::vector<std::string> deletes;
  for (const auto& q : server.requests())
    if (q.rfind("DELETE ", 0) == 0) deletes.push_back(q);
  EXPECT_EQ(deletes, (std::vector<std::string>{
                         "DELETE /bkt/pre/.ferry/objects/ab/old?uploadId=u1",
                         "DELETE /bkt/pre/.ferry/objects/ab/a%20b?uploadId=u2",
                     }));
}

// The second page never comes (503, retries spent): the error, and the
// counts of what the first page's aborts did.
TEST(S3MultipartTest, ASweepStoppedOnALaterPageCountsWhatItAborted) {
  StubServer server([](const std::string& req) {
    if (req.find("key-marker=") != std::string::npos) {
      StubServer::Reply r;
      r.status = 503;
      r.body = "<Error><Code>SlowDown</Code></Error>";
      return r;
    }
    return SweepScript(req);
  });
  auto b = Open(server);
  UploadSweep sweep;
  Status s = dynamic_cast<IncompleteUploadSweeper*>(b.get())->AbortUploadsBelow(
      ".ferry/", Utc("2025-01-01T00:00:00.000Z"), false, nullptr, &sweep);
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  EXPECT_EQ(sweep.aborted, 2u);
  EXPECT_TRUE(Has(server.requests(),
                  "DELETE /bkt/pre/.ferry/objects/ab/a%20b?uploadId=u2"));
}

TEST(S3MultipartTest, ADrySweepCountsAndAbortsNothing) {
  StubServer server(SweepScript);
  auto b = Open(server);
  ASSERT_TRUE(b);
  auto r = Sweep(b.get(), Utc("2025-01-01T00:00:00.000Z"), true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->aborted, 2u);
  for (const auto& q : server.requests())
    EXPECT_NE(q.rfind("DELETE", 0), 0u) << q;
}

TEST(S3MultipartTest, TheSweepSaysWhenTheServerCannotList) {
  for (int status : {501, 403}) {
    StubServer server([status](const std::string&) {
      StubServer::Reply r;
      r.status = status;
      r.body = "<Error><Code>X</Code></Error>";
      return r;
    });
    auto b = Open(server);
    ASSERT_TRUE(b);
    auto r = Sweep(b.get(), Utc("2025-01-01T00:00:00.000Z"), false);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().IsNotSupported(), status == 501)
        << r.status().ToString();
  }
}

TEST(S3MultipartTest, AListingThatRepeatsItsMarkersEnds) {
  StubServer server([](const std::string&) {
    StubServer::Reply r;
    r.body =
        "<ListMultipartUploadsResult><IsTruncated>true</IsTruncated>"
        "<NextKeyMarker>m</NextKeyMarker><NextUploadIdMarker>i"
        "</NextUploadIdMarker></ListMultipartUploadsResult>";
    return r;
  });
  auto b = Open(server);
  ASSERT_TRUE(b);
  auto r = Sweep(b.get(), 0, false);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST(S3MultipartTest, MarkersThatGoBackEndTheListingAndThePutGoesOn) {
  // Pages whose markers cycle A -> B -> A: the sweep stops with an error;
  // a put's cleanup gives up and the upload goes on.
  auto cycling = [](const std::string& req) {
    StubServer::Reply r;
    if (req.rfind("GET /bkt?", 0) == 0 && req.find("uploads=") != req.npos) {
      const bool at_a = req.find("key-marker=a&") != std::string::npos;
      r.body = std::string(
                   "<ListMultipartUploadsResult><IsTruncated>true"
                   "</IsTruncated><NextKeyMarker>") +
               (at_a ? "b" : "a") +
               "</NextKeyMarker><NextUploadIdMarker>i"
               "</NextUploadIdMarker></ListMultipartUploadsResult>";
      return r;
    }
    return S3Script(req, 0);
  };
  {
    StubServer server(cycling);
    auto b = Open(server);
    auto r = Sweep(b.get(), 0, false);
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
    EXPECT_LE(server.requests().size(), 4u);
  }
  StubServer server(cycling);
  auto b = Open(server);
  test::StringSource src(std::string(kObjectSize, 'x'));
  auto w = b->Write("k", &src, {});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(Has(server.requests(), "POST /bkt/pre/k?uploadId=new"));
}

TEST(S3MultipartTest, AListingThatMakesNoSenseDoesNotStopAPut) {
  for (const char* body : {"<html>no</html>", "<ListMultipartUploadsResult>",
                           "<Error><Code>InvalidArgument</Code></Error>"}) {
    StubServer server([body](const std::string& req) {
      if (req.rfind("GET /bkt?", 0) == 0) {
        StubServer::Reply r;
        r.status =
            std::string(body).find("Error") != std::string::npos ? 400 : 200;
        r.body = body;
        return r;
      }
      return S3Script(req, 0);
    });
    auto b = Open(server);
    test::StringSource src(std::string(kObjectSize, 'x'));
    auto w = b->Write("k", &src, {});
    ASSERT_TRUE(w.ok()) << body << ": " << w.status().ToString();
  }
}

TEST(S3MultipartTest, TheSweepGoesOnPastAFailedAbort) {
  StubServer server([](const std::string& req) {
    if (req == "DELETE /bkt/pre/.ferry/objects/ab/old?uploadId=u1") {
      StubServer::Reply r;
      r.status = 403;
      r.body = "<Error><Code>AccessDenied</Code></Error>";
      return r;
    }
    return SweepScript(req);
  });
  auto b = Open(server);
  auto r = Sweep(b.get(), Utc("2025-01-01T00:00:00.000Z"), false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->aborted, 1u);
  EXPECT_EQ(r->failed, 1u);
  EXPECT_NE(r->first_failure.ToString().find("ab/old"), std::string::npos)
      << r->first_failure.ToString();
  EXPECT_TRUE(Has(server.requests(),
                  "DELETE /bkt/pre/.ferry/objects/ab/a%20b?uploadId=u2"));
}

TEST(S3MultipartTest, KeysAreDecodedOnlyWhenTheAnswerSaysSo) {
  // A server that ignores encoding-type=url sends keys as they are.
  StubServer server([](const std::string& req) {
    StubServer::Reply r;
    if (req.rfind("GET /bkt?", 0) == 0) {
      r.body =
          "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
          "<Upload><Key>pre/.ferry/x+y%41</Key><UploadId>u1</UploadId>"
          "<Initiated>2020-01-01T00:00:00.000Z</Initiated></Upload>"
          "</ListMultipartUploadsResult>";
    } else {
      r.status = 204;
    }
    return r;
  });
  auto b = Open(server);
  auto r = Sweep(b.get(), Utc("2025-01-01T00:00:00.000Z"), false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->aborted, 1u);
  EXPECT_TRUE(
      Has(server.requests(), "DELETE /bkt/pre/.ferry/x%2By%2541?uploadId=u1"));
}

TEST(S3MultipartTest, APublishersCleanupLeavesYoungUploadsOfTheKey) {
  // Another publisher may be uploading the same object now.
  StubServer server([](const std::string& req) {
    StubServer::Reply r;
    if (req == "GET /bkt?encoding-type=url&prefix=pre%2Fk&uploads=") {
      r.body =
          "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
          "<Upload><Key>pre/k</Key><UploadId>old1</UploadId>"
          "<Initiated>2020-01-01T00:00:00.000Z</Initiated></Upload>"
          "<Upload><Key>pre/k</Key><UploadId>live</UploadId>"
          "<Initiated>2999-01-01T00:00:00.000Z</Initiated></Upload>"
          "<Upload><Key>pre/k</Key><UploadId>when</UploadId></Upload>"
          "</ListMultipartUploadsResult>";
      return r;
    }
    return S3Script(req, 0);
  });
  auto b = Open(server);
  auto id = b->StartMultipart("k", 3600);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto reqs = server.requests();
  EXPECT_TRUE(Has(reqs, "DELETE /bkt/pre/k?uploadId=old1"));
  EXPECT_FALSE(Has(reqs, "DELETE /bkt/pre/k?uploadId=live"));
  EXPECT_FALSE(Has(reqs, "DELETE /bkt/pre/k?uploadId=when"));
}

// gc's deletes: If-Match: *, so that a key gone already (404 NoSuchKey or
// 412) is told apart from one this DELETE removed; a server that refuses
// the condition (501) gets plain DELETEs from then on; a missing bucket is
// an error.
TEST(S3RequestTest, DeleteIfPresentTellsAKeyGoneAlready) {
  int deletes = 0;
  StubServer server([&](const std::string& req) {
    StubServer::Reply r;
    if (req == "DELETE /bkt/pre/here") {
      r.status = 204;
    } else if (req == "DELETE /bkt/pre/gone") {
      r.status = 404;
      r.body = "<Error><Code>NoSuchKey</Code></Error>";
    } else if (req == "DELETE /bkt/pre/marker") {
      r.status = 412;
      r.body = "<Error><Code>PreconditionFailed</Code></Error>";
    } else if (req == "DELETE /bkt/pre/nobucket") {
      r.status = 404;
      r.body = "<Error><Code>NoSuchBucket</Code></Error>";
    } else if (req == "DELETE /bkt/pre/old") {
      r.status = ++deletes == 1 ? 501 : 204;
      if (r.status == 501)
        r.body = "<Error><Code>NotImplemented</Code></Error>";
    }
    return r;
  });
  auto b = Open(server);
  auto here = b->DeleteIfPresent("here");
  ASSERT_TRUE(here.ok()) << here.status().ToString();
  EXPECT_TRUE(*here);
  auto gone = b->DeleteIfPresent("gone");
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_FALSE(*gone);
  auto marker = b->DeleteIfPresent("marker");
  ASSERT_TRUE(marker.ok()) << marker.status().ToString();
  EXPECT_FALSE(*marker);
  auto nobucket = b->DeleteIfPresent("nobucket");
  EXPECT_TRUE(nobucket.status().IsNotFound()) << nobucket.status().ToString();
  ASSERT_TRUE(b->Delete("gone").ok());  // a plain Delete: gone is fine
  auto old = b->DeleteIfPresent("old");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_TRUE(*old);
  ASSERT_TRUE(b->DeleteIfPresent("here").ok());
  auto heads = server.heads();
  ASSERT_EQ(heads.size(), 8u);
  auto conditional = [&](size_t i) {
    return heads[i].find("\r\nIf-Match: *") != std::string::npos;
  };
  for (size_t i : {0, 1, 2, 3, 5}) EXPECT_TRUE(conditional(i)) << heads[i];
  EXPECT_FALSE(conditional(4)) << heads[4];  // Delete
  EXPECT_FALSE(conditional(6)) << heads[6];  // after the 501
  EXPECT_FALSE(conditional(7)) << heads[7];
}

TEST(S3RequestTest, AddressingAndListQueries) {
  StubServer server([](const std::string& req) {
    StubServer::Reply r;
    r.body =
        "<ListBucketResult><IsTruncated>false</IsTruncated>"
        "</ListBucketResult>";
    if (req.rfind("HEAD", 0) == 0) r.headers = "ETag: \"e\"\r\n";
    return r;
  });
  auto path = Open(server);
  ASSERT_TRUE(path->Stat("a b+c").ok());
  ListOptions one_level;
  one_level.recursive = false;
  ASSERT_TRUE(path->List("d ir/", one_level,
                         [](const ObjectInfo&) { return Status::OK(); })
                  .ok());
  path.reset();  // the stub serves one connection at a time
  auto virt = Open(server, 0, "virtual");
  ASSERT_TRUE(virt->Stat("k").ok());
  // Keys and queries in the canonical SigV4 encoding; the bucket in the
  // path or in the host name.
  EXPECT_EQ(server.requests(),
            (std::vector<std::string>{
                "HEAD /bkt/pre/a%20b%2Bc",
                "GET /bkt?delimiter=%2F&encoding-type=url&list-type=2&"
                "prefix=pre%2Fd%20ir%2F",
                "HEAD /pre/k"}));
}

}  // namespace
}  // namespace ferry::remote
