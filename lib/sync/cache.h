// The node's content-addressed cache (docs/sync.md "On disk (node)"):
//   <dir>/objects/<remote-key>/<2 hex>/<xxh3-128 hex>   verified, read-only
//   <dir>/partial/<remote-key>/...                      downloads in progress
//   <dir>/manifests/<id>                                manifests seen
//   <dir>/index.sqlite                  objects, pins, reservations (WAL)
//   <dir>/lock                                          held while evicting
//   <dir>/locks/reservations            a byte per sync holding reservations
// Objects are keyed by the remote they came from as well as by their hash,
// so one remote's publisher cannot plant bytes in another remote's views
// (XXH3 is not collision-resistant).
//
// The index is a hint kept consistent with the files, not the other way
// round: a row without its file is dropped when seen, a file without a row
// is re-hashed and indexed (or removed if it does not hash to its name).
// Every change to the index is one transaction.
//
// Thread-safety: a Cache is used by one thread at a time. Any number of
// processes may open the same cache directory at once.
#ifndef FERRY_LIB_SYNC_CACHE_H_
#define FERRY_LIB_SYNC_CACHE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/compact_string.h"
#include "ferry/env.h"
#include "ferry/hash.h"
#include "ferry/result.h"
#include "ferry/status.h"
#include "sync/fs_util.h"

namespace ferry::sync {

class Db;

// One object of one remote. remote_key is 32 hex digits (RemoteKey()), held
// in place: 64 bytes a key, not 104 (a sync of a million files holds a
// million keys).
struct CacheKey {
  InlineString remote_key;
  Hash128 hash;
  uint64_t size = 0;
};

// A file of an unmanaged remote as listed (path, ETag, size) and the hash
// its bytes had when fetched.
struct ListedObject {
  std::string path, etag;
  uint64_t size = 0;
  Hash128 hash;
};

struct EvictReport {
  uint64_t objects = 0;
  uint64_t bytes = 0;
};

struct RecoverReport {
  uint64_t rows_dropped = 0;   // rows whose file was gone
  uint64_t files_indexed = 0;  // files without a row, hashed and indexed
  uint64_t files_removed = 0;  // files that did not hash to their name
};

class Cache {
 public:
  // Opens (creating) the cache in dir. Not durable (--no-fsync): its index
  // syncs nothing (SQLite synchronous=OFF), and closing it leaves the WAL
  // to the next opener (no checkpoint while the process waits to exit).
  static Result<std::unique_ptr<Cache>> Open(Env* env, std::string dir,
                                             bool durable = true);
  // For a dry run, which writes nothing: the index read as it is (no
  // folder, lock, WAL or migration: Db::OpenImmutable); one that cannot be
  // read so (none, a name Open would clear, an older format, damaged) as
  // an empty one in memory, with a warning when it is there. Objects and
  // manifests are found at their paths either way.
  static Result<std::unique_ptr<Cache>> OpenForDryRun(Env* env,
                                                      std::string dir);
  ~Cache();
  // What Open cleared away (each a line for SyncReport::warnings), once.
  std::vector<std::string> TakeWarnings() { return std::move(warnings_); }
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  const std::string& dir() const { return dir_; }
  std::string ObjectPath(const CacheKey& key) const;
  // Where a download of key lands before Insert (its folder is created by
  // the engine): <dir>/partial/<remote-key>/<hex>.
  std::string PartialPath(const CacheKey& key) const;
  std::string ManifestPath(const Hash128& id) const;

