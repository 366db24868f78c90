#include "sync/view.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <thread>
#include <unordered_set>
#include <utility>

#include "ferry/atomic_file.h"
#include "ferry/json.h"
#include "sync/cleaner.h"
#include "sync/fs_util.h"
#include "sync/in_place.h"

namespace ferry::sync {

std::string EncodeViewState(const ViewState& s) {
  JsonWriter w;
  w.BeginObject()
      .Key("remote")
      .String(s.remote)
      .Key("remote_key")
      .String(s.remote_key)
      .Key("ref")
      .String(s.ref)
      .Key("etag")
      .String(s.etag)
      .Key("id")
      .String(s.id)
      .Key("cache")
      .String(s.cache)
      .Key("selection")
      .String(s.selection)
      .Key("rank")
      .Int(s.rank)
      .Key("world_size")
      .Int(s.world_size)
      .Key("filters")
      .BeginArray();
  for (const auto& [include, glob] : s.filters)
    w.String(std::string(include ? "+" : "-") + glob);
  w.EndArray()
      .Key("files")
      .Uint(s.files)
      .Key("bytes")
      .Uint(s.bytes)
      .Key("in_place")
      .Bool(s.in_place)
      .Key("unmanaged")
      .Bool(s.unmanaged)
      .EndObject();
  return w.str() + "\n";
}

Result<ViewState> ParseViewState(std::string_view json) {
  FERRY_ASSIGN_OR_RETURN(JsonValue v, ParseJson(json));
  if (!v.is_object() || !v["id"].is_string() || !v["remote_key"].is_string())
    return Status::Corruption(kViewStateName, "not a view state");
  ViewState s;
  s.remote = v["remote"].str();
  s.remote_key = v["remote_key"].str();
  s.ref = v["ref"].str();
  s.etag = v["etag"].str();
  s.id = v["id"].str();
  s.cache = v["cache"].str();
  s.selection = v["selection"].str();
  s.rank = static_cast<int>(v["rank"].uint());
  s.world_size = static_cast<int>(v["world_size"].uint());
  for (const JsonValue& f : v["filters"].items()) {
    if (f.str().empty()) continue;
    s.filters.emplace_back(f.str()[0] == '+', f.str().substr(1));
  }
  s.files = v["files"].uint();
  s.bytes = v["bytes"].uint();
  s.in_place = v["in_place"].boolean();
  s.unmanaged = v["unmanaged"].boolean();
  return s;
}

Result<DestPaths> ResolveDest(const std::string& dest) {
  DestPaths p;
  FERRY_ASSIGN_OR_RETURN(p.dest, AbsolutePath(dest));
  if (p.dest == "/")
    return Status::InvalidArgument(dest, "cannot be the root folder");
  size_t slash = p.dest.rfind('/');
  p.parent = slash == 0 ? "/" : p.dest.substr(0, slash);
  p.name = p.dest.substr(slash + 1);
  p.views = JoinPath(p.parent, "." + p.name + ".ferry-views");
  p.tmp_link = JoinPath(p.parent, "." + p.name + ".ferry-tmp");
  return p;
}

Status CheckOwnFolder(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    return errno == ENOENT ? Status::OK() : PosixError(path, errno);
  if (S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & S_IWOTH) == 0)
    return Status::OK();
  return Status::FailedPrecondition(
      path,
      "is not a folder of yours that only you may write (a link, another "
      "user's folder, or world-writable): ferry sync will not keep or trust "
      "views there; remove it");
}

Result<DestKind> InspectDest(Env* env, const DestPaths& paths,
                             std::string* view) {
  FERRY_ASSIGN_OR_RETURN(PathKind k, LinkKind(paths.dest));
  switch (k) {
    case PathKind::kMissing:
      return DestKind::kMissing;
    case PathKind::kLink: {
      FERRY_ASSIGN_OR_RETURN(std::string target, ReadLink(paths.dest));
      const std::string prefix = "." + paths.name + ".ferry-views/";
      if (target.compare(0, prefix.size(), prefix) != 0 ||
          target.find('/', prefix.size()) != std::string::npos ||
          target.size() == prefix.size())
        return DestKind::kOther;
      *view = JoinPath(paths.parent, target);
      FERRY_RETURN_IF_ERROR(CheckOwnFolder(paths.views));
      FERRY_RETURN_IF_ERROR(CheckOwnFolder(*view));
      return DestKind::kView;
    }
    case PathKind::kDir: {
      FERRY_ASSIGN_OR_RETURN(auto children, env->GetChildren(paths.dest));
      for (const DirEntry& e : children) {
        if (e.name == kViewStateName && !e.is_dir && !e.is_link) {
          *view = paths.dest;
          return DestKind::kInPlace;
        }
      }
      return children.empty() ? DestKind::kEmptyDir : DestKind::kDir;
    }
    default:
      return DestKind::kOther;
  }
}

