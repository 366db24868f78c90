// The AWS CLI's resolution order (awscli v2's botocore: configprovider.py
// and credentials.py), reimplemented for the S3 settings ferry needs.
#include "remote/aws_config.h"

#include <cstdlib>

#include "remote/aws_ini.h"

namespace ferry::remote {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return AsciiLower(a) == AsciiLower(b);
}

// The environment as the inputs see it; "" counts as unset.
class Environment {
 public:
  explicit Environment(const AwsConfigInputs& in) : in_(in) {}
  std::optional<std::string> Get(const char* name) const {
    std::optional<std::string> v;
    if (in_.getenv) {
      v = in_.getenv(name);
    } else if (const char* p = std::getenv(name)) {
      v = p;
    }
    if (v && v->empty()) v.reset();
    return v;
  }
  std::string GetOr(const char* name, std::string fallback) const {
    std::optional<std::string> v = Get(name);
    return v ? *v : std::move(fallback);
  }

 private:
  const AwsConfigInputs& in_;
};

// The first of the candidates that is set.
std::string FirstSet(std::initializer_list<std::optional<std::string>> list) {
  for (const auto& v : list)
    if (v && !v->empty()) return *v;
  return "";
}

std::optional<std::string> Setting(const IniSection& s, const char* key) {
  auto it = s.find(key);
  if (it == s.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

// The files, parsed; a file that does not exist is empty.
struct AwsFiles {
  std::string config_path, credentials_path;
  IniFile config, credentials;
  std::map<std::string, IniSection> profiles;  // config, then credentials
  std::map<std::string, IniSection> services;  // [services name]
};

std::string ExpandHome(std::string path, const std::string& home) {
  if (path == "~" || path.rfind("~/", 0) == 0) path.replace(0, 1, home);
  return path;
}

Result<IniFile> LoadIni(Env* env, const std::string& path) {
  if (path.empty() || !env->FileExists(path)) return IniFile{};
  Result<std::string> text = ReadFileToString(env, path, 16u << 20);
  if (!text.ok()) return text.status().WithContext("AWS configuration");
  return ParseAwsIni(*text, path);
}

// "profile name" (also "profile \"name\"") -> name; "default" -> default.
std::optional<std::string> ConfigProfileName(const std::string& section) {
  if (section == "default") return section;
  std::string_view rest = section;
  if (rest.rfind("profile", 0) != 0) return std::nullopt;
  rest.remove_prefix(7);
  if (rest.empty() || (rest[0] != ' ' && rest[0] != '\t')) return std::nullopt;
  while (!rest.empty() && (rest[0] == ' ' || rest[0] == '\t'))
    rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t'))
    rest.remove_suffix(1);
  // As shlex.split: quotes may hold spaces; unquoted, a space makes a
  // third word and the section is no profile.
  if (rest.size() >= 2 && (rest[0] == '"' || rest[0] == '\'') &&
      rest.back() == rest[0])
    return std::string(rest.substr(1, rest.size() - 2));
  if (rest.empty() || rest.find_first_of(" \t\"'") != std::string_view::npos)
    return std::nullopt;
  return std::string(rest);
}

Result<AwsFiles> LoadFiles(const AwsConfigInputs& in, const Environment& e) {
  std::string home = !in.home.empty() ? in.home : e.GetOr("HOME", "");
  std::string dot_aws = home.empty() ? "" : home + "/.aws/";
  AwsFiles f;
  f.config_path = ExpandHome(
      e.GetOr("AWS_CONFIG_FILE", dot_aws.empty() ? "" : dot_aws + "config"),
      home);
  f.credentials_path =
      ExpandHome(e.GetOr("AWS_SHARED_CREDENTIALS_FILE",
                         dot_aws.empty() ? "" : dot_aws + "credentials"),
                 home);
  Env* env = in.env ? in.env : Env::Default();
  FERRY_ASSIGN_OR_RETURN(f.config, LoadIni(env, f.config_path));
  FERRY_ASSIGN_OR_RETURN(f.credentials, LoadIni(env, f.credentials_path));
  for (const auto& [name, section] : f.config) {
    if (std::optional<std::string> p = ConfigProfileName(name)) {
      f.profiles[*p] = section;
    } else if (name.rfind("services ", 0) == 0) {
      f.services[name.substr(9)] = section;
    }
  }
  // As botocore: the credentials file's sections are profiles too, and its
  // settings win over the config file's. An empty section is a profile.
  for (const auto& [name, section] : f.credentials) {
    IniSection& profile = f.profiles[name];
    for (const auto& [k, v] : section) profile[k] = v;
  }
  return f;
}

// Static keys from one section; nullopt if it has none. The legacy
// *_security_token is looked at first, as the CLI does. A key id without
// its secret is an error (as the CLI's PartialCredentialsError).
Result<std::optional<AwsCredentials>> KeysFrom(const IniSection& s,
                                               const std::string& profile,
                                               const std::string& file) {
  std::optional<std::string> id = Setting(s, "aws_access_key_id");
  if (!id) return std::optional<AwsCredentials>();
  std::optional<std::string> secret = Setting(s, "aws_secret_access_key");
  if (!secret)
    return Status::InvalidArgument("AWS profile '" + profile + "' in " + file +
                                   " has aws_access_key_id but no "
                                   "aws_secret_access_key");
  AwsCredentials c{*id, *secret,
                   FirstSet({Setting(s, "aws_security_token"),
                             Setting(s, "aws_session_token")})};
  return std::optional<AwsCredentials>(std::move(c));
}

const IniSection& SectionOr(const IniFile& ini, const std::string& name) {
  static const IniSection kEmpty;
  auto it = ini.find(name);
  return it == ini.end() ? kEmpty : it->second;
}

Status Unsupported(const std::string& profile, const char* setting) {
  return Status::NotSupported(
      "AWS profile '" + profile + "' uses " + setting +
      ", which ferry does not support; give it aws_access_key_id and "
      "aws_secret_access_key, or set AWS_ACCESS_KEY_ID and "
      "AWS_SECRET_ACCESS_KEY");
}

Result<AwsCredentials> ResolveCredentials(const AwsConfigInputs& in,
                                          const Environment& e,
                                          const AwsFiles& f,
                                          const std::string& profile,
                                          const IniSection& scoped) {
  // An explicit --profile skips the environment's keys (awscli
  // credentials.py: "An explicitly provided profile will negate an
  // EnvProvider"); AWS_PROFILE does not.
  if (in.profile.empty()) {
    if (std::optional<std::string> id = e.Get("AWS_ACCESS_KEY_ID")) {
      std::optional<std::string> secret = e.Get("AWS_SECRET_ACCESS_KEY");
      if (!secret)
        return Status::InvalidArgument(
            "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
      return AwsCredentials{
          *id, *secret,
          FirstSet({e.Get("AWS_SECURITY_TOKEN"), e.Get("AWS_SESSION_TOKEN")})};
    }
  }
  for (const char* s :
       {"role_arn", "web_identity_token_file", "sso_start_url", "sso_session"})
    if (Setting(scoped, s)) return Unsupported(profile, s);
  FERRY_ASSIGN_OR_RETURN(
      std::optional<AwsCredentials> c,
      KeysFrom(SectionOr(f.credentials, profile), profile, f.credentials_path));
  if (c) return *c;
  if (Setting(scoped, "credential_process"))
    return Unsupported(profile, "credential_process");
  IniSection config_profile;
  for (const auto& [name, section] : f.config)
    if (ConfigProfileName(name) == profile) config_profile = section;
  FERRY_ASSIGN_OR_RETURN(c, KeysFrom(config_profile, profile, f.config_path));
  if (c) return *c;
  return Status::InvalidArgument(
      "no AWS credentials found (profile '" + profile +
      "'): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, put "
      "aws_access_key_id and aws_secret_access_key under [" +
      profile + "] in " +
      (f.credentials_path.empty() ? "~/.aws/credentials" : f.credentials_path) +
      ", or use --no-sign-request for a public bucket");
}

Result<IniSection> NestedS3(const IniSection& s, const std::string& file) {
  auto it = s.find("s3");
  if (it == s.end()) return IniSection{};
  return ParseAwsIniNested(it->second, file, "s3");
}

bool IsTrue(std::optional<std::string> v) {
  return v && EqualsIgnoreCase(*v, "true");
}

Result<std::string> ResolveEndpoint(const AwsConfigInputs& in,
                                    const Environment& e, const AwsFiles& f,
                                    const IniSection& scoped,
                                    const IniSection& s3) {
  if (!in.endpoint_url.empty()) return in.endpoint_url;
  if (IsTrue(e.Get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) ||
      IsTrue(Setting(scoped, "ignore_configure_endpoint_urls")))
    return std::string();
  std::optional<std::string> services_s3;
  if (std::optional<std::string> name = Setting(scoped, "services")) {
    auto it = f.services.find(*name);
    if (it != f.services.end()) {
      FERRY_ASSIGN_OR_RETURN(IniSection nested,
                             NestedS3(it->second, f.config_path));
      services_s3 = Setting(nested, "endpoint_url");
    }
  }
  return FirstSet({e.Get("AWS_ENDPOINT_URL_S3"), e.Get("AWS_ENDPOINT_URL"),
                   services_s3, Setting(s3, "endpoint_url"),
                   Setting(scoped, "endpoint_url")});
}

}  // namespace

AwsConfigInputs AwsConfigInputsFrom(const RemoteOptions& options) {
  AwsConfigInputs in;
  in.profile = options.profile;
  in.endpoint_url = options.endpoint_url;
  in.region = options.region;
  in.ca_bundle = options.ca_bundle;
  in.addressing = options.addressing;
  in.no_sign_request = options.no_sign_request;
  return in;
}

Result<AwsConfig> ResolveAwsConfig(const AwsConfigInputs& in) {
  Environment e(in);
  FERRY_ASSIGN_OR_RETURN(AwsFiles f, LoadFiles(in, e));
  AwsConfig c;
  bool named = !in.profile.empty() || e.Get("AWS_PROFILE") ||
               e.Get("AWS_DEFAULT_PROFILE");
  c.profile = FirstSet({in.profile, e.Get("AWS_PROFILE"),
                        e.Get("AWS_DEFAULT_PROFILE"), "default"});
  auto it = f.profiles.find(c.profile);
  if (it == f.profiles.end() && named)
    return Status::InvalidArgument(
        "AWS profile '" + c.profile + "' not found in " +
        (f.config_path.empty() ? "~/.aws/config" : f.config_path) + " or " +
        (f.credentials_path.empty() ? "~/.aws/credentials"
                                    : f.credentials_path));
  const IniSection scoped = it == f.profiles.end() ? IniSection{} : it->second;
  FERRY_ASSIGN_OR_RETURN(IniSection s3, NestedS3(scoped, f.config_path));

  if (in.no_sign_request) {
    c.sign = false;
  } else {
    FERRY_ASSIGN_OR_RETURN(c.creds,
                           ResolveCredentials(in, e, f, c.profile, scoped));
  }
  c.region =
      FirstSet({in.region, e.Get("AWS_REGION"), e.Get("AWS_DEFAULT_REGION"),
                Setting(scoped, "region"), "us-east-1"});
  FERRY_ASSIGN_OR_RETURN(c.endpoint_url, ResolveEndpoint(in, e, f, scoped, s3));
  c.ca_bundle = FirstSet(
      {in.ca_bundle, e.Get("AWS_CA_BUNDLE"), Setting(scoped, "ca_bundle")});
  std::string addressing =
      FirstSet({in.addressing, Setting(s3, "addressing_style"), "auto"});
  if (addressing == "auto") {
    c.addressing_auto = true;
    addressing = c.endpoint_url.empty() ? "virtual" : "path";
  } else if (addressing != "path" && addressing != "virtual") {
    return Status::InvalidArgument("S3 addressing style '" + addressing +
                                   "': expected path, virtual or auto");
  }
  c.addressing = addressing;
  return c;
}

std::string S3EndpointUrl(const AwsConfig& config) {
  if (!config.endpoint_url.empty()) return config.endpoint_url;
  bool china = config.region.rfind("cn-", 0) == 0;
  return "https://s3." + config.region +
         (china ? ".amazonaws.com.cn" : ".amazonaws.com");
}

std::string S3AddressingFor(const AwsConfig& config, std::string_view bucket) {
  if (!config.addressing_auto || config.addressing == "path")
    return config.addressing;
  // A DNS label: 3-63 of [a-z0-9-], starting and ending alphanumeric.
  bool ok = bucket.size() >= 3 && bucket.size() <= 63 &&
            bucket.front() != '-' && bucket.back() != '-';
  for (char ch : bucket)
    ok = ok &&
         ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-');
  return ok ? "virtual" : "path";
}

std::string RedactHeaderForLog(
    std::string_view name, std::string_view value,
    const std::vector<std::pair<std::string, std::string>>& user_headers) {
  static constexpr std::string_view kSecret[] = {
      "authorization",
      "x-amz-security-token",
      "cookie",
      "set-cookie",
      "proxy-authorization",
      "x-api-key",
      "x-amz-server-side-encryption-customer-key",
      "x-amz-copy-source-server-side-encryption-customer-key"};
  for (std::string_view s : kSecret)
    if (EqualsIgnoreCase(name, s)) return "<redacted>";
  for (const auto& [user_name, user_value] : user_headers)
    if (EqualsIgnoreCase(name, user_name)) return "<redacted>";
  return std::string(value);
}

}  // namespace ferry::remote
