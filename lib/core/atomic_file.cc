#include "ferry/atomic_file.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <random>

namespace ferry {
namespace {

// ".ferry-tmp-<pid>-<12 hex>-<name>": hidden (walks and globs pass it over),
// ours by its prefix (nothing else is ever removed as a temporary), and it
// names the process that writes it, so a cleanup removes only the files of
// processes that are gone, never a running neighbour's.
constexpr std::string_view kTempPrefix = ".ferry-tmp-";
// Room for the prefix, pid and id within a 255-byte file name.
constexpr size_t kMaxNameInTemp = 200;

// This process's tag: the id's first 16 bits. A file with our pid but
// another tag was left by an earlier process that had the same pid (pids
// repeat, in containers above all).
uint64_t ProcessTag() {
  static const uint64_t tag = std::random_device{}() & 0xFFFF;
  return tag;
}

std::string TempNameFor(const std::string& final_path) {
  static std::atomic<uint64_t> counter{0};
  const uint64_t id =
      (ProcessTag() << 32) | ((++counter * 0x9E3779B97F4A7C15ull) >> 32);
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

// Whether the process that wrote a temporary file may still be writing it.
bool WriterAlive(long pid, uint64_t tag) {
  if (pid <= 0) return false;
  if (pid == static_cast<long>(::getpid())) return tag == ProcessTag();
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

bool IsAtomicTempName(std::string_view name) { return TempOwner(name) >= 0; }

size_t RemoveStaleTemps(Env* env, const std::string& dir) {
  auto children = env->GetChildren(dir);
  if (!children.ok()) return 0;
  size_t removed = 0;
  for (const DirEntry& e : *children) {
    if (e.is_dir) continue;
    uint64_t tag = 0;
    const long pid = TempOwner(e.name, &tag);
    if (pid < 0 || WriterAlive(pid, tag)) continue;
    if (env->RemoveFile(JoinPath(dir, e.name)).ok()) ++removed;
  }
  return removed;
}

Result<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(
    Env* env, std::string final_path) {
  std::string temp = TempNameFor(final_path);
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewWritableFile(temp));
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(
      env, std::move(final_path), std::move(temp), std::move(file)));
}

AtomicFileWriter::AtomicFileWriter(Env* env, std::string final_path,
                                   std::string temp_path,
                                   std::unique_ptr<WritableFile> file)
    : env_(env),
      final_path_(std::move(final_path)),
      temp_path_(std::move(temp_path)),
      file_(std::move(file)) {}

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
  Status s = env_->RenameFile(temp_path_, final_path_);
  if (!s.ok()) {
    status_ = s;
    Abandon();
    return s;
  }
  done_ = true;
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
  for (const auto& [temp, final_path] : pending_) (void)env_->RemoveFile(temp);
}

void AtomicBatch::Add(std::string temp_path, std::string final_path) {
  pending_.emplace_back(std::move(temp_path), std::move(final_path));
}

void AtomicBatch::Commit(
    const std::function<void(size_t, const Status&)>& on_result) {
  std::vector<std::pair<std::string, std::string>> files;
  files.swap(pending_);
  if (files.empty()) return;
  const Status synced = env_->SyncFileSystem(sync_root_);
  std::vector<std::string> dirs;
  std::vector<Status> results(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    Status s = synced;
    if (s.ok()) s = env_->RenameFile(files[i].first, files[i].second);
    if (!s.ok()) {
      (void)env_->RemoveFile(files[i].first);
    } else {
      std::string dir = DirName(files[i].second);
      if (dirs.empty() || dirs.back() != dir) dirs.push_back(std::move(dir));
    }
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
      if (results[i].ok() && DirName(files[i].second) == d) results[i] = s;
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
  if (status_.ok()) status_ = Status::Cancelled(final_path_, "abandoned");
}

Status WriteFileAtomically(Env* env, const std::string& path,
                           std::string_view data) {
  FERRY_ASSIGN_OR_RETURN(auto writer, AtomicFileWriter::Create(env, path));
  FERRY_RETURN_IF_ERROR(writer->Append(data));
  return writer->Commit();
}

}  // namespace ferry
