// The transfer engine: moves many objects between a Backend and local files
// at once — parallel, ranged, resumable, retried, verified (docs/remote.md).
//
// Thread-safety: each call runs its own event loop and may be made from
// several threads at once (on distinct destinations).
#ifndef FERRY_TRANSFER_H_
#define FERRY_TRANSFER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ferry/env.h"
#include "ferry/export.h"
#include "ferry/hash.h"
#include "ferry/remote.h"
#include "ferry/result.h"
#include "ferry/status.h"

namespace ferry {

struct GetItem {
  std::string key;   // in the backend
  std::string dest;  // local file path (its folder is created)
  // When set, dest lies below this folder (the user's DST, which may itself
  // be a symbolic link): the folders between are created one at a time from
  // it and a symbolic link among them is an error, never followed.
  std::string root;
  // Known from a listing or a manifest; empty/unset: the engine stats.
  bool have_info = false;
  ObjectInfo info;
  // When set (with have_info; a path in dest's folder): bytes that turn
  // out not to be the object info describes land here, never at dest: the
  // object changed since it was listed (another ETag or size: fetched
  // again), or an answer to a GET carried no ETag where info has one
  // (nothing says which version came). dest then only ever holds bytes
  // every answer said were info's version, so a caller may take a complete
  // dest a killed run left as that version (unmanaged sync does).
  std::string changed_dest;
  // When set, the file is hashed before it gets its final name; a mismatch
  // removes the part file and the item fails with Corruption (exit 3).
  bool have_expected = false;
  Hash128 expected{};
  // When set (a manifest's size): the server's size (HEAD, Content-Range
  // total, stat) must be it before a byte is fetched; else the item fails
  // with Corruption (exit 3) at once, no part file left.
  bool have_expected_size = false;
  uint64_t expected_size = 0;
  // When set (a manifest's File.part_xxh3_64 and its part size): the object
  // is fetched in parts of part_hash_size, whatever the options' part size,
  // and each part is checked against its XXH3-64 as it lands. A part that
  // does not match is fetched again (retries["part-hash"]), up to the retry
  // limit, then the item fails with Corruption; a resumed download checks
  // its journalled parts again and fetches only the bad ones.
  std::vector<uint64_t> part_hashes;
  uint64_t part_hash_size = 0;
  // When not empty, only these byte ranges of the object are fetched (sync's
  // block reuse): each into the same offsets of dest, which gets the
  // object's size (sparse between the ranges). A range goes as ranged GETs
  // of at most the part size, several at once, each checked as a part is
  // (206, exactly the Content-Range asked, the ETag of the object's first
  // answer by If-Match / If-Range; short or long bodies retried); a 200
  // before any 206 means the server ignores Range: NotSupported at once.
  // No journal (nothing is resumed), no part hashes and no expected hash
  // (dest is not the object). Ranges: sorted, not overlapping, not empty,
  // inside the object (else the item fails with Corruption).
  std::vector<ByteRange> ranges;
};

// One file of a PutItem's srcs: its bytes must be `size` long (and, with
// has_hash, hash to `hash`: checked as they are read, so that bytes other
// than those hashed never complete an upload).
struct PutPart {
  std::string path;
  uint64_t size = 0;
  bool has_hash = false;
  Hash128 hash;
};

struct PutItem {
  std::string src;  // local file (with srcs: names the item in failures)
  std::string key;  // in the backend
  // When set: src was found walking this folder (its real path, links
  // resolved), and the file opened must still lie below it: a link put in
  // its place since the walk that leads outside fails the item, nothing
  // uploaded (the walk skips such links; this closes the window after it).
  std::string root;
  // When not empty, the object's bytes are these files one after another
  // (publish's packs, formats/manifest "Packs"), src unused but as a name:
  // each is checked as src would be (below root when set), and must have
  // the size given and be unchanged when the upload ends.
  std::vector<PutPart> srcs;
};

struct TransferProgress {
  uint64_t bytes_done = 0, bytes_total = 0;
  uint64_t files_done = 0, files_total = 0;
};

struct TransferOptions {
  int connections = 16;           // requests in flight, all objects together
  uint64_t part_size = 8u << 20;  // objects above it go as parallel parts
  // Uploads: a big object's parts grow with it, to about two per
  // connection (at least part_size, at most 64 MiB; S3's 10,000-part limit
  // aside): fewer requests, and less work for a server that joins the
  // parts at the end. `ferry put` sets it when --part-size is not given
  // (docs/remote.md "What is in the bucket").
  bool grow_parts = false;
  // Uploads (S3): a multipart upload first aborts the incomplete uploads of
  // its key that killed runs left, but not those initiated within this
  // many seconds: 0 for `ferry put` (a key has one writer), a day for
  // publish (another publisher may be uploading the same object; gc takes
  // the old ones).
  int64_t keep_uploads_younger_s = 0;
  uint64_t bwlimit = 0;  // bytes/s over all transfers; 0: none
  int max_retries = 8;   // per request, after the first attempt
  // Until one request of the run has reached the server, a try that could
  // not (refused, not resolved, the connect timed out) uses up none of its
  // request's retries: a server that comes up late loses no item. Such
  // retries wait no longer than this after the run's first such failure,
  // and the first request that reaches the server starts them all at once.
  // When this long has passed and none has reached it, the run gives up:
  // nothing more is sent, every item fails, and the report has one warning
  // (docs/remote.md "A server that is not there").
  uint64_t unreachable_ms = 30000;
  // Downloads: the run's first request goes alone; when it is answered
  // within pace_probe_ms (a server on the same host or LAN) the requests in
  // flight grow from 1 while more raise the rate, and hold where they no
  // longer do (docs/remote.md "Starting gently, and holding at what fills
  // the link"). false: all at once.
  bool pace_start = true;
  uint64_t pace_probe_ms = 10;  // the answer time below which it paces
  uint64_t low_speed_limit = 1024;
  int low_speed_time = 30;
  bool dry_run = false;
  // Downloads: false skips every fdatasync/fsync/syncfs of parts, journals,
  // final files and folders (--no-fsync). The journal is still written, so
  // a killed process resumes (the page cache outlives it); after a power
  // loss a file may be incomplete under its final name (docs/remote.md).
  bool fsync = true;
  // Called from the event loop now and then (and once at the end).
  std::function<void(const TransferProgress&)> progress;
  // Downloads: called once for each item as it gets its final name (dest:
  // verified, and with fsync its bytes and folder synced), with the item as
  // given but for its info: the size and ETag of the bytes that landed (an
  // object that changed during the run was fetched again: its new ETag, not
  // the listing's; an unmanaged sync records that one; "" when an answer
  // carried none), and its dest: where they landed (changed_dest when they
  // are not the version the item's info named). Never for an item
  // that fails, nor twice for one; in the order the items land, not their
  // order in the list. Called on the thread that
  // called GetObjects (the engine's event loop runs there), one call at a
  // time, before GetObjects returns; every transfer waits while it runs, so
  // it should hand any slow work to another thread (ferry sync moves the
  // object into its cache and links it into the new view on one).
  std::function<void(const GetItem&)> on_installed;
};

struct TransferReport {
  uint64_t files_done = 0;  // transferred (or already complete)
  uint64_t files_failed = 0;
  // Not files: S3 folder markers (empty "x/" objects); ferry put/get -R
  // add what a walked tree skips (FIFOs, devices, links to folders).
  uint64_t files_skipped = 0;
  uint64_t bytes = 0;  // payload bytes moved in this run
  // Bytes a previous run had fetched and this one kept.
  uint64_t bytes_resumed = 0;
  // Of `bytes`, those thrown away when an object changed during the run
  // (fetched again): bytes - bytes_discarded + bytes_resumed is the size of
  // what was downloaded.
  uint64_t bytes_discarded = 0;
  uint64_t requests = 0;
  std::map<std::string, uint64_t> retries;  // by cause: "503", "reset", ...
  // Each failed item: its key (get) or source (put), and why.
  std::vector<std::pair<std::string, Status>> failures;
  // What the run as a whole ran into, said once (not with each item it
  // failed): "server unreachable: ..." when it gave up on a server no
  // request reached.
  std::vector<std::string> warnings;
};

// Where an object listed below a prefix goes in the local folder dst
// (dst/key). A key must be a relative path of plain names: one that is
// empty, absolute, has an empty ("a//b", "a/"), "." or ".." segment, or a
// NUL is refused (InvalidArgument; the caller names the key): it would land
// outside dst or on another key's file.
FERRY_EXPORT Result<std::string> KeyPath(std::string_view dst,
                                         std::string_view key);

// An S3 "folder marker" (the console's "Create folder"): an empty object
// whose key ends in '/' (or is "", the listed prefix itself). Not a file.
FERRY_EXPORT bool IsFolderMarker(const ObjectInfo& info);

// Items whose destinations clash: two items with one dest, or one item's
// dest that is a folder on another's way ("x" and "x/y"), or a part file or
// journal of another ("x.ferry-part"). Returns each clashing item's index
// with an error naming the other key (not its own); every item of a clash is in
// it.
FERRY_EXPORT std::vector<std::pair<size_t, Status>> FindDestClashes(
    const std::vector<GetItem>& items);

// Downloads every item. One item's failure does not stop the others; the
// returned status is not OK only when the run itself could not proceed.
FERRY_EXPORT Result<TransferReport> GetObjects(Backend* backend,
                                               std::vector<GetItem> items,
                                               const TransferOptions& options,
                                               Env* env);

// Uploads every item (multipart above part_size where the backend has it).
// A src that is not a regular file (a device, a FIFO) or reads past its size
// (a /proc file) is a failed item, never sent (its stat size, 0, made an
// empty object); one item's failure does not stop the others.
FERRY_EXPORT Result<TransferReport> PutObjects(Backend* backend,
                                               std::vector<PutItem> items,
                                               const TransferOptions& options,
                                               Env* env);

}  // namespace ferry

#endif  // FERRY_TRANSFER_H_