Result<ViewState> CurrentState(Env* env, const DestPaths& paths) {
  std::string view;
  FERRY_ASSIGN_OR_RETURN(DestKind kind, InspectDest(env, paths, &view));
  if (kind != DestKind::kView && kind != DestKind::kInPlace)
    return Status::NotFound(paths.dest, "is not a view made by ferry sync");
  FERRY_ASSIGN_OR_RETURN(
      std::string json,
      ReadOwnFile(env, JoinPath(view, std::string(kViewStateName)), 1 << 20));
  return ParseViewState(json);
}

ViewReadLock::~ViewReadLock() {
  if (fd_ >= 0) ::close(fd_);
}

Status ViewReadLock::Take(Env* env, const DestPaths& paths, std::string* view,
                          DestKind* kind) {
  for (int attempt = 0;; ++attempt) {
    FERRY_ASSIGN_OR_RETURN(*kind, InspectDest(env, paths, view));
    if (*kind != DestKind::kView) return Status::OK();
    const std::string lock = JoinPath(*view, std::string(kViewLockName));
    // O_NONBLOCK: a FIFO in its place opens at once; only flock is used.
    int fd =
        ::open(lock.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd >= 0) {
      int rc;
      while ((rc = ::flock(fd, LOCK_SH | LOCK_NB)) != 0 && errno == EINTR) {
      }
      struct stat held, named;
      if (rc == 0 && ::fstat(fd, &held) == 0 &&
          ::stat(lock.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
          held.st_dev == named.st_dev) {
        fd_ = fd;
        return Status::OK();
      }
      ::close(fd);
    } else {
      // No lock file (or none to open): read as it is if DEST still shows
      // it.
      std::string now;
      auto k = InspectDest(env, paths, &now);
      if (k.ok() && *k == DestKind::kView && now == *view &&
          env->FileExists(*view))
        return Status::OK();
    }
    if (attempt == 200)
      return Status::Unavailable(paths.dest,
                                 "its view was switched or removed at each "
                                 "try to read it: run it again");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Result<std::unique_ptr<FileLock>> LockDest(Env* env, const DestPaths& paths,
                                           bool in_place) {
  // One lock file beside DEST whatever the mode, so a view sync and an
  // --in-place sync exclude each other, and nothing is made (in DEST, in a
  // link's target, a views folder) before it is held.
  FERRY_RETURN_IF_ERROR(env->CreateDirs(paths.parent));
  auto lock = env->LockFile(
      JoinPath(paths.parent, "." + paths.name + ".ferry-sync.lock"), false);
  if (!lock.ok() && lock.status().IsUnavailable())
    return Status::Unavailable(paths.dest,
                               "another ferry sync into it is running");
  if (!lock.ok()) return lock;
  if (!in_place) {  // the views folder, once the lock is held
    FERRY_RETURN_IF_ERROR(env->CreateDirs(paths.views));
    FERRY_RETURN_IF_ERROR(CheckOwnFolder(paths.views));
    return lock;
  }
  FERRY_ASSIGN_OR_RETURN(PathKind k, LinkKind(paths.dest));
  if (k == PathKind::kMissing)
    FERRY_RETURN_IF_ERROR(env->CreateDirs(paths.dest));
  return lock;
}

namespace {

// One JSON array of [path, xxh3-128 hex, size, inode, mtime ns, ctime ns].
std::string EncodeStamps(const std::vector<Entry>& files,
                         const std::vector<FileStamp>& stamps) {
  JsonWriter w;
  w.BeginArray();
  for (size_t i = 0; i < files.size(); ++i)
    w.BeginArray()
        .String(files[i].path)
        .String(files[i].hash.ToHex())
        .Uint(stamps[i].size)
        .Uint(stamps[i].ino)
        .Uint(static_cast<uint64_t>(stamps[i].mtime_ns))
        .Uint(static_cast<uint64_t>(stamps[i].ctime_ns))
        .EndArray();
  w.EndArray();
  return w.str() + "\n";
}

}  // namespace

Status BuildView(Env* env, Cache* cache, const std::string& remote_key,
                 const std::string& view, const std::vector<Entry>& files,
                 const ViewState& state, BuildReport* report) {
  ViewBuilder builder(env, cache, remote_key, view, &files);
  return builder.Finish(state, report);
}

ViewBuilder::ViewBuilder(Env* env, Cache* cache, std::string remote_key,
                         std::string view, const std::vector<Entry>* files)
    : env_(env),
      cache_(cache),
      remote_key_(std::move(remote_key)),
      view_(std::move(view)),
      files_(files),
      cached_(files->size()),
      how_(files->size()),
      placed_(files->size()),
      stamps_(files->size()),
      stamped_(files->size()) {}

ViewBuilder::~ViewBuilder() {
  Join();
  if (finished_) return;
  // Best effort: what is left is a view without state, which the next sync
  // removes (its objects are then re-hashed once).
  std::vector<CacheKey> linked;
  bool any = false;
  for (size_t i = 0; i < files_->size(); ++i) {
    if (!placed_[i]) continue;
    any = true;
    const Entry& e = (*files_)[i];
    if (how_[i] == PlaceHow::kLinked)
      linked.push_back(CacheKey{remote_key_, e.hash, e.size});
  }
  if (!any) return;
  if (!RemoveTree(env_, view_).ok() || !env_->CreateDirs(view_).ok()) return;
  (void)cache_->RestampObjects(linked);
}

void ViewBuilder::Join() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

namespace {

bool KeyLess(const Entry& a, const Entry& b) {
  if (a.hash.high != b.hash.high) return a.hash.high < b.hash.high;
  if (a.hash.low != b.hash.low) return a.hash.low < b.hash.low;
  return a.size < b.size;
}

}  // namespace

void ViewBuilder::Start(std::vector<bool> cached) {
  cached_ = std::move(cached);
  const std::vector<Entry>& files = *files_;
  for (size_t i = 0; i < files.size(); ++i)
    if (!cached_[i]) uncached_.push_back(i);
  std::sort(uncached_.begin(), uncached_.end(),
            [&](size_t a, size_t b) { return KeyLess(files[a], files[b]); });
  thread_ = std::thread([this] { Run(); });
}

void ViewBuilder::Landed(const std::vector<CacheKey>& keys) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    landed_.insert(landed_.end(), keys.begin(), keys.end());
  }
  cv_.notify_one();
}

std::vector<size_t> ViewBuilder::FilesOf(
    const std::vector<CacheKey>& keys) const {
  const std::vector<Entry>& files = *files_;
  std::vector<size_t> idx;
  for (const CacheKey& k : keys) {
    Entry probe;
    probe.hash = k.hash;
    probe.size = k.size;
    auto lo = std::lower_bound(
        uncached_.begin(), uncached_.end(), probe,
        [&](size_t i, const Entry& p) { return KeyLess(files[i], p); });
    for (auto it = lo; it != uncached_.end() && !KeyLess(probe, files[*it]);
         ++it)
      if (!placed_[*it]) idx.push_back(*it);
  }
  return idx;
}

void ViewBuilder::Run() {
  std::vector<size_t> idx;
  for (size_t i = 0; i < files_->size(); ++i)
    if (cached_[i]) idx.push_back(i);
  thread_status_ = PlaceAll(idx);
  if (thread_status_.ok()) thread_status_ = StampAll(idx);
  while (thread_status_.ok()) {
    std::vector<CacheKey> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return closing_ || !landed_.empty(); });
      if (landed_.empty()) return;  // closing, and nothing left
      batch.swap(landed_);
    }
    idx = FilesOf(batch);
    thread_status_ = PlaceAll(idx);
    if (thread_status_.ok()) thread_status_ = StampAll(idx);
  }
}