  // Whether the object is in the cache (row and file). A row whose file is
  // gone is dropped; a file without a row, or whose stamp (inode, size,
  // mtime, ctime) is not the one recorded when its bytes were verified, is
  // re-hashed and indexed if it hashes to key (removed if not). A hit updates
  // the last use unless touch is false (then Touch the hits in one
  // transaction).
  Result<bool> Lookup(const CacheKey& key, bool touch = true);
  // Lookup of many keys, not touched: their rows read in one transaction
  // with one statement, one lstat per object. (*hit)[i] for keys[i].
  Status LookupAll(const std::vector<CacheKey>& keys, std::vector<bool>* hit);
  // What a dry run's ProbeAll found of keys[i]: whether a lookup finds it
  // (hit[i]), and whether the index has its row (row[i]). A lookup drops
  // the row of an object it does not find (gone, damaged, not a regular
  // file), which PlanRoom leaves out, and indexes one it finds without a
  // row (a crash between rename and index write), which PlanRoom counts.
  struct Probe {
    std::vector<CacheKey> keys;
    std::vector<bool> hit, row;
  };
  // LookupAll for a dry run: the same checks (a regular file at its name,
  // its stamp the recorded one, else its bytes hashed), nothing changed: no
  // row dropped or written, no file removed or made read-only again. A file
  // this process cannot read is judged by its size (a lookup makes it
  // readable first).
  Status ProbeAll(const std::vector<CacheKey>& keys, Probe* probe);
  // Whether the object's recorded stamp is stamp (a view's hard link to
  // it, unchanged since verified or since ferry last linked it).
  Result<bool> StampMatches(const CacheKey& key, const FileStamp& stamp);
  // After ferry linked objects (which changes their ctime): each
  // (key, stamp of the link) records the new ctime if inode, size and mtime
  // are still the recorded ones.
  Status Restamp(const std::vector<std::pair<CacheKey, FileStamp>>& linked);
  // Restamp with each object's stamp now: after ferry removed links to
  // them (an unlink changes the ctime too).
  Status RestampObjects(const std::vector<CacheKey>& keys);

  // Marks the objects used now, in one transaction.
  Status Touch(const std::vector<CacheKey>& keys);

  // Moves the verified file src (same file system) into the cache as key,
  // read-only, and indexes it. If another process inserted it meanwhile,
  // src is removed and the existing object kept.
  Status Insert(const CacheKey& key, const std::string& src);
  // Insert for many (key, src), indexed in one transaction.
  Status InsertAll(const std::vector<std::pair<CacheKey, std::string>>& items);

  // Copies src into the cache as key if its bytes are key's (size and
  // XXH3-128, hashed while copying); false, and nothing kept, if not. A copy,
  // not a link: the file stays the user's to change.
  Result<bool> Adopt(const CacheKey& key, const std::string& src);

  // Pins: objects a view uses are never evicted while the view is pinned.
  // Pinning replaces the view's earlier pins.
  Status Pin(const std::string& view, const std::vector<CacheKey>& keys);
  Status Unpin(const std::string& view);
  // Views that hold pins.
  Result<std::vector<std::string>> PinnedViews();

  // Unmanaged remotes: what a listed (path, ETag, size) of remote_key was
  // when last fetched, so another DEST (or another process) need not fetch
  // it again. Recall is false for an unknown one or an empty ETag.
  Status RememberListed(const std::string& remote_key,
                        const std::vector<ListedObject>& objects);
  Result<bool> RecallListed(const std::string& remote_key,
                            ListedObject* object);

  // Reservations: the objects a running sync is about to download or link
  // that no pin holds, recorded in the index for as long as this Cache is
  // open, so that other processes sharing the cache see them before any
  // view is: their MakeRoom and PlanRoom count the bytes of those not in
  // the cache yet as in use (downloads in flight), and no eviction (MakeRoom,
  // FreeRoom) takes those that are. A reservation lives while its Cache
  // holds a byte of <dir>/locks/reservations (its slot, an OFD lock, taken
  // at the first reservation): a killed process's lock goes with it, and
  // its rows count no more (dropped by the next MakeRoom or FreeRoom, and
  // by whoever takes the slot next). Closing the Cache drops its rows.
  // Reserve adds keys (before they are looked up: an unmanaged remote's
  // cached files, linked once all its hashes are known).
  Status Reserve(const std::vector<CacheKey>& keys);
  // Replaces each reserved first key by its second (a file of an unmanaged
  // remote reserved under its lock key, (path, ETag, size), before its hash
  // was known; before it is inserted, so that its bytes count once). Nothing
  // when this Cache reserved nothing.
  Status Rekey(const std::vector<std::pair<CacheKey, CacheKey>>& from_to);

