// Landing: the objects a download puts under <cache>/partial/ enter the
// cache (Cache::InsertAll: renamed into objects/, indexed) and, where a view
// is being built, are handed to it (ViewBuilder::Landed) as they arrive,
// while the rest of the transfer runs: when the last byte is in, only the
// last few objects are left to move and link (docs/sync.md "sync").
//
// Thread-safety: Add from any thread (the transfer engine's on_installed,
// on its event loop); Close from the owner's. Between construction and
// Close the cache is used by Landing's thread: its owner must not use it
// meanwhile (ferry sync is inside GetObjects then).
#ifndef FERRY_LIB_SYNC_LANDING_H_
#define FERRY_LIB_SYNC_LANDING_H_

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "ferry/status.h"
#include "sync/cache.h"
#include "sync/view.h"

namespace ferry::sync {

class Landing {
 public:
  // builder may be null (--in-place: no view is being built).
  Landing(Cache* cache, ViewBuilder* builder);
  ~Landing();  // Close()
  Landing(const Landing&) = delete;
  Landing& operator=(const Landing&) = delete;

  // key's verified download is at cache->PartialPath(key): moved in soon.
  void Add(const CacheKey& key);
  // Waits until every key added is in the cache (and handed to the
  // builder), stops the thread. The first error (the keys after it are
  // left where they are).
  Status Close();
  // The keys moved in (complete after Close).
  const std::vector<CacheKey>& landed() const { return landed_; }

 private:
  void Run();

  Cache* cache_;
  ViewBuilder* builder_;
  std::mutex mu_;  // guards queue_, closing_
  std::condition_variable cv_;
  std::vector<CacheKey> queue_;
  bool closing_ = false;
  std::vector<CacheKey> landed_;  // the thread's until Close
  Status status_;                 // the thread's until Close
  std::thread thread_;            // last: starts after the rest is made
};

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_LANDING_H_
