#include "remote/part_syncer.h"

#include <algorithm>
#include <map>

namespace ferry::remote {

void PartSyncer::Add(void* tag, Download* dl, uint64_t part) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  waiting_.push_back(Item{tag, dl, part});
  ++pending_;
  work_.notify_one();
}

std::vector<PartSyncer::Done> PartSyncer::TakeDone() {
  std::lock_guard<std::mutex> lock(mu_);
  pending_ -= done_.size();
  return std::exchange(done_, {});
}

void PartSyncer::Forget(Download* dl) {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] {
    return std::find(busy_.begin(), busy_.end(), dl) == busy_.end();
  });
  auto gone = [dl](const auto& x) { return x.dl == dl; };
  size_t before = waiting_.size() + done_.size();
  waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), gone),
                 waiting_.end());
  done_.erase(std::remove_if(done_.begin(), done_.end(), gone), done_.end());
  pending_ -= before - (waiting_.size() + done_.size());
}

void PartSyncer::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    work_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

// Takes everything waiting at once: the slower the disk, the more parts
// each fdatasync covers.
void PartSyncer::Loop() {
  for (;;) {
    std::map<Download*, std::pair<void*, std::vector<uint64_t>>> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [this] { return closing_ || !waiting_.empty(); });
      if (waiting_.empty()) return;
      for (const Item& it : waiting_) {
        auto& b = batch[it.dl];
        b.first = it.tag;
        b.second.push_back(it.part);
      }
      for (const auto& [dl, b] : batch) busy_.push_back(dl);
      waiting_.clear();
    }
    for (auto& [dl, b] : batch) {
      Status s = dl->SyncParts(b.second);
      std::lock_guard<std::mutex> lock(mu_);
      for (uint64_t part : b.second)
        done_.push_back(Done{b.first, dl, part, s});
      busy_.erase(std::find(busy_.begin(), busy_.end(), dl));
      idle_.notify_all();
    }
    if (wake_) wake_();
  }
}

}  // namespace ferry::remote
