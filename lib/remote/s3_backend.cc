#include "remote/s3_backend.h"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <optional>
#include <set>
#include <utility>

#include "remote/http_client.h"
#include "remote/http_read.h"
#include "remote/range_check.h"
#include "remote/s3_errors.h"
#include "remote/s3_xml.h"
#include "remote/sigv4.h"
#include "remote/transfer_util.h"

namespace ferry::remote {
namespace {

// A body up to this size is read into memory and signed by its SHA-256 (S3
// then checks it); a larger one is streamed as UNSIGNED-PAYLOAD.
constexpr uint64_t kHashedBodyMax = 1 << 20;
constexpr int kMaxParts = 10000;  // S3's limit per multipart upload

using Query = std::vector<std::pair<std::string, std::string>>;

std::string XmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool Is2xx(long status) { return status >= 200 && status < 300; }

// scheme://authority/base of an endpoint URL; the default port is dropped
// so that the signed Host is the one libcurl sends.
struct Endpoint {
  std::string scheme, authority, base_path;
};

Result<Endpoint> ParseEndpoint(const std::string& url) {
  size_t sep = url.find("://");
  if (sep == std::string::npos)
    return Status::InvalidArgument("endpoint URL '" + url + "'",
                                   "not scheme://host[:port]");
  Endpoint e;
  e.scheme = url.substr(0, sep);
  std::transform(e.scheme.begin(), e.scheme.end(), e.scheme.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (e.scheme != "http" && e.scheme != "https")
    return Status::InvalidArgument("endpoint URL '" + url + "'",
                                   "wants http:// or https://");
  size_t host = sep + 3;
  size_t path = url.find_first_of("/?#", host);
  e.authority = url.substr(
      host, path == std::string::npos ? std::string::npos : path - host);
  if (e.authority.empty() || e.authority.find('@') != std::string::npos)
    return Status::InvalidArgument("endpoint URL '" + url + "'",
                                   "wants a host (and no user name)");
  std::transform(e.authority.begin(), e.authority.end(), e.authority.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  const std::string default_port = e.scheme == "https" ? ":443" : ":80";
  if (e.authority.size() > default_port.size() &&
      e.authority.compare(e.authority.size() - default_port.size(),
                          default_port.size(), default_port) == 0)
    e.authority.resize(e.authority.size() - default_port.size());
  if (path != std::string::npos) {
    if (url[path] != '/')
      return Status::InvalidArgument("endpoint URL '" + url + "'",
                                     "a query or fragment is not allowed");
    e.base_path = url.substr(path);
    while (!e.base_path.empty() && e.base_path.back() == '/')
      e.base_path.pop_back();
  }
  return e;
}

class S3Backend final : public HttpBackend, public IncompleteUploadSweeper {
 public:
  S3Backend(std::string bucket, std::string prefix, AwsConfig config,
            Endpoint endpoint, HttpSettings settings,
            const RemoteOptions& options)
      : bucket_(std::move(bucket)),
        prefix_(std::move(prefix)),
        config_(std::move(config)),
        endpoint_(std::move(endpoint)),
        settings_(settings),
        client_(std::move(settings), RetryPolicyFrom(options)),
        part_size_(UploadPartSize(options.part_size)) {
    folder_ = prefix_;
    if (!folder_.empty() && folder_.back() != '/') folder_ += '/';
    virtual_ = S3AddressingFor(config_, bucket_) == "virtual";
    caps_.ranges = caps_.listing = caps_.writes = true;
    caps_.conditional_reads = true;
    caps_.conditional_writes = false;  // see s3_backend.h
  }

  const BackendCaps& caps() const override { return caps_; }
  std::string Describe() const override {
    return "s3://" + bucket_ + "/" + prefix_;
  }
  const HttpSettings& settings() const override { return settings_; }

  Status List(std::string_view prefix, const ListOptions& options,
              const std::function<Status(const ObjectInfo&)>& visit) override {
    const std::string list_prefix = folder_ + std::string(prefix);
    std::string token;
    for (;;) {
      Query q = {{"list-type", "2"}, {"encoding-type", "url"}};
      if (!list_prefix.empty()) q.emplace_back("prefix", list_prefix);
      if (!options.recursive) q.emplace_back("delimiter", "/");
      if (!token.empty()) q.emplace_back("continuation-token", token);
      FERRY_ASSIGN_OR_RETURN(HttpResponse r, client_.Perform([&] {
        return Make("GET", nullptr, q, {}, "");
      }));
      if (!Is2xx(r.status)) return ErrorFor(prefix, r);
      auto page = ParseListObjectsV2(r.body);
      if (!page.ok())
        return page.status().WithContext(Name(std::string(prefix)));
      // One page in key order: objects and folders merged.
      std::vector<ObjectInfo> entries;
      entries.reserve(page->objects.size() + page->prefixes.size());
      for (ObjectInfo& o : page->objects) entries.push_back(std::move(o));
      for (std::string& p : page->prefixes) {
        ObjectInfo o;
        o.key = std::move(p);
        o.is_prefix = true;
        entries.push_back(std::move(o));
      }
      std::sort(entries.begin(), entries.end(),
                [](const ObjectInfo& a, const ObjectInfo& b) {
                  return a.key < b.key;
                });
      for (ObjectInfo& o : entries) {
        if (o.key.compare(0, folder_.size(), folder_) != 0) continue;
        o.key.erase(0, folder_.size());
        if (o.key.empty()) continue;  // the folder's own marker object
        FERRY_RETURN_IF_ERROR(visit(o));
      }
      if (!page->truncated) return Status::OK();
      if (page->next_token == token)
        return Status::Corruption(Name(std::string(prefix)),
                                  "the listing repeats its continuation token");
      token = std::move(page->next_token);
    }
  }

  Result<ObjectInfo> Stat(std::string_view key) override {
    FERRY_ASSIGN_OR_RETURN(std::string full, Full(key));
    FERRY_ASSIGN_OR_RETURN(HttpResponse r, client_.Perform([&] {
      return Make("HEAD", &full, {}, {}, "");
    }));
    if (r.status != 200) return ErrorFor(key, r);
    return ObjectInfoFromHead(key, Name(key), r);
  }

  // The whole bucket; or a folder the console made ("Create folder": an
  // empty object named prefix/), there with nothing in it, as `aws s3 ls`
  // lists it. Any other empty key prefix is none (aws's exit 1).
  Result<bool> FolderExists() override {
    if (prefix_.empty()) return true;
    const std::string marker = folder_;
    FERRY_ASSIGN_OR_RETURN(HttpResponse r, client_.Perform([&] {
      return Make("HEAD", &marker, {}, {}, "");
    }));
    if (r.status == 200) return true;
    if (r.status == 404) return false;
    return ErrorFor("", r);
  }

  Status Read(std::string_view key, const ByteRange& range,
              const ReadOptions& options, ByteSink* sink) override {
    FERRY_RETURN_IF_ERROR(Full(key).status());
    return ReadObject(this, &client_, key, Name(key), range, options, sink);
  }
  Result<SmallObject> ReadIfChanged(std::string_view key,
                                    std::string_view if_none_match,
                                    uint64_t max_bytes) override {
    FERRY_RETURN_IF_ERROR(Full(key).status());
    return ReadSmallIfChanged(this, &client_, key, Name(key), if_none_match,
                              max_bytes);
  }

  Result<ObjectInfo> Write(std::string_view key, ByteSource* source,
                           const WriteOptions& options) override {
    const uint64_t size = source->size();
    if (size <= part_size_) {
      FERRY_ASSIGN_OR_RETURN(std::string full, Full(key));
      Headers extra;
      if (options.if_none_match) extra.emplace_back("If-None-Match", "*");
      if (!options.if_match.empty())
        extra.emplace_back("If-Match", options.if_match);
      if (!options.content_type.empty())
        extra.emplace_back("Content-Type", options.content_type);
      FERRY_ASSIGN_OR_RETURN(HttpResponse r, client_.Perform([&] {
        return MakeBody("PUT", full, {}, extra, source, 0, size);
      }));
      if (!Is2xx(r.status)) return ErrorFor(key, r);
      ObjectInfo info;
      info.key = std::string(key);
      info.size = size;
      if (const std::string* e = FindHeader(r.headers, "etag")) info.etag = *e;
      return info;
    }
    if (options.if_none_match || !options.if_match.empty())
      return Status::NotSupported(Name(key), "conditional multipart uploads");
    // Multipart, one part after the other (the engine runs them in
    // parallel); aborted on failure.
    FERRY_ASSIGN_OR_RETURN(std::string upload_id, StartMultipart(key, 0));
    const uint64_t part =
        std::max<uint64_t>(part_size_, (size + kMaxParts - 1) / kMaxParts);
    std::vector<std::string> etags;
    Status s;
    for (uint64_t off = 0; off < size && s.ok(); off += part) {
      const uint64_t len = std::min(part, size - off);
      const int number = static_cast<int>(etags.size() + 1);
      auto r = client_.Perform([&] {
        return MakeUploadPart(key, upload_id, number, source, off, len);
      });
      if (!r.ok()) {
        s = r.status();
      } else if (!Is2xx(r->status)) {
        s = ErrorFor(key, *r);
      } else if (const std::string* e = FindHeader(r->headers, "etag")) {
        etags.push_back(*e);
      } else {
        s = Status::IOError(Name(key), "a part's answer has no ETag");
      }
    }
    Result<ObjectInfo> done = s.ok() ? CompleteMultipart(key, upload_id, etags)
                                     : Result<ObjectInfo>(s);
    if (!done.ok()) (void)AbortMultipart(key, upload_id);
    return done;
  }

  Status Delete(std::string_view key) override {
    FERRY_ASSIGN_OR_RETURN(std::string full, Full(key));
    FERRY_ASSIGN_OR_RETURN(HttpResponse r, client_.Perform([&] {
      return Make("DELETE", &full, {}, {}, "");
    }));
    if (Is2xx(r.status)) return Status::OK();
    Status s = ErrorFor(key, r);
    // Gone already is what was asked; a missing bucket is not.
    if (s.IsNotFound() && r.status == 404 &&
        r.body.find("NoSuchBucket") == std::string::npos)
      return Status::OK();
    return s;
  }

  // DELETE with If-Match: * (conditional deletes, enforced by S3 since
  // 2025): a key gone already is 404 NoSuchKey (or 412), so of two gc runs
  // only one counts it. A server that ignores the header answers 204 either
  // way (true: it cannot tell); one that refuses it (501) gets plain
  // DELETEs from then on. A DELETE retried after an answer that was lost
  // finds its own deletion: false.
  Result<bool> DeleteIfPresent(std::string_view key) override {
    if (!conditional_deletes_.load()) {
      FERRY_RETURN_IF_ERROR(Delete(key));
      return true;
    }
    FERRY_ASSIGN_OR_RETURN(std::string full, Full(key));
    FERRY_ASSIGN_OR_RETURN(HttpResponse r, client_.Perform([&] {
      return Make("DELETE", &full, {}, {{"If-Match", "*"}}, "");
    }));
    if (Is2xx(r.status)) return true;
    Status s = ErrorFor(key, r);
    if (s.IsFailedPrecondition()) return false;
    if (s.IsNotFound() && r.status == 404 &&
        r.body.find("NoSuchBucket") == std::string::npos)
      return false;
    if (s.IsNotSupported()) {
      conditional_deletes_ = false;
      return DeleteIfPresent(key);
    }
    return s;
  }

  Result<HttpRequest> MakeGet(std::string_view key,
                              const std::optional<ByteRange>& range,
                              std::string_view if_match) override {
    FERRY_ASSIGN_OR_RETURN(std::string full, Full(key));
    return MakeGetRequest(full, range, if_match);
  }

  Result<HttpRequest> MakeGetIfNoneMatch(
      std::string_view key, std::string_view if_none_match) override {
    FERRY_ASSIGN_OR_RETURN(std::string full, Full(key));
    Headers extra;
    if (!if_none_match.empty())
      extra.emplace_back("If-None-Match", if_none_match);
    return Make("GET", &full, {}, extra, "");
  }

  Result<HttpRequest> MakePut(std::string_view key,
                              ByteSource* source) override {
    FERRY_ASSIGN_OR_RETURN(std::string full, Full(key));
    return MakeBody("PUT", full, {}, {}, source, 0, source->size());
  }

  Status ErrorFor(std::string_view key, const HttpResponse& r) override {
    S3ErrorContext c;
    c.what = Name(key);
    c.bucket = bucket_;
    c.signed_request = config_.sign;
    c.profile = config_.profile;
    c.region = config_.region;
    c.secrets = {config_.creds.secret_access_key, config_.creds.session_token};
    return S3ErrorStatus(c, r);
  }

  Result<std::string> StartMultipart(std::string_view key,
                                     int64_t keep_younger_s) override {
    FERRY_ASSIGN_OR_RETURN(std::string full, Full(key));
    FERRY_RETURN_IF_ERROR(AbortStaleUploads(key, full, keep_younger_s));
    FERRY_ASSIGN_OR_RETURN(HttpResponse r, client_.Perform([&] {
      return MakeBody("POST", full, {{"uploads", ""}}, {}, nullptr, 0, 0);
    }));
    if (!Is2xx(r.status)) return ErrorFor(key, r);
    auto id = ParseUploadId(r.body);
    if (!id.ok()) return id.status().WithContext(Name(key));
    return *id;
  }

  Result<HttpRequest> MakeUploadPart(std::string_view key,
                                     std::string_view upload_id,
                                     int part_number, ByteSource* source,
                                     uint64_t offset,
                                     uint64_t length) override {
    FERRY_ASSIGN_OR_RETURN(std::string full, Full(key));
    return MakeBody("PUT", full,
                    {{"partNumber", std::to_string(part_number)},
                     {"uploadId", std::string(upload_id)}},
                    {}, source, offset, length);
  }

  Result<ObjectInfo> CompleteMultipart(
      std::string_view key, std::string_view upload_id,
      const std::vector<std::string>& part_etags) override {
    FERRY_ASSIGN_OR_RETURN(std::string full, Full(key));
    std::string body = "<CompleteMultipartUpload>";
    for (size_t i = 0; i < part_etags.size(); ++i) {
      body += "<Part><PartNumber>" + std::to_string(i + 1) +
              "</PartNumber><ETag>" + XmlEscape(part_etags[i]) +
              "</ETag></Part>";
    }
    body += "</CompleteMultipartUpload>";
    const Query q = {{"uploadId", std::string(upload_id)}};
    FERRY_ASSIGN_OR_RETURN(HttpResponse r, client_.Perform([&] {
      return MakeMemoryBody("POST", full, q, body);
    }));
    if (!Is2xx(r.status)) return ErrorFor(key, r);
    // S3 may answer 200 and fail in the body.
    S3Error err;
    auto etag = ParseCompleteMultipart(r.body, &err);
    if (!etag.ok()) return etag.status().WithContext(Name(key));
    if (!err.code.empty()) {
      HttpResponse as_error = r;
      as_error.status = err.code == "InternalError" ? 500 : 400;
      return ErrorFor(key, as_error);
    }
    return Stat(key);
  }

  Status AbortMultipart(std::string_view key,
                        std::string_view upload_id) override {
    FERRY_ASSIGN_OR_RETURN(std::string full, Full(key));
    const Query q = {{"uploadId", std::string(upload_id)}};
    FERRY_ASSIGN_OR_RETURN(HttpResponse r, client_.Perform([&] {
      return Make("DELETE", &full, q, {}, "");
    }));
    if (Is2xx(r.status) || r.status == 404) return Status::OK();  // gone
    return ErrorFor(key, r);
  }

 private:
  // The object's full key: the folder + key; "" names the URL's own object.
  Result<std::string> Full(std::string_view key) const {
    if (key.empty()) {
      if (prefix_.empty() || prefix_.back() == '/')
        return Status::InvalidArgument(
            Describe(), "names a folder, not an object: give a key");
      return prefix_;
    }
    return folder_ + std::string(key);
  }
  std::string Name(std::string_view key) const {
    return "s3://" + bucket_ + "/" +
           (key.empty() ? prefix_ : folder_ + std::string(key));
  }

  Result<HttpRequest> MakeGetRequest(const std::string& full,
                                     const std::optional<ByteRange>& range,
                                     std::string_view if_match) const {
    Headers extra;
    if (range) extra.emplace_back("Range", RangeHeader(*range));
    if (!if_match.empty()) extra.emplace_back("If-Match", if_match);
    FERRY_ASSIGN_OR_RETURN(HttpRequest req, Make("GET", &full, {}, extra, ""));
    req.range = range;
    return req;
  }

  // A request on the bucket (key == nullptr) or on one object, signed.
  Result<HttpRequest> Make(const std::string& method, const std::string* key,
                           const Query& query, const Headers& headers,
                           std::string_view payload_sha256) const {
    HttpRequest req;
    req.method = method;
    std::string authority = endpoint_.authority;
    std::string path = endpoint_.base_path;
    if (virtual_) {
      authority = bucket_ + "." + authority;
    } else {
      path += "/" + bucket_;
    }
    if (key != nullptr) {
      path += "/" + *key;
    } else if (virtual_ || path.empty()) {
      path += "/";
    }
    if (config_.sign) {
      SigV4Request s;
      s.method = method;
      s.host = authority;
      s.path = path;
      s.query = query;
      s.headers = headers;
      s.payload_sha256 =
          payload_sha256.empty() ? Sha256Hex("") : std::string(payload_sha256);
      SigV4Result signed_req =
          SignV4(s, config_.creds, config_.region, "s3", std::time(nullptr));
      req.url =
          endpoint_.scheme + "://" + authority + signed_req.url_path_and_query;
      req.headers = std::move(signed_req.headers);
      return req;
    }
    // Unsigned: the same canonical encoding, no Authorization.
    Query sorted;
    for (const auto& [k, v] : query)
      sorted.emplace_back(AwsUriEncode(k, false), AwsUriEncode(v, false));
    std::sort(sorted.begin(), sorted.end());
    req.url = endpoint_.scheme + "://" + authority + AwsUriEncode(path, true);
    for (size_t i = 0; i < sorted.size(); ++i) {
      req.url +=
          (i == 0 ? "?" : "&") + sorted[i].first + "=" + sorted[i].second;
    }
    req.headers = headers;
    return req;
  }

  Result<HttpRequest> MakeMemoryBody(const std::string& method,
                                     const std::string& key, const Query& q,
                                     std::string body) const {
    FERRY_ASSIGN_OR_RETURN(HttpRequest req,
                           Make(method, &key, q, {}, Sha256Hex(body)));
    req.body = std::move(body);
    return req;
  }

  // A body from source[offset, offset + length): small ones read and hashed,
  // larger ones streamed unsigned.
  Result<HttpRequest> MakeBody(const std::string& method,
                               const std::string& key, const Query& q,
                               const Headers& headers, ByteSource* source,
                               uint64_t offset, uint64_t length) const {
    if (source == nullptr || length <= kHashedBodyMax) {
      std::string body(static_cast<size_t>(source ? length : 0), '\0');
      for (size_t pos = 0; pos < body.size();) {
        size_t got = 0;
        FERRY_RETURN_IF_ERROR(source->ReadAt(offset + pos, body.size() - pos,
                                             body.data() + pos, &got));
        if (got == 0)
          return Status::IOError("s3://" + bucket_ + "/" + key,
                                 "the source ended early");
        pos += got;
      }
      FERRY_ASSIGN_OR_RETURN(HttpRequest req,
                             Make(method, &key, q, headers, Sha256Hex(body)));
      req.body = std::move(body);
      return req;
    }
    FERRY_ASSIGN_OR_RETURN(
        HttpRequest req,
        Make(method, &key, q, headers, std::string(kUnsignedPayload)));
    req.body_source = source;
    req.body_offset = offset;
    req.body_length = length;
    return req;
  }

  // Streams the incomplete multipart uploads of the keys that start with
  // full_prefix (ListMultipartUploads, EncodingType=url), page by page, at
  // most max_pages of them (0: no limit). NotSupported where the server has
  // no such listing (501, 405); other failures are ErrorFor(key), and
  // *status says the HTTP status. A server whose markers do not move on
  // (the same page again, a key marker that goes back) is Corruption.
  Status ListUploads(
      std::string_view key, const std::string& full_prefix, int max_pages,
      const std::function<Status(const UploadsPage::Upload&)>& visit,
      long* status) {
    std::string key_marker, id_marker;
    std::set<std::string> ids_at_key;  // upload-id markers at key_marker
    for (int pages = 0; max_pages == 0 || pages < max_pages; ++pages) {
      Query q = {
          {"uploads", ""}, {"prefix", full_prefix}, {"encoding-type", "url"}};
      if (!key_marker.empty()) q.emplace_back("key-marker", key_marker);
      if (!id_marker.empty()) q.emplace_back("upload-id-marker", id_marker);
      FERRY_ASSIGN_OR_RETURN(HttpResponse r, client_.Perform([&] {
        return Make("GET", nullptr, q, {}, "");
      }));
      *status = r.status;
      if (r.status == 501 || r.status == 405)
        return Status::NotSupported(Name(key),
                                    "the server does not list incomplete "
                                    "multipart uploads (HTTP " +
                                        std::to_string(r.status) + ")");
      if (!Is2xx(r.status)) return ErrorFor(key, r);
      auto page = ParseListMultipartUploads(r.body);
      if (!page.ok()) return page.status().WithContext(Name(key));
      // Decoded only when the answer says it is encoded (a server may
      // ignore the request for it).
      auto decode = [&](std::string* text) {
        std::string decoded;
        if (!page->url_encoded) return true;
        if (!UrlDecodeS3(*text, &decoded)) return false;
        *text = std::move(decoded);
        return true;
      };
      for (auto& u : page->uploads) {
        if (!decode(&u.key))
          return Status::Corruption(Name(key),
                                    "upload listing: a key that is not URL "
                                    "encoded");
        FERRY_RETURN_IF_ERROR(visit(u));
      }
      if (!page->truncated) return Status::OK();
      std::string next_key = page->next_key_marker;
      if (!decode(&next_key))
        return Status::Corruption(Name(key),
                                  "upload listing: a marker that is not URL "
                                  "encoded");
      if (next_key < key_marker ||
          (next_key == key_marker &&
           !ids_at_key.insert(page->next_upload_id_marker).second))
        return Status::Corruption(Name(key),
                                  "upload listing: the next page starts "
                                  "where an earlier one did");
      if (next_key != key_marker) {
        ids_at_key.clear();
        ids_at_key.insert(page->next_upload_id_marker);
      }
      key_marker = std::move(next_key);
      id_marker = page->next_upload_id_marker;
    }
    return Status::OK();
  }

  // Aborts the incomplete multipart uploads of exactly this key that were
  // initiated keep_younger_s or more ago (0: all): what a killed run left
  // behind (they cost storage and are invisible). A courtesy, never a
  // reason to fail the upload: a server without the listing, credentials
  // without s3:ListBucketMultipartUploads or s3:AbortMultipartUpload
  // (neither comes with s3:PutObject), a listing that makes no sense or
  // goes on past 100 pages skip it (-v says why).
  Status AbortStaleUploads(std::string_view key, const std::string& full,
                           int64_t keep_younger_s) {
    const int64_t cutoff =
        keep_younger_s <= 0
            ? INT64_MAX
            : int64_t(std::time(nullptr) - keep_younger_s) * 1000000000;
    long status = 0;
    Status s = ListUploads(
        key, full, /*max_pages=*/100,
        [&](const UploadsPage::Upload& u) {
          if (u.key != full) return Status::OK();
          if (keep_younger_s > 0 &&
              (u.initiated_ns < 0 || u.initiated_ns >= cutoff))
            return Status::OK();
          Status a = AbortMultipart(key, u.upload_id);
          if (!a.ok()) Log("not aborted: " + a.ToString());
          return Status::OK();
        },
        &status);
    if (!s.ok()) Log("incomplete uploads not cleaned: " + s.ToString());
    return Status::OK();
  }

  Status AbortUploadsBelow(std::string_view dir_key, int64_t cutoff_ns,
                           bool dry_run,
                           const std::function<bool(std::string_view)>& ours,
                           UploadSweep* out) override {
    *out = UploadSweep{};
    UploadSweep& sweep = *out;
    std::string full = folder_ + std::string(dir_key);
    long status = 0;
    return ListUploads(
        dir_key, full, /*max_pages=*/0,
        [&](const UploadsPage::Upload& u) -> Status {
          // A key outside the folder (a server that ignores the prefix),
          // or not of the caller's layout, is not ours to judge; one of
          // unknown age counts as young.
          if (u.key.compare(0, full.size(), full) != 0) return Status::OK();
          const std::string rel = u.key.substr(folder_.size());
          if (ours && !ours(rel)) return Status::OK();
          if (u.initiated_ns < 0 || u.initiated_ns >= cutoff_ns) {
            ++sweep.young_kept;
            return Status::OK();
          }
          Status a = dry_run ? Status::OK() : AbortMultipart(rel, u.upload_id);
          if (a.ok()) {
            ++sweep.aborted;
          } else if (sweep.failed++ == 0) {
            sweep.first_failure = a;
          }
          return Status::OK();
        },
        &status);
  }

  void Log(const std::string& line) const {
    if (settings_.log) settings_.log(line);
  }

  std::string bucket_, prefix_, folder_;
  AwsConfig config_;
  Endpoint endpoint_;
  HttpSettings settings_;
  HttpClient client_;
  uint64_t part_size_;
  bool virtual_ = false;
  BackendCaps caps_;
  std::atomic<bool> conditional_deletes_{true};
};

}  // namespace

Result<std::unique_ptr<HttpBackend>> NewS3Backend(
    std::string bucket, std::string prefix, const AwsConfig& config,
    const RemoteOptions& options) {
  FERRY_ASSIGN_OR_RETURN(Endpoint endpoint,
                         ParseEndpoint(S3EndpointUrl(config)));
  HttpSettings settings;
  settings.ca_bundle = config.ca_bundle;
  settings.low_speed_limit = options.low_speed_limit;
  settings.low_speed_time = options.low_speed_time;
  settings.connect_timeout_ms = options.connect_timeout_ms;
  settings.log = options.log;
  return std::unique_ptr<HttpBackend>(
      new S3Backend(std::move(bucket), std::move(prefix), config,
                    std::move(endpoint), std::move(settings), options));
}

Result<std::unique_ptr<HttpBackend>> NewS3Backend(
    std::string bucket, std::string prefix, const RemoteOptions& options) {
  FERRY_ASSIGN_OR_RETURN(AwsConfig config,
                         ResolveAwsConfig(AwsConfigInputsFrom(options)));
  return NewS3Backend(std::move(bucket), std::move(prefix), config, options);
}

}  // namespace ferry::remote
