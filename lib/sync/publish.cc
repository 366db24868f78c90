// Publish (docs/sync.md): scan the tree, upload what the remote lacks, write
// the manifest, then swap HEAD with a condition on the version it was built
// on.
#include "ferry/publish.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ferry/version.h"
#include "formats/manifest/manifest.h"
#include "sync/cache.h"
#include "sync/deltas.h"
#include "sync/layout.h"
#include "sync/stat_cache.h"
#include "sync/tree_scan.h"
#include "sync/versions.h"

namespace ferry {
namespace {

using sync::LocalFile;

// An object found in the bucket but referenced by no version this publish
// knows is uploaded again when older than this, so a gc running meanwhile
// (which spares objects younger than its grace, docs/sync.md) cannot delete
// it between this check and the new HEAD.
constexpr int64_t kRefreshAgeNs = int64_t{3600} * 1000000000;
// Above this many objects of unknown presence, one listing of the objects
// folder is cheaper than a HEAD request each.
constexpr size_t kStatLimit = 64;

bool HashLess(const Hash128& a, const Hash128& b) {
  return a.high != b.high ? a.high < b.high : a.low < b.low;
}

std::string Hex(bool has, const Hash128& h) {
  return has ? h.ToHex() : std::string("none");
}

// What publish needs of the parent version.
struct Parent {
  bool exists = false;
  sync::Ref ref;
  VersionInfo info;
  std::vector<Hash128> hashes;                         // sorted, unique
  std::vector<std::pair<std::string, Hash128>> paths;  // sorted (for --mirror)
  std::vector<manifest::File> files;  // sorted, without part hashes (deltas)
  Hash128 digest;                     // of its File records and part size
};

// The identity of a version's content: its File records and part size (not
// its time, message or parent).
class ContentDigest {
 public:
  explicit ContentDigest(uint64_t part_size) {
    h_.Update(std::string_view(reinterpret_cast<const char*>(&part_size), 8));
  }
  void Add(const manifest::File& f) {
    f.SerializeToString(&buf_);
    uint64_t n = buf_.size();
    h_.Update(std::string_view(reinterpret_cast<const char*>(&n), 8));
    h_.Update(buf_);
  }
  Hash128 Digest() const { return h_.Digest(); }

