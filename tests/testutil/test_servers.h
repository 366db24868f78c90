// Where the integration servers started by tests/integration/servers.sh
// listen. ctest passes the env file's path in FERRY_TEST_SERVERS_ENV.
#ifndef FERRY_TESTS_TESTUTIL_TEST_SERVERS_H_
#define FERRY_TESTS_TESTUTIL_TEST_SERVERS_H_

#include <string>

#include "ferry/result.h"

namespace ferry::test {

struct TestServers {
  std::string http_url;   // nginx: http://127.0.0.1:PORT
  std::string http_root;  // the directory nginx serves
  std::string s3_url;     // s3rver: http://127.0.0.1:PORT (path-style)
  std::string s3_bucket;
  std::string s3_access_key;
  std::string s3_secret_key;

  static Result<TestServers> FromEnv();
};

}  // namespace ferry::test

#endif  // FERRY_TESTS_TESTUTIL_TEST_SERVERS_H_
