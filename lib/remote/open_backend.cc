// OpenBackend: the one place that turns a URL into a Backend (ferry/remote.h).
#include <string>

#include "ferry/remote.h"
#include "remote/file_backend.h"
#include "remote/http_backend.h"
#include "remote/remote_url.h"
#include "remote/s3_backend.h"

namespace ferry {

// The interfaces of ferry/remote.h are defined here, with the factory.
ByteSink::~ByteSink() = default;
ByteSource::~ByteSource() = default;
Backend::~Backend() = default;

bool IsRemoteUrl(std::string_view url) {
  return remote::UrlScheme(url).has_value();
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
