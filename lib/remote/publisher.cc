#include "remote/publisher.h"

#include <sys/resource.h>

#include <algorithm>
#include <set>

namespace ferry::remote {

void Publisher::Add(std::unique_ptr<Download> dl) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  ++blocked_;
  room_.wait(lock, [this] { return held_ < max_open_; });
  --blocked_;
  ++held_;
  waiting_.push_back(std::move(dl));
  work_.notify_one();
}

bool Publisher::AddBlocked() {
  std::lock_guard<std::mutex> lock(mu_);
  return blocked_ > 0;
}

size_t Publisher::MaxOpenFor(uint64_t nofile_limit) {
  return std::max<size_t>(1, std::min<uint64_t>(kMaxOpen, nofile_limit / 4));
}

size_t Publisher::MaxOpen() {
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
    return kMaxOpen;
  return MaxOpenFor(lim.rlim_cur);
}

Publisher::Outcome Publisher::TakeOutcome() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(outcome_, Outcome());
}

void Publisher::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    work_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

// Takes everything waiting at once: the slower the syncs, the more objects
// each one covers.
void Publisher::Loop() {
  for (;;) {
    std::vector<std::unique_ptr<Download>> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [this] { return closing_ || !waiting_.empty(); });
      if (waiting_.empty()) return;
      batch.swap(waiting_);
    }
    const size_t n = batch.size();
    PublishBatch(batch);  // closes the batch's part files
    std::lock_guard<std::mutex> lock(mu_);
    held_ -= n;
    room_.notify_all();
  }
}

// Syncs each file system once, renames every object into place, syncs each
// folder once.
void Publisher::PublishBatch(std::vector<std::unique_ptr<Download>>& batch) {
  std::set<uint64_t> devs;
  std::set<std::string> dirs;
  Status synced;
  for (auto& dl : batch) {
    std::string dir = DirName(dl->item().dest);
    if (!durable_ || !dirs.insert(dir).second) continue;
    auto st = env_->Stat(dir);
    if (synced.ok() && (!st.ok() || devs.insert(st->dev).second))
      synced = env_->SyncFileSystem(dir);
  }
  Outcome out;
  for (auto& dl : batch) {
    Status s = synced.ok() ? dl->Publish(/*sync_dir=*/false) : synced;
    if (s.ok()) {
      ++out.done;
      out.installed.push_back(dl->item());
    } else {
      dl->Abandon();
      out.failures.emplace_back(dl->item().key, s);
    }
  }
  batch.clear();  // closes the part files: their locks go
  std::set<std::string> unsynced;
  for (const std::string& dir : dirs) {
    Status s = env_->SyncDir(dir);
    if (s.ok()) continue;
    unsynced.insert(dir);
    out.failures.emplace_back(dir, s);
  }
  if (!unsynced.empty())
    std::erase_if(out.installed, [&](const GetItem& item) {
      return unsynced.count(DirName(item.dest)) > 0;
    });
  std::lock_guard<std::mutex> lock(mu_);
  outcome_.done += out.done;
  for (GetItem& item : out.installed)
    outcome_.installed.push_back(std::move(item));
  for (auto& f : out.failures) outcome_.failures.push_back(std::move(f));
}

}  // namespace ferry::remote
