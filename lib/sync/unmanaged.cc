#include "sync/unmanaged.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ferry/atomic_file.h"
#include "ferry/transfer.h"
#include "pack/md5.h"
#include "sync/cache.h"
#include "sync/fetching.h"
#include "sync/fs_util.h"
#include "sync/in_place.h"
#include "sync/install.h"
#include "sync/layout.h"
#include "sync/plan.h"

namespace ferry::sync {
namespace {

// A --list is needed whole (its names sorted, each stat'ed and made an
// entry of the view), so it is bounded, in bytes and in names (each a
// string, a request and an entry; 64 MiB of "a\n" were 33 million). A pipe
// fed for ever (`yes |` into /dev/stdin) was read up to 1 GiB, 2.1 GB
// resident, and 60 MiB of short lines took 1.4 GB.
constexpr uint64_t kMaxListBytes = uint64_t{64} << 20;
constexpr char kMaxListBytesText[] = "64 MiB";
constexpr size_t kMaxListNames = 1000000;
constexpr size_t kMaxNameBytes = 4096;
// A listing counts as one request per this many keys (an S3 page).
constexpr uint64_t kKeysPerPage = 1000;

Status ListTooLong(const std::string& list, const std::string& limit) {
  return Status::InvalidArgument(
      "--list " + list,
      "more than " + limit + ", the most a list of files may hold");
}

// A URL's list, up to kMaxListBytes.
class ListSink : public ByteSink {
 public:
  explicit ListSink(const std::string& list) : list_(list) {}
  Status Append(std::string_view data) override {
    if (out.size() + data.size() > kMaxListBytes)
      return ListTooLong(list_, kMaxListBytesText);
    out.append(data);
    return Status::OK();
  }
  std::string out;

