#include "sync/cleaner.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "ferry/sync.h"
#include "sync/fs_util.h"

namespace ferry::sync {
namespace {

// Whether this process runs one thread only: a fork of it is safe (no lock
// of another thread is copied held into the child).
bool OnlyThread() {
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return false;
  int n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n == 1;
}

int OpenLock(const std::string& path, int flags) {
  int fd;
  do {
    // O_NONBLOCK: a FIFO put in a lock file's place opens at once (only
    // flock is used) instead of waiting for a writer; every sync hung.
    fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK, 0644);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

bool Flock(int fd, int op) {
  while (::flock(fd, op) != 0)
    if (errno != EINTR) return false;
  return true;
}

std::string CleanersLock(Env* env, const std::string& cache_dir) {
  const std::string locks = JoinPath(cache_dir, "locks");
  (void)env->CreateDirs(locks);
  return JoinPath(locks, "cleaners");
}

// Takes the locks (the cleaners' shared, each trash's own), then tells
// ready_fd (if any), then removes the trash whose lock it holds and
// restamps their objects.
void Clean(Env* env, const std::string& cache_dir, bool durable,
           const std::vector<Trash>& trash, int ready_fd) {
  std::vector<int> fds;
  int cleaners = OpenLock(CleanersLock(env, cache_dir), O_RDWR | O_CREAT);
  if (cleaners >= 0 && Flock(cleaners, LOCK_SH)) fds.push_back(cleaners);
  std::vector<const Trash*> mine;
  for (const Trash& t : trash) {
    int fd = OpenLock(JoinPath(t.path, std::string(kViewLockName)), O_RDONLY);
    if (fd < 0) continue;
    if (!Flock(fd, LOCK_EX | LOCK_NB)) {
      ::close(fd);  // not ours: a later sync's
      continue;
    }
    fds.push_back(fd);
    mine.push_back(&t);
  }
  if (ready_fd >= 0) {
    char c = 1;
    while (::write(ready_fd, &c, 1) < 0 && errno == EINTR) {
    }
    ::close(ready_fd);
  }
  if (!mine.empty()) {
    auto cache = Cache::Open(env, cache_dir, durable);
    for (const Trash* t : mine) {
      if (cache.ok()) {
        (void)RemoveTrash(env, cache->get(), *t);
      } else {
        (void)RemoveTree(env, t->path);  // its objects re-hashed once
      }
    }
  }
  for (int fd : fds) ::close(fd);
}

}  // namespace

Status RemoveTrash(Env* env, Cache* cache, const Trash& trash) {
  FERRY_RETURN_IF_ERROR(RemoveTree(env, trash.path));
  // The unlinks changed the objects' ctime: recorded, so it is not taken
  // for a change of their bytes.
  FERRY_RETURN_IF_ERROR(cache->RestampObjects(trash.objects));
  return trash.view.empty() ? Status::OK() : cache->Unpin(trash.view);
}

void RemoveTrashDetached(Env* env, const std::string& cache_dir, bool durable,
                         std::vector<Trash> trash) {
  if (trash.empty()) return;
  int ready[2];
  if (!OnlyThread() || ::pipe2(ready, O_CLOEXEC) != 0)
    return Clean(env, cache_dir, durable, trash, -1);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(ready[0]);
    ::close(ready[1]);
    return Clean(env, cache_dir, durable, trash, -1);
  }
  if (pid == 0) {
    // A session of its own, and a grandchild: init reaps it, and no
    // terminal's signal meant for the caller reaches it.
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    int null = ::open("/dev/null", O_RDWR);
    if (null >= 0)
      for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
    // Only the pipe is kept (as fd 3): no copy of the caller's locks,
    // sockets or pipes (a caller reading this process's output until EOF
    // must not wait for the cleaner).
    if (ready[1] != 3) {
      ::dup2(ready[1], 3);
    }
    ::close_range(4, ~0U, 0);
    Clean(env, cache_dir, durable, trash, 3);
    ::_exit(0);
  }
  ::close(ready[1]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  char c;
  while (::read(ready[0], &c, 1) < 0 && errno == EINTR) {
  }
  ::close(ready[0]);
}

void WaitForCleaners(const std::string& cache_dir) {
  int fd = OpenLock(JoinPath(cache_dir, "locks/cleaners"), O_RDONLY);
  if (fd < 0) return;
  (void)Flock(fd, LOCK_EX);
  ::close(fd);
}

}  // namespace ferry::sync
