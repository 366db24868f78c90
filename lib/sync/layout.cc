#include "sync/layout.h"

#include <sys/random.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "formats/manifest/manifest.h"
#include "remote/byte_sources.h"

namespace ferry::sync {

size_t Hash128Hasher::operator()(const Hash128& h) const {
  static const uint64_t seed = [] {
    uint64_t s = 0;
    if (::getrandom(&s, sizeof s, 0) != sizeof s)  // no entropy: the clock
      s = static_cast<uint64_t>(
          std::chrono::steady_clock::now().time_since_epoch().count());
    return s;
  }();
  const uint64_t words[2] = {h.high, h.low};
  return static_cast<size_t>(XXH3_64bits_withSeed(words, sizeof words, seed));
}

namespace {

bool IsLowerHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

// "<dir><2 hex>/<32 hex>" or "<dir><32 hex>" (fanout false).
bool ParseHashKey(std::string_view key, std::string_view dir, bool fanout,
                  Hash128* hash) {
  if (key.substr(0, dir.size()) != dir) return false;
  key.remove_prefix(dir.size());
  if (fanout) {
    if (key.size() != 3 + 32 || key[2] != '/' ||
        key.substr(0, 2) != key.substr(3, 2))
      return false;
    key.remove_prefix(3);
  }
  return ParseHashHex(key, hash);
}

std::string Where(Backend* backend, std::string_view key) {
  return JoinPath(backend->Describe(), key);
}

// What to do about a ref that cannot be read: a HEAD removed starts a new
// history, a tag removed is made anew.
std::string Remedy(std::string_view ref) {
  return ref == kHead ? "restore it, or remove it to start a new history"
                      : "restore it, or remove it";
}
// The same for a reader (a sync), who cannot mend the bucket.
std::string ReaderRemedy(std::string_view ref) {
  return std::string("the bucket's publisher must restore it (") +
         (ref == kHead ? "ferry publish writes HEAD" : "ferry publish --tag") +
         ")";
}

// Why the folder `dir` above a ref's key is no folder of keys (file://: a
// file, a FIFO, a device, a link out of the bucket or a dangling one), ""
// when it is one or is absent; absent sets *absent. A listing of its own
// folder finds it (a dangling link shows only there); a folder seen there
// is one, anything else is confirmed by a listing inside it (a link to a
// folder of the bucket lists as it does).
Result<std::string> NoFolder(Backend* backend, const std::string& dir,
                             bool* absent) {
  std::string why;
  bool seen = false, folder = false;
  ListOptions lo;
  lo.recursive = false;
  lo.problem = [&](const std::string& k, const Status& s) {
    if (k != dir) return;
    seen = true;
    if (why.empty() && s.code() != Status::Code::kNotSupported)
      why = std::string(s.message());
  };
  FERRY_RETURN_IF_ERROR(backend->List(dir, lo, [&](const ObjectInfo& o) {
    if (o.key == dir + "/") folder = true;
    if (o.key == dir) seen = true;  // a file where a folder should be
    return Status::OK();
  }));
  if (folder || !why.empty()) return why;
  *absent = !seen;
  if (!seen) return why;
  lo.problem = [&](const std::string& k, const Status& s) {
    if (k == dir && why.empty()) why = std::string(s.message());
  };
  FERRY_RETURN_IF_ERROR(backend->List(
      dir + "/", lo, [](const ObjectInfo&) { return Status::OK(); }));
  return why;
}

// A ref's key a read found no object at (or failed at): FailedPrecondition
// when something is there all the same. First the folders above it, from
// the top, each named when it is no folder; then a listing of its folder
// (told as a problem — a FIFO, a device, a link out of the folder or a
// dangling one, the folder itself unreadable as one — or a folder of keys
// by its name).
Status CheckNothingAt(Backend* backend, const std::string& key,
                      const std::string& remedy) {
  if (!backend->caps().listing) return Status::OK();
  for (size_t slash = key.find('/'); slash != std::string::npos;
       slash = key.find('/', slash + 1)) {
    const std::string dir = key.substr(0, slash);
    bool absent = false;
    FERRY_ASSIGN_OR_RETURN(std::string why, NoFolder(backend, dir, &absent));
    if (!why.empty()) {
      return Status::FailedPrecondition(
          Where(backend, dir),
          "is there but is no folder (" + why + "), so " + std::string(key) +
              " cannot be read: nothing written; " + remedy);
    }
    if (absent) return Status::OK();  // nor anything below it
  }
  const std::string dir = key.substr(0, key.rfind('/'));
  std::string why;
  ListOptions lo;
  lo.recursive = false;
  lo.problem = [&](const std::string& k, const Status& s) {
    if (why.empty() && (k == key || k == dir)) why = std::string(s.message());
  };
  FERRY_RETURN_IF_ERROR(backend->List(key, lo, [&](const ObjectInfo& o) {
    if (why.empty() && o.is_prefix && o.key == key + "/") why = "a folder";
    return Status::OK();
  }));
  if (why.empty()) return Status::OK();
  return Status::FailedPrecondition(
      Where(backend, key), "is there but cannot be read as a ref (" + why +
                               "): nothing written; " + remedy);
}

}  // namespace

bool ParseHashHex(std::string_view hex, Hash128* hash) {
  if (hex.size() != 32 || !IsLowerHex(hex)) return false;
  auto h = Hash128::FromHex(hex);
  if (!h.ok()) return false;
  *hash = *h;
  return true;
}

static std::string FannedKey(std::string_view dir, const Hash128& hash) {
  std::string hex = hash.ToHex();
  std::string key(dir);
  key.append(hex, 0, 2);
  key += '/';
  key += hex;
  return key;
}

std::string ObjectKey(const Hash128& hash) {
  return FannedKey(kObjectsDir, hash);
}

bool ParseObjectKey(std::string_view key, Hash128* hash) {
  return ParseHashKey(key, kObjectsDir, true, hash);
}

std::string PackKey(const Hash128& id) { return FannedKey(kPacksDir, id); }

bool ParsePackKey(std::string_view key, Hash128* id) {
  return ParseHashKey(key, kPacksDir, true, id);
}

std::string ManifestKey(const Hash128& id) {
  return std::string(kManifestsDir) + id.ToHex();
}

bool ParseManifestKey(std::string_view key, Hash128* id) {
  return ParseHashKey(key, kManifestsDir, false, id);
}

Status CheckTagName(std::string_view name) {
  auto bad = [&](const char* why) {
    return Status::InvalidArgument("tag '" + std::string(name) + "'", why);
  };
  if (name.empty()) return bad("is empty");
  if (name.size() > 128) return bad("is longer than 128 bytes");
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9');
  };
  if (!alnum(name.front())) return bad("must start with a letter or a digit");
  for (char c : name) {
    if (!alnum(c) && c != '.' && c != '_' && c != '-')
      return bad("may hold only letters, digits, '.', '_' and '-'");
  }
  if (name.find("..") != std::string_view::npos) return bad("contains '..'");
  if (name == kHead) return bad("is reserved");
  if (name.size() == 32 && name.find_first_not_of("0123456789abcdefABCDEF") ==
                               std::string_view::npos)
    return bad(
        "is 32 hex digits: REMOTE@<32 hex digits> names a manifest id, "
        "so the tag could never be read");
  if (name.size() >= 5 && name.substr(name.size() - 5) == ".lock")
    return bad("ends with '.lock'");
  return Status::OK();
}

