// The S3 backend: s3://bucket/prefix on AWS or any S3-compatible endpoint.
//
// Endpoint, region, credentials and addressing come from ResolveAwsConfig
// (flags > environment > ~/.aws, as the AWS CLI). Every request is signed by
// our SigV4 signer (the SHA-256 of small bodies, UNSIGNED-PAYLOAD for
// streamed ones; the session token when there is one) unless
// --no-sign-request. Listing is ListObjectsV2 with EncodingType=url, one
// page at a time; Stat is a HEAD; reads are ranged GETs with If-Match; writes
// are one PUT up to the part size, a multipart upload above it (the engine
// runs the parts in parallel; Backend::Write runs them one after the other).
// Before a multipart upload starts, the incomplete uploads of the same key
// (what a killed run left) are aborted. Errors name the object and the
// request id, and never carry a secret.
//
// Keys are relative to the URL's prefix taken as a folder ("data" and
// "data/" both put key "x" at "data/x"); the key "" is the object the URL
// names itself (s3://bucket/data/file.bin).
//
// Conditional writes: If-None-Match / If-Match are sent, and a 412 is
// FailedPrecondition, but caps().conditional_writes stays false: not every
// S3-compatible server enforces them (s3rver does not).
//
// Thread-safety: safe to use from several threads at once.
#ifndef FERRY_LIB_REMOTE_S3_BACKEND_H_
#define FERRY_LIB_REMOTE_S3_BACKEND_H_

#include <memory>
#include <string>

#include "ferry/remote.h"
#include "remote/aws_config.h"
#include "remote/http.h"

namespace ferry::remote {

// Resolves the AWS configuration from options (and the environment, ~/.aws).
Result<std::unique_ptr<HttpBackend>> NewS3Backend(std::string bucket,
                                                  std::string prefix,
                                                  const RemoteOptions& options);

// With a configuration already resolved (tests).
Result<std::unique_ptr<HttpBackend>> NewS3Backend(std::string bucket,
                                                  std::string prefix,
                                                  const AwsConfig& config,
                                                  const RemoteOptions& options);

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_S3_BACKEND_H_
