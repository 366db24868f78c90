// Remote storage: one Backend per bucket/prefix (file://, http(s)://, s3://)
// and the options that reach it from the command line. Design:
// docs/remote.md. The transfer engine that moves many objects at once is in
// ferry/transfer.h.
//
// Thread-safety: a Backend is safe to use from several threads at once.
// Sinks and sources are used by one thread at a time.
#ifndef FERRY_REMOTE_H_
#define FERRY_REMOTE_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/env.h"
#include "ferry/export.h"
#include "ferry/result.h"
#include "ferry/status.h"

namespace ferry {

// One object, as a listing or a stat reports it.
struct ObjectInfo {
  std::string key;  // relative to the backend's prefix, '/'-separated
  uint64_t size = 0;
  std::string etag;        // as the server sent it, quotes kept; "" if unknown
  int64_t mtime_ns = 0;    // 0 if unknown
  bool is_prefix = false;  // a "folder" of a non-recursive listing
};

// [offset, offset + length); length kToEnd means to the end of the object.
struct ByteRange {
  static constexpr uint64_t kToEnd = std::numeric_limits<uint64_t>::max();
  uint64_t offset = 0;
  uint64_t length = kToEnd;
};

// What a backend can do (rclone's Features).
struct BackendCaps {
  bool ranges = false;              // partial reads
  bool listing = false;             // List()
  bool writes = false;              // Write() / Delete()
  bool conditional_reads = false;   // ReadOptions::if_match is enforced
  bool conditional_writes = false;  // WriteOptions::if_none_match / if_match
};

// Receives the bytes of a read, in order.
class FERRY_EXPORT ByteSink {
 public:
  virtual ~ByteSink();
  virtual Status Append(std::string_view data) = 0;
};

// Keeps the bytes of a read in `out`, up to max of them (more: Corruption
// naming `what`).
class FERRY_EXPORT CappedStringSink : public ByteSink {
 public:
  CappedStringSink(std::string what, uint64_t max)
      : what_(std::move(what)), max_(max) {}
  Status Append(std::string_view data) override;
  std::string out;

 private:
  std::string what_;
  uint64_t max_;
};

// The bytes of a write. Its size is known before the first byte is sent and
// it can be read again from any offset (a retried request starts over).
class FERRY_EXPORT ByteSource {
 public:
  virtual ~ByteSource();
  virtual uint64_t size() const = 0;
  // Reads up to n bytes at offset into scratch; *got is short only at the end.
  virtual Status ReadAt(uint64_t offset, size_t n, char* scratch,
                        size_t* got) = 0;
};

struct ListOptions {
  bool recursive = true;  // false: one level, "folders" as is_prefix entries
  // A file:// listing's entries that are no objects, by key, and the listing
  // goes on (the rules of ferry/walk.h): NotSupported for one skipped (a
  // FIFO, a device, a link to a folder), another error for one that cannot
  // be read (a dangling link, an unreadable folder). The key is "" when the
  // URL itself names such an entry (a FIFO, a dangling link). Unset: skipped
  // ones are left out silently and the first unreadable one fails the
  // listing.
  std::function<void(const std::string& key, const Status& why)> problem;
};

struct ReadOptions {
  // When set, the read fails with FailedPrecondition if the object's ETag is
  // no longer this one (S3 If-Match, HTTP If-Range), instead of mixing two
  // versions of the object.
  std::string if_match;
};

// A small object read whole unless it is unchanged (ReadIfChanged).
struct SmallObject {
  bool unchanged = false;  // its ETag is still the one given
  std::string bytes;       // the object (empty when unchanged)
  std::string etag;        // of these bytes; "" if the backend has none
};

struct WriteOptions {
  bool if_none_match = false;  // create only; FailedPrecondition if present
  std::string if_match;        // replace only this version
  std::string content_type;
};

class FERRY_EXPORT Backend {
 public:
  virtual ~Backend();
  virtual const BackendCaps& caps() const = 0;
  // The URL of the bucket/prefix for messages (never a secret).
  virtual std::string Describe() const = 0;