 private:
  const std::string& list_;
};

// --list: a local file, or a URL read through a backend of its folder.
Result<std::string> ReadListText(const std::string& list,
                                 const RemoteOptions& ro, Env* env,
                                 uint64_t* requests) {
  if (list.find("://") == std::string::npos) {
    auto text = ReadFileToString(env, list, kMaxListBytes);
    if (text.status().code() == Status::Code::kResourceExhausted)
      return ListTooLong(list, kMaxListBytesText);
    return text;
  }
  size_t slash = list.rfind('/');
  if (slash + 1 >= list.size() || list.compare(slash - 2, 3, "://") == 0)
    return Status::InvalidArgument("--list " + list, "not the URL of a file");
  FERRY_ASSIGN_OR_RETURN(auto backend,
                         OpenBackend(list.substr(0, slash), ro, env));
  ++*requests;
  ListSink sink(list);
  FERRY_RETURN_IF_ERROR(
      backend->Read(list.substr(slash + 1), ByteRange{}, {}, &sink));
  return std::move(sink.out);
}

// Relative paths, one a line; blank lines and '#' comments skipped; at
// most kMaxListNames (a name listed twice counts twice).
Result<std::vector<std::string>> ParseListLines(std::string_view text,
                                                const std::string& list) {
  std::vector<std::string> keys;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? "" : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    while (line.substr(0, 2) == "./") line.remove_prefix(2);
    if (line.empty() || line[0] == '#') continue;
    // No file's name is longer (PATH_MAX): refused before a stat of it,
    // whose message repeated all of it (a 64 MiB line: 134 MB of stderr).
    if (line.size() > kMaxNameBytes)
      return Status::InvalidArgument(
          "--list " + list, "names a file of more than " +
                                std::to_string(kMaxNameBytes) + " bytes (" +
                                std::string(line.substr(0, 60)) + "...)");
    if (keys.size() == kMaxListNames)
      return ListTooLong(list, std::to_string(kMaxListNames) + " names");
    keys.emplace_back(line);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

// Each name a path below DEST, checked before any request: "../x" was
// stat'ed outside the prefix, and "/etc/passwd" failed with the server's
// 404 before the path check could say why.
Status CheckListedNames(const std::vector<std::string>& keys,
                        const std::string& list) {
  for (const std::string& key : keys) {
    auto where = KeyPath("DEST", key);
    if (!where.ok())
      return Status::InvalidArgument("--list " + list,
                                     "names '" + key +
                                         "', which cannot be a file in DEST: " +
                                         std::string(where.status().message()));
  }
  return Status::OK();
}

// Stats every key (threads; the backend is thread-safe).
Status StatAll(Backend* backend, const std::vector<std::string>& keys,
               int threads, std::vector<ObjectInfo>* out) {
  out->assign(keys.size(), ObjectInfo{});
  std::vector<Status> errors(keys.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};  // the first error stops the others
  auto work = [&] {
    for (size_t i = next++; i < keys.size() && !failed; i = next++) {
      auto info = backend->Stat(keys[i]);
      if (info.ok()) {
        (*out)[i] = *info;
        (*out)[i].key = keys[i];
      } else {
        errors[i] = info.status().WithContext("--list names " + keys[i]);
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, threads); ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  for (const Status& s : errors) FERRY_RETURN_IF_ERROR(s);
  return Status::OK();
}

// A key a listing gave twice (repeated across pages): once when both say
// the same size and ETag, else refused, naming it, before anything is
// fetched. Twice, it was two downloads into one name ("another ferry run is
// downloading"), and every later sync failed. files: sorted by path.
Status DropRepeatedKeys(const std::string& remote, std::vector<Entry>* files) {
  auto same = [](const Entry& a, const Entry& b) { return a.path == b.path; };
  for (auto it = std::adjacent_find(files->begin(), files->end(), same);
       it != files->end(); it = std::adjacent_find(it + 1, files->end(), same))
    if (it->size != (it + 1)->size || it->etag != (it + 1)->etag)
      return Status::FailedPrecondition(
          remote + "/" + it->path,
          "is listed twice, as " + std::to_string(it->size) + " bytes (ETag " +
              it->etag.str() + ") and as " + std::to_string((it + 1)->size) +
              " bytes (ETag " + (it + 1)->etag.str() +
              "): the listing is inconsistent; nothing was fetched");
  files->erase(std::unique(files->begin(), files->end(), same), files->end());
  return Status::OK();
}

// The remote's files: listed (or named by --list), ferry's own names and
// S3 folder markers left out, each key checked as a path below DEST.
Result<std::vector<Entry>> ListFiles(const UnmanagedRun& run,
                                     SyncReport* report) {
  const SyncOptions& o = run.o;
  std::vector<ObjectInfo> listed;
  if (!o.list.empty()) {
    FERRY_ASSIGN_OR_RETURN(
        std::string text,
        ReadListText(o.list, o.remote_options, run.env, &report->requests));
    FERRY_ASSIGN_OR_RETURN(std::vector<std::string> keys,
                           ParseListLines(text, o.list));
    FERRY_RETURN_IF_ERROR(CheckListedNames(keys, o.list));
    text.clear();
    text.shrink_to_fit();
    FERRY_RETURN_IF_ERROR(StatAll(run.backend, keys,
                                  std::min(16, o.remote_options.connections),
                                  &listed));
    report->requests += keys.size();
  } else {
    if (!run.backend->caps().listing)
      return Status::InvalidArgument(
          run.backend->Describe(),
          "has no .ferry/refs/HEAD (not published with ferry publish) and "
          "cannot be listed: name its files with --list FILE|URL");
    ListOptions lo;
    FERRY_RETURN_IF_ERROR(
        run.backend->List("", lo, [&](const ObjectInfo& info) {
          listed.push_back(info);
          return Status::OK();
        }));
    report->requests += 1 + listed.size() / kKeysPerPage;
  }
  std::vector<Entry> files;
  std::unordered_set<std::string> paths;
  for (const ObjectInfo& info : listed) {
    // Listed keys under .ferry/ but no .ferry/refs/HEAD: a published remote
    // that lost its HEAD, not one to sync file by file.
    if (o.list.empty() && info.key.rfind(".ferry/", 0) == 0) {
      // A HEAD that is there but no object (file://: a FIFO, a device, a
      // folder, a link out of the bucket) is named as such.
      FERRY_RETURN_IF_ERROR(CheckRefAbsent(run.backend, kHead));
      return Status::NotFound(run.backend->Describe(),
                              "has .ferry/ keys but no .ferry/refs/HEAD (a "
                              "remote published with ferry publish whose "
                              "HEAD is missing)");
    }
    if (IsFolderMarker(info) || info.key.rfind(".ferry/", 0) == 0 ||
        IsFerryWorkingFile(info.key))
      continue;
    auto where = KeyPath("DEST", info.key);
    if (!where.ok())
      return Status::FailedPrecondition(
          run.backend->Describe() + "/" + info.key,
          "cannot be a file in DEST: " + std::string(where.status().message()));
    Entry e;
    e.path = info.key;
    e.size = info.size;
    e.etag = info.etag;
    paths.insert(e.path);
    files.push_back(std::move(e));
  }
  std::sort(files.begin(), files.end(),
            [](const Entry& a, const Entry& b) { return a.path < b.path; });
  FERRY_RETURN_IF_ERROR(DropRepeatedKeys(run.backend->Describe(), &files));
  for (const Entry& e : files)
    for (size_t slash = e.path.find('/'); slash != std::string::npos;
         slash = e.path.find('/', slash + 1))
      if (paths.count(e.path.substr(0, slash)))
        return Status::FailedPrecondition(
            run.backend->Describe(),
            "has both a file '" + e.path.substr(0, slash) +
                "' and a file below it, '" + e.path + "'");
  // A mistyped prefix lists nothing: never taken for an empty dataset (an
  // --in-place DEST would lose every file ferry placed).
  if (files.empty())
    return Status::NotFound(run.backend->Describe(),
                            "has no .ferry/refs/HEAD and no files");
  report->files_listed = files.size();
  return files;
}

std::string Unquoted(std::string_view etag) {
  if (etag.substr(0, 2) == "W/") return "";
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"')
    etag = etag.substr(1, etag.size() - 2);
  return std::string(etag);
}

// Size, MD5 (when the ETag states one) and XXH3-128 of a download.
Status CheckDownload(Env* env, const std::string& path, const Entry& e,
                     Hash128* hash) {
  Hasher128 hasher;
  pack::Md5 md5;
  uint64_t n = 0;
  FERRY_RETURN_IF_ERROR(ReadChunks(env, path, [&](std::string_view got) {
    hasher.Update(got);
    md5.Update(got);
    n += got.size();
    return Status::OK();
  }));
  if (n != e.size)
    return Status::Corruption(e.path, "got " + std::to_string(n) +
                                          " bytes, the listing says " +
                                          std::to_string(e.size));
  const std::string want = EtagMd5(e.etag);
  if (!want.empty()) {
    std::string got = md5.HexDigest();
    if (got != want)
      return Status::Corruption(e.path,
                                "MD5 " + got + ", the ETag says " + want);
  }
  *hash = hasher.Digest();
  return Status::OK();
}

// What names a listed file's download in partial/<rk>/ (u-<hex>) before
// its hash is known, and locks it: XXH3-128 of (path, ETag, size).
Hash128 ListedId(const Entry& e) {
  std::string id = e.path;
  id.push_back('\0');
  id += e.etag;
  id.push_back('\0');
  id += std::to_string(e.size);
  return HashBytes(id);
}

// Removes what killed runs left in partial/<rk>/ for files the listing no
// longer gives (their ETag moved on, or they are gone): u-<id> and its
// .ferry-part, journal, .changed (or an older ferry's .lock), for each id
// no listed file has. Each under the id's object lock, taken without
// waiting: another sync downloading that file holds it (its listing may be
// newer), and its files stay. Other names (a managed object's, pack-*) are
// not looked at. Best effort: what cannot be removed waits for a later
// sync. They were never removed: one set more per killed run of a changing
// bucket.
void RemoveStalePartials(Env* env, const std::string& cache_dir,
                         const std::string& rk,
                         const std::vector<Entry>& listed) {
  const std::string dir = JoinPath(cache_dir, "partial/" + rk);
  auto children = env->GetChildren(dir);
  if (!children.ok()) return;
  std::map<std::string, std::vector<std::string>> by_id;  // hex: names
  for (const DirEntry& c : *children) {
    if (c.name.size() < 34 || c.name.rfind("u-", 0) != 0 ||
        (c.name.size() > 34 && c.name[34] != '.'))
      continue;
    by_id[c.name.substr(2, 32)].push_back(c.name);
  }
  if (by_id.empty()) return;  // the usual case: no listed file hashed
  for (const Entry& e : listed) by_id.erase(ListedId(e).ToHex());
  RemoveUnderObjectLocks(env, cache_dir, rk, dir, by_id);
}

struct Download {
  Entry* entry;
  std::string part;  // <cache>/partial/<rk>/u-<xxh3 of path, etag, size>
  CacheKey lock;     // (rk, that xxh3, size): its ObjectLocks key
  // Where its bytes are: part, or part + ".changed" when they are not the
  // listed version (GetItem::changed_dest).
  std::string landed;
};

class Fetcher {
 public:
  Fetcher(const UnmanagedRun& run, Cache* cache, SyncReport* report)
      : run_(run), cache_(cache), report_(report) {}

  // A listed file before its hash is known: named by (path, ETag, size).
  Download Of(Entry* e) const {
    const Hash128 h = ListedId(*e);
    std::string part = JoinPath(
        run_.cache_dir, "partial/" + run_.remote_key + "/u-" + h.ToHex());
    return Download{e, part, CacheKey{run_.remote_key, h, e->size}, part};
  }

  // Downloads (or takes a complete leftover of a killed run), checks and
  // caches each; failures go to the report.
  Status Fetch(std::vector<Download*> list) {
    Env* env = run_.env;
    std::vector<GetItem> items;
    std::map<std::string, Download*> by_key;
    for (Download* d : list) {
      by_key[d->entry->path] = d;
      // Bytes of another version a killed run got: nothing says which.
      (void)env->RemoveFile(d->part + ".changed");
      // A complete file a killed run left at part is the listed version
      // (the engine puts any other at changed_dest) when the listing has
      // an ETag; without one, the same size may be other bytes now.
      auto info = env->Stat(d->part);
      if (!d->entry->etag.empty() && info.ok() &&
          info->size == d->entry->size &&
          !env->FileExists(d->part + ".ferry-part.journal"))
        continue;  // downloaded whole before a kill
      GetItem item;
      item.key = d->entry->path;
      item.dest = d->part;
      item.changed_dest = d->part + ".changed";
      item.have_info = true;
      item.info.key = d->entry->path;
      item.info.size = d->entry->size;
      item.info.etag = d->entry->etag;
      items.push_back(std::move(item));
    }
    std::set<std::string> failed;
    if (!items.empty()) {
      // A file that changed during its download was fetched again: its
      // entry takes the size and ETag of the bytes that came ("" when the
      // answer gave none), else the listing's ETag beside the new bytes'
      // hash said "unchanged" once the file was put back as listed.
      TransferOptions topt = run_.o.transfer;
      topt.on_installed = [&](const GetItem& item) {
        Download* d = by_key.at(item.key);
        Entry* e = d->entry;
        report_->bytes += item.info.size - e->size;
        e->size = item.info.size;
        e->etag = item.info.etag;
        d->landed = item.dest;
      };
      FERRY_ASSIGN_OR_RETURN(
          TransferReport r,
          GetObjects(run_.backend, std::move(items), topt, env));
      CountTransfer(r, report_);
      for (auto& [key, s] : r.failures) {
        failed.insert(key);
        report_->failures.emplace_back(key, s);
      }
    }
    std::vector<std::pair<CacheKey, std::string>> done;
    std::vector<std::pair<CacheKey, CacheKey>> rekey;
    std::vector<ListedObject> listed;
    for (auto& [key, d] : by_key) {
      if (failed.count(key)) continue;
      Hash128 h;
      Status s = CheckDownload(env, d->landed, *d->entry, &h);
      if (!s.ok()) {
        (void)env->RemoveFile(d->landed);
        report_->failures.emplace_back(key, s);
        continue;
      }
      d->entry->hash = h;
      done.emplace_back(CacheKey{run_.remote_key, h, d->entry->size},
                        d->landed);
      rekey.emplace_back(d->lock, done.back().first);
      listed.push_back(ListedObject{d->entry->path, d->entry->etag.str(),
                                    d->entry->size, h});
      ++report_->objects_fetched;
      ++report_->objects_whole;  // an unmanaged remote has no deltas
      report_->bytes_whole += d->entry->size;
    }
    // Reserved by its hash before it is in: counted once all along.
    FERRY_RETURN_IF_ERROR(cache_->Rekey(rekey));
    FERRY_RETURN_IF_ERROR(cache_->InsertAll(done));
    return cache_->RememberListed(run_.remote_key, listed);
  }

 private:
  const UnmanagedRun& run_;
  Cache* cache_;
  SyncReport* report_;
};

// The hash the cache remembers for e's (path, ETag, size), into e.
Result<bool> Recall(Cache* cache, const std::string& rk, Entry* e) {
  ListedObject o{e->path, e->etag.str(), e->size, {}};
  FERRY_ASSIGN_OR_RETURN(bool got, cache->RecallListed(rk, &o));
  if (got) e->hash = o.hash;
  return got;
}

std::vector<CacheKey> KeysOf(const std::vector<Entry>& files,
                             const std::string& rk) {
  std::vector<CacheKey> keys;
  std::set<std::pair<std::string, uint64_t>> seen;
  for (const Entry& e : files)
    if (seen.insert({e.hash.ToHex(), e.size}).second)
      keys.push_back(CacheKey{rk, e.hash, e.size});
  return keys;
}

}  // namespace

std::string EtagMd5(std::string_view etag) {
  std::string t = Unquoted(etag);
  if (t.size() != 32) return "";
  for (char& c : t) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return "";
  }
  return t;
}

Result<SyncReport> SyncUnmanaged(const UnmanagedRun& run, SyncReport report) {
  const SyncOptions& o = run.o;
  Env* env = run.env;
  const DestPaths& paths = run.paths;
  const std::string& rk = run.remote_key;
  report.unmanaged = true;
  if (o.ref != kHead)
    return Status::InvalidArgument(o.remote + "@" + o.ref,
                                   "an unmanaged remote has no refs");

  // 1. The listing, this node's share, and what DEST recorded last time.
  FERRY_ASSIGN_OR_RETURN(std::vector<Entry> all, ListFiles(run, &report));
  if (!o.dry_run) RemoveStalePartials(env, run.cache_dir, rk, all);
  FERRY_ASSIGN_OR_RETURN(std::vector<Entry> files,
                         SelectSome(std::move(all), o.selection));
  report.objects = files.size();
  all.clear();
  const Result<ViewState>& cur = *run.cur;
  std::unordered_map<std::string, Entry> recorded;
  if (cur.ok() && cur->unmanaged && cur->remote_key == rk) {
    std::string cur_dir;
    FERRY_RETURN_IF_ERROR(InspectDest(env, paths, &cur_dir).status());
    auto list =
        ReadFileList(env, JoinPath(cur_dir, std::string(kFileListName)));
    if (list.ok())
      for (Entry& e : *list) recorded.emplace(e.path, std::move(e));
  }
  std::vector<Entry*> need;
  for (Entry& e : files) {
    report.files++;
    report.bytes += e.size;
    auto it = recorded.find(e.path);
    if (it != recorded.end() && !e.etag.empty() && it->second.etag == e.etag &&
        it->second.size == e.size) {
      e.hash = it->second.hash;
    } else {
      need.push_back(&e);
    }
  }
  recorded.clear();
  auto id_of = [&] { return HashBytes(EncodeFileList(files)).ToHex(); };
  auto view_of = [&](const std::string& id) {
    return o.in_place
               ? paths.dest
               : JoinPath(paths.views,
                          id + (run.sel_key.empty() ? "" : "." + run.sel_key));
  };
  bool repair = false;  // DEST's files differ from what ferry placed
  if (need.empty()) {
    const std::string id = id_of();
    if (cur.ok() && cur->remote_key == rk && cur->id == id &&
        cur->selection == run.sel_key) {
      // DEST's files as placed (stat only), else put back by a full run; a
      // dry run checks the same (writing nothing) and plans that run.
      FERRY_ASSIGN_OR_RETURN(
          bool intact,
          DestIntact(env, paths, run.cache_dir, rk, o.in_place, o.dry_run));
      repair = !intact;
      if (!repair) {
        report.unchanged = true;  // the listing was the only request
        report.manifest_id = id;
        std::string shown;  // the folder DEST shows (sync.cc's no-op)
        FERRY_RETURN_IF_ERROR(InspectDest(env, paths, &shown).status());
        report.view = shown;
        return report;
      }
    }
  }
  uint64_t need_bytes = 0;
  for (const Entry* e : need) need_bytes += e->size;
  if (o.cache_limit > 0 && report.bytes > o.cache_limit)
    return Status::ResourceExhausted(
        paths.dest, "the view alone needs " + std::to_string(report.bytes) +
                        " bytes, more than --cache-limit " +
                        std::to_string(o.cache_limit) +
                        "; nothing was fetched");
  if (o.dry_run) {
    // Files another DEST fetched from this remote: what the cache's index
    // recalls, and still holds as the sync's lookup would find it.
    FERRY_ASSIGN_OR_RETURN(auto cache,
                           Cache::OpenForDryRun(env, run.cache_dir));
    for (std::string& w : cache->TakeWarnings())
      report.warnings.push_back(std::move(w));
    // Each file whose hash DEST recorded or the index recalls, looked for
    // in the cache with a lookup's checks (a truncated or changed object
    // is fetched again), read only; the others are fetched.
    const std::unordered_set<const Entry*> needed(need.begin(), need.end());
    std::vector<const Entry*> known;
    std::vector<CacheKey> keys;
    need_bytes = 0;
    auto fetched = [&](uint64_t size) {  // whole, as the sync would
      ++report.objects_fetched;
      ++report.objects_whole;
      report.bytes_whole += size;
      report.bytes_fetched += size;
      need_bytes += size;
    };
    for (Entry& e : files) {
      bool got = true;
      if (needed.count(&e)) {
        FERRY_ASSIGN_OR_RETURN(got, Recall(cache.get(), rk, &e));
      }
      if (got) {
        known.push_back(&e);
        keys.push_back(CacheKey{rk, e.hash, e.size});
        continue;
      }
      fetched(e.size);
    }
    Cache::Probe probe;
    FERRY_RETURN_IF_ERROR(cache->ProbeAll(keys, &probe));
    const std::vector<bool>& found = probe.hit;
    std::vector<CacheKey> hits;  // kept when room is made, as by the sync
    for (size_t i = 0; i < keys.size(); ++i) {
      if (found[i]) {
        ++report.files_cached;
        report.bytes_cached += keys[i].size;
        hits.push_back(keys[i]);
        continue;
      }
      fetched(known[i]->size);
    }
    // The room the sync makes under --cache-limit, or its refusal.
    if (o.cache_limit > 0 && need_bytes > 0) {
      EvictReport ev;
      FERRY_RETURN_IF_ERROR(
          cache->PlanRoom(o.cache_limit, need_bytes, hits, probe, &ev));
      report.evicted_objects = ev.objects;
      report.evicted_bytes = ev.bytes;
    }
    return report;
  }

  // 2. DEST locked; the cache; what it lacks fetched whole.
  FERRY_ASSIGN_OR_RETURN(auto dest_lock, LockDest(env, paths, o.in_place));
  std::string cur_view;
  FERRY_ASSIGN_OR_RETURN(DestKind kind, InspectDest(env, paths, &cur_view));
  FERRY_RETURN_IF_ERROR(CheckDestMode(paths, kind, o.in_place));
  if (kind == DestKind::kOther)
    return Status::FailedPrecondition(
        paths.dest,
        "is not a folder or a view made by ferry sync: refusing "
        "to replace it");
  FERRY_ASSIGN_OR_RETURN(auto cache,
                         Cache::Open(env, run.cache_dir, o.transfer.fsync));
  for (std::string& w : cache->TakeWarnings())
    report.warnings.push_back(std::move(w));
  RemoveStaleTemps(env, JoinPath(run.cache_dir, "partial/" + rk));
  // Files another DEST fetched from this remote are known to the cache.
  std::unordered_set<const Entry*> unknown;
  for (Entry* e : need) {
    FERRY_ASSIGN_OR_RETURN(bool got, Recall(cache.get(), rk, e));
    if (!got) unknown.insert(e);
  }
  need.clear();
  need_bytes = 0;
  // The files whose hash is known are reserved before they are looked up:
  // no pin holds them until all the view's hashes are known, and another
  // sync's eviction took one between the lookup and the link ("left the
  // cache during the sync"). Those missing count as downloads in flight.
  {
    std::vector<CacheKey> known;
    for (Entry& e : files)
      if (!unknown.count(&e)) known.push_back(CacheKey{rk, e.hash, e.size});
    FERRY_RETURN_IF_ERROR(cache->Reserve(known));
  }
  // Marked used in one transaction; never evicted (reserved).
  std::vector<CacheKey> hits;
  for (Entry& e : files) {
    bool hit = false;
    if (!unknown.count(&e)) {
      CacheKey k{rk, e.hash, e.size};
      FERRY_ASSIGN_OR_RETURN(hit, cache->Lookup(k, /*touch=*/false));
      if (hit) hits.push_back(std::move(k));
    }
    if (!hit) {
      need.push_back(&e);
      need_bytes += e.size;
    }
  }
  FERRY_RETURN_IF_ERROR(cache->Touch(hits));
  report.files_cached = files.size() - need.size();
  Fetcher fetcher(run, cache.get(), &report);
  if (o.cache_limit > 0 && !need.empty()) {
    EvictReport ev;
    // The hits and each file to fetch: by its hash when known, else by its
    // lock key (path, ETag, size) until fetched (Fetcher::Fetch rekeys it).
    auto key_of = [&](Entry* e) {
      return unknown.count(e) ? fetcher.Of(e).lock
                              : CacheKey{rk, e->hash, e->size};
    };
    std::vector<CacheKey> use = hits;
    for (Entry* e : need) use.push_back(key_of(e));
    // Files another sync fetched meanwhile: in the `listed` table and the
    // cache, known by their hash now; kept as the hits are.
    auto still = [&](std::vector<CacheKey>* use) -> Result<bool> {
      bool found = false;
      for (Entry* e : need) {
        if (!unknown.count(e)) continue;
        FERRY_ASSIGN_OR_RETURN(bool got, Recall(cache.get(), rk, e));
        if (!got) continue;
        unknown.erase(e);
        found = true;
        // Indexed if its file is there without a row.
        FERRY_RETURN_IF_ERROR(
            cache->Lookup(CacheKey{rk, e->hash, e->size}).status());
      }
      if (!found) return false;
      *use = hits;
      for (Entry* e : need) use->push_back(key_of(e));
      return true;
    };
    // The hits kept: evicted to make room, they failed the sync once it had
    // fetched the rest, and each run again the same way.
    FERRY_RETURN_IF_ERROR(MakeRoomForMissing(cache.get(), o.cache_limit,
                                             std::move(use), still, &ev));
    report.evicted_objects = ev.objects;
    report.evicted_bytes = ev.bytes;
  }
  // Whether another process cached d's file (its lock held): it may have
  // done so since the lookups above.
  auto cached_since = [&](Download& d) -> Result<bool> {
    FERRY_ASSIGN_OR_RETURN(bool got, Recall(cache.get(), rk, d.entry));
    if (!got) return false;
    const CacheKey k{rk, d.entry->hash, d.entry->size};
    FERRY_ASSIGN_OR_RETURN(bool hit, cache->Lookup(k));
    if (!hit) return false;
    ++report.files_cached;
    FERRY_RETURN_IF_ERROR(cache->Rekey({{d.lock, k}}));  // reserved by hash
    return true;
  };
  // One process fetches a file at a time: locked by (path, ETag, size) in
  // the cache's lock stripes, as managed objects by hash (sync.cc), in
  // batches; another process's are waited for after this batch's own.
  ObjectLocks locks(env, JoinPath(run.cache_dir, "locks"));
  if (!need.empty())
    FERRY_RETURN_IF_ERROR(CreateOwnDirs(env, JoinPath(run.cache_dir, "partial"),
                                        DirName(fetcher.Of(need[0]).part)));
  for (size_t b = 0; b < need.size(); b += kLockBatch) {
    std::vector<Download> mine, theirs;
    for (size_t i = b; i < std::min(need.size(), b + kLockBatch); ++i) {
      Download d = fetcher.Of(need[i]);
      Status s = locks.Lock(d.lock, false);
      if (!s.ok()) {
        if (!s.IsUnavailable()) return s;
        theirs.push_back(std::move(d));
        continue;
      }
      (void)env->RemoveFile(d.part + ".lock");  // an older ferry's lock file
      FERRY_ASSIGN_OR_RETURN(bool raced_in, cached_since(d));
      if (!raced_in) mine.push_back(std::move(d));
    }
    // What killed runs left at the batch's names, now locked, that is no
    // regular file (a FIFO, a folder): removed, listed once.
    cache->ListLeftovers(rk);
    for (const Download& d : mine)
      FERRY_RETURN_IF_ERROR(
          cache->RemoveOddLeftovers(rk, d.part.substr(d.part.rfind('/') + 1)));
    cache->ForgetLeftovers();
    std::vector<Download*> list;
    for (Download& d : mine) list.push_back(&d);
    FERRY_RETURN_IF_ERROR(fetcher.Fetch(list));
    FERRY_RETURN_IF_ERROR(locks.UnlockAll());
    // Another process was fetching the same file: after it, found in the
    // cache (or fetched here if it failed).
    for (Download& d : theirs) {
      FERRY_RETURN_IF_ERROR(locks.Lock(d.lock, true));
      FERRY_RETURN_IF_ERROR(RemoveOddEngineFiles(env, d.part));
      FERRY_ASSIGN_OR_RETURN(bool hit, cached_since(d));
      if (!hit) FERRY_RETURN_IF_ERROR(fetcher.Fetch({&d}));
      FERRY_RETURN_IF_ERROR(locks.Unlock(d.lock));
    }
  }
  if (!report.failures.empty()) return report;  // DEST stays as it was
  // Every file came from the cache or whole, as a managed remote's paths.
  report.bytes_cached = report.bytes - report.bytes_whole;

  // 3. The view (or DEST in place), as for a managed remote.
  const std::string id = id_of();
  std::string view = view_of(id);
  // A complete view of this version (an old one a reader kept) is reused
  // only if intact, as for a managed remote (sync.cc): one with a file
  // removed or written was swapped in as it was (exit 0, --check exit 3).
  if (!repair && !o.in_place &&
      env->FileExists(JoinPath(view, std::string(kViewStateName)))) {
    FERRY_ASSIGN_OR_RETURN(bool intact,
                           ViewIntact(env, view, run.cache_dir, rk));
    repair = !intact;
  }
  if (repair && !o.in_place && env->FileExists(view))
    view += ".repaired-" + std::to_string(env->NowMicros());  // swapped in
  report.manifest_id = id;
  report.view = view;
  FERRY_ASSIGN_OR_RETURN(
      bool reuse, PrepareView(env, o.in_place, &view, id, rk, run.sel_key));
  report.view = view;
  // Removed if the sync ends before the view is complete.
  HalfBuiltView half_built(env, paths, o.in_place || reuse ? "" : view);
  ViewPins pins(env, cache.get(), view, o.in_place);
  FERRY_RETURN_IF_ERROR(pins.Pin(KeysOf(files, rk)));
  for (const Entry& e : files) {
    FERRY_ASSIGN_OR_RETURN(
        bool hit, cache->Lookup(CacheKey{rk, e.hash, e.size}, /*touch=*/false));
    if (!hit)
      return Status::Unavailable(e.path,
                                 "left the cache during the sync (evicted by "
                                 "another process?): run the sync again");
  }
  FERRY_RETURN_IF_ERROR(Install(
      env, cache.get(), o, paths, kind, cur_view, view, reuse, files,
      NewState(o, rk, "", id, run.cache_dir, run.sel_key, report), &report));
  return report;
}

}  // namespace ferry::sync