  // Bytes of all indexed objects.
  Result<uint64_t> TotalBytes();
  // Reserves use (what the sync will download, and what it will link that
  // no pin holds: an unmanaged remote's cached files) and evicts
  // least-recently-used objects until the cache fits in limit: the indexed
  // objects plus the reserved ones not in the cache yet, this sync's and
  // other running syncs' alike, each counted once. Never evicted: objects a
  // live view pins or a running sync reserved. Pins of views whose folder
  // no longer exists are dropped first. ResourceExhausted when it cannot
  // fit: nothing evicted, nothing of use reserved. One process at a time
  // (<dir>/lock), one transaction: two syncs never both count the same free
  // room.
  Status MakeRoom(uint64_t limit, const std::vector<CacheKey>& use,
                  EvictReport* report);
  // What MakeRoom would evict, found read only (a dry run: nothing written),
  // once a sync pinned pinned (its view's objects, or the cached files an
  // unmanaged remote's sync keeps), looked up probe's keys (the rows of
  // those it does not find dropped, of those it finds without one written),
  // pins of views whose folder is gone dropped, and its need bytes
  // reserved: the same choice, other running syncs' reservations counted
  // as MakeRoom counts them (an object this sync fetches too: once), and
  // the same ResourceExhausted.
  Status PlanRoom(uint64_t limit, uint64_t need,
                  const std::vector<CacheKey>& pinned, const Probe& probe,
                  EvictReport* report);
  // After a full disk (ENOSPC): evicts least-recently-used objects no live
  // view pins and no running sync reserved until at least bytes are freed,
  // or none is left to evict (not an error).
  Status FreeRoom(uint64_t bytes, EvictReport* report);

  // What a killed run may have left in partial/<remote_key>/ (part files,
  // journals, a patch, blocks, an adopted copy), listed once: a cold sync
  // of 2,000 objects otherwise tried ~16,000 unlinks and ~2,000 stats of
  // files that were not there before its first request. Taken once the
  // objects it is used for are locked (no other process writes their files
  // then) and forgotten before any other object is; MayHaveLeftovers is
  // true without a listing.
  void ListLeftovers(const std::string& remote_key);
  void ForgetLeftovers() { leftovers_listed_ = false; }
  bool MayHaveLeftovers(const CacheKey& key) const;
  // Of the listing: removes what is there for the object (locked) whose
  // partial/<remote_key>/ name is name (its hash, or an unmanaged file's
  // u-<hash>) but is no regular file. A folder, a FIFO, a device or a link
  // at a part file's or journal's name failed every sync of the object
  // until removed by hand.
  Status RemoveOddLeftovers(const std::string& remote_key,
                            std::string_view name);

  // Scans every object file and every row (see the class comment).
  Status Recover(RecoverReport* report);

