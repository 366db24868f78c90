// ferry sync (docs/sync.md "sync REMOTE[@REF] DEST"): ref → manifest →
// plan → cache (adopt, download) → view → swap.
#include "ferry/sync.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "core/no_sync_env.h"
#include "ferry/atomic_file.h"
#include "formats/manifest/manifest.h"
#include "sync/adoption.h"
#include "sync/cache.h"
#include "sync/cached_bases.h"
#include "sync/cleaner.h"
#include "sync/fetch_paths.h"
#include "sync/fetching.h"
#include "sync/fs_util.h"
#include "sync/in_place.h"
#include "sync/install.h"
#include "sync/landing.h"
#include "sync/layout.h"
#include "sync/plan.h"
#include "sync/unmanaged.h"
#include "sync/view.h"

namespace ferry {
namespace {

using sync::Cache;
using sync::CacheKey;
using sync::Entry;
using sync::kLockBatch;
using sync::ObjectLocks;

bool IsHexId(std::string_view s) {
  if (s.size() != 32) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
          (c >= 'A' && c <= 'F')))
      return false;
  return true;
}

// A ref as given after '@': HEAD, a tag name, or "tags/<name>".
Result<std::string> RefName(std::string_view ref) {
  if (ref == sync::kHead || ref.rfind("tags/", 0) == 0) return std::string(ref);
  return sync::TagRef(ref);
}

// The remote as the cache keys it (docs/sync.md "Cross-remote safety"): a
// plain path as the file:// URL of its absolute form; http(s) and s3 as
// RemoteIdentity gives them (no userinfo; an S3 bucket with its endpoint);
// no trailing slashes.
Result<std::string> NormalisedRemote(const std::string& remote,
                                     const RemoteOptions& options) {
  std::string url = remote;
  if (url.find("://") == std::string::npos) {
    FERRY_ASSIGN_OR_RETURN(std::string abs, sync::AbsolutePath(url));
    url = "file://" + abs;
  } else {
    FERRY_ASSIGN_OR_RETURN(url, RemoteIdentity(remote, options));
  }
  while (url.size() > 1 && url.back() == '/' &&
         url.compare(url.size() - 3, 3, ":///") != 0)
    url.pop_back();
  return url;
}

// The manifest's bytes: from the cache if there (and still good), else from
// the remote. Not stored before it was read whole and checked; a damaged
// cached one is removed, unless dry_run (which writes nothing).
Result<std::string> LoadManifestBytes(Env* env, Backend* backend,
                                      const std::string& cached,
                                      const Hash128& id, bool dry_run,
                                      bool* from_cache, uint64_t* requests) {
  *from_cache = false;
  if (!cached.empty() && env->FileExists(cached)) {
    auto bytes = sync::ReadOwnFile(env, cached);
    if (bytes.ok() && HashBytes(*bytes) == id) {
      *from_cache = true;
      return bytes;
    }
    if (!dry_run) (void)sync::RemoveAny(env, cached);  // damaged: again
  }
  ++*requests;
  auto bytes = sync::FetchManifest(backend, id);
  if (!bytes.ok())
    return bytes.status().WithContext("manifest " + id.ToHex() + " at " +
                                      backend->Describe());
  return bytes;
}

std::string ObjectName(const CacheKey& k,
                       const sync::FirstEntries& first_entry) {
  auto it = first_entry.find(k.hash);
  return it == first_entry.end() ? k.hash.ToHex() : it->second->path;
}

// Folders whose file at an object's path is a basis for block reuse:
// DEST's current view or folder (cur_view for a view), --basis DIR.
std::vector<std::string> BasisRoots(sync::DestKind kind,
                                    const std::string& cur_view,
                                    const sync::DestPaths& paths,
                                    const SyncOptions& o) {
  std::vector<std::string> roots;
  if (kind == sync::DestKind::kView) roots.push_back(cur_view);
  if (kind == sync::DestKind::kDir || kind == sync::DestKind::kInPlace)
    roots.push_back(paths.dest);
  if (!o.basis_dir.empty()) roots.push_back(o.basis_dir);
  return roots;
}

// A complete download left in partial/ by a run killed before it was
// indexed: used if it is the object.
Result<bool> TakeLeftover(Env* env, Cache* cache, const CacheKey& k) {
  if (!cache->MayHaveLeftovers(k)) return false;
  const std::string p = cache->PartialPath(k);
  if (!sync::RegularFileOrRemove(env, p)) return false;
  uint64_t size = 0;
  auto h = HashFile(env, p, &size);
  if (h.ok() && *h == k.hash && size == k.size) {
    FERRY_RETURN_IF_ERROR(cache->Insert(k, p));
    return true;
  }
  (void)env->RemoveFile(p);
  return false;
}

struct Fetcher {
  Env* env;
  Cache* cache;
  Backend* backend;
  const TransferOptions* transfer;
  SyncReport* report;
  const sync::ManifestInfo* info;
  // A missing object's first file (its path, parts, deltas, pack).
  const sync::FirstEntries* first_entry;
  // Folders whose file at an object's path is a basis for block reuse.
  const std::vector<std::string>* basis_roots;
  // Other cached objects, bases for objects those folders do not cover.
  sync::CachedBases* others;
  // The new view being built (null --in-place): downloaded objects are
  // linked into it as they land.
  sync::ViewBuilder* builder = nullptr;

