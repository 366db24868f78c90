#include "testutil/test_util.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>

namespace ferry::test {

ScratchDir::ScratchDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/ferry-test-XXXXXX";
  char* made = ::mkdtemp(tmpl.data());
  if (made == nullptr) std::abort();
  path_ = made;
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

pid_t ForkAlone() {
  size_t threads = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++threads;
  if (ec || threads != 1) {
    ADD_FAILURE() << "fork() with " << threads
                  << " threads running (a child may inherit a held lock)";
    return -1;
  }
  return ::fork();
}

void AgeFile(const std::string& path, int seconds) {
  std::error_code ec;
  std::filesystem::last_write_time(
      path,
      std::filesystem::file_time_type::clock::now() -
          std::chrono::seconds(seconds),
      ec);
  if (ec) ADD_FAILURE() << path << ": " << ec.message();
}

void WriteFile(Env* env, const std::string& path, const std::string& data) {
  ASSERT_OK(env->CreateDirs(DirName(path)));
  auto f = env->NewWritableFile(path);
  ASSERT_OK(f.status());
  ASSERT_OK((*f)->Append(data));
  ASSERT_OK((*f)->Close());
}

std::string ReadFile(Env* env, const std::string& path) {
  auto s = ReadFileToString(env, path);
  if (!s.ok()) return "<error: " + s.status().ToString() + ">";
  return *s;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

}  // namespace ferry::test
