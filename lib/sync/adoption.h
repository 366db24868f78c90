// Adoption (docs/sync.md "First sync into an existing folder"): a file
// already in DEST (a real folder rsync filled, an --in-place DEST, the
// current view) whose bytes are a missing object's is taken into the cache
// instead of being fetched. Which of DEST's files are tried for an object,
// and in which order, is decided here once, for the sync (Adopt: copied
// into the cache, hashed as it is copied) and its dry run (WouldAdopt:
// hashed, nothing written), so that the dry run predicts what the sync
// then does.
//
// Thread-safety: List may run on a thread of its own; everything else after
// it, on one thread.
#ifndef FERRY_LIB_SYNC_ADOPTION_H_
#define FERRY_LIB_SYNC_ADOPTION_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ferry/env.h"
#include "ferry/hash.h"
#include "ferry/result.h"
#include "sync/cache.h"
#include "sync/fs_util.h"
#include "sync/plan.h"
#include "sync/view.h"

namespace ferry::sync {

// Every regular file below root/rel, not following links: path -> size.
void ListRegularFiles(Env* env, const std::string& root, const std::string& rel,
                      std::map<std::string, uint64_t>* out);

class Adoption {
 public:
  // At most this many of DEST's files are hashed for one object.
  static constexpr size_t kMaxTries = 8;

  // DEST of kind (InspectDest; cur_view: the view a kView DEST points to).
  // Only a real folder, an --in-place DEST and a view hold candidates.
  Adoption(Env* env, Cache* cache, std::string remote_key, DestKind kind,
           const std::string& dest, const std::string& cur_view);

  // Whether DEST's kind can hold files to adopt (List is worth a thread).
  bool possible() const { return possible_; }
  // Lists DEST's files (nothing if !possible()).
  void List();
  // After List: the version's files, and what ferry placed there (a view's
  // or an --in-place DEST's stamps).
  void Prepare(const std::vector<Entry>& files);

  // The files tried for k, in order: those at a path the version gives k
  // (of k's size), then others of k's size, at most kMaxTries. A file
  // ferry placed whose stamp is still the recorded one (or its object's as
  // the cache recorded it: another view's link changed its ctime) holds the
  // object recorded with it and is not tried for another: an incremental's
  // changed shard has the old one's size and path.
  Result<std::vector<std::string>> Tries(const CacheKey& k);
  // Copies the first try that holds k's bytes into the cache.
  Result<bool> Adopt(const CacheKey& k);
  // Whether Adopt would take k from DEST: the tries hashed in the same
  // order, nothing written (a dry run).
  Result<bool> WouldAdopt(const CacheKey& k);

 private:
  Result<bool> HoldsOther(const std::string& path, const CacheKey& want);

  Env* env_;
  Cache* cache_;
  std::string remote_key_;
  std::string root_;
  bool possible_ = false;
  bool placed_by_ferry_ = false;           // a view or an --in-place DEST
  std::map<std::string, uint64_t> files_;  // path -> size
  std::unordered_map<std::string, std::vector<std::string>> by_hash_paths_;
  std::multimap<uint64_t, std::string> by_size_;
  std::unordered_map<std::string, FileStamp> placed_stamps_;
  std::unordered_map<std::string, Hash128> placed_hashes_;
};

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_ADOPTION_H_
