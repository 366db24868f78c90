// Publishing a dataset as versions in a bucket: `ferry publish`, `log`, `gc`
// (docs/sync.md, the layout in formats/manifest/README.md). Every version is a
// manifest of content-addressed objects; refs (HEAD, tags) name manifests.
// The node side (`ferry sync`) is ferry/sync.h.
//
// Thread-safety: each call is independent; the Backend is thread-safe.
#ifndef FERRY_PUBLISH_H_
#define FERRY_PUBLISH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ferry/env.h"
#include "ferry/export.h"
#include "ferry/hash.h"
#include "ferry/remote.h"
#include "ferry/status.h"
#include "ferry/transfer.h"

namespace ferry {

// One published version, as `ferry log` shows it.
struct VersionInfo {
  Hash128 id;
  bool has_parent = false;
  Hash128 parent;
  int64_t created_unix_s = 0;
  uint64_t files = 0;
  uint64_t bytes = 0;  // total size of the files
  uint64_t part_size = 0;
  std::string message;
  std::vector<std::string> tags;  // tag names pointing at this version
};

// Visits the versions from `ref` ("HEAD" or "tags/<name>") back through their
// parents, newest first, at most `max` of them (0: all). NotFound when the
// remote has no such ref or the manifest it names is missing; Corruption when
// a manifest does not match its id or breaks the format. A missing parent
// (removed by gc) ends the history: the last version visited then has
// has_parent set.
// *skipped (if given): entries of the tags folder that could not be read
// as tags (a FIFO, a folder, a dangling link, an unreadable folder, no
// tag's name), each "<remote>/<key>: <why>"; their versions are listed
// without them.
FERRY_EXPORT Status
ListVersions(Backend* backend, std::string_view ref, uint64_t max,
             const std::function<Status(const VersionInfo&)>& visit,
             std::vector<std::string>* skipped = nullptr);

struct PublishOptions {
  std::string tag;       // also point tags/<tag> at the version
  std::string message;   // -m
  bool dry_run = false;  // read everything, write nothing (not even the cache)
  bool mirror = false;   // also write each file at its path under the prefix
  uint64_t part_size = uint64_t{8} << 20;
  // New files below 1 MiB go up in packs (formats/manifest "Packs"; the
  // manifest is then format version 2). false (--no-packs): every file is
  // its own object, version 1, as ferry wrote before packs.
  bool packs = true;
  // Which files of SRC to publish (path relative to SRC); null: all.
  std::function<bool(std::string_view path)> take;
  // The stat cache's folder ("" : $FERRY_CACHE, else ~/.cache/ferry).
  std::string cache_dir;
  bool use_stat_cache = true;
  int jobs = 1;              // threads reading files
  TransferOptions transfer;  // uploads
  // Files not published (FIFOs, links to folders) and other notes.
  std::function<void(std::string_view)> note;
  // Called right before HEAD is written, after any check of it (tests race
  // another publisher here: only the backend's conditional write can then
  // stop the overwrite).
  std::function<void()> before_ref_write;
  // When set, each upload run's report is added to it (requests, retries,
  // failures, warnings such as "server unreachable"), also when Publish
  // fails: a failed upload fails the publish with a summary (how many
  // failed, the first few sources), and the CLI shows them all as put does.
  TransferReport* uploads = nullptr;
};

struct PublishReport {
  Hash128 id;  // the version published (the parent itself when unchanged)
  bool has_parent = false;
  Hash128 parent;
  bool unchanged = false;  // the tree equals the parent: no new version
  bool dry_run = false;
  uint64_t files = 0, bytes = 0;
  uint64_t files_read = 0, bytes_read = 0;  // hashed (not from the cache)
  uint64_t skipped = 0;                     // not regular files
  uint64_t objects_uploaded = 0, bytes_uploaded = 0;
  uint64_t objects_present = 0;  // already in the bucket
  // Of objects_uploaded, those below 1 MiB put in packs, and the packs
  // (formats/manifest "Packs").
  uint64_t objects_packed = 0, packs_uploaded = 0;
  uint64_t manifest_bytes = 0;
  // Issue 13 (docs/delta.md): signatures of new objects, deltas of changed
  // paths stored (zstd bytes), and deltas not stored (not below half the
  // object).
  uint64_t signatures_uploaded = 0, deltas_uploaded = 0, delta_bytes = 0;
  uint64_t deltas_dropped = 0;
  // Deltas refined with the parent object's bytes around their literals,
  // the literal bytes that became copies, and the bytes and ranged GETs of
  // the parent objects read for it.
  uint64_t deltas_refined = 0, delta_literal_bytes_saved = 0;
  uint64_t delta_refine_bytes_read = 0, delta_refine_requests = 0;
  // True when the backend itself refused a HEAD write that lost a race
  // (conditional write); false when HEAD was checked just before writing.
  bool ref_conditional = false;
  bool tag_moved = false;  // the tag pointed at another version before
  uint64_t mirrored = 0, mirror_deleted = 0;
};

// Publishes the tree at `source` as a new version of the remote: objects it
// lacks, the manifest, then HEAD (and the tag). A publisher that moved HEAD
// meanwhile makes this one fail with FailedPrecondition ("remote changed
// since this publish started (parent X, now Y)"); nothing of the remote's
// state is then changed but unreferenced objects (gc reclaims them).
FERRY_EXPORT Result<PublishReport> Publish(const std::string& source,
                                           Backend* backend,
                                           const PublishOptions& options,
                                           Env* env);

// The longest grace gc takes: 100 years (its cutoff in nanoseconds stays
// far inside int64).
inline constexpr int64_t kMaxGraceS = int64_t{100} * 365 * 86400;

struct GcOptions {
  uint64_t keep = 10;  // versions from HEAD back (>= 1); tagged ones too
  // Objects and manifests younger than this are never deleted: a publish
  // running meanwhile uploads objects before the manifest that references
  // them, and must not lose them.
  int64_t grace_s = 24 * 3600;  // 0 ..= kMaxGraceS
  bool dry_run = false;
  // Each key this run deleted (or would, with dry_run), with its size,
  // once deleted.
  std::function<void(std::string_view key, uint64_t size)> deleted;
};

// What a gc run did: the *_deleted counts and bytes_deleted are what this
// run removed, never what it only meant to.
struct GcReport {
  // The kept versions were all read and the sweep began: from then on a
  // run that fails has deleted what the counts say.
  bool sweeping = false;
  uint64_t versions_kept = 0;
  uint64_t objects_kept = 0, objects_deleted = 0, bytes_deleted = 0;
  uint64_t manifests_deleted = 0;
  // Packs (formats/manifest "Packs"): kept while a kept version names one;
  // deleted ones' bytes count in bytes_deleted.
  uint64_t packs_kept = 0, packs_deleted = 0;
  uint64_t young_kept = 0;  // unreferenced but within the grace period
  // Unreferenced and old, but gone when deleted: another gc running at the
  // same time removed them (counted there, not here). A backend that cannot
  // tell (an S3-compatible server that ignores If-Match on DELETE) counts
  // them as deleted.
  uint64_t already_gone = 0;
  // Signatures of objects not kept, deltas with an end not kept
  // (docs/delta.md); their bytes are in bytes_deleted.
  uint64_t sigs_deleted = 0, deltas_deleted = 0;
  // A file:// remote's temporary files under .ferry/ that killed writers
  // left (RemoveStaleTemps: no writer holds their lock, older than 60 s).
  uint64_t temps_deleted = 0;
  // An S3 remote's incomplete multipart uploads under .ferry/ (what killed
  // uploads left) initiated before the grace period, aborted; younger ones
  // count in young_kept. uploads_note says why they were not looked at (a
  // server without the listing, credentials without the right) or how many
  // could not be aborted, else "".
  uint64_t uploads_aborted = 0;
  std::string uploads_note;
};

// Deletes objects (and manifests) no kept version references and older than
// the grace period. Listing is streamed; memory holds the referenced hashes
// (16 bytes each), never the listing. *report is what the run did, also
// when it fails (a server that became unavailable after retries): then the
// status names what failed, and the counts are what was deleted before.
FERRY_EXPORT Status CollectGarbage(Backend* backend, const GcOptions& options,
                                   Env* env, GcReport* report);

}  // namespace ferry

#endif  // FERRY_PUBLISH_H_