  // Objects patched from a delta against a cached one where the manifest
  // lists one, then built from blocks of local files where the manifest
  // lists a signature (docs/delta.md "Sync side"), then the rest whole.
  Status FetchMissing(const std::vector<CacheKey>& keys) {
    sync::PatchOptions po;
    po.fsync = transfer->fsync;
    po.threads = std::min(4, std::max(1, transfer->connections));
    po.transfer = transfer;
    std::vector<std::pair<CacheKey, size_t>> delta_fallbacks;
    FERRY_ASSIGN_OR_RETURN(
        std::vector<CacheKey> whole,
        sync::PatchWhatDeltasCan(
            env, cache, backend, keys, *first_entry, info->deltas, po,
            [&](const CacheKey& k) { return ObjectName(k, *first_entry); },
            report, &delta_fallbacks));
    FERRY_ASSIGN_OR_RETURN(
        whole,
        sync::ReuseBlocks(
            env, cache, backend, whole, *first_entry, info->deltas,
            *basis_roots, others, po,
            [&](const CacheKey& k) { return PartHashes(k); }, info->part_size,
            [&](const CacheKey& k) { return ObjectName(k, *first_entry); },
            report));
    sync::NameFallbackPaths(delta_fallbacks, whole, report);
    return Fetch(whole);
  }

  // The manifest's XXH3-64 of each part of k (info->part_size), or none.
  std::vector<uint64_t> PartHashes(const CacheKey& k) const {
    auto it = first_entry->find(k.hash);
    if (it == first_entry->end()) return {};
    const uint64_t n = manifest::PartCount(k.size, info->part_size);
    const uint64_t first = it->second->first_part;
    if (n == 0 || first + n > info->part_hashes.size()) return {};
    return std::vector<uint64_t>(info->part_hashes.begin() + first,
                                 info->part_hashes.begin() + first + n);
  }

  // Each part of an object is checked against the manifest as it lands.
  void AddPartHashes(const CacheKey& k, GetItem* item) {
    item->part_hashes = PartHashes(k);
    if (!item->part_hashes.empty()) item->part_hash_size = info->part_size;
  }

  // The entry of a missing object that lies in a pack, or null.
  const Entry* PackedEntry(const CacheKey& k) const {
    auto it = first_entry->find(k.hash);
    if (it == first_entry->end() || it->second->pack == 0 ||
        it->second->pack > info->packs.size())
      return nullptr;
    return it->second;
  }

  // One GET of a pack for the members it holds (formats/manifest "Packs"):
  // all of it when they are half of it or more (or whole is asked: the
  // server ignored a Range), else their ranges, merged across gaps below
  // 64 KiB. Its download goes beside the objects' partial files, named by
  // the pack and the members, so a rerun for the same members resumes it.
  GetItem PackItem(const sync::PackRef& pack,
                   std::vector<sync::Landing::PackMember>* members,
                   bool whole) const {
    std::sort(members->begin(), members->end(),
              [](const auto& a, const auto& b) { return a.offset < b.offset; });
    uint64_t need = 0;
    std::string set;
    for (const auto& m : *members) {
      need += m.key.size;
      set.append(reinterpret_cast<const char*>(&m.offset), 8);
      set.append(reinterpret_cast<const char*>(&m.key.size), 8);
    }
    GetItem item;
    item.key = sync::PackKey(pack.id);
    char tag[17];
    std::snprintf(tag, sizeof tag, "%016llx",
                  static_cast<unsigned long long>(HashBytes(set).low));
    item.dest = DirName(cache->PartialPath(members->front().key)) + "/pack-" +
                pack.id.ToHex() + "-" + tag;
    item.have_expected_size = true;
    item.expected_size = pack.size;
    if (whole || need * 2 >= pack.size) return item;
    constexpr uint64_t kGap = 64 << 10;
    for (const auto& m : *members) {
      const uint64_t end = m.offset + m.key.size;
      if (!item.ranges.empty() && m.offset <= item.ranges.back().offset +
                                                  item.ranges.back().length +
                                                  kGap) {
        ByteRange& r = item.ranges.back();
        r.length = std::max(r.offset + r.length, end) - r.offset;
      } else {
        item.ranges.push_back(ByteRange{m.offset, m.key.size});
      }
    }
    return item;
  }

