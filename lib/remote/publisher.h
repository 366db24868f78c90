// Publisher: puts downloaded small objects into place on its own thread
// (private to the transfer engine; docs/remote.md "What is on disk"). An
// object of one part is not journalled; once written and verified it waits
// here, locked under DEST.ferry-part, for one syncfs per file system that
// covers many objects, then is renamed to DEST; each folder is synced once
// after its renames. A syncfs waits for every dirty page of the file system
// (other programs' too) and can take a second on a busy machine: on the event
// loop it would stall every transfer.
//
// Thread-safety: Add, TakeOutcome and Close from one thread (the loop's); the
// publishing runs on the publisher's own thread.
#ifndef FERRY_LIB_REMOTE_PUBLISHER_H_
#define FERRY_LIB_REMOTE_PUBLISHER_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ferry/env.h"
#include "ferry/status.h"
#include "remote/download.h"

namespace ferry::remote {

class Publisher {
 public:
  // What was published since the last TakeOutcome.
  struct Outcome {
    uint64_t done = 0;
    // A failed object's key, or a folder that could not be synced.
    std::vector<std::pair<std::string, Status>> failures;
  };

  // durable=false: no syncfs, no folder sync (TransferOptions::fsync).
  explicit Publisher(Env* env, bool durable = true)
      : env_(env), durable_(durable) {}
  ~Publisher() { Close(); }
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Takes a verified (not synced) download to publish. Blocks while
  // max_waiting objects wait already: each holds an open, locked part file.
  void Add(std::unique_ptr<Download> dl);
  Outcome TakeOutcome();
  // Publishes everything added and stops the thread.
  void Close();

  static constexpr size_t kMaxWaiting = 256;

 private:
  void Loop();
  void PublishBatch(std::vector<std::unique_ptr<Download>>& batch);

  Env* env_;
  bool durable_;
  std::mutex mu_;
  std::condition_variable work_, room_;
  std::vector<std::unique_ptr<Download>> waiting_;
  Outcome outcome_;
  bool closing_ = false;
  std::thread thread_;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_PUBLISHER_H_
