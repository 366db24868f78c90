#include "ferry/atomic_file.h"

#include <signal.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <random>

namespace ferry {
namespace {

// ".ferry-tmp-<pid>-<12 hex>-<name>": hidden (walks and globs pass it over),
// ours by its prefix (nothing else is ever removed as a temporary). Its
// writer holds a lock on it for as long as it exists (WritableFile::
// LockWriter), which is what tells a cleaner, on any machine, that it is
// in use; the pid in the name only speeds that up where it means something.
constexpr std::string_view kTempPrefix = ".ferry-tmp-";
// Room for the prefix, pid and id within a 255-byte file name.
constexpr size_t kMaxNameInTemp = 200;
// A temporary nobody holds the lock of is stale once it is this old (the
// age covers a file system whose locks other machines do not see: its
// writer keeps writing, so its mtime stays young).
constexpr int64_t kSettleNs = int64_t{60} * 1000000000;
// Names tried when one is taken, or a cleaner removes the new file.
constexpr int kCreateAttempts = 8;

// This process's tag: the id's first 16 bits. A file with our pid but
// another tag was left by an earlier process that had the same pid (pids
// repeat, in containers above all).
uint64_t ProcessTag() {
  static const uint64_t tag = std::random_device{}() & 0xFFFF;
  return tag;
}

// The tag, then 32 random bits: a name seen in the folder does not tell the
// next one (the file is made with O_EXCL anyway: a link planted at a
// guessed name only makes the writer try another).
uint32_t RandomBits() {
  // getrandom(2) a few hundred names at a time: one call per file is a
  // measurable part of putting many small ones.
  static std::mutex mu;
  static uint32_t pool[256];
  static size_t left = 0;
  static uint64_t counter = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (left == 0 && ::getrandom(pool, sizeof pool, 0) == sizeof pool)
    left = std::size(pool);
  if (left > 0) return pool[--left];
  return static_cast<uint32_t>((++counter * 0x9E3779B97F4A7C15ull) >> 32);
}

std::string TempNameFor(const std::string& final_path) {
  const uint64_t id = (ProcessTag() << 32) | RandomBits();
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%ld-%012llx-", static_cast<long>(::getpid()),
                static_cast<unsigned long long>(id));
  const size_t slash = final_path.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  std::string name = final_path.substr(base, kMaxNameInTemp);
  return final_path.substr(0, base) + std::string(kTempPrefix) + buf + name;
}

// The writer's pid from a temporary file's name, or -1 if it is not one;
// *tag gets the id's process tag.
long TempOwner(std::string_view name, uint64_t* tag = nullptr) {
  const size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  if (name.substr(0, kTempPrefix.size()) != kTempPrefix) return -1;
  name.remove_prefix(kTempPrefix.size());
  long pid = 0;
  size_t i = 0;
  for (; i < name.size() && i < 10 && name[i] >= '0' && name[i] <= '9'; ++i)
    pid = pid * 10 + (name[i] - '0');
  if (i == 0 || i >= name.size() || name[i] != '-') return -1;
  name.remove_prefix(i + 1);
  if (name.size() < 13 || name[12] != '-') return -1;
  uint64_t id = 0;
  for (char c : name.substr(0, 12)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return -1;
    id = id * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  if (tag) *tag = id >> 32;
  return pid;
}

// Whether the process named by a temporary file is gone. Only asked on a
// local file system, where a writer on another machine is impossible; the
// pid may still be another pid namespace's (a container), so this is asked
// only of files whose lock nobody holds.
bool WriterGone(long pid, uint64_t tag) {
  if (pid <= 0) return true;
  if (pid == static_cast<long>(::getpid())) return tag != ProcessTag();
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// Removes path if it is a stale temporary: its lock free (taken here and
// held through the removal, so that a writer locking it meanwhile fails and
// starts another) and old, or its writer gone. Counts it in sweep as
// removed (or, dry_run, would be) or failed.
void RemoveIfStale(Env* env, const std::string& path, bool local, bool dry_run,
                   StaleTempSweep* sweep) {
  uint64_t tag = 0;
  const long pid = TempOwner(path, &tag);
  if (pid < 0) return;
  FileInfo info;
  auto lock = env->LockIfNoWriter(path, &info);
  // Held by a writer, not a regular file, or no way to tell: kept.
  if (!lock.ok()) return;
  const int64_t now = static_cast<int64_t>(env->NowMicros()) * 1000;
  const bool old = now - info.mtime_ns >= kSettleNs;
  if (!old && !(local && WriterGone(pid, tag))) return;
  Status s = dry_run ? Status::OK() : env->RemoveFile(path);
  if (s.ok()) {
    ++sweep->removed;
  } else if (!s.IsNotFound()) {  // gone meanwhile: another cleaner's
    if (sweep->failed++ == 0) sweep->first_failure = s;
  }
}

void SweepDir(Env* env, const std::string& dir, const StaleTempOptions& o,
              bool local, StaleTempSweep* sweep) {
  auto children = env->GetChildren(dir);
  if (!children.ok()) return;
  for (const DirEntry& e : *children) {
    if (e.is_dir && !e.is_link) {
      if (o.recursive) SweepDir(env, JoinPath(dir, e.name), o, local, sweep);
      continue;
    }
    // Only regular files: a device is never opened (some act on open).
    if (!e.is_regular || !IsAtomicTempName(e.name)) continue;
    RemoveIfStale(env, JoinPath(dir, e.name), local, o.dry_run, sweep);
  }
}

}  // namespace

Status CheckNotSpecialFile(Env* env, const std::string& path) {
  // A link into /dev or /proc (/dev/stdout -> /proc/self/fd/1, and a
  // user's own such link) names a stream, however it resolves now (to a
  // regular file when stdout is redirected to one): the rename would
  // replace the link. Asked of the file system itself (an in-memory Env
  // has no such links).
  char target[4096];
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
  if (n > 0) {
    const std::string_view t(target, size_t(n));
    if (t.rfind("/dev/", 0) == 0 || t.rfind("/proc/", 0) == 0)
      return Status::InvalidArgument(
          path, "a link to " + std::string(t) + ": never replaced by a file");
  }
  auto info = env->Stat(path);
  if (!info.ok() || info->is_dir || info->type == FileType::kRegular)
    return Status::OK();
  return Status::InvalidArgument(path, std::string("not a regular file (") +
                                           FileTypeName(info->type) +
                                           "): never replaced by a file");
}

bool IsAtomicTempName(std::string_view name) { return TempOwner(name) >= 0; }

StaleTempSweep SweepStaleTemps(Env* env, const std::string& dir,
                               const StaleTempOptions& options) {
  StaleTempSweep sweep;
  SweepDir(env, dir, options, !options.shared && env->OnLocalFileSystem(dir),
           &sweep);
  return sweep;
}

size_t RemoveStaleTemps(Env* env, const std::string& dir,
                        const StaleTempOptions& options) {
  return SweepStaleTemps(env, dir, options).removed;
}

Result<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(
    Env* env, std::string final_path) {
  // Its rename would replace a FIFO or device at the final name.
  FERRY_RETURN_IF_ERROR(CheckNotSpecialFile(env, final_path));
  for (int attempt = 1;; ++attempt) {
    std::string temp = TempNameFor(final_path);
    auto created = env->NewTempFile(temp);
    if (!created.ok()) {
      // Something (planted, or a name drawn twice) is there: another name.
      if (created.status().IsFailedPrecondition() && attempt < kCreateAttempts)
        continue;
      return created.status();
    }
    std::unique_ptr<WritableFile> file = std::move(*created);
    auto lock = file->LockWriter();
    if (lock.ok() ||
        !(lock.status().IsUnavailable() || lock.status().IsNotFound())) {
      // Without a lock (the Env or file system has none) cleaners cannot
      // take one either: they keep the file, or judge it by its age.
      return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(
          env, std::move(final_path), std::move(temp), std::move(file),
          lock.ok() ? std::move(*lock) : nullptr));
    }
    // A cleaner took the new file for a dead writer's: it removes it (or
    // lets it go); another name.
    (void)file->Close();
    (void)env->RemoveFile(temp);
    if (attempt == kCreateAttempts)
      return Status::IOError(temp, "removed by a cleaner as it was created (" +
                                       lock.status().ToString() + ")");
  }
}

AtomicFileWriter::AtomicFileWriter(Env* env, std::string final_path,
                                   std::string temp_path,
                                   std::unique_ptr<WritableFile> file,
                                   std::unique_ptr<FileLock> lock)
    : env_(env),
      final_path_(std::move(final_path)),
      temp_path_(std::move(temp_path)),
      file_(std::move(file)),
      lock_(std::move(lock)) {}

AtomicFileWriter::~AtomicFileWriter() {
  if (!done_) Abandon();
}

Status AtomicFileWriter::Append(std::string_view data) {
  if (!status_.ok()) return status_;
  if (done_) return Status::InvalidArgument(final_path_, "append after commit");
  status_ = file_->Append(data);
  return status_;
}

Status AtomicFileWriter::Commit() { return Finish(/*durable=*/true); }

Status AtomicFileWriter::CommitWithoutSync() {
  return Finish(/*durable=*/false);
}

// Syncs (when durable) and closes the temporary file; on failure the
// temporary file is removed.
Status AtomicFileWriter::CloseTemp(bool durable) {
  Status s = status_;
  if (s.ok() && durable) s = file_->Sync();
  if (s.ok()) s = file_->Close();
  if (!s.ok()) {
    status_ = s;
    Abandon();
    return s;
  }
  file_.reset();
  return Status::OK();
}

Status AtomicFileWriter::Finish(bool durable) {
  if (done_) return status_;
  FERRY_RETURN_IF_ERROR(CloseTemp(durable));
  // Checked again: one may have been made there meanwhile.
  Status s = CheckNotSpecialFile(env_, final_path_);
  if (s.ok()) s = env_->RenameFile(temp_path_, final_path_);
  if (!s.ok()) {
    status_ = s;
    Abandon();
    return s;
  }
  done_ = true;
  lock_.reset();  // no temporary any more
  // The new content is complete under the final name; a failure here only
  // means the rename may not survive a power loss.
  if (durable) status_ = env_->SyncDir(DirName(final_path_));
  return status_;
}

Status AtomicFileWriter::Detach() {
  if (done_)
    return status_.ok()
               ? Status::InvalidArgument(final_path_, "already finished")
               : status_;
  FERRY_RETURN_IF_ERROR(CloseTemp(/*durable=*/false));
  done_ = true;
  return Status::OK();
}

AtomicBatch::~AtomicBatch() {
  // Removed before their locks go (with each Pending).
  for (const Pending& p : pending_) (void)env_->RemoveFile(p.temp);
}

void AtomicBatch::Add(std::string temp_path, std::string final_path) {
  pending_.push_back({std::move(temp_path), std::move(final_path), nullptr});
}

void AtomicBatch::Add(std::unique_ptr<AtomicFileWriter> detached) {
  // Not detached yet: closed here (a failure removes the temporary, and the
  // commit reports its rename's failure).
  if (!detached->done_) (void)detached->Detach();
  pending_.push_back({detached->temp_path_, detached->final_path_,
                      std::move(detached->lock_)});
}

void AtomicBatch::Commit(
    const std::function<void(size_t, const Status&)>& on_result) {
  std::vector<Pending> files;
  files.swap(pending_);
  if (files.empty()) return;
  const Status synced = env_->SyncFileSystem(sync_root_);
  std::vector<std::string> dirs;
  std::vector<Status> results(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    Status s = synced;
    if (s.ok()) s = CheckNotSpecialFile(env_, files[i].final_path);
    if (s.ok()) s = env_->RenameFile(files[i].temp, files[i].final_path);
    if (!s.ok()) {
      (void)env_->RemoveFile(files[i].temp);
    } else {
      std::string dir = DirName(files[i].final_path);
      if (dirs.empty() || dirs.back() != dir) dirs.push_back(std::move(dir));
    }
    files[i].lock.reset();
    results[i] = std::move(s);
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  for (const std::string& d : dirs) {
    // The renamed files are complete; a failed directory sync only means a
    // rename may not survive a power loss. Report it on those files.
    Status s = env_->SyncDir(d);
    if (s.ok()) continue;
    for (size_t i = 0; i < files.size(); ++i) {
      if (results[i].ok() && DirName(files[i].final_path) == d) results[i] = s;
    }
  }
  for (size_t i = 0; i < files.size(); ++i) on_result(i, results[i]);
}

void AtomicFileWriter::Abandon() {
  if (done_) return;
  done_ = true;
  if (file_) {
    (void)file_->Close();
    file_.reset();
  }
  (void)env_->RemoveFile(temp_path_);
  lock_.reset();
  if (status_.ok()) status_ = Status::Cancelled(final_path_, "abandoned");
}

Status WriteFileAtomically(Env* env, const std::string& path,
                           std::string_view data) {
  FERRY_ASSIGN_OR_RETURN(auto writer, AtomicFileWriter::Create(env, path));
  FERRY_RETURN_IF_ERROR(writer->Append(data));
  return writer->Commit();
}

}  // namespace ferry