  // Downloads keys (their locks held) into the cache. When the file system
  // is full (ENOSPC), LRU objects no view pins are evicted and the failed
  // keys fetched once more (their parts resume; dropped first if the disk
  // is too full for the index to record the eviction). Objects in packs
  // come with their packs' GETs and are cut out as each lands.
  Status Fetch(const std::vector<CacheKey>& keys, bool retry_full = true,
               bool whole_packs = false) {
    if (keys.empty()) return Status::OK();
    std::vector<GetItem> items;
    items.reserve(keys.size());
    std::map<std::string, const CacheKey*> by_key;
    std::map<uint32_t, std::vector<sync::Landing::PackMember>> by_pack;
    for (const CacheKey& k : keys) {
      if (const Entry* e = PackedEntry(k)) {
        by_pack[e->pack].push_back({k, e->pack_offset});
        continue;
      }
      GetItem item;
      item.key = sync::ObjectKey(k.hash);
      item.dest = cache->PartialPath(k);
      item.have_expected = true;
      item.expected = k.hash;
      item.have_expected_size = true;
      item.expected_size = k.size;
      AddPartHashes(k, &item);
      by_key[item.key] = &k;
      items.push_back(std::move(item));
    }
    std::map<std::string, std::vector<sync::Landing::PackMember>> packs;
    std::set<std::string> ranged;  // pack items that asked for ranges
    for (auto& [index, members] : by_pack) {
      GetItem item = PackItem(info->packs[index - 1], &members, whole_packs);
      if (!item.ranges.empty()) ranged.insert(item.key);
      packs[item.key] = std::move(members);
      items.push_back(std::move(item));
    }
    // Each object enters the cache (and the new view) as it lands, on
    // landing's thread, while the others download.
    TransferOptions opt = *transfer;
    sync::Landing landing(cache, builder);
    opt.on_installed = [&](const GetItem& item) {
      auto it = by_key.find(item.key);
      if (it != by_key.end()) {
        landing.Add(*it->second);
        return;
      }
      auto p = packs.find(item.key);
      if (p != packs.end())
        landing.AddPack(env, item.dest, JoinPath(backend->Describe(), item.key),
                        p->second, transfer->fsync);
    };
    auto got = GetObjects(backend, std::move(items), opt, env);
    Status landed = landing.Close();
    FERRY_RETURN_IF_ERROR(got.status());
    FERRY_RETURN_IF_ERROR(landed);
    const TransferReport& r = *got;
    sync::CountTransfer(r, report);
    std::set<std::string> failed;
    bool full = false;
    for (const auto& f : r.failures) full = full || sync::IsNoSpace(f.second);
    for (const auto& f : landing.failed())
      full = full || sync::IsNoSpace(f.second);
    std::vector<CacheKey> again, again_whole;
    uint64_t again_bytes = 0;
    auto fail = [&](const CacheKey& k, const Status& s) {
      if (full && retry_full) {
        again.push_back(k);
        again_bytes += k.size;
        return;
      }
      report->failures.emplace_back(ObjectName(k, *first_entry), s);
    };
    for (auto& [key, s] : r.failures) {
      failed.insert(key);
      auto it = by_key.find(key);
      if (it != by_key.end()) {
        fail(*it->second, s);
        continue;
      }
      auto p = packs.find(key);
      if (p == packs.end()) {
        report->failures.emplace_back(key, s);
        continue;
      }
      // A server that ignores Range answers the ranges' GET with the whole
      // pack, refused as data: the pack is fetched whole instead.
      const bool whole_instead =
          s.IsNotSupported() && ranged.count(key) && !whole_packs;
      for (const auto& m : p->second) {
        if (whole_instead) {
          again_whole.push_back(m.key);
        } else {
          fail(m.key, s);
        }
      }
    }
    for (const auto& [k, s] : landing.failed()) fail(k, s);
    std::set<std::string> in;  // moved in by landing
    for (const CacheKey& k : landing.landed())
      in.insert(sync::ObjectKey(k.hash));
    std::vector<std::pair<CacheKey, std::string>> done;
    for (const auto& [key, k] : by_key) {
      if (failed.count(key)) continue;
      if (!in.count(key)) done.emplace_back(*k, cache->PartialPath(*k));
      ++report->objects_fetched;
      ++report->objects_whole;
      report->bytes_whole += k->size;
    }
    for (const auto& [key, members] : packs) {
      for (const auto& m : members) {
        if (!in.count(sync::ObjectKey(m.key.hash))) continue;
        ++report->objects_fetched;
        ++report->objects_whole;
        report->bytes_whole += m.key.size;
      }
    }
    FERRY_RETURN_IF_ERROR(cache->InsertAll(done));
    if (!again_whole.empty())
      FERRY_RETURN_IF_ERROR(Fetch(again_whole, retry_full, true));
    if (again.empty()) return Status::OK();
    sync::EvictReport ev;
    Status s = cache->FreeRoom(again_bytes, &ev);
    if (sync::IsNoSpace(s)) {
      for (const CacheKey& k : again)
        for (const char* suffix : {".ferry-part", ".ferry-part.journal"})
          (void)env->RemoveFile(cache->PartialPath(k) + suffix);
      s = cache->FreeRoom(again_bytes, &ev);
    }
    FERRY_RETURN_IF_ERROR(s);
    report->evicted_objects += ev.objects;
    report->evicted_bytes += ev.bytes;
    return Fetch(again, /*retry_full=*/false, whole_packs);
  }
};

// Writes the manifest into the cache; on a full file system, evicts LRU
// objects no view pins (this run's are pinned already) and tries once more.
Status StoreManifest(Env* env, Cache* cache, const Hash128& id,
                     const std::string& bytes, SyncReport* report) {
  Status s = WriteFileAtomically(env, cache->ManifestPath(id), bytes);
  if (s.ok() || !sync::IsNoSpace(s)) return s;
  sync::EvictReport ev;
  FERRY_RETURN_IF_ERROR(cache->FreeRoom(bytes.size() + (64 << 10), &ev));
  report->evicted_objects += ev.objects;
  report->evicted_bytes += ev.bytes;
  return WriteFileAtomically(env, cache->ManifestPath(id), bytes);
}

// On a no-op: old views a reader held (or a killed run left half-removed)
// go now if free. The cache is opened only when there is one.
Status CleanOldViews(Env* env, const sync::DestPaths& paths,
                     const std::string& cache_dir, SyncReport* report,
                     std::vector<sync::Trash>* detach) {
  std::string view;
  FERRY_ASSIGN_OR_RETURN(sync::DestKind kind,
                         sync::InspectDest(env, paths, &view));
  if (kind == sync::DestKind::kInPlace) {
    // Complete: what a run killed after its last state write left goes.
    auto lock = sync::LockDest(env, paths, true);
    if (lock.ok()) sync::RemoveStaleState(env, paths.dest);
    return Status::OK();
  }
  if (kind != sync::DestKind::kView) return Status::OK();
  auto children = env->GetChildren(paths.views);
  if (!children.ok()) return Status::OK();
  bool stale = false;
  for (const DirEntry& e : *children) {
    if (!e.is_dir || e.name.empty()) continue;
    const std::string path = JoinPath(paths.views, e.name);
    if (e.name.rfind(sync::kTrashPrefix, 0) == 0) {
      // Left by a killed cleaner (its lock free), not one still running.
      auto held =
          env->LockFile(JoinPath(path, std::string(kViewLockName)), false);
      stale = stale || !(!held.ok() && held.status().IsUnavailable());
    } else {
      stale = stale || (e.name[0] != '.' && path != view);
    }
  }
  if (!stale) return Status::OK();
  auto lock = sync::LockDest(env, paths);
  if (!lock.ok()) return Status::OK();  // a sync is running: its job
  FERRY_ASSIGN_OR_RETURN(auto cache, Cache::Open(env, cache_dir));
  return sync::RemoveOldViews(env, cache.get(), paths, view, report, detach);
}

}  // namespace

