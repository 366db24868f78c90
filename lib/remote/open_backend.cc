// OpenBackend: the one place that turns a URL into a Backend (ferry/remote.h).
#include <algorithm>
#include <cctype>
#include <string>

#include "ferry/remote.h"
#include "remote/aws_config.h"
#include "remote/file_backend.h"
#include "remote/http_backend.h"
#include "remote/remote_url.h"
#include "remote/s3_backend.h"

namespace ferry {

// The interfaces of ferry/remote.h are defined here, with the factory.
ByteSink::~ByteSink() = default;
ByteSource::~ByteSource() = default;
Backend::~Backend() = default;

Result<bool> Backend::FolderExists() { return false; }

Result<bool> Backend::DeleteIfPresent(std::string_view key) {
  FERRY_RETURN_IF_ERROR(Delete(key));
  return true;
}

Status CappedStringSink::Append(std::string_view data) {
  if (out.size() + data.size() > max_)
    return Status::Corruption(what_,
                              "larger than " + std::to_string(max_) + " bytes");
  out.append(data);
  return Status::OK();
}

Result<SmallObject> Backend::ReadIfChanged(std::string_view key,
                                           std::string_view if_none_match,
                                           uint64_t max_bytes) {
  const std::string what = Describe() + "/" + std::string(key);
  // Replaced while read at most a few times in a row: the bytes and the
  // ETag must belong to one version.
  Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    FERRY_ASSIGN_OR_RETURN(ObjectInfo before, Stat(key));
    SmallObject out;
    out.etag = before.etag;
    if (!if_none_match.empty() && before.etag == if_none_match) {
      out.unchanged = true;
      return out;
    }
    if (before.size > max_bytes)
      return Status::Corruption(
          what, "larger than " + std::to_string(max_bytes) + " bytes");
    ReadOptions ro;
    const bool conditional = caps().conditional_reads && !before.etag.empty();
    if (conditional) ro.if_match = before.etag;
    CappedStringSink sink(what, max_bytes);
    last = Read(key, ByteRange{}, ro, &sink);
    if (last.IsFailedPrecondition()) continue;  // replaced meanwhile
    FERRY_RETURN_IF_ERROR(last);
    if (!conditional) {
      FERRY_ASSIGN_OR_RETURN(ObjectInfo after, Stat(key));
      if (after.etag != before.etag) {
        last = Status::Unavailable(what, "changed while read");
        continue;
      }
    }
    out.bytes = std::move(sink.out);
    return out;
  }
  return last;
}

bool IsRemoteUrl(std::string_view url) {
  return remote::UrlScheme(url).has_value();
}

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower((unsigned char)c));
  return out;
}

// "scheme://host:port/path" of an http(s) URL: userinfo, query and fragment
// dropped, scheme and host lower-cased, the default port made explicit.
Result<std::string> Origin(std::string_view url) {
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos)
    return Status::InvalidArgument("URL '" + RedactUrls(url) + "'",
                                   "not scheme://host[:port]");
  const std::string scheme = Lower(url.substr(0, sep));
  std::string_view rest = url.substr(sep + 3);
  rest = rest.substr(0, rest.find_first_of("?#"));
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  const std::string_view path =
      slash == std::string_view::npos ? "" : rest.substr(slash);
  if (size_t at = authority.rfind('@'); at != std::string_view::npos)
    authority.remove_prefix(at + 1);
  std::string host = Lower(authority);
  const size_t colon = host.rfind(':');
  if (colon == std::string::npos || host.find(']', colon) != std::string::npos)
    host += scheme == "https" ? ":443" : ":80";
  return scheme + "://" + host + std::string(path);
}

}  // namespace

std::string UrlWithoutSecrets(std::string_view url) {
  std::string out(url);
  const size_t sep = out.find("://");
  if (sep != std::string::npos) {
    const size_t start = sep + 3;
    const size_t end = std::min(out.find_first_of("/?#", start), out.size());
    const size_t at = out.substr(start, end - start).rfind('@');
    if (at != std::string::npos) out.erase(start, at + 1);
  }
  return RedactUrls(out);
}

Result<std::string> RemoteIdentity(std::string_view url,
                                   const RemoteOptions& options) {
  FERRY_ASSIGN_OR_RETURN(remote::RemoteUrl u, remote::ParseRemoteUrl(url));
  switch (u.kind) {
    case remote::RemoteUrl::kFile:
      return std::string(url);
    case remote::RemoteUrl::kHttp:
      return Origin(url);
    case remote::RemoteUrl::kS3: {
      FERRY_ASSIGN_OR_RETURN(
          remote::AwsConfig config,
          remote::ResolveAwsConfig(remote::AwsConfigInputsFrom(options)));
      FERRY_ASSIGN_OR_RETURN(std::string endpoint,
                             Origin(remote::S3EndpointUrl(config)));
      while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
      return "s3+" + endpoint + "/" + u.bucket + "/" + u.prefix;
    }
  }
  return std::string(url);
}

Result<std::unique_ptr<Backend>> OpenBackend(std::string_view url,
                                             const RemoteOptions& options,
                                             Env* env) {
  FERRY_ASSIGN_OR_RETURN(remote::RemoteUrl u, remote::ParseRemoteUrl(url));
  switch (u.kind) {
    case remote::RemoteUrl::kFile:
      return remote::NewFileBackend(u.path, std::string(url), env);
    case remote::RemoteUrl::kS3: {
      FERRY_ASSIGN_OR_RETURN(auto b,
                             remote::NewS3Backend(u.bucket, u.prefix, options));
      return std::unique_ptr<Backend>(std::move(b));
    }
    case remote::RemoteUrl::kHttp: {
      FERRY_ASSIGN_OR_RETURN(auto b, remote::NewHttpBackend(url, options));
      return std::unique_ptr<Backend>(std::move(b));
    }
  }
  return Status::NotSupported(std::string(url),
                              "this scheme is not built in yet");
}

}  // namespace ferry
