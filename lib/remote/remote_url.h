// Parsing the URLs remotes are named by (private to lib/remote):
// file:///abs/path (RFC 8089, %XX decoded), a plain path, http(s)://...,
// s3://bucket/prefix (the prefix taken literally, as the AWS CLI does).
//
// Thread-safety: pure functions.
#ifndef FERRY_LIB_REMOTE_REMOTE_URL_H_
#define FERRY_LIB_REMOTE_REMOTE_URL_H_

#include <optional>
#include <string>
#include <string_view>

#include "ferry/result.h"

namespace ferry::remote {

struct RemoteUrl {
  enum Kind { kFile, kHttp, kS3 } kind = kFile;
  std::string path;    // kFile: the local path
  std::string bucket;  // kS3
  std::string prefix;  // kS3: the key prefix, as written ("" = whole bucket)
};

// "s3", "http", ... for "<scheme>://..." (lower-cased); nullopt for a plain
// path.
std::optional<std::string> UrlScheme(std::string_view url);

// InvalidArgument naming the URL: an unknown scheme, a file URL with a host,
// an s3 URL without a bucket or with an invalid bucket name, an empty path.
Result<RemoteUrl> ParseRemoteUrl(std::string_view url);

// An http(s) URL (or part of one) as the user wrote it, as curl sends it:
// %XX escapes, reserved characters and the query kept; only what cannot be
// in a URL is %XX-encoded (controls, space, non-ASCII bytes, "<>\^`{|},
// and a '%' not followed by two hex digits); a #fragment is dropped (never
// sent).
std::string EncodeUrlAsWritten(std::string_view url);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_REMOTE_URL_H_
