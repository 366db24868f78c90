// Where publish and sync keep a dataset in a bucket (formats/manifest/README.md
// "In the bucket", docs/sync.md): content-addressed objects, manifests named by
// their id, and refs (HEAD, tags) that hold a manifest id as "<hex>\n". Keys
// here are relative to the backend's prefix.
//
// Thread-safety: pure functions, and calls on a Backend (which is thread-safe).
#ifndef FERRY_LIB_SYNC_LAYOUT_H_
#define FERRY_LIB_SYNC_LAYOUT_H_

#include <string>
#include <string_view>

#include "ferry/hash.h"
#include "ferry/remote.h"
#include "ferry/result.h"
#include "ferry/status.h"

namespace ferry::sync {

inline constexpr std::string_view kFerryDir = ".ferry";
inline constexpr std::string_view kObjectsDir = ".ferry/objects/";
inline constexpr std::string_view kManifestsDir = ".ferry/manifests/";
inline constexpr std::string_view kPacksDir = ".ferry/packs/";
inline constexpr std::string_view kRefsDir = ".ferry/refs/";
inline constexpr std::string_view kTagsDir = ".ferry/refs/tags/";
// The ref every publish moves.
inline constexpr std::string_view kHead = "HEAD";
// A ref object is 33 bytes; anything much larger is not one.
inline constexpr uint64_t kMaxRefBytes = 1024;
// A manifest fetched whole (publish's parent, log): far above any real one
// (10 M files take ~300 MB), below what would exhaust memory.
inline constexpr uint64_t kMaxManifestBytes = uint64_t{4} << 30;

// For unordered containers keyed by a hash. A manifest's hashes are what its
// publisher wrote, not bits this process computed: mixed with a seed drawn
// once a process, so that no manifest can choose hashes that all land in one
// bucket (low ^ high * K, as this was: 80,000 such files took a cold sync
// 48 s, not 9; a million, hours).
struct Hash128Hasher {
  size_t operator()(const Hash128& h) const;
};

// A hash as keys spell it: 32 lowercase hex digits; false for anything else.
bool ParseHashHex(std::string_view hex, Hash128* hash);
// ".ferry/objects/<first 2 hex>/<32 hex>".
std::string ObjectKey(const Hash128& hash);
// The hash an object key names; false for any other key.
bool ParseObjectKey(std::string_view key, Hash128* hash);
// ".ferry/packs/<first 2 hex>/<32 hex>" (formats/manifest "Packs").
std::string PackKey(const Hash128& id);
bool ParsePackKey(std::string_view key, Hash128* id);
// ".ferry/manifests/<32 hex>".
std::string ManifestKey(const Hash128& id);
bool ParseManifestKey(std::string_view key, Hash128* id);

// A tag name: 1-128 bytes of [A-Za-z0-9._-], starting with a letter or a
// digit, no "..", not "HEAD", not ending in ".lock" (git's rules, simplified:
// a name is one key segment on every backend, never a path).
Status CheckTagName(std::string_view name);

// A ref is named "HEAD" or "tags/<tag>". The key of that ref
// (".ferry/refs/HEAD", ".ferry/refs/tags/<tag>"); InvalidArgument for any
// other name.
Result<std::string> RefKey(std::string_view ref);
// "tags/<tag>" after CheckTagName.
Result<std::string> TagRef(std::string_view tag);

// A ref object's bytes: the id in lower-case hex and "\n".
std::string FormatRef(const Hash128& id);
// The id in a ref object's bytes ("\n" and surrounding blanks optional, hex
// of either case); Corruption naming `where` otherwise.
Result<Hash128> ParseRef(std::string_view text, std::string_view where);

// Small objects held in memory (refs, manifests): the whole object `key`
// (Corruption if it is larger than max_bytes), and a whole-object write.
Result<std::string> ReadObject(Backend* backend, std::string_view key,
                               uint64_t max_bytes,
                               const ReadOptions& options = {});
Result<ObjectInfo> WriteObject(Backend* backend, std::string_view key,
                               std::string_view bytes,
                               const WriteOptions& options = {});

struct Ref {
  Hash128 id;
  std::string etag;  // of the ref object when it was read ("" if unknown)
};

// Reads a ref: NotFound when the remote has no such ref (a remote never
// published to, for HEAD), Corruption when it does not hold an id. The ETag
// belongs to the bytes read (the read is conditional where the backend can,
// else checked by a second Stat). strict (publish): a ref that is there but
// cannot be read as an object — on file://, a FIFO, a device, a folder, a
// link out of the bucket or a dangling one; keys below it — or a folder
// above it that is no folder (.ferry/refs a file, a FIFO, a dangling link
// ...) is FailedPrecondition naming it, never NotFound (a writer would start
// a new history over it) nor a bare "Not a directory". Told by one-level
// listings, only when the read failed; never opened.
Result<Ref> ReadRef(Backend* backend, std::string_view ref,
                    bool strict = false);

// After a read of ref said NotFound: FailedPrecondition naming what is at
// its key or above it when that is no object (the check of ReadRef's
// strict mode, told as to a reader: the publisher must restore it), OK
// when nothing is there. Lists only where the backend can.
Status CheckRefAbsent(Backend* backend, std::string_view ref);

// The whole manifest `id`, its bytes checked against the id (Corruption
// naming the key if they differ, NotFound if there is no such manifest).
Result<std::string> FetchManifest(Backend* backend, const Hash128& id);

}  // namespace ferry::sync

#endif  // FERRY_LIB_SYNC_LAYOUT_H_
