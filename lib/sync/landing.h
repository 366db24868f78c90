// Landing: the objects a download puts under <cache>/partial/ enter the
// cache (Cache::InsertAll: renamed into objects/, indexed) and, where a view
// is being built, are handed to it (ViewBuilder::Landed) as they arrive,
// while the rest of the transfer runs: when the last byte is in, only the
// last few objects are left to move and link (docs/sync.md "sync").
//
// A pack's download (formats/manifest "Packs") is handed over whole
// (AddPack): its files are cut out on the same thread, each checked against
// its own hash, and moved in as above.
//
// Thread-safety: Add, AddPack from any thread (the transfer engine's
// on_installed, on its event loop); Close from the owner's. Between
// construction and Close the cache is used by Landing's thread: its owner must
// not use it meanwhile (ferry sync is inside GetObjects then).
#ifndef FERRY_LIB_SYNC_LANDING_H_
#define FERRY_LIB_SYNC_LANDING_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ferry/env.h"
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

  // A file of a pack: its key and where its bytes start in the pack.
  struct PackMember {
    CacheKey key;
    uint64_t offset = 0;
  };
  // The download at path holds the members' bytes at their offsets (a
  // whole pack, or its ranges in a sparse file of its size; `pack` names it
  // in errors): each is cut out to cache->PartialPath(key) and checked
  // against its hash (one syncfs for them all when fsync), then moved in as
  // Add's are; path is removed. A member whose bytes are not its hash
  // fails alone (Corruption, in failed()); an error of the file system
  // fails the rest of the pack's members there.
  void AddPack(Env* env, std::string path, std::string pack,
               std::vector<PackMember> members, bool fsync);
  // Waits until every key added is in the cache (and handed to the
  // builder), stops the thread. The first error (the keys after it are
  // left where they are).
  Status Close();
  // The keys moved in (complete after Close).
  const std::vector<CacheKey>& landed() const { return landed_; }
  // Pack members that were not moved in, and why (complete after Close).
  const std::vector<std::pair<CacheKey, Status>>& failed() const {
    return failed_;
  }

 private:
  struct PackJob {
    Env* env;
    std::string path, pack;
    std::vector<PackMember> members;
    bool fsync;
  };
  void Run();
  // Cuts a pack's members out; the keys cut and checked go to *keys.
  void Cut(const PackJob& job, std::vector<CacheKey>* keys);

  Cache* cache_;
  ViewBuilder* builder_;
  std::mutex mu_;  // guards queue_, closing_
  std::condition_variable cv_;
  std::vector<CacheKey> queue_;
  std::vector<PackJob> packs_;
  bool closing_ = false;
  std::vector<CacheKey> landed_;                     // the thread's until Close
  std::vector<std::pair<CacheKey, Status>> failed_;  // the thread's
  Status status_;                                    // the thread's until Close
  std::thread thread_;  // last: starts after the rest is made
};

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_LANDING_H_
