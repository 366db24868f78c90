// Opener: opens the next downloads on its own thread, ahead of the event loop
// (private to the transfer engine). Download::Open creates and locks
// DEST.ferry-part and reads a journal left by an earlier run; creating a file
// can take a millisecond on a busy file system (ext4 searches its inode
// tables, longer when many files were just deleted), and on the event loop
// that time stalls every transfer. Objects are handed out in item order.
//
// Thread-safety: Next and the destructor from one thread (the loop's); the
// opening runs on the opener's own thread.
#ifndef FERRY_LIB_REMOTE_OPENER_H_
#define FERRY_LIB_REMOTE_OPENER_H_

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ferry/env.h"
#include "ferry/status.h"
#include "ferry/transfer.h"
#include "remote/download.h"

namespace ferry::remote {

class Opener {
 public:
  // Each item's download fetches base_url + "/" + key.
  // At most `ahead` (≤ kAhead) downloads are opened and not yet taken.
  Opener(std::vector<GetItem> items, uint64_t part_size, std::string base_url,
         Env* env, bool durable = true, size_t ahead = kAhead)
      : items_(std::move(items)),
        part_size_(part_size),
        base_url_(std::move(base_url)),
        env_(env),
        durable_(durable),
        ahead_(std::max<size_t>(1, std::min(ahead, kAhead))) {}
  ~Opener();
  Opener(const Opener&) = delete;
  Opener& operator=(const Opener&) = delete;

  size_t size() const { return items_.size(); }
  bool More() const { return taken_ < items_.size(); }
  // The next item's download and how its Open went (the download is there
  // either way); waits for the thread when it is not opened yet.
  std::pair<std::unique_ptr<Download>, Status> Next();

  // Downloads opened and not yet taken, at most: each holds its part file
  // open and locked.
  static constexpr size_t kAhead = 64;

 private:
  void Loop();

  std::vector<GetItem> items_;  // moved out by the thread as it opens
  const uint64_t part_size_;
  const std::string base_url_;
  Env* env_;
  const bool durable_;
  const size_t ahead_;
  size_t taken_ = 0;  // the loop's count of Next calls
  std::mutex mu_;
  std::condition_variable ready_cv_, room_cv_;
  std::deque<std::pair<std::unique_ptr<Download>, Status>> ready_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_OPENER_H_
