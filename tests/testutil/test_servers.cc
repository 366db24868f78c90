#include "testutil/test_servers.h"

#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

#include "ferry/env.h"

namespace ferry::test {

namespace {

// The parts of text between separators: n separators, n + 1 parts.
std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == sep) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

}  // namespace

Result<TestServers> TestServers::FromEnv() {
  const char* path = std::getenv("FERRY_TEST_SERVERS_ENV");
  if (path == nullptr || *path == '\0') {
    return Status::NotFound(
        "FERRY_TEST_SERVERS_ENV is not set; run under ctest");
  }
  FERRY_ASSIGN_OR_RETURN(std::string text,
                         ReadFileToString(Env::Default(), path));
  std::map<std::string, std::string> kv;
  for (const std::string& line : Split(text, '\n')) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  TestServers s;
  struct Field {
    const char* name;
    std::string TestServers::*member;
  };
  static constexpr Field kFields[] = {
      {"SERVERS_DIR", &TestServers::dir},
      {"HTTP_URL", &TestServers::http_url},
      {"HTTP_ROOT", &TestServers::http_root},
      {"HTTP_ACCESS_LOG", &TestServers::http_access_log},
      {"HTTPS_URL", &TestServers::https_url},
      {"HTTPS_ACCESS_LOG", &TestServers::https_access_log},
      {"CA_BUNDLE", &TestServers::ca_bundle},
      {"HTTP_TOKEN", &TestServers::http_token},
      {"HTTP_PRIVATE_PATH", &TestServers::http_private_path},
      {"S3_URL", &TestServers::s3_url},
      {"S3_PUBLIC_URL", &TestServers::s3_public_url},
      {"S3RVER_URL", &TestServers::s3rver_url},
      {"S3_ROOT", &TestServers::s3_root},
      {"S3_BUCKET", &TestServers::s3_bucket},
      {"S3_ACCESS_KEY", &TestServers::s3_access_key},
      {"S3_SECRET_KEY", &TestServers::s3_secret_key},
      {"S3_SESSION_TOKEN", &TestServers::s3_session_token},
      {"FAULT_HTTP_URL", &TestServers::fault_http_url},
      {"FAULT_HTTP_CONTROL", &TestServers::fault_http_control},
      {"FAULT_S3_URL", &TestServers::fault_s3_url},
      {"FAULT_S3_CONTROL", &TestServers::fault_s3_control},
  };
  for (const Field& f : kFields) {
    s.*f.member = kv[std::string("FERRY_TEST_") + f.name];
  }
  if (s.http_url.empty() || s.s3_url.empty()) {
    return Status::Corruption(path, "incomplete servers env file");
  }
  return s;
}

Result<std::vector<AccessLogEntry>> ReadAccessLog(const std::string& path) {
  FERRY_ASSIGN_OR_RETURN(std::string text,
                         ReadFileToString(Env::Default(), path));
  std::vector<AccessLogEntry> entries;
  for (const std::string& line : Split(text, '\n')) {
    if (line.empty()) continue;
    std::vector<std::string> f = Split(line, '\t');
    if (f.size() != 8) return Status::Corruption(path, line);
    for (std::string& field : f) {
      if (field == "-") field.clear();
    }
    AccessLogEntry e;
    // "GET /target HTTP/1.1"
    size_t sp1 = f[0].find(' ');
    size_t sp2 = f[0].rfind(' ');
    e.method = f[0].substr(0, sp1);
    if (sp1 != std::string::npos && sp2 > sp1) {
      e.target = f[0].substr(sp1 + 1, sp2 - sp1 - 1);
    }
    e.range = f[1];
    e.status = std::atoi(f[2].c_str());
    e.body_bytes_sent = std::atoll(f[3].c_str());
    e.if_range = f[4];
    e.if_match = f[5];
    e.connection = std::atoll(f[6].c_str());
    e.if_none_match = f[7];
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace ferry::test
