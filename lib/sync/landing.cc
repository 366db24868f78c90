#include "sync/landing.h"

#include <algorithm>
#include <string>
#include <utility>

#include "ferry/hash.h"

namespace ferry::sync {

Landing::Landing(Cache* cache, ViewBuilder* builder)
    : cache_(cache), builder_(builder), thread_([this] { Run(); }) {}

Landing::~Landing() { (void)Close(); }

void Landing::Add(const CacheKey& key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(key);
  }
  cv_.notify_one();
}

void Landing::AddPack(Env* env, std::string path, std::string pack,
                      std::vector<PackMember> members, bool fsync) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    packs_.push_back(PackJob{env, std::move(path), std::move(pack),
                             std::move(members), fsync});
  }
  cv_.notify_one();
}

void Landing::Cut(const PackJob& job, std::vector<CacheKey>* keys) {
  Env* env = job.env;
  // The download goes however the cutting ends: a member that failed is
  // fetched again by a later run, with its own download.
  struct Remove {
    Env* env;
    const std::string& path;
    ~Remove() { (void)env->RemoveFile(path); }
  } remove{env, job.path};
  std::vector<CacheKey> cut;
  // The members cut go in (one syncfs for them all), also when a file
  // system error (ENOSPC) fails the rest: they were neither landed nor
  // failed, and the sync failed with them left in partial/.
  auto hand_over = [&] {
    if (job.fsync && !cut.empty()) {
      Status s = env->SyncFileSystem(cache_->PartialPath(cut.front()));
      if (!s.ok()) {
        for (const CacheKey& k : cut) failed_.emplace_back(k, s);
        cut.clear();
      }
    }
    keys->insert(keys->end(), cut.begin(), cut.end());
  };
  auto fail_rest = [&](size_t from, const Status& s) {
    for (size_t i = from; i < job.members.size(); ++i)
      failed_.emplace_back(job.members[i].key, s);
    hand_over();
  };
  auto pack = env->NewRandomAccessFile(job.path);
  if (!pack.ok()) return fail_rest(0, pack.status());
  // In pieces of at most 1 MiB: a hostile manifest may give a packed file
  // any size its pack holds; memory stays flat whatever it says.
  constexpr uint64_t kPiece = uint64_t{1} << 20;
  std::string buf;
  for (size_t i = 0; i < job.members.size(); ++i) {
    const PackMember& m = job.members[i];
    // Written beside, then renamed once its bytes hash right: PartialPath
    // only ever holds a whole, checked object (a killed run's is taken as
    // one).
    const std::string dest = cache_->PartialPath(m.key);
    const std::string tmp = dest + ".cut";
    auto f = env->NewWritableFile(tmp);
    Status s = f.status();
    Hasher128 hasher;
    for (uint64_t at = 0; s.ok() && at < m.key.size;) {
      const size_t n = static_cast<size_t>(std::min(kPiece, m.key.size - at));
      buf.resize(n);
      std::string_view got;
      s = (*pack)->Read(m.offset + at, n, &got, buf.data());
      if (s.ok() && got.size() != n)
        s = Status::Corruption(
            job.pack,
            "ends before byte " + std::to_string(m.offset + m.key.size));
      if (!s.ok()) break;
      hasher.Update(got);
      s = (*f)->Append(got);
      at += n;
    }
    if (s.ok()) s = (*f)->Close();
    if (!s.ok()) {
      (void)env->RemoveFile(tmp);
      return fail_rest(i, s);
    }
    if (hasher.Digest() != m.key.hash) {
      (void)env->RemoveFile(tmp);
      failed_.emplace_back(
          m.key, Status::Corruption(
                     job.pack, "bytes " + std::to_string(m.offset) + ".." +
                                   std::to_string(m.offset + m.key.size) +
                                   " are not object " + m.key.hash.ToHex()));
      continue;
    }
    s = env->RenameFile(tmp, dest);
    if (!s.ok()) {
      (void)env->RemoveFile(tmp);
      return fail_rest(i, s);
    }
    cut.push_back(m.key);
  }
  pack->reset();
  hand_over();
}

Status Landing::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  return status_;
}

// Takes everything queued at once: one index transaction for all of it.
void Landing::Run() {
  for (;;) {
    std::vector<CacheKey> batch;
    std::vector<PackJob> jobs;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] {
        return closing_ || !queue_.empty() || !packs_.empty();
      });
      if (queue_.empty() && packs_.empty()) return;
      batch.swap(queue_);
      jobs.swap(packs_);
    }
    if (!status_.ok()) continue;  // drained, not moved: the sync fails
    for (const PackJob& job : jobs) Cut(job, &batch);
    if (batch.empty()) continue;
    std::vector<std::pair<CacheKey, std::string>> items;
    items.reserve(batch.size());
    for (const CacheKey& k : batch)
      items.emplace_back(k, cache_->PartialPath(k));
    status_ = cache_->InsertAll(items);
    if (!status_.ok()) continue;
    if (builder_) builder_->Landed(batch);
    landed_.insert(landed_.end(), batch.begin(), batch.end());
  }
}

}  // namespace ferry::sync
