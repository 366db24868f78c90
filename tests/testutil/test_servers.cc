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
  s.http_url = kv["FERRY_TEST_HTTP_URL"];
  s.http_root = kv["FERRY_TEST_HTTP_ROOT"];
  s.s3_url = kv["FERRY_TEST_S3_URL"];
  s.s3_bucket = kv["FERRY_TEST_S3_BUCKET"];
  s.s3_access_key = kv["FERRY_TEST_S3_ACCESS_KEY"];
  s.s3_secret_key = kv["FERRY_TEST_S3_SECRET_KEY"];
  if (s.http_url.empty() || s.s3_url.empty()) {
    return Status::Corruption(path, "incomplete servers env file");
  }
  return s;
}

}  // namespace ferry::test