namespace {

// Sync, but the old views it renamed for removal go to *trash (with
// detach_old_view_removal), for Sync to hand to a cleaner once everything
// here (the cache's index above all) is closed.
Result<SyncReport> SyncInto(const SyncOptions& o, Env* env,
                            const std::string& cache_dir,
                            std::vector<sync::Trash>* trash) {
  SyncReport report;
  std::vector<sync::Trash>* detach =
      o.detach_old_view_removal ? trash : nullptr;
  FERRY_ASSIGN_OR_RETURN(sync::DestPaths paths, sync::ResolveDest(o.dest));
  FERRY_RETURN_IF_ERROR(sync::CheckCacheApart(paths, cache_dir));
  FERRY_ASSIGN_OR_RETURN(std::string norm,
                         NormalisedRemote(o.remote, o.remote_options));
  const std::string rk = sync::RemoteKey(norm);
  const SyncSelection& sel = o.selection;
  if (sel.world_size < 1 || sel.rank < 0 || sel.rank >= sel.world_size)
    return Status::InvalidArgument("--rank", "must be in [0, world size)");
  const std::string sel_key = sync::SelectionKey(sel);
  {
    std::string v;
    FERRY_ASSIGN_OR_RETURN(sync::DestKind k, sync::InspectDest(env, paths, &v));
    FERRY_RETURN_IF_ERROR(sync::CheckDestMode(paths, k, o.in_place));
  }
  FERRY_ASSIGN_OR_RETURN(auto backend,
                         OpenBackend(o.remote, o.remote_options, env));

  // 1. The ref: one request when nothing changed.
  auto cur = sync::CurrentState(env, paths);
  auto same_view = [&](const std::string& id) {
    return cur.ok() && cur->remote_key == rk && cur->id == id &&
           cur->selection == sel_key;
  };
  sync::UnmanagedRun unmanaged{o,  env,     paths,         cache_dir,
                               rk, sel_key, backend.get(), &cur};
  if (!o.list.empty()) return sync::SyncUnmanaged(unmanaged, report);
  Hash128 id;
  std::string etag;
  bool repair = false;  // the view differs from what ferry placed
  if (IsHexId(o.ref)) {
    FERRY_ASSIGN_OR_RETURN(id, Hash128::FromHex(o.ref));
  } else {
    FERRY_ASSIGN_OR_RETURN(std::string ref_name, RefName(o.ref));
    FERRY_ASSIGN_OR_RETURN(std::string ref_key, sync::RefKey(ref_name));
    // One conditional GET: 304 while the ref still has the ETag DEST's view
    // recorded, else its bytes and new ETag in the same answer.
    const bool recorded = cur.ok() && same_view(cur->id) && cur->ref == o.ref;
    ++report.requests;
    auto got = backend->ReadIfChanged(
        ref_key, recorded ? cur->etag : std::string(), sync::kMaxRefBytes);
    if (!got.ok()) {
      if (got.status().IsNotFound() && ref_name == sync::kHead) {
        // A remote DEST last synced as ferry-published has lost its HEAD:
        // an error, never a listing of whatever files are left there.
        if (!(cur.ok() && cur->remote_key == rk && !cur->unmanaged))
          return sync::SyncUnmanaged(unmanaged, report);  // not ferry's layout
        FERRY_RETURN_IF_ERROR(sync::CheckRefAbsent(backend.get(), ref_name));
        return Status::NotFound(backend->Describe(),
                                "has no ref HEAD, but " + paths.dest +
                                    " was synced from it as a remote "
                                    "published with ferry publish");
      }
      if (got.status().IsNotFound()) {
        FERRY_RETURN_IF_ERROR(sync::CheckRefAbsent(backend.get(), ref_name));
        return Status::NotFound(
            backend->Describe(),
            "has no ref " + o.ref + " (not published with ferry publish?)");
      }
      return got.status();
    }
    etag = got->etag;
    const bool same = !etag.empty() && recorded && got->unchanged;
    if (same) {
      // The ref is as recorded; DEST's files must be too (stat only): a file
      // removed or written through the view (or --in-place) is put back by
      // a full run, which re-hashes changed objects before linking them. A
      // dry run checks the same (writing nothing) and plans that run: it
      // said unchanged over a damaged view the sync then repaired.
      FERRY_ASSIGN_OR_RETURN(
          bool intact,
          sync::DestIntact(env, paths, cache_dir, rk, o.in_place, o.dry_run));
      repair = !intact;
    }
    // DEST holds what the ref names: nothing moves.
    auto no_op = [&]() -> Result<SyncReport> {
      report.unchanged = true;
      report.manifest_id = cur->id;
      report.files = cur->files;
      report.bytes = cur->bytes;
      // The folder DEST shows: not always <id>[.<selection>] (a mirror's
      // view is built beside another's as <id>.other-<µs>, a repaired one
      // as <id>.repaired-<µs>); --json named that other folder or none.
      std::string shown;
      FERRY_RETURN_IF_ERROR(sync::InspectDest(env, paths, &shown).status());
      report.view = shown;
      if (!o.dry_run)
        FERRY_RETURN_IF_ERROR(
            CleanOldViews(env, paths, cache_dir, &report, detach));
      return report;
    };
    if (same && !repair) return no_op();
    // A repair of an unchanged ref: the recorded id (304 sent no bytes).
    if (got->unchanged) {
      FERRY_ASSIGN_OR_RETURN(id, Hash128::FromHex(cur->id));
    } else {
      FERRY_ASSIGN_OR_RETURN(
          id, sync::ParseRef(got->bytes, backend->Describe() + "/" + ref_key));
      // The ref rewritten with the id DEST holds (a backup restored, a
      // mirror job, a touch): a no-op too when DEST is intact, once DEST
      // records the new ETag (else every later sync would be a full run).
      if (same_view(id.ToHex())) {
        FERRY_ASSIGN_OR_RETURN(
            bool intact,
            sync::DestIntact(env, paths, cache_dir, rk, o.in_place, o.dry_run));
        repair = !intact;
        if (intact) {
          if (!o.dry_run)
            FERRY_RETURN_IF_ERROR(
                sync::RecordRef(env, paths, o.in_place, *cur, o.ref, etag));
          return no_op();
        }
      }
    }
  }
  report.manifest_id = id.ToHex();

  // 2. The manifest, read whole and checked before anything is written.
  // A dry run's cache creates nothing, but finds what a sync would: objects
  // on disk without an index (deleted) were predicted as fetched.
  FERRY_ASSIGN_OR_RETURN(std::unique_ptr<Cache> cache,
                         o.dry_run
                             ? Cache::OpenForDryRun(env, cache_dir)
                             : Cache::Open(env, cache_dir, o.transfer.fsync));
  for (std::string& w : cache->TakeWarnings())
    report.warnings.push_back(std::move(w));
  if (!o.dry_run) {
    // Temporaries of killed runs (a manifest or an adopted copy being
    // written); a live run's are kept.
    RemoveStaleTemps(env, JoinPath(cache_dir, "manifests"));
    RemoveStaleTemps(env, JoinPath(cache_dir, "partial/" + rk));
  }
  bool manifest_cached = false;
  FERRY_ASSIGN_OR_RETURN(
      std::string mbytes,
      LoadManifestBytes(env, backend.get(), cache->ManifestPath(id), id,
                        o.dry_run, &manifest_cached, &report.requests));
  FERRY_ASSIGN_OR_RETURN(sync::ManifestInfo manifest,
                         sync::ReadManifest(mbytes, id));
  // Every path the version lists, when DEST holds another version of this
  // remote: that one's other paths are renames' candidates (cached_bases.h).
  std::vector<uint64_t> listed;
  if (cur.ok() && cur->remote_key == rk && cur->id != id.ToHex()) {
    listed.reserve(manifest.files.size());
    for (const Entry& e : manifest.files)
      listed.push_back(sync::CachedBases::PathHash(e.path));
    std::sort(listed.begin(), listed.end());
  }
  FERRY_ASSIGN_OR_RETURN(std::vector<Entry> files,
                         sync::SelectSome(std::move(manifest.files), sel));
  for (const Entry& e : files) {
    report.files++;
    report.bytes += e.size;
  }
  // One key per object; keys[j] is first used by files[firsts[j]].
  const std::vector<size_t> firsts = sync::UniqueObjects(files);
  std::vector<CacheKey> keys;
  keys.reserve(firsts.size());
  for (size_t i : firsts)
    keys.push_back(CacheKey{rk, files[i].hash, files[i].size});
  // A missing object's first file.
  sync::FirstEntries first_entry;
  uint64_t view_bytes = 0;
  for (const CacheKey& k : keys) view_bytes += k.size;
  report.objects = keys.size();
  if (o.cache_limit > 0 && view_bytes > o.cache_limit)
    return Status::ResourceExhausted(
        paths.dest, "the view alone needs " + std::to_string(view_bytes) +
                        " bytes (" + std::to_string(keys.size()) +
                        " objects), more than --cache-limit " +
                        std::to_string(o.cache_limit) +
                        "; nothing was fetched");
  const std::string view_name =
      id.ToHex() + (sel_key.empty() ? "" : "." + sel_key);
  std::string view = o.in_place ? paths.dest : JoinPath(paths.views, view_name);
  report.view = view;
  // Other cached objects as block reuse's bases (read only if needed).
  std::vector<Hash128> prefer;
  if (cur.ok() && cur->remote_key == rk) {
    auto cur_id = Hash128::FromHex(cur->id);
    if (cur_id.ok()) prefer.push_back(*cur_id);
  }
  sync::CachedBases others(env, cache.get(), rk, &manifest, std::move(prefer),
                           std::move(listed));

  if (o.dry_run) {
    // The plan: each object's path and the bytes it is expected to move
    // (block reuse: its signature and at most the whole object).
    std::string dry_view;
    FERRY_ASSIGN_OR_RETURN(sync::DestKind dry_kind,
                           sync::InspectDest(env, paths, &dry_view));
    const std::vector<std::string> dry_roots =
        BasisRoots(dry_kind, dry_view, paths, o);
    // In the cache as a lookup finds it: an object whose file was changed
    // or truncated is fetched again (its bytes hashed, nothing removed).
    sync::Cache::Probe probe;
    FERRY_RETURN_IF_ERROR(cache->ProbeAll(keys, &probe));
    const std::vector<bool>& in_cache = probe.hit;
    uint64_t need = 0;
    for (size_t j = 0; j < keys.size(); ++j)
      if (!in_cache[j]) need += keys[j].size;
    // The room a sync makes under --cache-limit (its view's objects
    // pinned), or its refusal, before anything moves.
    if (o.cache_limit > 0 && need > 0) {
      sync::EvictReport ev;
      FERRY_RETURN_IF_ERROR(
          cache->PlanRoom(o.cache_limit, need, keys, probe, &ev));
      report.evicted_objects = ev.objects;
      report.evicted_bytes = ev.bytes;
    }
    // DEST's files a sync would adopt: the same tries, hashed, not copied.
    sync::Adoption adoption(env, cache.get(), rk, dry_kind, paths.dest,
                            dry_view);
    if (need > 0) {
      adoption.List();
      adoption.Prepare(files);
    }
    for (size_t j = 0; j < keys.size(); ++j) {
      const CacheKey& k = keys[j];
      if (in_cache[j]) {
        ++report.files_cached;
        report.bytes_cached += k.size;
        continue;
      }
      FERRY_ASSIGN_OR_RETURN(bool adopt, adoption.WouldAdopt(k));
      if (adopt) {
        ++report.files_adopted;
        report.bytes_adopted += k.size;
        continue;
      }
      ++report.objects_fetched;
      FERRY_ASSIGN_OR_RETURN(
          auto plan, sync::ChooseDelta(env, cache.get(), k, files[firsts[j]],
                                       manifest.deltas, false));
      if (plan) {
        ++report.objects_patched;
        report.delta_bytes_fetched += plan->delta_size;
        report.bytes_patched += k.size;
        report.bytes_fetched += plan->delta_size;
      } else if (auto sig = sync::PlanBlockReuse(
                     env, cache.get(), k, files[firsts[j]], manifest.deltas,
                     dry_roots, &others)) {
        ++report.objects_reused;
        report.block_bytes_fetched += *sig;
        report.block_range_bytes_max += k.size;
        report.bytes_reused += k.size;
        report.bytes_fetched += *sig + k.size;
      } else {
        ++report.objects_whole;
        report.bytes_whole += k.size;
        report.bytes_fetched += k.size;
      }
    }
    if (same_view(id.ToHex()) && !repair) report.unchanged = true;
    return report;
  }

  // 3. DEST: locked for the whole sync; what is there now.
  FERRY_ASSIGN_OR_RETURN(auto dest_lock,
                         sync::LockDest(env, paths, o.in_place));
  std::string cur_view;
  FERRY_ASSIGN_OR_RETURN(sync::DestKind kind,
                         sync::InspectDest(env, paths, &cur_view));
  // Again under the lock: a sync of the other mode may have run meanwhile.
  FERRY_RETURN_IF_ERROR(sync::CheckDestMode(paths, kind, o.in_place));
  if (kind == sync::DestKind::kOther)
    return Status::FailedPrecondition(
        paths.dest,
        "is not a folder or a view made by ferry sync (a file, or a link "
        "ferry did not make): refusing to replace it");
  // The files already in DEST (a real folder, or the current view), which
  // missing objects may be adopted from: listed on a thread while the
  // objects are pinned and looked up (joined before their first use).
  sync::Adoption adoption(env, cache.get(), rk, kind, paths.dest, cur_view);
  std::jthread lister;
  if (adoption.possible()) lister = std::jthread([&] { adoption.List(); });
  if (!o.in_place) {
    // A complete view of this version (current, or an old one a reader
    // kept) is reused only if intact; else rebuilt beside it and swapped in
    // like a new version.
    const std::string state_file = JoinPath(view, std::string(kViewStateName));
    if (!repair && env->FileExists(state_file)) {
      FERRY_ASSIGN_OR_RETURN(bool intact,
                             sync::ViewIntact(env, view, cache_dir, rk));
      repair = !intact;
    }
    if (repair && env->FileExists(view)) {
      view += ".repaired-" + std::to_string(env->NowMicros());
      report.view = view;
    }
  }
  FERRY_ASSIGN_OR_RETURN(
      bool reuse,
      sync::PrepareView(env, o.in_place, &view, id.ToHex(), rk, sel_key));
  report.view = view;
  // A sync that is refused or fails before its view is complete removes the
  // folder it created (declared before the builder, which empties it first).
  sync::HalfBuiltView half_built(env, paths, o.in_place || reuse ? "" : view);
  // Pinned before anything is looked up, so no other process evicts what
  // this view is about to link.
  sync::ViewPins pins(env, cache.get(), view, o.in_place);
  FERRY_RETURN_IF_ERROR(pins.Pin(keys));

  // 4. What the cache lacks; room for it. Stamps are read from the index
  // once no cleaner is restamping objects its unlinks touched (cleaner.h).
  sync::WaitForCleaners(cache_dir);
  std::vector<CacheKey> missing, hits;
  std::vector<bool> in_cache;
  FERRY_RETURN_IF_ERROR(cache->LookupAll(keys, &in_cache));
  for (size_t j = 0; j < keys.size(); ++j) {
    const CacheKey& k = keys[j];
    const bool hit = in_cache[j];
    (hit ? hits : missing).push_back(k);
    if (!hit) first_entry.emplace(k.hash, &files[firsts[j]]);
  }
  FERRY_RETURN_IF_ERROR(cache->Touch(hits));
  report.files_cached = keys.size() - missing.size();
  // The view's files whose objects are cached are linked on a thread while
  // the rest downloads; the others once they are in (Install).
  std::optional<sync::ViewBuilder> builder;
  if (!o.in_place && !reuse) {
    // (hash, size) of each missing object, sorted: 24 bytes each.
    using Key = std::tuple<uint64_t, uint64_t, uint64_t>;
    std::vector<Key> absent;
    absent.reserve(missing.size());
    for (const CacheKey& k : missing)
      absent.emplace_back(k.hash.high, k.hash.low, k.size);
    std::sort(absent.begin(), absent.end());
    std::vector<bool> cached(files.size());
    for (size_t i = 0; i < files.size(); ++i)
      cached[i] = !std::binary_search(
          absent.begin(), absent.end(),
          Key{files[i].hash.high, files[i].hash.low, files[i].size});
    builder.emplace(env, cache.get(), rk, view, &files);
    builder->Start(std::move(cached));
  }
  if (o.cache_limit > 0 && !missing.empty()) {
    sync::EvictReport ev;
    // Reserved for this sync until it ends, so that other syncs sharing the
    // cache count them before they are in. Objects another sync fetched
    // since the lookup count once (this view pinned them); those another
    // sync is fetching now count once too (it reserved them).
    FERRY_RETURN_IF_ERROR(cache->MakeRoom(o.cache_limit, missing, &ev));
    report.evicted_objects = ev.objects;
    report.evicted_bytes = ev.bytes;
  }
  // The manifest into the cache after the room was made (a full cache must
  // not fail before anything is evicted).
  if (!manifest_cached)
    FERRY_RETURN_IF_ERROR(StoreManifest(env, cache.get(), id, mbytes, &report));
  mbytes.clear();
  mbytes.shrink_to_fit();

  // 5-7 in batches of kLockBatch missing objects, so that no lock file
  // carries many locks. Files already in DEST (a real folder, or the current
  // view) may be adopted.
  if (lister.joinable()) lister.join();
  adoption.Prepare(files);
  const std::vector<std::string> basis_roots =
      BasisRoots(kind, cur_view, paths, o);
  ObjectLocks locks(env, JoinPath(cache_dir, "locks"));
  Fetcher fetcher{env,           cache.get(),
                  backend.get(), &o.transfer,
                  &report,       &manifest,
                  &first_entry,  &basis_roots,
                  &others,       builder ? &*builder : nullptr};
  if (!missing.empty())
    FERRY_RETURN_IF_ERROR(
        sync::CreateOwnDirs(env, JoinPath(cache_dir, "partial"),
                            DirName(cache->PartialPath(keys[0]))));
  for (size_t b = 0; b < missing.size(); b += kLockBatch) {
    const size_t end = std::min(missing.size(), b + kLockBatch);
    // 5. Locks on the batch's objects; another process's are waited for
    // after this batch's own work (it never waits while holding any).
    std::vector<CacheKey> mine, theirs;
    for (size_t i = b; i < end; ++i) {
      const CacheKey& k = missing[i];
      Status s = locks.Lock(k, false);
      if (!s.ok()) {
        if (!s.IsUnavailable()) return s;
        theirs.push_back(k);
        continue;
      }
      mine.push_back(k);
    }
    // What killed runs left for the batch's objects, now locked: listed
    // once; the objects without any are not tried one file at a time.
    cache->ListLeftovers(rk);
    for (const CacheKey& k : mine) {
      if (!cache->MayHaveLeftovers(k)) continue;
      FERRY_RETURN_IF_ERROR(cache->RemoveOddLeftovers(rk, k.hash.ToHex()));
      // Ours now: an adopted copy a killed run left is stale.
      (void)env->RemoveFile(cache->PartialPath(k) + ".adopt");
      sync::RemoveKilledWork(env, *cache, k);  // a killed patch
    }

    // 6. Adopt files already in DEST.
    std::vector<CacheKey> to_fetch, raced;
    std::vector<bool> raced_in;  // by another process meanwhile?
    FERRY_RETURN_IF_ERROR(cache->LookupAll(mine, &raced_in));
    for (size_t i = 0; i < mine.size(); ++i) {
      const CacheKey& k = mine[i];
      bool hit = raced_in[i];
      if (hit) raced.push_back(k);
      if (!hit) {
        FERRY_ASSIGN_OR_RETURN(hit, TakeLeftover(env, cache.get(), k));
      }
      if (hit) ++report.files_cached;  // another run fetched it
      if (!hit) {
        FERRY_ASSIGN_OR_RETURN(hit, adoption.Adopt(k));
        if (hit) {
          ++report.files_adopted;
          report.bytes_adopted += k.size;
        }
      }
      if (!hit) to_fetch.push_back(k);
      // A killed block reuse's part file is resumed by the next one, and
      // goes when the object came another way.
      if (hit && cache->MayHaveLeftovers(k))
        sync::RemoveBlocksLeft(env, *cache, k);
    }
    FERRY_RETURN_IF_ERROR(cache->Touch(raced));

    // 7. Download what is still missing, then what other processes were
    // fetching but did not get.
    FERRY_RETURN_IF_ERROR(fetcher.FetchMissing(to_fetch));
    cache->ForgetLeftovers();  // other processes write theirs meanwhile
    FERRY_RETURN_IF_ERROR(locks.UnlockAll());
    for (const CacheKey& k : theirs) {
      FERRY_RETURN_IF_ERROR(locks.Lock(k, true));
      FERRY_RETURN_IF_ERROR(
          sync::RemoveOddEngineFiles(env, cache->PartialPath(k)));
      FERRY_ASSIGN_OR_RETURN(bool hit, cache->Lookup(k));
      if (!hit) {
        FERRY_ASSIGN_OR_RETURN(hit, TakeLeftover(env, cache.get(), k));
      }
      if (hit) ++report.files_cached;
      if (hit) sync::RemoveBlocksLeft(env, *cache, k);
      if (!hit) FERRY_RETURN_IF_ERROR(fetcher.FetchMissing({k}));
      FERRY_RETURN_IF_ERROR(locks.Unlock(k));
    }
  }
  if (!report.failures.empty()) return report;  // DEST stays as it was
  // Killed runs' part files of objects nobody fetches now go.
  sync::RemoveStaleManagedPartials(env, cache_dir, rk);
  // Every object came one way: the cache, DEST, a patch or whole.
  report.bytes_cached = view_bytes - report.bytes_adopted -
                        report.bytes_patched - report.bytes_reused -
                        report.bytes_whole;

  // 8. The view, then the swap, then old views nobody reads (or the files
  // one by one, --in-place).
  FERRY_RETURN_IF_ERROR(sync::Install(
      env, cache.get(), o, paths, kind, cur_view, view, reuse, files,
      sync::NewState(o, rk, etag, id.ToHex(), cache_dir, sel_key, report),
      &report, builder ? &*builder : nullptr, detach));
  return report;
}

}  // namespace

