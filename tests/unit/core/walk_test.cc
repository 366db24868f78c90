// WalkTree on real trees: special files, links, unreadable folders, hidden
// names, excluded outputs, odd names; and a property test over random trees.
#include "ferry/walk.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "testutil/test_util.h"

namespace ferry {
namespace {

// Fails GetChildren of the named directories, as an unreadable folder does
// (tests run as root, where chmod 000 does not stop reads).
class UnreadableDirsEnv : public EnvWrapper {
 public:
  UnreadableDirsEnv(Env* target, std::set<std::string> dirs)
      : EnvWrapper(target), dirs_(std::move(dirs)) {}
  Result<std::vector<DirEntry>> GetChildren(const std::string& dir) override {
    if (dirs_.count(dir)) return PosixError(dir, EACCES);
    return EnvWrapper::GetChildren(dir);
  }

 private:
  std::set<std::string> dirs_;
};

std::vector<std::string> Paths(const std::vector<WalkProblem>& v) {
  std::vector<std::string> out;
  for (const auto& p : v) out.push_back(p.path);
  return out;
}

TEST(WalkTest, SpecialFilesAreSkippedWithTheirKindAndNeverOpened) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  test::WriteFile(env, dir.Join("t/c/a.png"), "a");
  ASSERT_EQ(::mkfifo(dir.Join("t/c/pipe").c_str(), 0644), 0);
  ASSERT_EQ(::symlink("/dev/zero", dir.Join("t/c/zero").c_str()), 0);
  int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sp = dir.Join("t/sock");
  ASSERT_LT(sp.size(), sizeof(addr.sun_path));
  std::copy(sp.begin(), sp.end(), addr.sun_path);
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  auto w = WalkTree(env, dir.Join("t"));
  ::close(sock);
  ASSERT_OK(w.status());
  EXPECT_EQ(w->files, std::vector<std::string>{"c/a.png"});
  std::vector<std::string> want = {"c/pipe", "c/zero", "sock"};
  EXPECT_EQ(Paths(w->skipped), want);
  EXPECT_NE(w->skipped[0].status.ToString().find("FIFO"), std::string::npos);
  EXPECT_NE(w->skipped[1].status.ToString().find("character device"),
            std::string::npos);
  EXPECT_NE(w->skipped[2].status.ToString().find("socket"), std::string::npos);
  EXPECT_TRUE(w->errors.empty());
}

TEST(WalkTest, UnreadableFolderAndDanglingLinkAreErrorsAndTheRestIsListed) {
  test::ScratchDir dir;
  test::WriteFile(Env::Default(), dir.Join("t/a/1"), "1");
  test::WriteFile(Env::Default(), dir.Join("t/locked/2"), "2");
  test::WriteFile(Env::Default(), dir.Join("t/z/3"), "3");
  ASSERT_EQ(::symlink("nowhere", dir.Join("t/dangling").c_str()), 0);
  UnreadableDirsEnv env(Env::Default(), {dir.Join("t/locked")});
  auto w = WalkTree(&env, dir.Join("t"));
  ASSERT_OK(w.status());
  std::vector<std::string> files = {"a/1", "z/3"};
  EXPECT_EQ(w->files, files);
  std::vector<std::string> errors = {"dangling", "locked"};
  EXPECT_EQ(Paths(w->errors), errors);
  EXPECT_NE(w->errors[0].status.ToString().find("dangling link"),
            std::string::npos);
  EXPECT_NE(w->errors[1].status.ToString().find("Permission denied"),
            std::string::npos);
}

TEST(WalkTest, HiddenNamesAreSkippedUnlessAskedFor) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  test::WriteFile(env, dir.Join("t/c/.DS_Store"), "x");
  test::WriteFile(env, dir.Join("t/.git/objects/ab"), "x");
  test::WriteFile(env, dir.Join("t/c/a.png"), "a");
  WalkOptions o;
  o.include_hidden = false;
  auto w = WalkTree(env, dir.Join("t"), o);
  ASSERT_OK(w.status());
  EXPECT_EQ(w->files, std::vector<std::string>{"c/a.png"});
  // A hidden folder is reported once, not entered.
  std::vector<std::string> skipped = {".git", "c/.DS_Store"};
  EXPECT_EQ(Paths(w->skipped), skipped);
  o.include_hidden = true;
  w = WalkTree(env, dir.Join("t"), o);
  ASSERT_OK(w.status());
  std::vector<std::string> all = {".git/objects/ab", "c/.DS_Store", "c/a.png"};
  EXPECT_EQ(w->files, all);
}