Result<std::string> TagRef(std::string_view tag) {
  FERRY_RETURN_IF_ERROR(CheckTagName(tag));
  return "tags/" + std::string(tag);
}

Result<std::string> RefKey(std::string_view ref) {
  if (ref == kHead) return std::string(kRefsDir) + std::string(kHead);
  if (ref.substr(0, 5) == "tags/") {
    FERRY_RETURN_IF_ERROR(CheckTagName(ref.substr(5)));
    return std::string(kRefsDir) + std::string(ref);
  }
  return Status::InvalidArgument("ref '" + std::string(ref) + "'",
                                 "is neither HEAD nor tags/<name>");
}

std::string FormatRef(const Hash128& id) { return id.ToHex() + "\n"; }

Result<Hash128> ParseRef(std::string_view text, std::string_view where) {
  auto blank = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
  };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  if (text.size() == 32) {
    auto id = Hash128::FromHex(text);
    if (id.ok()) return *id;
  }
  return Status::Corruption(where,
                            "does not hold a manifest id (32 hex digits)");
}

Result<std::string> ReadObject(Backend* backend, std::string_view key,
                               uint64_t max_bytes, const ReadOptions& options) {
  CappedStringSink sink(Where(backend, key), max_bytes);
  FERRY_RETURN_IF_ERROR(backend->Read(key, ByteRange{}, options, &sink));
  return std::move(sink.out);
}

Result<ObjectInfo> WriteObject(Backend* backend, std::string_view key,
                               std::string_view bytes,
                               const WriteOptions& options) {
  remote::StringSource source(bytes);
  return backend->Write(key, &source, options);
}

Result<Ref> ReadRef(Backend* backend, std::string_view ref, bool strict) {
  FERRY_ASSIGN_OR_RETURN(std::string key, RefKey(ref));
  auto got = backend->ReadIfChanged(key, "", kMaxRefBytes);
  if (!got.ok()) {
    // An IOError may be a folder above the key that is none (file://: "Not
    // a directory"): named when the check finds it, else left as it is.
    if (strict && got.status().IsNotFound())
      FERRY_RETURN_IF_ERROR(CheckNothingAt(backend, key, Remedy(ref)));
    if (strict && got.status().IsIOError()) {
      Status there = CheckNothingAt(backend, key, Remedy(ref));
      if (there.IsFailedPrecondition()) return there;
    }
    return got.status();
  }
  FERRY_ASSIGN_OR_RETURN(Hash128 id, ParseRef(got->bytes, Where(backend, key)));
  return Ref{id, got->etag};
}

Status CheckRefAbsent(Backend* backend, std::string_view ref) {
  FERRY_ASSIGN_OR_RETURN(std::string key, RefKey(ref));
  return CheckNothingAt(backend, key, ReaderRemedy(ref));
}

Result<std::string> FetchManifest(Backend* backend, const Hash128& id) {
  const std::string key = ManifestKey(id);
  auto bytes = ReadObject(backend, key, kMaxManifestBytes);
  if (!bytes.ok()) {
    if (bytes.status().IsNotFound())
      return Status::NotFound(Where(backend, key), "manifest is missing");
    return bytes.status();
  }
  Status s = manifest::VerifyId(*bytes, id);
  if (!s.ok())
    return Status::Corruption(Where(backend, key),
                              "bytes do not match the manifest id (" +
                                  std::string(s.message()) + ")");
  return bytes;
}

}  // namespace ferry::sync
