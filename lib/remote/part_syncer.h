// PartSyncer: makes finished parts of large downloads durable on its own
// thread (private to the transfer engine; docs/remote.md "What is on
// disk"). A part's bytes are fdatasync'ed before its journal record is
// written; an fdatasync waits for the disk (tens to hundreds of
// milliseconds for a part) and on the event loop it would stop every
// transfer meanwhile. Here the loop hands a written part over and goes on;
// the syncer takes all parts waiting at once, syncs each part file once for
// all of them and journals them in one append, then reports them done.
//
// Thread-safety: Add, TakeDone, Forget and Close from one thread (the
// loop's); the syncing runs on the syncer's own thread. While a download
// has parts here the loop does not restart, abandon, finish or destroy it
// (Forget first).
#ifndef FERRY_LIB_REMOTE_PART_SYNCER_H_
#define FERRY_LIB_REMOTE_PART_SYNCER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ferry/status.h"
#include "remote/download.h"

namespace ferry::remote {

class PartSyncer {
 public:
  // wake is called on the syncer's thread when parts are done (the loop's
  // CurlMultiLoop::Wakeup).
  explicit PartSyncer(std::function<void()> wake) : wake_(std::move(wake)) {}
  ~PartSyncer() { Close(); }
  PartSyncer(const PartSyncer&) = delete;
  PartSyncer& operator=(const PartSyncer&) = delete;

  // Part `part` of dl is written: sync and journal it. `tag` comes back
  // with it (the engine's object).
  void Add(void* tag, Download* dl, uint64_t part);

  struct Done {
    void* tag;
    Download* dl;
    uint64_t part;
    Status status;  // not OK: the part is not durable (nor journalled)
  };
  std::vector<Done> TakeDone();
  // Parts added and not yet taken back by TakeDone.
  size_t pending() const { return pending_; }
  // Waits until nothing of dl is being synced and drops what of it waits
  // or is done: it may then be restarted, abandoned or destroyed.
  void Forget(Download* dl);
  // Syncs what waits and stops the thread.
  void Close();

 private:
  struct Item {
    void* tag;
    Download* dl;
    uint64_t part;
  };
  void Loop();

  std::function<void()> wake_;
  size_t pending_ = 0;  // the loop's count
  std::mutex mu_;
  std::condition_variable work_, idle_;
  std::vector<Item> waiting_;
  std::vector<Done> done_;
  std::vector<Download*> busy_;  // being synced now
  bool closing_ = false;
  std::thread thread_;
};

}  // namespace ferry::remote

#endif  // FERRY_LIB_REMOTE_PART_SYNCER_H_
