// The ways a sync gets an object the cache lacks (docs/delta.md "Sync
// side"), after the cache and DEST's files: a delta from an object the cache
// holds (path 2), else the whole object (the transfer engine, sync.cc).
//
// Path 2: GET .ferry/deltas/<old>-<new> (the whole object; past the listed size
// an error) ─► zstd (window capped, exactly the listed size) ─►
// delta::Patcher(basis = the cached old object, output capped at the object's
// size) ─► partial/<rk>/<hex>.patch, hashed as it is written ─► size and
// XXH3-128 checked ─► renamed to partial/<rk>/<hex> ─► cache. Any error sends
// the object to the whole-object path; nothing that failed a check is
// installed. A killed patch leaves only the .patch file, which the next run
// that locks the object removes.
//
// Thread-safety: functions of their arguments; the cache is used by the
// calling thread only (patches run on worker threads).
#ifndef FERRY_LIB_SYNC_FETCH_PATHS_H_
#define FERRY_LIB_SYNC_FETCH_PATHS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ferry/env.h"
#include "ferry/remote.h"
#include "ferry/result.h"
#include "ferry/sync.h"
#include "ferry/transfer.h"
#include "sync/cache.h"
#include "sync/cached_bases.h"
#include "sync/plan.h"

namespace ferry::sync {

// The zstd window a delta may need: 2^23 bytes, as for manifests.
inline constexpr int kDeltaWindowLog = 23;

struct DeltaPlan {
  CacheKey target;
  CacheKey basis;           // in the cache, of the same remote
  uint64_t delta_size = 0;  // compressed, as the manifest lists it
};

// Where a patch is written before it is checked.
std::string PatchPath(const Cache& cache, const CacheKey& key);
// Where block reuse assembles an object before it is checked.
std::string BlocksPath(const Cache& cache, const CacheKey& key);
// Where the transfer engine puts the ranges block reuse fetches (each at its
// offset in the object; holes between), read back as the object is
// assembled and removed after.
std::string RangesPath(const Cache& cache, const CacheKey& key);
// Where block reuse's signature is fetched to (read, then removed).
std::string SigPath(const Cache& cache, const CacheKey& key);
// Where a part of the object that failed its check is fetched again (at its
// offset; removed after).
std::string AgainPath(const Cache& cache, const CacheKey& key);
// Removes what a killed patch of key left (its lock held). A killed block
// reuse's BlocksPath is kept: the next one goes on from its checked parts.
void RemoveKilledWork(Env* env, const Cache& cache, const CacheKey& key);
// Removes what a killed block reuse of key left (the object came another
// way, or its block reuse failed).
void RemoveBlocksLeft(Env* env, const Cache& cache, const CacheKey& key);

// Block reuse searches a basis file only up to BasisWindow(object size)
// bytes (4 x the size + kBasisMargin) and copies only from there: a huge
// basis (a sparse terabyte) costs no more than a window around the object.
inline constexpr uint64_t kBasisMargin = uint64_t{16} << 20;
uint64_t BasisWindow(uint64_t size);

// Missing ranges closer than this are fetched as one GET (S3 has no
// multi-range requests). The ranges go through the transfer engine in
// parallel, so another range costs its headers and one GET's price, not a
// round trip: 4 KiB is about what a GET costs on S3 in egress bytes
// (docs/delta.md "Speed" has the measurement).
inline constexpr uint64_t kRangeGap = uint64_t{4} << 10;

// The smallest of e's listed deltas (deltas: ManifestInfo::deltas) whose
// source object the cache holds for key's remote, or nullopt. With check
// the source is looked up (and re-hashed if its file changed); without (a
// dry run) its file being there is enough. cache may be null (none yet).
Result<std::optional<DeltaPlan>> ChooseDelta(
    Env* env, Cache* cache, const CacheKey& key, const Entry& e,
    const std::vector<DeltaSource>& deltas, bool check);

struct PatchOptions {
  bool fsync = true;  // the patched file is synced before its rename
  int threads = 4;    // patches at once
  // Block reuse's ranges go through the transfer engine with these options
  // (--connections, --bwlimit, retries; null: the defaults).
  const TransferOptions* transfer = nullptr;
  uint64_t range_gap = kRangeGap;  // PlanRanges' gap
};

// Path 2 for each of keys (their locks held) that the manifest lists a
// delta to from an object the cache holds (first_entry: a key's first file;
// deltas: ManifestInfo::deltas): patched objects go into the cache. Returns the
// other keys, for the next paths; each failed delta gets a warning in the
// report saying why (name gives an object's path), and (key, the warning's
// index) in *fallbacks: NameFallbackPaths ends it with the path the object then
// took. Counts objects_patched, delta_bytes_fetched, bytes_patched,
// delta_fallbacks, requests, objects_fetched and bytes_fetched.
Result<std::vector<CacheKey>> PatchWhatDeltasCan(
    Env* env, Cache* cache, Backend* backend, const std::vector<CacheKey>& keys,
    const FirstEntries& first_entry, const std::vector<DeltaSource>& deltas,
    const PatchOptions& options,
    const std::function<std::string(const CacheKey&)>& name, SyncReport* report,
    std::vector<std::pair<CacheKey, size_t>>* fallbacks);

// Ends each fallback's warning with the path its object took next: block
// reuse, or (in whole: the keys left for it) the whole object.
void NameFallbackPaths(
    const std::vector<std::pair<CacheKey, size_t>>& fallbacks,
    const std::vector<CacheKey>& whole, SyncReport* report);

// The bases path 3 would use for key (e: its first file), with their
// sizes: the file at e.path below each of roots and the cached sources of
// its listed deltas (cache may be null); when none of those is there (a
// new path, a rename), up to kMaxCachedBases other cached objects of the
// remote that others (may be null) chooses. Regular non-empty files only,
// each file once (two links to one inode are one basis).
std::vector<std::pair<std::string, uint64_t>> BlockBases(
    Env* env, const Cache* cache, const CacheKey& key, const Entry& e,
    const std::vector<DeltaSource>& deltas,
    const std::vector<std::string>& roots, CachedBases* others);

// For a dry run: when key would try block reuse (a signature and a basis),
// the bytes of its signature; nullopt otherwise. What the scan finds (the
// ranges to fetch: at most the object) is not known without it.
std::optional<uint64_t> PlanBlockReuse(Env* env, const Cache* cache,
                                       const CacheKey& key, const Entry& e,
                                       const std::vector<DeltaSource>& deltas,
                                       const std::vector<std::string>& roots,
                                       CachedBases* others);

// Path 3 for each of keys (their locks held) that has a signature (its
// first file's sig_block_len) and a local basis (BlockBases: DEST's current
// view or folder, --basis DIR, the cached sources of its listed deltas,
// else other cached objects others chooses); of
// each basis only the first BasisWindow(size) bytes (a note says when a
// basis is cut). Every object's signature, .ferry/sigs/<hash> (a range of
// exactly its length), in one run of the transfer engine (options.transfer:
// --connections, --bwlimit, retries; GetItem::ranges) into SigPath; then per
// object (options.threads at once): the signature loaded and checked ─►
// delta::MatchBlocks over the bases ─► PlanRanges(options.range_gap). Then
// every object's ranges in one run of the engine into RangesPath. Then per
// object: in new offset order, blocks copied from the bases and ranges from
// RangesPath into partial/<rk>/<hex>.blocks, each part (part_hashes(k): the
// manifest's XXH3-64 of each part_size bytes) checked as it completes; a
// part that fails is fetched whole once more (retries["part-hash"]; the
// engine, all objects' such parts in one run, into AgainPath) and the
// object goes on from its checked parts ─► size and XXH3-128 checked ─►
// renamed to partial/<rk>/<hex> ─► cache. A
// .blocks file a killed run left is resumed: its whole parts that still
// match are kept (bytes_resumed) and only the ranges after them fetched. An
// object no basis holds a block of goes whole quietly; any error sends it
// whole with a warning. Returns the keys left for the whole-object path.
Result<std::vector<CacheKey>> ReuseBlocks(
    Env* env, Cache* cache, Backend* backend, const std::vector<CacheKey>& keys,
    const FirstEntries& first_entry, const std::vector<DeltaSource>& deltas,
    const std::vector<std::string>& roots, CachedBases* others,
    const PatchOptions& options,
    const std::function<std::vector<uint64_t>(const CacheKey&)>& part_hashes,
    uint64_t part_size, const std::function<std::string(const CacheKey&)>& name,
    SyncReport* report);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_FETCH_PATHS_H_
