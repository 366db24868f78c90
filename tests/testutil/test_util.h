// Helpers shared by the tests: status matchers and scratch directories.
#ifndef FERRY_TESTS_TESTUTIL_TEST_UTIL_H_
#define FERRY_TESTS_TESTUTIL_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sys/types.h>

#include <string>

#include "ferry/env.h"
#include "ferry/status.h"

#define ASSERT_OK(expr)                                     \
  do {                                                      \
    ::ferry::Status _s = (expr);                            \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s.ToString(); \
  } while (0)
#define EXPECT_OK(expr)                                     \
  do {                                                      \
    ::ferry::Status _s = (expr);                            \
    EXPECT_TRUE(_s.ok()) << #expr << ": " << _s.ToString(); \
  } while (0)

namespace ferry::test {

// A fresh directory under $TMPDIR, removed (recursively) on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Join(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// Writes data to path (creating parents) through env; fails the test on error.
void WriteFile(Env* env, const std::string& path, const std::string& data);
// The file's content, or "<error: ...>".
std::string ReadFile(Env* env, const std::string& path);

// Sets the mtime of the file at path (a real one) to `seconds` ago: a test
// of an age rule need not sleep.
void AgeFile(const std::string& path, int seconds);

// fork(), refused (-1, and the test fails) while this process runs more
// than one thread: the child of a threaded process may inherit a lock
// another thread held (ASan's allocator: the child's first thread then
// waits for ever; CI's two UnmanagedSyncTest runs hung 900 s each, forked
// while a StubServer thread was starting). Start such threads after it.
pid_t ForkAlone();

// n pseudo-random bytes, the same for the same seed (std::mt19937).
std::string RandomBytes(size_t n, uint32_t seed);

}  // namespace ferry::test

#endif  // FERRY_TESTS_TESTUTIL_TEST_UTIL_H_