Result<SyncReport> Sync(const SyncOptions& o, Env* env) {
  // --no-fsync: nothing synced at all (views, DEST's state, the cache's
  // index), as rsync and rclone do; renames still order what a kill leaves.
  std::unique_ptr<Env> no_sync;
  if (!o.transfer.fsync) {
    no_sync = NewNoSyncEnv(env);
    env = no_sync.get();
  }
  FERRY_ASSIGN_OR_RETURN(
      std::string cache_dir,
      sync::AbsolutePath(o.cache_dir.empty() ? sync::DefaultCacheDir()
                                             : o.cache_dir));
  std::vector<sync::Trash> trash;
  auto report = SyncInto(o, env, cache_dir, &trash);
  // A damaged index (a disk fault, a copy taken mid-write) failed every
  // sync until removed by hand. It holds nothing the cache's files and the
  // remote cannot give again: set aside, and the sync runs once more.
  if (!report.ok() && !o.dry_run &&
      sync::IsDamagedIndex(report.status(), cache_dir)) {
    const Status damaged = report.status();
    auto moved = sync::SetDamagedIndexAside(env, cache_dir);
    if (!moved.ok())
      return Status::FromCode(damaged.code(),
                              std::string(damaged.message()) +
                                  "; it could not be set aside (" +
                                  moved.status().ToString() +
                                  "): its owner can move it out of the cache");
    report = SyncInto(o, env, cache_dir, &trash);
    if (report.ok() && *moved)
      report->warnings.push_back(
          "the cache's index was damaged (" + std::string(damaged.message()) +
          "); moved to " + sync::IndexPath(cache_dir) +
          ".damaged, a new one made from the cache's object files (each "
          "re-hashed when next used; unmanaged remotes' files fetched again)");
  }
  // Renamed under DEST's lock, now free again; the cache is closed.
  sync::RemoveTrashDetached(env, cache_dir, o.transfer.fsync, std::move(trash));
  return report;
}

