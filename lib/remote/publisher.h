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
    // The items published whose folder was synced too (TransferOptions::
    // on_installed; an item of a folder whose sync failed counts as done,
    // and the folder as a failure).
    std::vector<GetItem> installed;
    // A failed object's key, or a folder that could not be synced.
    std::vector<std::pair<std::string, Status>> failures;
  };

  // durable=false: no syncfs, no folder sync (TransferOptions::fsync).
  // max_open: objects held at once, waiting or being published (each holds a
  // descriptor); 0 = MaxOpen().
  explicit Publisher(Env* env, bool durable = true, size_t max_open = 0)
      : env_(env),
        durable_(durable),
        max_open_(max_open ? max_open : MaxOpen()) {}
  ~Publisher() { Close(); }
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Takes a verified (not synced) download to publish. Blocks while
  // max_open objects are held already (waiting, or in the batch being synced
  // and renamed): each holds an open, locked part file.
  void Add(std::unique_ptr<Download> dl);
  Outcome TakeOutcome();
  // Publishes everything added and stops the thread.
  void Close();

  // Whether an Add is waiting for room (for tests).
  bool AddBlocked();

  // At most kMaxOpen objects, and at most a quarter of the process's
  // descriptor limit (soft RLIMIT_NOFILE): the part files held for one syncfs
  // grow while the syncfs takes long (a busy machine), and past the limit
  // every open fails with EMFILE (the transfer's source files, sockets, the
  // sync's lock files and databases need the rest).
  static constexpr size_t kMaxOpen = 512;
  static size_t MaxOpenFor(uint64_t nofile_limit);
  static size_t MaxOpen();  // for this process's limit now

 private:
  void Loop();
  void PublishBatch(std::vector<std::unique_ptr<Download>>& batch);

  Env* env_;
  bool durable_;
  const size_t max_open_;
  std::mutex mu_;
  std::condition_variable work_, room_;
  std::vector<std::unique_ptr<Download>> waiting_;
  size_t held_ = 0;     // waiting_ and the batch being published
  size_t blocked_ = 0;  // Adds waiting for room
  Outcome outcome_;
  bool closing_ = false;
  std::thread thread_;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_PUBLISHER_H_