 private:
  Hasher128 h_;
  std::string buf_;
};

Result<Parent> LoadParent(Backend* backend, bool mirror) {
  Parent p;
  // strict: a HEAD that is there but cannot be read (a file:// HEAD that
  // is a FIFO, a folder, a link out of the bucket) is no first version.
  auto ref = sync::ReadRef(backend, sync::kHead, /*strict=*/true);
  if (!ref.ok()) {
    if (ref.status().IsNotFound()) return p;  // the first version
    return ref.status();
  }
  p.exists = true;
  p.ref = *ref;
  const std::string head = JoinPath(backend->Describe(), ".ferry/refs/HEAD");
  auto bytes = sync::FetchManifest(backend, p.ref.id);
  if (!bytes.ok()) {
    Status s = bytes.status();
    std::string why = head + " names manifest " + p.ref.id.ToHex() + ", but " +
                      std::string(s.message()) +
                      ": nothing published (fix or remove HEAD)";
    return s.IsCorruption() ? Status::Corruption(why) : Status::IOError(why);
  }
  std::optional<ContentDigest> digest;  // made once the header is read
  Status s = sync::ReadManifest(
      *bytes, p.ref.id,
      JoinPath(backend->Describe(), sync::ManifestKey(p.ref.id)), &p.info,
      [&](const manifest::File& f) {
        if (!digest) digest.emplace(p.info.part_size);
        digest->Add(f);
        Hash128 h;
        manifest::HashFromBytes(f.xxh3_128(), &h);
        p.hashes.push_back(h);
        if (mirror) p.paths.emplace_back(f.path(), h);
        p.files.push_back(f);
        p.files.back().clear_part_xxh3_64();
        return Status::OK();
      });
  if (!s.ok()) {
    return Status::Corruption(head + " names manifest " + p.ref.id.ToHex() +
                              ", which is unreadable (" +
                              std::string(s.message()) +
                              "): nothing published");
  }
  if (!digest) digest.emplace(p.info.part_size);
  p.digest = digest->Digest();
  std::sort(p.hashes.begin(), p.hashes.end(), HashLess);
  p.hashes.erase(std::unique(p.hashes.begin(), p.hashes.end()), p.hashes.end());
  return p;
}

int64_t CreatedTime(Env* env) {
  if (const char* e = std::getenv("SOURCE_DATE_EPOCH"); e && *e) {
    char* end = nullptr;
    long long v = std::strtoll(e, &end, 10);
    if (end && *end == '\0') return v;
  }
  return static_cast<int64_t>(env->NowMicros() / 1000000);
}

struct Upload {
  Hash128 hash;
  size_t file;  // index of a file with these bytes
};

// Which of the wanted objects the bucket has (and is young enough to keep).
Status FindPresent(Backend* backend, std::vector<Upload>* wanted,
                   uint64_t* present, Env* env) {
  const int64_t now = static_cast<int64_t>(env->NowMicros()) * 1000;
  auto fresh = [&](const ObjectInfo& o) {
    return o.mtime_ns != 0 && now - o.mtime_ns < kRefreshAgeNs;
  };
  std::vector<bool> have(wanted->size(), false);
  if (wanted->size() > kStatLimit && backend->caps().listing) {
    std::vector<std::pair<Hash128, size_t>> order;
    for (size_t i = 0; i < wanted->size(); ++i)
      order.emplace_back((*wanted)[i].hash, i);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
      return HashLess(a.first, b.first);
    });
    FERRY_RETURN_IF_ERROR(
        backend->List(sync::kObjectsDir, {}, [&](const ObjectInfo& o) {
          Hash128 h;
          if (!sync::ParseObjectKey(o.key, &h) || !fresh(o))
            return Status::OK();
          auto it = std::lower_bound(order.begin(), order.end(), h,
                                     [](const auto& a, const Hash128& b) {
                                       return HashLess(a.first, b);
                                     });
          if (it != order.end() && it->first == h) have[it->second] = true;
          return Status::OK();
        }));
  } else {
    for (size_t i = 0; i < wanted->size(); ++i) {
      auto st = backend->Stat(sync::ObjectKey((*wanted)[i].hash));
      if (st.ok()) {
        have[i] = fresh(*st);
      } else if (!st.status().IsNotFound()) {
        return st.status();
      }
    }
  }
  std::vector<Upload> left;
  for (size_t i = 0; i < wanted->size(); ++i) {
    if (have[i]) {
      ++*present;
    } else {
      left.push_back((*wanted)[i]);
    }
  }
  *wanted = std::move(left);
  return Status::OK();
}

// Adds an upload run's report to *total (PublishOptions::uploads).
void AddRun(TransferReport run, TransferReport* total) {
  total->files_done += run.files_done;
  total->files_failed += run.files_failed;
  total->files_skipped += run.files_skipped;
  total->bytes += run.bytes;
  total->requests += run.requests;
  for (const auto& [cause, n] : run.retries) total->retries[cause] += n;
  for (auto& f : run.failures) total->failures.push_back(std::move(f));
  for (auto& w : run.warnings) total->warnings.push_back(std::move(w));
}

// A failed upload run: how many failed, the first few sources, why the first
// did, and what the run ran into (its warnings: "server unreachable").
Status UploadsFailed(const TransferReport& r) {
  constexpr size_t kNamed = 3;
  std::string names;
  for (size_t i = 0; i < r.failures.size() && i < kNamed; ++i)
    names += (i ? ", " : "") + r.failures[i].first;
  if (r.failures.size() > kNamed)
    names += " and " + std::to_string(r.failures.size() - kNamed) + " more";
  std::string why = r.failures.front().second.ToString();
  for (const std::string& w : r.warnings) why += "; " + w;
  return Status::IOError(std::to_string(r.failures.size()) + " of " +
                         std::to_string(r.files_done + r.failures.size()) +
                         " uploads failed: " + names + " (first: " + why + ")");
}

