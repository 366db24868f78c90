#include "remote/opener.h"

namespace ferry::remote {

Opener::~Opener() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    room_cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
  // Opened and never taken: Download's destructor lets them go (a part file
  // without a journal is removed).
}

std::pair<std::unique_ptr<Download>, Status> Opener::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  ready_cv_.wait(lock, [this] { return !ready_.empty(); });
  auto next = std::move(ready_.front());
  ready_.pop_front();
  ++taken_;
  room_cv_.notify_one();
  return next;
}

void Opener::Loop() {
  for (size_t i = 0; i < items_.size(); ++i) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      room_cv_.wait(lock, [this] { return stop_ || ready_.size() < ahead_; });
      if (stop_) return;
    }
    std::string url = base_url_ + "/" + items_[i].key;
    auto dl = std::make_unique<Download>(std::move(items_[i]), part_size_,
                                         std::move(url), env_, durable_);
    Status s = dl->Open();
    std::lock_guard<std::mutex> lock(mu_);
    ready_.emplace_back(std::move(dl), std::move(s));
    ready_cv_.notify_one();
  }
}

}  // namespace ferry::remote
