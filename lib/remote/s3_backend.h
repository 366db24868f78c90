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
// (what a killed run left) are aborted where the server lists them and the
// credentials allow it (skipped otherwise); gc aborts old ones below a
// folder (IncompleteUploadSweeper). Errors name the object and the request
// id, and never carry a secret.
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

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "ferry/remote.h"
#include "remote/aws_config.h"
#include "remote/http.h"

namespace ferry::remote {

// What gc finds of a folder's incomplete multipart uploads.
struct UploadSweep {
  uint64_t aborted = 0;     // initiated before the cutoff (dry run: would be)
  uint64_t young_kept = 0;  // initiated since, or at a time not given
  uint64_t failed = 0;      // old, but their abort failed (the sweep went on)
  Status first_failure;     // the first of those, naming the key
};

// What the S3 backend offers gc: incomplete multipart uploads are never
// listed as objects, and a killed upload of a key no later run writes
// again stays in the bucket (and is billed) until someone aborts it.
class IncompleteUploadSweeper {
 public:
  virtual ~IncompleteUploadSweeper() = default;
  // Aborts (dry_run: counts) the incomplete uploads of the keys below
  // dir_key ("dir/", relative to the backend's folder) for which ours
  // (given the key relative to the folder; null: all) is true, initiated
  // before cutoff_ns. NotSupported when the server does not list them; an
  // upload still running for that long is aborted too (its writer then
  // fails). An abort that fails is counted and the sweep goes on. *sweep
  // counts what was done, also when the listing fails on a later page.
  virtual Status AbortUploadsBelow(
      std::string_view dir_key, int64_t cutoff_ns, bool dry_run,
      const std::function<bool(std::string_view)>& ours,
      UploadSweep* sweep) = 0;
};

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