Status RunPuts(Backend* backend, std::vector<PutItem> items,
               const TransferOptions& options, Env* env, uint64_t* bytes,
               TransferReport* uploads) {
  if (items.empty()) return Status::OK();
  // Objects are content-addressed: a publisher running now may be
  // uploading the same one. Its upload is left alone; a killed run's goes
  // with gc's grace.
  TransferOptions o = options;
  o.keep_uploads_younger_s =
      std::max<int64_t>(o.keep_uploads_younger_s, int64_t{24} * 3600);
  FERRY_ASSIGN_OR_RETURN(TransferReport r,
                         PutObjects(backend, std::move(items), o, env));
  *bytes += r.bytes;
  Status s = r.failures.empty() ? Status::OK() : UploadsFailed(r);
  if (uploads != nullptr) AddRun(std::move(r), uploads);
  return s;
}

// Files the parent has keep their place: the pack it put them in (an
// unchanged republish writes the same records), else their own object.
void CarryPackFields(std::vector<LocalFile>* files,
                     const std::vector<manifest::File>& parent) {
  std::unordered_map<std::string, const manifest::File*> packed;  // hash bytes
  for (const manifest::File& f : parent)
    if (!f.pack().empty()) packed.emplace(f.xxh3_128(), &f);
  if (packed.empty()) return;
  for (LocalFile& f : *files) {
    auto it = packed.find(f.entry.xxh3_128());
    if (it == packed.end()) continue;
    f.entry.set_pack(it->second->pack());
    f.entry.set_pack_offset(it->second->pack_offset());
    f.entry.set_pack_size(it->second->pack_size());
  }
}

struct PackPlan {
  Hash128 id;
  uint64_t size = 0;
  std::vector<Upload> members;  // in pack order
};

// New objects below 1 MiB (no signature or delta is made of them) leave
// *wanted for packs of files in path order, each closing before it would
// pass 1 MiB; every file with a packed object's
// bytes gets its place (formats/manifest "Packs").
std::vector<PackPlan> PlanPacks(std::vector<LocalFile>* files,
                                std::vector<Upload>* wanted) {
  // 1 MiB: a pack's download is one part, which a killed run fetches again
  // from its start (parts are journalled whole); bigger packs made a sync
  // killed 14 times fetch 38 % more than loose objects (422.6 MB against
  // 306.6 MB), for a few hundred bytes of framing saved per MiB.
  const uint64_t target = sync::kMinDeltaObject;
  std::vector<Upload> small, loose;
  for (const Upload& u : *wanted) {
    const uint64_t size = (*files)[u.file].info.size;
    (size > 0 && size < sync::kMinDeltaObject ? small : loose).push_back(u);
  }
  *wanted = std::move(loose);
  std::sort(small.begin(), small.end(),
            [](const Upload& a, const Upload& b) { return a.file < b.file; });
  std::vector<PackPlan> packs;
  for (const Upload& u : small) {
    const uint64_t size = (*files)[u.file].info.size;
    if (packs.empty() || packs.back().size + size > target)
      packs.emplace_back();
    packs.back().members.push_back(u);
    packs.back().size += size;
  }
  struct Place {
    size_t pack;
    uint64_t offset;
  };
  std::unordered_map<Hash128, Place, sync::Hash128Hasher> place;
  for (size_t i = 0; i < packs.size(); ++i) {
    manifest::PackIdHasher id;
    uint64_t offset = 0;
    for (const Upload& u : packs[i].members) {
      const uint64_t size = (*files)[u.file].info.size;
      id.Add(u.hash, size);
      place.emplace(u.hash, Place{i, offset});
      offset += size;
    }
    packs[i].id = id.Digest();
  }
  if (place.empty()) return packs;
  for (LocalFile& f : *files) {
    Hash128 h;
    manifest::HashFromBytes(f.entry.xxh3_128(), &h);
    auto it = place.find(h);
    if (it == place.end()) continue;
    const PackPlan& p = packs[it->second.pack];
    f.entry.set_pack(manifest::HashToBytes(p.id));
    f.entry.set_pack_offset(it->second.offset);
    f.entry.set_pack_size(p.size);
  }
  return packs;
}