TEST(WalkTest, ExcludedFolderIsNotEnteredWhateverItsSpelling) {
  test::ScratchDir dir;
  Env* env = Env::Default();
  test::WriteFile(env, dir.Join("src/a.png"), "a");
  test::WriteFile(env, dir.Join("src/out/a.jpg"), "b");
  WalkOptions o;
  o.exclude = {dir.Join("src/./out/")};
  auto w = WalkTree(env, dir.Join("src"), o);
  ASSERT_OK(w.status());
  EXPECT_EQ(w->files, std::vector<std::string>{"a.png"});
  EXPECT_TRUE(w->skipped.empty());
}

TEST(WalkTest, RootThatIsASpecialFileIsAnError) {
  test::ScratchDir dir;
  ASSERT_EQ(::mkfifo(dir.Join("p").c_str(), 0644), 0);
  EXPECT_TRUE(
      WalkTree(Env::Default(), dir.Join("p")).status().IsInvalidArgument());
  EXPECT_TRUE(
      WalkTree(Env::Default(), dir.Join("missing")).status().IsNotFound());
}

// Random trees of files, FIFOs, links (to files, folders, nowhere, devices,
// out of the tree), unreadable folders and odd names (newline, invalid
// UTF-8, spaces): every regular file appears once, in order; every other
// entry is skipped or an error; nothing blocks.
TEST(WalkTest, RandomTreesPropertyTest) {
  std::mt19937 rng(12345);
  const std::vector<std::string> names = {
      "a", "b c", "new\nline", "\xff\xfe", "x.png", ".hid", "z", "é"};
  for (int round = 0; round < 30; ++round) {
    test::ScratchDir dir;
    Env* env = Env::Default();
    const std::string root = dir.Join("t");
    ASSERT_OK(env->CreateDirs(root));
    test::WriteFile(env, dir.Join("outside"), "o");
    std::set<std::string> want_files, want_skipped, want_errors, locked;
    std::vector<std::string> dirs = {""};
    for (int k = 0; k < 40; ++k) {
      const std::string parent = dirs[rng() % dirs.size()];
      const std::string name = names[rng() % names.size()] + std::to_string(k);
      const std::string rel = parent.empty() ? name : parent + "/" + name;
      const std::string abs = root + "/" + rel;
      // Under an unreadable or hidden folder nothing is seen.
      bool hidden_above = false;
      for (const auto& l : locked)
        hidden_above |= rel.compare(0, l.size() + 1, l + "/") == 0;
      switch (rng() % 8) {
        case 0:
        case 1:
          test::WriteFile(env, abs, "data");
          if (!hidden_above) want_files.insert(rel);
          break;
        case 2:
          ASSERT_EQ(::mkfifo(abs.c_str(), 0644), 0);
          if (!hidden_above) want_skipped.insert(rel);
          break;
        case 3:
          ASSERT_EQ(::symlink(dir.Join("outside").c_str(), abs.c_str()), 0);
          if (!hidden_above) want_files.insert(rel);
          break;
        case 4:
          ASSERT_EQ(::symlink(rng() % 2 ? "/dev/zero" : "/", abs.c_str()), 0);
          if (!hidden_above) want_skipped.insert(rel);
          break;
        case 5:
          ASSERT_EQ(::symlink("nowhere", abs.c_str()), 0);
          if (!hidden_above) want_errors.insert(rel);
          break;
        case 6:
          ASSERT_OK(env->CreateDir(abs));
          dirs.push_back(rel);
          break;
        case 7:
          ASSERT_OK(env->CreateDir(abs));
          dirs.push_back(rel);
          if (!hidden_above) want_errors.insert(rel);
          locked.insert(rel);
          break;
      }
    }
    std::set<std::string> locked_abs;
    for (const auto& l : locked) locked_abs.insert(root + "/" + l);
    UnreadableDirsEnv uenv(env, locked_abs);
    auto w = WalkTree(&uenv, root);
    ASSERT_OK(w.status());
    EXPECT_TRUE(std::is_sorted(w->files.begin(), w->files.end()));
    EXPECT_EQ(std::set<std::string>(w->files.begin(), w->files.end()),
              want_files);
    EXPECT_EQ(w->files.size(), want_files.size());
    auto skipped = Paths(w->skipped), errors = Paths(w->errors);
    EXPECT_EQ(std::set<std::string>(skipped.begin(), skipped.end()),
              want_skipped);
    EXPECT_EQ(std::set<std::string>(errors.begin(), errors.end()), want_errors);
  }
}

}  // namespace
}  // namespace ferry