 private:
  Cache(Env* env, std::string dir, std::unique_ptr<Db> db);
  Status IndexRow(const CacheKey& key);
  Status IndexRows(const std::vector<CacheKey>& keys);
  Status DropRow(const CacheKey& key);
  // read_only: ProbeAll's (nothing changed).
  Result<bool> RecoverFile(const CacheKey& key, const std::string& path,
                           bool read_only = false);
  // row (if not null): whether each key had its row before.
  Status FindAll(const std::vector<CacheKey>& keys, bool read_only,
                 std::vector<bool>* hit, std::vector<bool>* row = nullptr);
  // Lookup's check of the file against its row (rec, if there is one).
  Result<bool> CheckObject(const CacheKey& key, const FileStamp* rec,
                           bool read_only);
  // MakeRoom (strict: all or nothing; use reserved) and FreeRoom (need
  // bytes, as much as there is).
  Status Evict(uint64_t limit, uint64_t need, bool strict,
               const std::vector<CacheKey>& use, EvictReport* report);
  // What PlanRoom assumes a sync did before it made room.
  struct Assumed {
    std::vector<std::string> gone_views;      // their pins dropped
    std::unordered_set<std::string> pinned;   // "<rk>/<hash hex>"
    std::unordered_set<std::string> dropped;  // rows a lookup drops
    uint64_t dropped_bytes = 0;
    std::vector<CacheKey> indexed;  // rows a lookup writes (used now)
    uint64_t indexed_bytes = 0;
    // Keys need or indexed_bytes count already: another sync's
    // reservation of one adds nothing.
    std::unordered_set<std::string> counted;
  };
  // What room-making counts: the indexed objects' bytes (as a dry run
  // assumes them), those of reservations not in the cache yet (this
  // Cache's, and other running syncs', each object once), and what must go.
  struct Room {
    uint64_t total = 0;   // in use, others' reservations included
    uint64_t others = 0;  // of it, reserved by other running syncs
    uint64_t need = 0;    // this sync's, not yet in the cache
  };
  // Takes this Cache's slot (a byte of <dir>/locks/reservations), once.
  Status TakeSlot();
  // The owners of reservations whose slot is held, into temp.ferry_live
  // (this Cache's own included); drop_stale: the rows of the others are
  // deleted (in the caller's transaction).
  Status FindLiveOwners(bool drop_stale);
  // The views whose pins PickVictims ignores, into temp.ferry_gone.
  Status SetGoneViews(const std::vector<std::string>& views);
  // Adds to room the reservations of live owners not in the cache yet:
  // this Cache's to need, other running syncs' to total and others (an
  // object both reserved: once, theirs), but those assumed counts already.
  Status CountReserved(const Assumed* assumed, Room* room);
  // The one choice of victims (Evict's and PlanRoom's): least recently
  // used first, none pinned by a view (but those of temp.ferry_gone), none
  // reserved by a live owner (temp.ferry_live), until room.total +
  // room.need fits in limit (strict: else ResourceExhausted and none) or
  // room.need bytes are freed (not strict: as far as there are any).
  Status PickVictims(uint64_t limit, const Room& room, bool strict,
                     const Assumed* assumed, std::vector<CacheKey>* victims);

  Env* env_;
  std::string dir_;
  std::unique_ptr<Db> db_;
  std::vector<std::string> warnings_;
  std::string temp_dir_;  // OpenForDryRun's private copy, removed at close
  bool leftovers_listed_ = false;
  std::string leftovers_rk_;
  std::unordered_set<std::string> leftovers_;  // object hex of each name
  // Names of the listing not known to be regular files, by object hex.
  std::unordered_multimap<std::string, std::string> odd_leftovers_;
  // This Cache's reservations' slot, once taken (slot_ >= 0).
  std::unique_ptr<ByteLockSet> slot_lock_;
  int64_t slot_ = -1;
};

// The cache key of a remote: XXH3-128 (hex) of its normalised URL.
std::string RemoteKey(std::string_view normalised_url);

// The cache folder: flag, else $FERRY_CACHE, else $XDG_CACHE_HOME/ferry,
// else ~/.cache/ferry.
std::string DefaultCacheDir();

// <cache_dir>/index.sqlite.
std::string IndexPath(const std::string& cache_dir);
// s is SQLite's word that the cache's index is damaged ("file is not a
// database", "database disk image is malformed").
bool IsDamagedIndex(const Status& s, const std::string& cache_dir);
// Moves a damaged index (with its WAL) to index.sqlite.damaged (replacing
// an older one), under the cache's lock, and makes a new one with a row for
// each object file (stamps 0: re-hashed when next looked up); false when
// the index was found sound (another process moved it first). Pins and an
// unmanaged remote's listings are not rebuilt: the syncs that need them
// write them again.
Result<bool> SetDamagedIndexAside(Env* env, const std::string& cache_dir);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_CACHE_H_