// Which packs the bucket has with their size (*had), and of those which are
// young enough to keep without uploading them again (*fresh, as
// FindPresent's objects): one Stat each, or one listing of .ferry/packs/
// for many.
Status FindPresentPacks(Backend* backend, const std::vector<PackPlan>& packs,
                        Env* env, std::vector<bool>* had,
                        std::vector<bool>* fresh) {
  had->assign(packs.size(), false);
  fresh->assign(packs.size(), false);
  if (packs.empty()) return Status::OK();
  const int64_t now = static_cast<int64_t>(env->NowMicros()) * 1000;
  std::unordered_map<Hash128, size_t, sync::Hash128Hasher> index;
  for (size_t i = 0; i < packs.size(); ++i) index.emplace(packs[i].id, i);
  auto seen = [&](size_t i, const ObjectInfo& o) {
    (*had)[i] = o.size == packs[i].size;
    (*fresh)[i] =
        (*had)[i] && o.mtime_ns != 0 && now - o.mtime_ns < kRefreshAgeNs;
  };
  if (packs.size() > kStatLimit && backend->caps().listing) {
    FERRY_RETURN_IF_ERROR(
        backend->List(sync::kPacksDir, {}, [&](const ObjectInfo& o) {
          Hash128 h;
          if (!sync::ParsePackKey(o.key, &h)) return Status::OK();
          auto it = index.find(h);
          if (it != index.end()) seen(it->second, o);
          return Status::OK();
        }));
    return Status::OK();
  }
  for (size_t i = 0; i < packs.size(); ++i) {
    auto st = backend->Stat(sync::PackKey(packs[i].id));
    if (st.ok()) {
      seen(i, *st);
    } else if (!st.status().IsNotFound()) {
      return st.status();
    }
  }
  return Status::OK();
}

Status Conflict(Backend* backend, const Parent& parent) {
  auto now = sync::ReadRef(backend, sync::kHead);
  std::string cur = now.ok()                    ? now->id.ToHex()
                    : now.status().IsNotFound() ? "none"
                                                : "unreadable";
  return Status::FailedPrecondition(
      backend->Describe(),
      "remote changed since this publish started (parent " +
          Hex(parent.exists, parent.ref.id) + ", now " + cur +
          "): nothing published; rerun to publish on top of it");
}

// Moves HEAD from the parent to id: a conditional write (If-Match the
// parent's ETag, If-None-Match for the first version), which the backend
// enforces where caps say so; elsewhere HEAD is read again just before.
Status WriteHead(Backend* backend, const Parent& parent, const Hash128& id,
                 const PublishOptions& o, PublishReport* report) {
  FERRY_ASSIGN_OR_RETURN(std::string key, sync::RefKey(sync::kHead));
  WriteOptions wo;
  if (parent.exists) {
    wo.if_match = parent.ref.etag;
  } else {
    wo.if_none_match = true;
  }
  if (!report->ref_conditional) {
    auto now = sync::ReadRef(backend, sync::kHead);
    bool same = now.ok() ? parent.exists && now->id == parent.ref.id &&
                               now->etag == parent.ref.etag
                         : now.status().IsNotFound() && !parent.exists;
    if (!now.ok() && !now.status().IsNotFound()) return now.status();
    if (!same) return Conflict(backend, parent);
  }
  if (o.before_ref_write) o.before_ref_write();
  auto w = sync::WriteObject(backend, key, sync::FormatRef(id), wo);
  if (w.status().IsFailedPrecondition()) return Conflict(backend, parent);
  return w.status();
}

