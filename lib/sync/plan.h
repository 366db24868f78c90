// What one node syncs of a manifest: every file read and checked before
// anything is written (the manifest reader's rules, plus paths that are both
// a file and a folder), the --include/--exclude filters, and this rank's
// share of the shards (docs/sync.md "Ranks").
//
// Thread-safety: pure functions.
#ifndef FERRY_LIB_SYNC_PLAN_H_
#define FERRY_LIB_SYNC_PLAN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/compact_string.h"
#include "ferry/hash.h"
#include "ferry/result.h"
#include "ferry/sync.h"
#include "sync/layout.h"

namespace ferry::sync {

// One file of a manifest (or of DEST's record). 96 bytes: a 1,000,000-file
// manifest is held twice while a sync plans (the new version and DEST's),
// so each byte here is 2 MB of RSS (issue 12's <= 400 bytes an entry).
struct Entry {
  std::string path;
  uint64_t size = 0;
  Hash128 hash;
  uint64_t pack_offset = 0;
  CompactString etag;  // unmanaged remotes: the object's ETag when listed
  // Where this file's part hashes start in ManifestInfo::part_hashes
  // (ceil(size / part_size) of them; ReadManifest refuses 2^32 or more).
  uint32_t first_part = 0;
  // This file's deltas (File.deltas): ManifestInfo::deltas[first_delta,
  // first_delta + delta_count).
  uint32_t first_delta = 0, delta_count = 0;
  uint32_t sig_block_len = 0;  // File.sig_block_len (0: no signature)
  // Where the file's bytes are in a pack (File.pack): 1 + its index in
  // ManifestInfo::packs, at pack_offset; 0: its own object (formats/manifest
  // "Packs").
  uint32_t pack = 0;
  uint16_t mode = 0644;        // File.mode: at most 0777 (the reader checks)
  uint8_t sig_strong_len = 0;  // File.sig_strong_len (0: 32; at most 32)
};

// A missing object's first file, by the object's hash: its path (for
// messages), part hashes, deltas, signature and pack.
using FirstEntries = std::unordered_map<Hash128, const Entry*, Hash128Hasher>;

// A pack the manifest names: .ferry/packs/<2 hex>/<id>.
struct PackRef {
  Hash128 id;
  uint64_t size = 0;
};

// A delta listed in the manifest: .ferry/deltas/<from>-<file's hash>.
struct DeltaSource {
  Hash128 from;
  uint64_t size = 0;  // compressed bytes
};

struct ManifestInfo {
  Hash128 id;
  uint64_t part_size = 0;
  std::vector<Entry> files;  // sorted by path
  // Every file's File.part_xxh3_64, one after another (8 bytes a part, not
  // a vector per file).
  std::vector<uint64_t> part_hashes;
  // Every file's deltas, one after another (docs/delta.md "Sync side").
  std::vector<DeltaSource> deltas;
  // Every pack a file names, in the order first named.
  std::vector<PackRef> packs;
};

// Reads a whole manifest (bytes that must hash to id) and checks every rule;
// Corruption naming the record or path for anything wrong.
Result<ManifestInfo> ReadManifest(std::string_view bytes, const Hash128& id);

// True for a shard: a file whose name ends in .tfrecord, .tfrecord.gz or
// .tar, and its index sidecar (<shard>.idx), which follows its shard.
bool IsShard(std::string_view path);

// The files this node takes: filters first (in order, the last match wins,
// as `aws s3 sync`), then the rank's share of the shards; every other file
// goes to every rank. Deterministic: shards sorted by size (largest first,
// then path) are each given to the rank with the fewest bytes so far (the
// lowest rank on a tie).
std::vector<Entry> Select(const std::vector<Entry>& files,
                          const SyncSelection& selection);
// The same, taking the files (no copy of a million entries).
std::vector<Entry> Select(std::vector<Entry>&& files,
                          const SyncSelection& selection);
// One step of it: the filters (share false), or this rank's share of files
// already filtered (share true).
std::vector<Entry> Select(std::vector<Entry>&& files,
                          const SyncSelection& selection, bool share);
// Select for a sync: filters that keep none of a non-empty dataset's files
// are an error (InvalidArgument naming them: a typo must not empty DEST). A
// rank's share may be empty (more ranks than files).
Result<std::vector<Entry>> SelectSome(std::vector<Entry>&& files,
                                      const SyncSelection& selection);

// The objects files need: the index of the first file of each distinct
// (hash, size), in file order. 8 bytes per file while it runs.
std::vector<size_t> UniqueObjects(const std::vector<Entry>& files);

// "" for the whole manifest, else 16 hex digits naming the selection (a
// view of a selection is kept apart from the whole dataset's).
std::string SelectionKey(const SyncSelection& selection);

// fnmatch(3) without FNM_PATHNAME: '*' also matches '/'.
bool GlobMatch(std::string_view pattern, std::string_view path);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_PLAN_H_
