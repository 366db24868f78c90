// S3 configuration resolved as the AWS CLI (v2) resolves it: command-line
// flags, then environment variables, then the profile in ~/.aws/credentials
// and ~/.aws/config.
//
//   profile     --profile > AWS_PROFILE > AWS_DEFAULT_PROFILE > "default";
//               one named by a flag or variable must exist.
//   credentials --no-sign-request: none. Else AWS_ACCESS_KEY_ID +
//               AWS_SECRET_ACCESS_KEY (+ AWS_SECURITY_TOKEN or
//               AWS_SESSION_TOKEN, in that order, as the CLI), unless
//               --profile was given (as the CLI: an explicit profile skips
//               the environment); then the profile's aws_access_key_id /
//               aws_secret_access_key / aws_session_token in the
//               credentials file, then in the config file.
//   region      --region > AWS_REGION > AWS_DEFAULT_REGION > profile
//               region > "us-east-1".
//   endpoint    --endpoint-url > AWS_ENDPOINT_URL_S3 > AWS_ENDPOINT_URL >
//               [services X] "s3 = endpoint_url" > profile "s3 =
//               endpoint_url" > profile endpoint_url > AWS's own.
//               AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true keeps the flag only.
//   ca_bundle   --ca-bundle > AWS_CA_BUNDLE > profile ca_bundle.
//   addressing  --s3-addressing > profile "s3 = addressing_style" > auto.
// The files: AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE, or ~/.aws/....
// An empty environment variable counts as unset. Role, SSO and
// credential_process profiles are refused (NotSupported) by name.
// No error message ever contains a secret.
//
// Thread-safety: plain functions; the getenv given must be callable from the
// calling thread.
#ifndef FERRY_REMOTE_AWS_CONFIG_H_
#define FERRY_REMOTE_AWS_CONFIG_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/env.h"
#include "ferry/remote.h"
#include "ferry/result.h"
#include "remote/sigv4.h"

namespace ferry::remote {

struct AwsConfigInputs {  // what the CLI passes; empty = not given
  std::string profile, endpoint_url, region, ca_bundle;
  std::string addressing;  // "", "path", "virtual", "auto"
  bool no_sign_request = false;
  // Injectable for tests; default ::getenv.
  std::function<std::optional<std::string>(const char*)> getenv;
  std::string home;    // default $HOME
  Env* env = nullptr;  // reads the files; default Env::Default()
};

// The flags of RemoteOptions as inputs (getenv, home, env left default).
AwsConfigInputs AwsConfigInputsFrom(const RemoteOptions& options);

struct AwsConfig {
  AwsCredentials creds;
  bool sign = true;          // false with --no-sign-request
  std::string region;        // default "us-east-1"
  std::string endpoint_url;  // "" = AWS (S3EndpointUrl gives it)
  // "path" or "virtual". auto is resolved: path for a custom endpoint,
  // virtual for AWS (S3AddressingFor still uses path for a bucket that
  // cannot be a host name).
  std::string addressing;
  bool addressing_auto = false;  // addressing came from "auto"
  std::string ca_bundle;
  std::string profile;  // the one used (for messages)
};

Result<AwsConfig> ResolveAwsConfig(const AwsConfigInputs& inputs);

// endpoint_url, or AWS's "https://s3.<region>.amazonaws.com".
std::string S3EndpointUrl(const AwsConfig& config);

// "path" or "virtual" for a request to bucket: config.addressing, except that
// an auto choice falls back to path when bucket is not a DNS-safe name
// (dots break TLS wildcard certificates; upper case, '_' are not host names).
std::string S3AddressingFor(const AwsConfig& config, std::string_view bucket);

// The value to print in a -v log for header name: "<redacted>" for
// Authorization, X-Amz-Security-Token, Cookie, Set-Cookie,
// Proxy-Authorization, X-Api-Key, X-Amz-Server-Side-Encryption-Customer-Key
// and any header the user gave with --header (user_headers); else value.
std::string RedactHeaderForLog(
    std::string_view name, std::string_view value,
    const std::vector<std::pair<std::string, std::string>>& user_headers = {});

}  // namespace ferry::remote

#endif  // FERRY_REMOTE_AWS_CONFIG_H_