Result<CheckReport> CheckView(const std::string& dest, Env* env) {
  FERRY_ASSIGN_OR_RETURN(sync::DestPaths paths, sync::ResolveDest(dest));
  std::string view;
  sync::DestKind kind;
  // Read under the view's lock: a sync switching DEST meanwhile removed
  // the view under the check, which reported an intact DEST damaged.
  sync::ViewReadLock read_lock;
  FERRY_RETURN_IF_ERROR(read_lock.Take(env, paths, &view, &kind));
  if (kind != sync::DestKind::kView && kind != sync::DestKind::kInPlace)
    return Status::NotFound(paths.dest, "is not a view made by ferry sync");
  // The state of the view read, not of one DEST shows by now.
  FERRY_ASSIGN_OR_RETURN(
      std::string json,
      sync::ReadOwnFile(env, JoinPath(view, std::string(kViewStateName)),
                        1 << 20));
  FERRY_ASSIGN_OR_RETURN(sync::ViewState state, sync::ParseViewState(json));
  if (state.id.empty())
    return Status::FailedPrecondition(
        dest, "an --in-place sync into it did not finish: run it again");
  FERRY_ASSIGN_OR_RETURN(std::vector<Entry> files,
                         sync::ViewFiles(env, view, state));
  CheckReport report;
  report.manifest_id = state.id;
  std::set<std::string> expected;
  for (const Entry& e : files) {
    expected.insert(e.path);
    ++report.files;
    report.bytes += e.size;
    // Nothing followed through a symbolic link on the way (a sync refuses
    // one; the check said "all good" for another folder's bytes).
    std::string through;
    for (size_t slash = e.path.find('/'); slash != std::string::npos;
         slash = e.path.find('/', slash + 1)) {
      const std::string folder = e.path.substr(0, slash);
      auto k = sync::LinkKind(JoinPath(view, folder));
      if (k.ok() && *k != sync::PathKind::kDir &&
          *k != sync::PathKind::kMissing) {
        through = folder;
        break;
      }
    }
    if (!through.empty()) {
      report.problems.emplace_back(
          e.path, "'" + through +
                      "' on its way is not a folder (a symbolic "
                      "link?): not followed");
      continue;
    }
    // Never opened unless a regular file: a FIFO put in its place would
    // block the check for a writer (it hung), a link is not what ferry
    // placed.
    auto kind = sync::LinkKind(JoinPath(view, e.path));
    if (kind.ok() && *kind != sync::PathKind::kFile &&
        *kind != sync::PathKind::kMissing) {
      report.problems.emplace_back(
          e.path, *kind == sync::PathKind::kLink  ? "is a symbolic link"
                  : *kind == sync::PathKind::kDir ? "is a folder"
                                                  : "is not a regular file");
      continue;
    }
    uint64_t size = 0;
    auto h = HashFile(env, JoinPath(view, e.path), &size);
    if (!h.ok()) {
      report.problems.emplace_back(e.path, std::string(h.status().ToString()));
    } else if (size != e.size) {
      report.problems.emplace_back(e.path, "size " + std::to_string(size) +
                                               ", the manifest says " +
                                               std::to_string(e.size));
    } else if (!(*h == e.hash)) {
      report.problems.emplace_back(
          e.path,
          "XXH3-128 " + h->ToHex() + ", the manifest says " + e.hash.ToHex());
    }
  }
  std::map<std::string, uint64_t> present;
  sync::ListRegularFiles(env, view, "", &present);
  for (const auto& [p, size] : present) {
    if (p.rfind(".ferry-sync", 0) == 0 || p == kViewLockName) continue;
    if (!expected.count(p) && !state.in_place)  // others' files may be there
      report.problems.emplace_back(p, "not in the manifest");
  }
  std::sort(report.problems.begin(), report.problems.end());
  return report;
}

}  // namespace ferry
