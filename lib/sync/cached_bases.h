// Other objects the cache holds, as bases for block reuse (docs/delta.md
// "Sync side", path 3): for an object no other basis covers (a path the
// version adds, a rename), the cached objects of the same remote most likely
// to share its blocks, chosen without reading them. The cached manifests of
// earlier versions give their objects' part XXH3-64s: a candidate ranks by
// the number of the new object's part hashes it shares, then by having the
// same path, then the same size.
//
// Renames (rsync --fuzzy's idea): when no cached object shares a part or the
// path (a renamed shard edited near its start shifts every part), the
// candidates are the objects of the paths DEST's current version (this
// remote's previous one) listed and the new version no longer lists: of a
// size within a factor of 1.25 of the new object's, whose base name shares
// a common prefix plus suffix of at least half the longer base name; ranked
// by same directory, then that common length, then the longer of the two,
// then the closest size. At most kMaxGonePaths such paths are kept, and one
// Choose looks at at most kMaxGoneScanned of them (the closest sizes). DEST's
// manifest is read only within kMaxBasesManifestBytes, as any other (a
// 100,000-shard manifest of 32 parts a file is not: no renames' candidates).
// Otherwise one with no shared part and another path is never chosen.
//
// Only objects of the sync's own remote are ever named (their paths under
// objects/<remote key>/, whichever manifest listed them): docs/sync.md
// "Cross-remote safety".
//
// Cost: on the first Choose, up to kMaxCachedManifests manifests (DEST's
// current one first, then the newest by mtime) of at most
// kMaxBasesManifestBytes in all are read and parsed (measured: 15-26 ms for a
// 10,000-file manifest of 315 KB, 0.22-0.35 s for 100,000 files, at load 6-8);
// their part hashes and paths are kept as sorted 64-bit hashes (16 bytes each
// with the candidate, at most kMaxPostings of each).
//
// Renames' cost (sync_plan_bench renames N GONE, the worst case: every shard
// of one size, so every deleted path is in the size window; idle machine,
// load 0.4): with N = 10,000 and 1,000 renamed (and edited at the start),
// listing v2's paths 0.5 ms, reading v1 67 ms (32 part hashes a file), a
// Choose 26 us; 4,000 renamed: 80 us a Choose; each found its own old
// object first. kMaxGoneScanned bounds a Choose to ~100 us whatever N.
//
// Thread-safety: one thread at a time (Choose loads lazily).
#ifndef FERRY_LIB_SYNC_CACHED_BASES_H_
#define FERRY_LIB_SYNC_CACHED_BASES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ferry/env.h"
#include "ferry/hash.h"
#include "sync/cache.h"
#include "sync/layout.h"
#include "sync/plan.h"

namespace ferry::sync {

inline constexpr size_t kMaxCachedManifests = 4;
// ~130,000 files' records: a sync reads at most this much more manifest.
inline constexpr uint64_t kMaxBasesManifestBytes = uint64_t{4} << 20;
inline constexpr size_t kMaxPostings = size_t{4} << 20;  // 64 MiB
// Cached objects tried as bases of one object.
inline constexpr size_t kMaxCachedBases = 2;
// Deleted paths kept as renames' candidates, and looked at by one Choose.
inline constexpr size_t kMaxGonePaths = size_t{1} << 16;
inline constexpr size_t kMaxGoneScanned = 4096;

class CachedBases {
 public:
  // current: the manifest being synced (its part hashes; not read again);
  // prefer: manifests to read first (DEST's current version, this remote's);
  // listed: the sorted PathHash of every path current lists (its files may
  // be a selection, or moved out): prefer[0]'s other paths are deleted, and
  // their objects renames' candidates (none if listed is empty).
  CachedBases(Env* env, const Cache* cache, std::string remote_key,
              const ManifestInfo* current, std::vector<Hash128> prefer,
              std::vector<uint64_t> listed = {});

  // XXH3-64 of a path, as listed wants it.
  static uint64_t PathHash(std::string_view path);

  // The cached object paths of the best candidates for key (e: its first
  // file), best first, at most 4 x kMaxCachedBases; whether each file is
  // there is for the caller to check (a row may outlive its file).
  std::vector<std::string> Choose(const CacheKey& key, const Entry& e);

  // Manifests read and part hashes kept (after the first Choose).
  size_t manifests_read() const { return manifests_read_; }
  size_t postings() const { return postings_.size(); }
  // Deleted paths kept as renames' candidates.
  size_t gone() const { return gone_.size(); }

 private:
  struct Candidate {
    Hash128 hash;
    uint64_t size = 0;
  };
  // A path DEST's current version lists and the new one does not.
  struct Gone {
    uint64_t size;
    uint32_t candidate;
    std::string path;
  };
  void Load();
  // The candidate of hash (added if new).
  uint32_t Add(const Hash128& hash, uint64_t size);
  // Renames' candidates for e, best first.
  std::vector<uint32_t> ChooseGone(const Entry& e) const;

  Env* env_;
  const Cache* cache_;
  std::string remote_key_;
  const ManifestInfo* current_;
  std::vector<Hash128> prefer_;
  std::vector<uint64_t> listed_;
  bool loaded_ = false;
  size_t manifests_read_ = 0;
  std::vector<Candidate> candidates_;
  std::unordered_map<Hash128, uint32_t, Hash128Hasher> by_hash_;
  // (part XXH3-64, candidate), sorted: of manifests with current's part size.
  std::vector<std::pair<uint64_t, uint32_t>> postings_;
  // (XXH3-64 of a path, candidate listed there), sorted.
  std::vector<std::pair<uint64_t, uint32_t>> paths_;
  std::vector<Gone> gone_;  // sorted by size
};

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_CACHED_BASES_H_