  // Calls visit once per object whose key starts with prefix, in key order,
  // a page at a time (the whole listing is never held in memory). A non-OK
  // status from visit stops the listing and is returned.
  virtual Status List(
      std::string_view prefix, const ListOptions& options,
      const std::function<Status(const ObjectInfo&)>& visit) = 0;
  // NotFound when there is no such object.
  virtual Result<ObjectInfo> Stat(std::string_view key) = 0;
  // Whether the URL names a folder that is there even when it holds no
  // object: a file:// directory, a whole s3:// bucket (taken to be there:
  // its listing says when it is not). An s3:// key prefix is only the keys
  // below it, so an empty one is no folder (as `aws s3 ls` has it), nor is
  // anything by default. `ferry ls` asks when a listing found nothing.
  virtual Result<bool> FolderExists();
  // Appends exactly the bytes of range to sink (fewer only if the object
  // ends sooner and range.length is kToEnd).
  virtual Status Read(std::string_view key, const ByteRange& range,
                      const ReadOptions& options, ByteSink* sink) = 0;
  // The whole object key (more than max_bytes: Corruption) unless its ETag
  // is still if_none_match (when not empty): then `unchanged`, no bytes.
  // The bytes and the ETag belong to one version of the object. HTTP and
  // S3 take one request (If-None-Match: 304, or 200 with the bytes and
  // their ETag); the default stats, compares and reads on that ETag
  // (If-Match where the backend enforces it, else a second stat). NotFound
  // when there is no such object.
  virtual Result<SmallObject> ReadIfChanged(std::string_view key,
                                            std::string_view if_none_match,
                                            uint64_t max_bytes);
  // Writes the whole object atomically: readers see the old object or the
  // new one, never a part. Returns what was written (size, ETag).
  virtual Result<ObjectInfo> Write(std::string_view key, ByteSource* source,
                                   const WriteOptions& options) = 0;
  // OK when the object did not exist.
  virtual Status Delete(std::string_view key) = 0;
  // Delete, telling whether this call removed the object: false when it was
  // gone already (another deleter's, as two gc runs at once), so that each
  // deletion is counted by one deleter only. True also when the backend
  // cannot tell (the default: Delete).
  virtual Result<bool> DeleteIfPresent(std::string_view key);
};

// How remotes are reached; filled from flags, the environment and the AWS
// configuration files (docs/remote.md, README "Remote storage").
struct RemoteOptions {
  // S3 (as the AWS CLI): empty means "not given on the command line".
  std::string endpoint_url;  // --endpoint-url
  std::string region;        // --region
  std::string profile;       // --profile
  std::string ca_bundle;     // --ca-bundle
  std::string addressing;    // --s3-addressing path|virtual|auto
  bool no_sign_request = false;
  // HTTP(S): extra request headers ("Name: value"), never printed.
  std::vector<std::string> headers;
  // HTTP(S) keys are the rest of a URL as the user wrote it ("a%20b",
  // "x?token=1"), sent as curl sends it (only characters that cannot be in a
  // URL encoded). false: keys are names, every reserved byte %XX-encoded.
  bool http_keys_as_written = false;
  // Transfers.
  int connections = 16;
  uint64_t part_size = 8u << 20;
  uint64_t bwlimit = 0;  // bytes per second over all transfers; 0: none
  int max_retries = 8;
  uint64_t low_speed_limit = 1024;  // bytes/s ...
  int low_speed_time = 30;          // ... for this many seconds is a stall
  // A connection not made in this long is given up (and counts as the
  // server not reached: docs/remote.md "A server that is not there").
  int connect_timeout_ms = 20000;
  // Until a request has reached the server, tries that cannot (refused,
  // not resolved, the connect timed out) use up no retries and wait no
  // longer than this after the first; then the request fails ("server
  // unreachable"). Listings, HEADs, small reads and writes here; the
  // transfer engine's runs by TransferOptions::unreachable_ms.
  uint64_t unreachable_ms = 30000;
  // -v: one line per request (method, URL, status; secrets redacted).
  std::function<void(std::string_view)> log;
};

// text with the secrets of every URL in it replaced by "<redacted>": the
// userinfo of "scheme://user:password@host", and the values of query
// parameters that carry credentials (X-Amz-Signature, X-Amz-Credential,
// X-Amz-Security-Token, Signature, sig, and names with token, secret,
// password, key, auth or credential in them), also in a bare "key?query".
// What prints a URL, a key or an error about one goes through this.
FERRY_EXPORT std::string RedactUrls(std::string_view text);

// url without its userinfo ("user:password@") and with the values of
// credential query parameters redacted (as RedactUrls): what may be stored.
FERRY_EXPORT std::string UrlWithoutSecrets(std::string_view url);

// What names the remote's objects, for keying a cache: an http(s) URL as
// "scheme://host:port/path" (lower-cased scheme and host, the port always
// given; no userinfo, query or fragment); an s3:// URL as
// "s3+<endpoint>/<bucket>/<prefix>" with the endpoint the options and the AWS
// configuration resolve to (the same form; AWS's regional endpoint when none
// is set), so one bucket name on two servers is two remotes. Other URLs are
// returned as they are. InvalidArgument for a malformed URL.
FERRY_EXPORT Result<std::string> RemoteIdentity(std::string_view url,
                                                const RemoteOptions& options);

// file:///path, a plain path, http(s)://host/prefix, s3://bucket/prefix.
FERRY_EXPORT bool IsRemoteUrl(std::string_view url);

// The backend for the bucket/prefix (or directory) url names. Keys passed to
// it are relative to that prefix. InvalidArgument for a malformed URL or an
// unknown scheme; credentials are resolved here (a clear error if missing).
FERRY_EXPORT Result<std::unique_ptr<Backend>> OpenBackend(
    std::string_view url, const RemoteOptions& options, Env* env);

}  // namespace ferry

#endif  // FERRY_REMOTE_H_