Status ViewBuilder::PlaceAll(const std::vector<size_t>& idx) {
  for (size_t i : idx) {
    if (placed_[i]) continue;
    const Entry& e = (*files_)[i];
    const std::string to = JoinPath(view_, e.path);
    std::string dir = DirName(to);
    if (dirs_.insert(dir).second) FERRY_RETURN_IF_ERROR(env_->CreateDirs(dir));
    const std::string from = cache_->ObjectPath({remote_key_, e.hash, e.size});
    auto how = PlaceObject(env_, from, to, e.hash, e.size, e.mode & 0777);
    if (!how.ok()) return how.status().WithContext(e.path);
    how_[i] = *how;
    placed_[i] = true;
  }
  return Status::OK();
}

Status ViewBuilder::StampAll(const std::vector<size_t>& idx) {
  for (size_t i : idx) {
    if (stamped_[i]) continue;
    FERRY_ASSIGN_OR_RETURN(stamps_[i],
                           StampOf(JoinPath(view_, (*files_)[i].path)));
    stamped_[i] = true;
  }
  return Status::OK();
}

Status ViewBuilder::Finish(const ViewState& state, BuildReport* report) {
  Join();
  FERRY_RETURN_IF_ERROR(thread_status_);
  const std::vector<Entry>& files = *files_;
  std::vector<size_t> all(files.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  FERRY_RETURN_IF_ERROR(PlaceAll(all));
  for (PlaceHow how : how_) {
    if (how == PlaceHow::kCopied) ++report->copied;
    if (how == PlaceHow::kReflinked) ++report->reflinked;
  }
  // Every file's stamp once all are placed (a link changes the shared
  // inode's ctime; the thread's objects are all its own): the no-op check
  // compares them (ViewIntact), and the cache records the linked objects'
  // new ctime.
  FERRY_RETURN_IF_ERROR(StampAll(all));
  std::vector<std::pair<CacheKey, FileStamp>> links;
  for (size_t i = 0; i < files.size(); ++i) {
    const Entry& e = files[i];
    if (how_[i] == PlaceHow::kLinked)
      links.emplace_back(CacheKey{remote_key_, e.hash, e.size}, stamps_[i]);
  }
  FERRY_RETURN_IF_ERROR(cache_->Restamp(links));
  FERRY_RETURN_IF_ERROR(
      WriteFileAtomically(env_, JoinPath(view_, std::string(kStampsName)),
                          EncodeStamps(files, stamps_)));
  FERRY_RETURN_IF_ERROR(WriteFileAtomically(
      env_, JoinPath(view_, std::string(kViewLockName)), ""));
  if (report->copied + report->reflinked > 0)
    FERRY_RETURN_IF_ERROR(env_->SyncFileSystem(view_));
  FERRY_RETURN_IF_ERROR(
      WriteFileAtomically(env_, JoinPath(view_, std::string(kViewStateName)),
                          EncodeViewState(state)));
  finished_ = true;
  return Status::OK();
}

Result<bool> ViewIntact(Env* env, const std::string& view,
                        const std::string& cache_dir,
                        const std::string& remote_key,
                        std::string* fresh_stamps, bool dry_run) {
  if (fresh_stamps) fresh_stamps->clear();
  auto text = ReadOwnFile(env, JoinPath(view, std::string(kStampsName)),
                          uint64_t{4} << 30);
  if (!text.ok()) {
    // Built before stamps; or not a file (a FIFO, a device): rebuilt.
    if (text.status().IsNotFound() || text.status().IsInvalidArgument())
      return false;
    return text.status();
  }
  auto v = ParseJson(*text);
  if (!v.ok() || !v->is_array()) return false;
  std::unique_ptr<Cache> cache;  // opened at the first file that differs
  std::vector<Entry> files;      // for *fresh_stamps
  std::vector<FileStamp> stamps;
  for (const JsonValue& f : v->items()) {
    if (!f.is_array() || f.items().size() != 6) return false;
    const auto& it = f.items();
    FileStamp rec;
    rec.size = it[2].uint();
    rec.ino = it[3].uint();
    rec.mtime_ns = static_cast<int64_t>(it[4].uint());
    rec.ctime_ns = static_cast<int64_t>(it[5].uint());
    auto now = StampOf(JoinPath(view, it[0].str()));
    if (!now.ok()) return false;  // removed, or not a file any more
    auto hash = Hash128::FromHex(it[1].str());
    if (!hash.ok()) return false;
    if (fresh_stamps) {
      Entry& e = files.emplace_back();
      e.path = it[0].str();
      e.size = rec.size;
      e.hash = *hash;
      stamps.push_back(*now);
    }
    if (*now == rec) continue;
    // A hard link whose ctime another view's link changed: fine if the
    // cache's object is that inode as ferry last stamped it.
    if (now->ino != rec.ino || now->size != rec.size ||
        now->mtime_ns != rec.mtime_ns)
      return false;
    if (!cache) {
      // A cleaner may be unlinking an old view's links to these objects
      // and not yet have recorded their new ctime: waited for first.
      WaitForCleaners(cache_dir);
      FERRY_ASSIGN_OR_RETURN(cache, dry_run
                                        ? Cache::OpenForDryRun(env, cache_dir)
                                        : Cache::Open(env, cache_dir));
      now = StampOf(JoinPath(view, it[0].str()));
      if (!now.ok()) return false;
      if (fresh_stamps) stamps.back() = *now;
    }
    FERRY_ASSIGN_OR_RETURN(
        bool same,
        cache->StampMatches(CacheKey{remote_key, *hash, rec.size}, *now));
    if (!same) return false;
  }
  if (cache && fresh_stamps) *fresh_stamps = EncodeStamps(files, stamps);
  return true;
}

Status WriteStamps(Env* env, const std::string& dir,
                   const std::vector<Entry>& files) {
  std::vector<FileStamp> stamps;
  for (const Entry& e : files) {
    FERRY_ASSIGN_OR_RETURN(FileStamp st, StampOf(JoinPath(dir, e.path)));
    stamps.push_back(st);
  }
  return WriteFileAtomically(env, JoinPath(dir, std::string(kStampsName)),
                             EncodeStamps(files, stamps));
}

Result<std::unordered_map<std::string, FileStamp>> ReadStamps(
    Env* env, const std::string& dir,
    std::unordered_map<std::string, Hash128>* hashes) {
  FERRY_ASSIGN_OR_RETURN(
      std::string text,
      ReadOwnFile(env, JoinPath(dir, std::string(kStampsName)),
                  uint64_t{4} << 30));
  auto v = ParseJson(text);
  if (!v.ok() || !v->is_array())
    return Status::Corruption(JoinPath(dir, std::string(kStampsName)),
                              "not a JSON array");
  std::unordered_map<std::string, FileStamp> stamps;
  for (const JsonValue& f : v->items()) {
    if (!f.is_array() || f.items().size() != 6)
      return Status::Corruption(JoinPath(dir, std::string(kStampsName)),
                                "not [path, hash, size, inode, mtime, ctime]");
    const auto& it = f.items();
    FileStamp& st = stamps[it[0].str()];
    st.size = it[2].uint();
    st.ino = it[3].uint();
    st.mtime_ns = static_cast<int64_t>(it[4].uint());
    st.ctime_ns = static_cast<int64_t>(it[5].uint());
    if (hashes) {
      auto h = Hash128::FromHex(it[1].str());
      if (h.ok()) (*hashes)[it[0].str()] = *h;
    }
  }
  return stamps;
}

Status RefreshStamps(Env* env, const std::string& view,
                     const std::string& fresh_stamps) {
  return WriteFileAtomically(env, JoinPath(view, std::string(kStampsName)),
                             fresh_stamps);
}

Status SwapDest(Env* env, const DestPaths& paths, const std::string& view,
                DestKind kind, bool remove_replaced, std::string* replaced) {
  FERRY_ASSIGN_OR_RETURN(PathKind tmp_kind, LinkKind(paths.tmp_link));
  if (tmp_kind == PathKind::kLink) {
    FERRY_RETURN_IF_ERROR(env->RemoveFile(paths.tmp_link));
  } else if (tmp_kind != PathKind::kMissing) {
    return Status::FailedPrecondition(
        paths.tmp_link, "is in the way (ferry's temporary link name)");
  }
  size_t slash = view.rfind('/');
  const std::string target =
      "." + paths.name + ".ferry-views/" + view.substr(slash + 1);
  FERRY_RETURN_IF_ERROR(MakeSymlink(target, paths.tmp_link));
  if (kind == DestKind::kMissing || kind == DestKind::kView) {
    FERRY_RETURN_IF_ERROR(env->RenameFile(paths.tmp_link, paths.dest));
    return env->SyncDir(paths.parent);
  }
  // A real folder: exchanged with the link in one step, so DEST never
  // disappears; then the old folder (now at tmp_link) is dealt with.
  const std::string aside =
      JoinPath(paths.parent, "." + paths.name + ".ferry-old-" +
                                 std::to_string(std::time(nullptr)));
  std::string old = paths.tmp_link;
  Status s = env->ExchangePaths(paths.tmp_link, paths.dest);
  if (!s.ok()) {
    if (s.code() != Status::Code::kNotSupported) return s;
    // No RENAME_EXCHANGE here: two renames (DEST is briefly missing).
    old = aside;
    FERRY_RETURN_IF_ERROR(env->RenameFile(paths.dest, old));
    FERRY_RETURN_IF_ERROR(env->RenameFile(paths.tmp_link, paths.dest));
  }
  FERRY_RETURN_IF_ERROR(env->SyncDir(paths.parent));
  if (kind == DestKind::kEmptyDir) return env->RemoveDir(old);
  if (remove_replaced) return RemoveTree(env, old);
  if (old != aside) FERRY_RETURN_IF_ERROR(env->RenameFile(old, aside));
  *replaced = aside;
  return env->SyncDir(paths.parent);
}

Result<std::vector<Entry>> ViewFiles(Env* env, const std::string& view,
                                     const ViewState& state) {
  if (state.unmanaged)
    return ReadFileList(env, JoinPath(view, std::string(kFileListName)));
  FERRY_ASSIGN_OR_RETURN(Hash128 id, Hash128::FromHex(state.id));
  FERRY_ASSIGN_OR_RETURN(
      std::string bytes,
      ReadOwnFile(env, JoinPath(state.cache, "manifests/" + state.id)));
  FERRY_ASSIGN_OR_RETURN(ManifestInfo manifest, ReadManifest(bytes, id));
  SyncSelection sel;
  sel.rank = state.rank;
  sel.world_size = std::max(1, state.world_size);
  sel.filters = state.filters;
  return Select(std::move(manifest.files), sel);
}

namespace {

bool IsViewStateFile(const std::string& rel) {
  // With the temporary of one a killed no-op was rewriting (RefreshStamps).
  return rel.rfind(".ferry-sync", 0) == 0 || rel == kViewLockName ||
         (IsAtomicTempName(rel) &&
          rel.find(".ferry-sync") != std::string::npos);
}

// Below root/rel: what is not a path of placed nor a folder on the way to
// one (a folder is named once, with a trailing '/').
Status WalkExtras(Env* env, const std::string& root, const std::string& rel,
                  const std::unordered_set<std::string>& placed,
                  const std::unordered_set<std::string>& dirs,
                  std::vector<std::string>* extras) {
  FERRY_ASSIGN_OR_RETURN(
      auto children,
      env->GetChildren(rel.empty() ? root : JoinPath(root, rel)));
  for (const DirEntry& e : children) {
    const std::string r = rel.empty() ? e.name : rel + "/" + e.name;
    if (e.is_dir && !e.is_link) {
      if (dirs.count(r)) {
        FERRY_RETURN_IF_ERROR(WalkExtras(env, root, r, placed, dirs, extras));
      } else {
        extras->push_back(r + "/");
      }
    } else if (!placed.count(r) && !(rel.empty() && IsViewStateFile(r))) {
      extras->push_back(r);
    }
  }
  return Status::OK();
}

}  // namespace

Status FindViewExtras(Env* env, const std::string& view,
                      std::vector<std::string>* extras,
                      std::vector<CacheKey>* objects) {
  extras->clear();
  if (objects) objects->clear();
  auto json =
      ReadOwnFile(env, JoinPath(view, std::string(kViewStateName)), 1 << 20);
  if (!json.ok() && json.status().IsNotFound())
    return Status::OK();  // half-built by a killed run: never shown as DEST
  auto state =
      json.ok() ? ParseViewState(*json) : Result<ViewState>(json.status());
  auto files = state.ok() ? ViewFiles(env, view, *state)
                          : Result<std::vector<Entry>>(state.status());
  if (!files.ok()) {
    extras->push_back("(which files ferry placed is unknown: " +
                      files.status().ToString() + ")");
    return Status::OK();
  }
  std::unordered_set<std::string> placed, dirs;
  for (const Entry& e : *files) {
    placed.insert(e.path);
    for (size_t at = e.path.find('/'); at != std::string::npos;
         at = e.path.find('/', at + 1))
      dirs.insert(e.path.substr(0, at));
    if (objects)
      objects->push_back(CacheKey{state->remote_key, e.hash, e.size});
  }
  FERRY_RETURN_IF_ERROR(WalkExtras(env, view, "", placed, dirs, extras));
  std::sort(extras->begin(), extras->end());
  return Status::OK();
}

Status RemoveOldViews(Env* env, Cache* cache, const DestPaths& paths,
                      const std::string& keep, SyncReport* report,
                      std::vector<Trash>* detach) {
  FERRY_ASSIGN_OR_RETURN(auto children, env->GetChildren(paths.views));
  for (const DirEntry& e : children) {
    if (!e.is_dir || e.is_link || e.name.empty()) continue;
    const std::string view = JoinPath(paths.views, e.name);
    if (e.name.rfind(kTrashPrefix, 0) == 0) {
      // An old view a cleaner took: left by one that was killed (its lock
      // is free) it goes now; its objects are restamped if its state is
      // still there to name them.
      auto lock =
          env->LockFile(JoinPath(view, std::string(kViewLockName)), false);
      if (!lock.ok() && lock.status().IsUnavailable()) continue;  // running
      Trash t{view, {}, ""};
      std::vector<std::string> extras;
      (void)FindViewExtras(env, view, &extras, &t.objects);
      FERRY_RETURN_IF_ERROR(RemoveTrash(env, cache, t));
      continue;
    }
    if (e.name[0] == '.' || view == keep) continue;
    auto lock =
        env->LockFile(JoinPath(view, std::string(kViewLockName)), false);
    if (!lock.ok()) {
      if (!lock.status().IsUnavailable()) return lock.status();
      ++report->old_views_in_use;  // a reader holds it: next time
      continue;
    }
    // Only what ferry placed is removed: a view holding anything else (a
    // user's notes, a folder of their files) is moved aside whole.
    std::vector<std::string> extras;
    std::vector<CacheKey> objects;
    FERRY_RETURN_IF_ERROR(FindViewExtras(env, view, &extras, &objects));
    if (extras.empty() && detach) {
      // Out of the views' names at once (one rename, under DEST's lock);
      // its files go in the cleaner (cleaner.h).
      const std::string trash =
          JoinPath(paths.views, std::string(kTrashPrefix) + e.name + "-" +
                                    std::to_string(env->NowMicros()));
      FERRY_RETURN_IF_ERROR(env->RenameFile(view, trash));
      detach->push_back(Trash{trash, std::move(objects), view});
      ++report->old_views_removed;  // its pins too: the cleaner's
      continue;
    } else if (extras.empty()) {
      FERRY_RETURN_IF_ERROR(RemoveTrash(env, cache, Trash{view, objects, ""}));
    } else {
      const std::string base =
          JoinPath(paths.parent, "." + paths.name + ".ferry-old-" +
                                     std::to_string(std::time(nullptr)));
      std::string aside = base;
      for (int n = 1;; ++n) {
        FERRY_ASSIGN_OR_RETURN(PathKind k, LinkKind(aside));
        if (k == PathKind::kMissing) break;
        aside = base + "." + std::to_string(n);
      }
      FERRY_RETURN_IF_ERROR(env->RenameFile(view, aside));
      FERRY_RETURN_IF_ERROR(env->SyncDir(paths.parent));
      report->kept_old_views.emplace_back(aside, std::move(extras));
    }
    FERRY_RETURN_IF_ERROR(cache->Unpin(view));
    ++report->old_views_removed;
  }
  return Status::OK();
}

}  // namespace ferry::sync
