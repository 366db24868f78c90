// The XML documents S3 answers with (private to lib/remote), parsed with
// expat: ListObjectsV2 pages, error documents, multipart upload control.
// Every parser takes untrusted bytes: anything malformed is Corruption, never
// a crash (tests/fuzz/s3_xml.cc); a DOCTYPE is refused (no entity tricks).
//
// Thread-safety: pure functions.
#ifndef FERRY_LIB_REMOTE_S3_XML_H_
#define FERRY_LIB_REMOTE_S3_XML_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/remote.h"
#include "ferry/result.h"

namespace ferry::remote {

// One page of ListObjectsV2. Keys and prefixes are full keys, already
// URL-decoded when the page says EncodingType=url.
struct ListPage {
  std::vector<ObjectInfo> objects;    // <Contents>
  std::vector<std::string> prefixes;  // <CommonPrefixes><Prefix>
  bool truncated = false;
  std::string next_token;  // NextContinuationToken (opaque)
};
Result<ListPage> ParseListObjectsV2(std::string_view xml);

// An <Error> document; Corruption when the body is not one.
struct S3Error {
  std::string code, message, request_id, bucket, key;
};
Result<S3Error> ParseS3Error(std::string_view xml);

// <InitiateMultipartUploadResult><UploadId>.
Result<std::string> ParseUploadId(std::string_view xml);

// <CompleteMultipartUploadResult><ETag>. S3 may answer 200 and still fail:
// then the body is an <Error> and this returns *error filled, ETag "".
Result<std::string> ParseCompleteMultipart(std::string_view xml,
                                           S3Error* error);

// One page of ListMultipartUploads (for one key prefix).
struct UploadsPage {
  struct Upload {
    std::string key, upload_id;
    int64_t initiated_ns = -1;  // <Initiated>; -1 when absent or malformed
  };
  std::vector<Upload> uploads;
  bool truncated = false;
  // <EncodingType>url</EncodingType>: keys and the key marker are
  // URL-encoded (a server may ignore the request for it).
  bool url_encoded = false;
  std::string next_key_marker, next_upload_id_marker;
};
Result<UploadsPage> ParseListMultipartUploads(std::string_view xml);

// "2009-10-12T17:50:30.000Z" -> nanoseconds since the epoch; -1 if malformed
// or outside what int64 nanoseconds hold (1677-2262).
int64_t ParseIso8601(std::string_view text);

// %XX and '+' (space) decoding of EncodingType=url values; false if a '%' is
// not followed by two hex digits.
bool UrlDecodeS3(std::string_view in, std::string* out);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_S3_XML_H_
