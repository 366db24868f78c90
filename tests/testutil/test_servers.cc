#include "testutil/test_servers.h"

#include <cstdlib>
#include <map>

#include "ferry/env.h"

namespace ferry::test {

Result<TestServers> TestServers::FromEnv() {
  const char* path = std::getenv("FERRY_TEST_SERVERS_ENV");
  if (path == nullptr || *path == '\0') {
    return Status::NotFound(
        "FERRY_TEST_SERVERS_ENV is not set; run under ctest");
  }
  FERRY_ASSIGN_OR_RETURN(std::string text,
                         ReadFileToString(Env::Default(), path));
  std::map<std::string, std::string> kv;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  TestServers s;
  struct Field {
    const char* name;
    std::string TestServers::*member;
  };
  static constexpr Field kFields[] = {
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

}  // namespace ferry::test
