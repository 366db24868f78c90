#include "ferry/atomic_file.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>

namespace ferry {
namespace {

constexpr std::string_view kTempInfix = ".tmp-";

std::string TempNameFor(const std::string& final_path) {
  static const uint64_t seed = std::random_device{}();
  static std::atomic<uint64_t> counter{0};
  uint64_t id =
      (seed * 0x9E3779B97F4A7C15ull) ^ (++counter * 0xBF58476D1CE4E5B9ull);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%012llx",
                static_cast<unsigned long long>(id & 0xFFFFFFFFFFFFull));
  return final_path + std::string(kTempInfix) + buf;
}

}  // namespace

bool IsAtomicTempName(std::string_view name) {
  size_t pos = name.rfind(kTempInfix);
  if (pos == std::string_view::npos) return false;
  std::string_view id = name.substr(pos + kTempInfix.size());
  if (id.empty()) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
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