// The tag's ref, read as strictly as HEAD before anything is written: one
// that is there but cannot be read or replaced (a file:// tag that is a
// FIFO, a folder, a link out of the bucket) would fail only after HEAD
// moved, or be replaced. Absent or a ref: the tag is written at the end.
Status CheckTag(Backend* backend, const std::string& tag) {
  FERRY_ASSIGN_OR_RETURN(std::string ref, sync::TagRef(tag));
  auto cur = sync::ReadRef(backend, ref, /*strict=*/true);
  if (cur.ok() || cur.status().IsNotFound()) return Status::OK();
  return cur.status();
}

Status WriteTag(Backend* backend, const std::string& tag, const Hash128& id,
                PublishReport* report) {
  FERRY_ASSIGN_OR_RETURN(std::string ref, sync::TagRef(tag));
  FERRY_ASSIGN_OR_RETURN(std::string key, sync::RefKey(ref));
  WriteOptions wo;
  auto cur = sync::ReadRef(backend, ref, /*strict=*/true);
  if (cur.ok()) {
    if (cur->id == id) return Status::OK();
    report->tag_moved = true;
    wo.if_match = cur->etag;
  } else if (cur.status().IsNotFound()) {
    wo.if_none_match = true;
  } else {
    return cur.status();
  }
  auto w = sync::WriteObject(backend, key, sync::FormatRef(id), wo);
  if (w.status().IsFailedPrecondition())
    return Status::FailedPrecondition(
        JoinPath(backend->Describe(), key),
        "the tag changed while it was written: HEAD is published, the tag "
        "is not; rerun with the same --tag");
  return w.status();
}

// --mirror: each file at its own path under the prefix. Uploads the files
// missing there, of another size, or changed since the parent; deletes the
// parent's files the new version dropped (only those: other objects under
// the prefix are not ferry's).
Status Mirror(Backend* backend, const std::string& root,
              const std::vector<LocalFile>& files, const Parent& parent,
              const PublishOptions& o, Env* env, PublishReport* report) {
  std::unordered_map<std::string, uint64_t> there;  // key -> size
  std::unordered_map<std::string_view, size_t> wanted;
  for (size_t i = 0; i < files.size(); ++i) wanted.emplace(files[i].path, i);
  std::unordered_map<std::string_view, Hash128> before;
  for (const auto& [path, hash] : parent.paths) before.emplace(path, hash);
  auto record = [&](const ObjectInfo& info) {
    if (wanted.count(info.key) || before.count(info.key))
      there.emplace(info.key, info.size);
    return Status::OK();
  };
  // Every top-level entry but .ferry/ (which may hold millions of objects).
  std::vector<std::string> tops;
  ListOptions one_level;
  one_level.recursive = false;
  FERRY_RETURN_IF_ERROR(backend->List("", one_level, [&](const ObjectInfo& i) {
    if (i.is_prefix) {
      if (i.key != ".ferry/") tops.push_back(i.key);
      return Status::OK();
    }
    return record(i);
  }));
  for (const std::string& top : tops)
    FERRY_RETURN_IF_ERROR(backend->List(top, {}, record));
  std::vector<PutItem> puts;
  for (const LocalFile& f : files) {
    auto it = there.find(f.path);
    auto old = before.find(f.path);
    Hash128 h;
    manifest::HashFromBytes(f.entry.xxh3_128(), &h);
    if (it != there.end() && it->second == f.info.size &&
        (parent.paths.empty() || (old != before.end() && old->second == h)))
      continue;
    puts.push_back(PutItem{JoinPath(root, f.path), f.path});
  }
  report->mirrored = puts.size();
  std::vector<std::string> deletes;
  for (const auto& [path, hash] : parent.paths) {
    if (!wanted.count(path) && there.count(path)) deletes.push_back(path);
  }
  report->mirror_deleted = deletes.size();
  if (o.dry_run) return Status::OK();
  uint64_t bytes = 0;
  FERRY_RETURN_IF_ERROR(
      RunPuts(backend, std::move(puts), o.transfer, env, &bytes, o.uploads));
  for (const std::string& key : deletes)
    FERRY_RETURN_IF_ERROR(backend->Delete(key));
  return Status::OK();
}

}  // namespace

