#include "sync/landing.h"

#include <string>
#include <utility>

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
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;
      batch.swap(queue_);
    }
    if (!status_.ok()) continue;  // drained, not moved: the sync fails
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