Result<PublishReport> Publish(const std::string& source, Backend* backend,
                              const PublishOptions& o, Env* env) {
  if (o.part_size == 0)
    return Status::InvalidArgument("--part-size", "must be above 0");
  if (!o.tag.empty()) FERRY_RETURN_IF_ERROR(sync::CheckTagName(o.tag));
  if (!o.dry_run && !backend->caps().writes)
    return Status::NotSupported(
        backend->Describe(), "is read-only: publish needs a writable remote");
  PublishReport report;
  report.dry_run = o.dry_run;
  report.ref_conditional = backend->caps().conditional_writes;

  // 1. The version it is built on (read first: the scan signs what it
  // lacks).
  FERRY_ASSIGN_OR_RETURN(Parent parent, LoadParent(backend, o.mirror));
  if (!o.tag.empty()) FERRY_RETURN_IF_ERROR(CheckTag(backend, o.tag));
  report.has_parent = parent.exists;
  report.parent = parent.ref.id;

  // 2. The tree, hashed (the stat cache answers for unchanged files).
  std::unique_ptr<sync::StatCache> cache;
  if (o.use_stat_cache) {
    FERRY_ASSIGN_OR_RETURN(std::string path,
                           sync::StatCachePath(env, o.cache_dir, source));
    if (!o.dry_run || env->FileExists(path)) {
      FERRY_ASSIGN_OR_RETURN(cache, sync::StatCache::Open(env, path));
    }
  }
  // Signatures of new objects and deltas of changed paths (docs/delta.md)
  // are made in a folder of their own; the scan signs the files it reads
  // that are likely new objects from the same reads as their hashes.
  sync::DeltaWork work;
  struct Cleanup {
    sync::DeltaWork* work;
    Env* env;
    ~Cleanup() { work->Cleanup(env); }
  } cleanup{&work, env};
  if (!o.dry_run) {
    FERRY_RETURN_IF_ERROR(work.Begin(
        env,
        JoinPath(o.cache_dir.empty() ? sync::DefaultCacheDir() : o.cache_dir,
                 "publish")));
  }
  sync::ScanOptions so;
  so.part_size = o.part_size;
  so.take = o.take;
  so.cache = cache.get();
  so.store = !o.dry_run;
  so.jobs = o.jobs;
  so.sign_dir = work.tmp_dir;
  so.sign = [&](std::string_view path, uint64_t size) {
    return sync::SignWhileHashing(parent.files, path, size);
  };
  FERRY_ASSIGN_OR_RETURN(sync::ScanResult scan,
                         sync::ScanTree(env, source, so));
  cache.reset();
  report.files_read = scan.files_read;
  report.bytes_read = scan.bytes_read;
  report.skipped = scan.skipped.size();
  if (o.note) {
    for (const WalkProblem& p : scan.skipped)
      o.note(JoinPath(source, p.path) +
             ": not published: " + std::string(p.status.message()));
  }

  // 3. What the version holds. Files the parent had keep its deltas and
  // their places (pack or own object); signatures are listed by size.
  sync::CarryDeltaFields(&scan.files, parent.files);
  // --no-packs: every file its own object, also those the parent packed
  // (uploaded below as objects), so that the version is format 1.
  if (o.packs) CarryPackFields(&scan.files, parent.files);
  ContentDigest digest(o.part_size);
  for (const LocalFile& f : scan.files) {
    digest.Add(f.entry);
    ++report.files;
    report.bytes += f.info.size;
  }
  if (parent.exists && digest.Digest() == parent.digest) {
    // Nothing to publish (git's "nothing to commit"); a tag may still move.
    report.unchanged = true;
    report.id = parent.ref.id;
    if (!o.dry_run && !o.tag.empty())
      FERRY_RETURN_IF_ERROR(WriteTag(backend, o.tag, parent.ref.id, &report));
    if (o.mirror)
      FERRY_RETURN_IF_ERROR(
          Mirror(backend, source, scan.files, parent, o, env, &report));
    return report;
  }
  // Signatures of new objects, deltas of changed paths: listed by the
  // manifest, so made before it.
  if (!o.dry_run)
    FERRY_RETURN_IF_ERROR(sync::MakeSignaturesAndDeltas(
        backend, env, source, &scan.files, parent.files, o.note, &work));
  report.signatures_uploaded = work.signatures;
  report.deltas_uploaded = work.deltas;
  report.delta_bytes = work.delta_bytes;
  report.deltas_dropped = work.deltas_dropped;
  report.deltas_refined = work.deltas_refined;
  report.delta_literal_bytes_saved = work.literal_bytes_saved;
  report.delta_refine_bytes_read = work.refine_bytes_read;
  report.delta_refine_requests = work.refine_requests;

  // 4. Objects the remote lacks: not in the parent, not found in the bucket.
  std::vector<Upload> wanted;
  {
    std::vector<Upload> all;
    for (size_t i = 0; i < scan.files.size(); ++i) {
      Hash128 h;
      manifest::HashFromBytes(scan.files[i].entry.xxh3_128(), &h);
      all.push_back({h, i});
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const Upload& a, const Upload& b) {
                       return HashLess(a.hash, b.hash);
                     });
    // Objects the parent has only in a pack, when this version packs none.
    std::unordered_set<std::string> packed_only;
    if (!o.packs) {
      for (const manifest::File& f : parent.files)
        if (!f.pack().empty()) packed_only.insert(f.xxh3_128());
      for (const manifest::File& f : parent.files)
        if (f.pack().empty()) packed_only.erase(f.xxh3_128());
    }
    for (size_t i = 0; i < all.size(); ++i) {
      if (i > 0 && all[i].hash == all[i - 1].hash) continue;
      if (std::binary_search(parent.hashes.begin(), parent.hashes.end(),
                             all[i].hash, HashLess) &&
          !packed_only.count(scan.files[all[i].file].entry.xxh3_128())) {
        ++report.objects_present;
        continue;
      }
      wanted.push_back(all[i]);
    }
  }
  FERRY_RETURN_IF_ERROR(
      FindPresent(backend, &wanted, &report.objects_present, env));
  report.objects_uploaded = wanted.size();
  for (const Upload& u : wanted)
    report.bytes_uploaded += scan.files[u.file].info.size;
  const std::vector<PackPlan> packs =
      o.packs ? PlanPacks(&scan.files, &wanted) : std::vector<PackPlan>{};
  report.packs_uploaded = packs.size();
  report.objects_packed = report.objects_uploaded - wanted.size();

  // 5. The manifest (deterministic bytes: sorted paths, SOURCE_DATE_EPOCH);
  // version 2 when a file is in a pack.
  manifest::Header header;
  const bool packed =
      std::any_of(scan.files.begin(), scan.files.end(),
                  [](const LocalFile& f) { return !f.entry.pack().empty(); });
  header.set_format_version(packed ? manifest::kPackFormatVersion
                                   : manifest::kFormatVersion);
  if (parent.exists) header.set_parent_id(manifest::HashToBytes(parent.ref.id));
  header.set_created_unix_s(CreatedTime(env));
  header.set_ferry_version(FERRY_VERSION_STRING);
  header.set_message(o.message);
  header.set_part_size(o.part_size);
  manifest::StringSink sink;
  manifest::ManifestWriter writer(&sink);
  FERRY_RETURN_IF_ERROR(writer.Begin(header));
  for (const LocalFile& f : scan.files) {
    Status s = writer.Add(f.entry);
    if (!s.ok())
      return Status::InvalidArgument(JoinPath(source, f.path), s.message());
  }
  FERRY_ASSIGN_OR_RETURN(Hash128 id, writer.Finish());
  report.manifest_bytes = sink.bytes().size();
  report.id = id;

  if (o.dry_run) {
    if (o.mirror)
      FERRY_RETURN_IF_ERROR(
          Mirror(backend, source, scan.files, parent, o, env, &report));
    return report;
  }
  std::vector<PutItem> puts;
  for (const Upload& u : wanted)
    puts.push_back(PutItem{JoinPath(source, scan.files[u.file].path),
                           sync::ObjectKey(u.hash)});
  // A pack the bucket has already (files an older version packed alike,
  // added again) is not uploaded again when young (else it is, to refresh
  // it for gc's grace: its members' bytes are checked against their hashes
  // as they go, so other bytes never replace it), and is never deleted
  // below, whatever happens to its files here: that version names it.
  std::vector<bool> had, fresh;
  FERRY_RETURN_IF_ERROR(FindPresentPacks(backend, packs, env, &had, &fresh));
  for (size_t i = 0; i < packs.size(); ++i) {
    const PackPlan& p = packs[i];
    if (fresh[i]) {
      --report.packs_uploaded;
      for (const Upload& u : p.members) {
        --report.objects_uploaded;
        --report.objects_packed;
        ++report.objects_present;
        report.bytes_uploaded -= scan.files[u.file].info.size;
      }
      continue;
    }
    PutItem item;
    item.key = sync::PackKey(p.id);
    item.src = JoinPath(source, ".ferry pack " + p.id.ToHex());
    for (const Upload& u : p.members)
      item.srcs.push_back(PutPart{JoinPath(source, scan.files[u.file].path),
                                  scan.files[u.file].info.size, true, u.hash});
    puts.push_back(std::move(item));
  }
  puts.insert(puts.end(), work.puts.begin(), work.puts.end());
  uint64_t moved = 0;
  FERRY_RETURN_IF_ERROR(
      RunPuts(backend, std::move(puts), o.transfer, env, &moved, o.uploads));
  // A file rewritten since it was hashed would have uploaded other bytes
  // under its hash: refuse the version (sync would refuse the object).
  auto unchanged = [&](const Upload& u, const std::string& key) {
    const LocalFile& f = scan.files[u.file];
    auto now = env->Stat(JoinPath(source, f.path));
    if (now.ok() && sync::SameFile(f.info, *now)) return Status::OK();
    (void)backend->Delete(key);
    return Status::IOError(JoinPath(source, f.path),
                           "changed while it was published: nothing "
                           "published; rerun");
  };
  for (const Upload& u : wanted)
    FERRY_RETURN_IF_ERROR(unchanged(u, sync::ObjectKey(u.hash)));
  for (size_t i = 0; i < packs.size(); ++i)
    for (const Upload& u : packs[i].members)
      if (!had[i])
        FERRY_RETURN_IF_ERROR(unchanged(u, sync::PackKey(packs[i].id)));

  // 6. The manifest, then HEAD (last: until then readers see the parent).
  FERRY_RETURN_IF_ERROR(
      sync::WriteObject(backend, sync::ManifestKey(id), sink.bytes()).status());
  FERRY_RETURN_IF_ERROR(WriteHead(backend, parent, id, o, &report));
  if (!o.tag.empty())
    FERRY_RETURN_IF_ERROR(WriteTag(backend, o.tag, id, &report));
  if (o.mirror)
    FERRY_RETURN_IF_ERROR(
        Mirror(backend, source, scan.files, parent, o, env, &report));
  return report;
}

}  // namespace ferry
