#include "sync/install.h"

#include "ferry/atomic_file.h"
#include "sync/fs_util.h"
#include "sync/in_place.h"

namespace ferry::sync {

Status CheckDestMode(const DestPaths& paths, DestKind kind, bool in_place) {
  if (in_place && kind == DestKind::kView)
    return Status::InvalidArgument(
        paths.dest,
        "is a view made by ferry sync without --in-place (a link to " +
            paths.views +
            "/...): --in-place needs a plain folder; remove the link and "
            "that folder first, or sync without --in-place");
  if (!in_place && kind == DestKind::kInPlace)
    return Status::InvalidArgument(
        paths.dest,
        "was synced with --in-place (it holds .ferry-sync.json): pass "
        "--in-place, or remove its .ferry-sync* files to make it a plain "
        "folder whose files the next sync adopts");
  return Status::OK();
}

Status CheckCacheApart(const DestPaths& paths, const std::string& cache_dir) {
  FERRY_ASSIGN_OR_RETURN(std::string cache, ResolvedPath(cache_dir));
  FERRY_ASSIGN_OR_RETURN(std::string parent, ResolvedPath(paths.parent));
  // DEST itself may be a link to its view: its place is parent/name.
  const std::string dest = JoinPath(parent, paths.name);
  const std::string views = JoinPath(parent, "." + paths.name + ".ferry-views");
  std::string real_dest = dest;
  if (auto r = ResolvedPath(paths.dest); r.ok()) real_dest = *r;
  for (const std::string& d : {dest, views, real_dest}) {
    if (IsWithin(cache, d))
      return Status::InvalidArgument(
          paths.dest, "holds the cache " + cache_dir + " (at " + cache +
                          "): a sync would move or delete it; put the cache "
                          "outside DEST (--cache)");
    if (IsWithin(d, cache))
      return Status::InvalidArgument(
          paths.dest, "is inside the cache " + cache_dir + " (at " + cache +
                          "): a sync would overwrite or delete cached "
                          "objects; sync into a folder outside the cache");
  }
  return Status::OK();
}

Result<bool> PrepareView(Env* env, bool in_place, std::string* view,
                         const std::string& id, const std::string& remote_key,
                         const std::string& sel_key) {
  if (in_place) return false;
  const std::string state_path = JoinPath(*view, std::string(kViewStateName));
  if (env->FileExists(state_path)) {
    auto st = ReadOwnFile(env, state_path, 1 << 20);
    auto parsed =
        st.ok() ? ParseViewState(*st) : Result<ViewState>(st.status());
    if (parsed.ok() && parsed->id == id && parsed->remote_key == remote_key &&
        parsed->selection == sel_key)
      return true;
    *view += ".other-" + std::to_string(env->NowMicros());
  } else {
    FERRY_RETURN_IF_ERROR(RemoveTree(env, *view));  // half-built
  }
  FERRY_RETURN_IF_ERROR(env->CreateDirs(*view));
  return false;
}

ViewPins::~ViewPins() {
  if (pinned_ && !in_place_ &&
      !env_->FileExists(JoinPath(view_, std::string(kViewStateName))))
    (void)cache_->Unpin(view_);  // best effort: a later Evict may retry
}

Status ViewPins::Pin(const std::vector<CacheKey>& keys) {
  FERRY_RETURN_IF_ERROR(cache_->Pin(view_, keys));
  pinned_ = true;
  return Status::OK();
}

HalfBuiltView::~HalfBuiltView() {
  if (view_.empty()) return;
  if (env_->FileExists(JoinPath(view_, std::string(kViewStateName)))) return;
  std::string cur;
  auto kind = InspectDest(env_, paths_, &cur);
  if (!kind.ok() || (*kind == DestKind::kView && cur == view_)) return;
  if (!RemoveTree(env_, view_).ok()) return;  // best effort
  (void)env_->RemoveDir(paths_.views);        // fails unless empty
}

Result<bool> DestIntact(Env* env, const DestPaths& paths,
                        const std::string& cache_dir,
                        const std::string& remote_key, bool in_place,
                        bool dry_run) {
  std::string v, fresh;
  FERRY_RETURN_IF_ERROR(InspectDest(env, paths, &v).status());
  FERRY_ASSIGN_OR_RETURN(bool intact,
                         ViewIntact(env, v, cache_dir, remote_key,
                                    dry_run ? nullptr : &fresh, dry_run));
  if (!fresh.empty()) {
    auto lock = LockDest(env, paths, in_place);
    std::string now;
    if (lock.ok() && InspectDest(env, paths, &now).ok() && now == v)
      FERRY_RETURN_IF_ERROR(RefreshStamps(env, v, fresh));
  }
  return intact;
}

Status RecordRef(Env* env, const DestPaths& paths, bool in_place,
                 const ViewState& checked, const std::string& ref,
                 const std::string& etag) {
  if (checked.ref == ref && checked.etag == etag) return Status::OK();
  auto lock = LockDest(env, paths, in_place);
  if (!lock.ok() && lock.status().IsUnavailable()) return Status::OK();
  FERRY_RETURN_IF_ERROR(lock.status());
  std::string view;
  FERRY_RETURN_IF_ERROR(InspectDest(env, paths, &view).status());
  auto now = CurrentState(env, paths);
  if (!now.ok() || EncodeViewState(*now) != EncodeViewState(checked))
    return Status::OK();
  ViewState state = checked;
  state.ref = ref;
  state.etag = etag;
  return WriteFileAtomically(env, JoinPath(view, std::string(kViewStateName)),
                             EncodeViewState(state));
}

ViewState NewState(const SyncOptions& o, const std::string& remote_key,
                   const std::string& etag, const std::string& id,
                   const std::string& cache_dir, const std::string& sel_key,
                   const SyncReport& report) {
  ViewState state;
  state.remote = UrlWithoutSecrets(o.remote);  // no password on disk
  state.remote_key = remote_key;
  state.ref = o.ref;
  state.etag = etag;
  state.id = id;
  state.cache = cache_dir;
  state.selection = sel_key;
  state.rank = o.selection.rank;
  state.world_size = o.selection.world_size;
  state.filters = o.selection.filters;
  state.files = report.files;
  state.bytes = report.bytes;
  state.in_place = o.in_place;
  state.unmanaged = report.unmanaged;
  return state;
}

Status Install(Env* env, Cache* cache, const SyncOptions& o,
               const DestPaths& paths, DestKind kind,
               const std::string& cur_view, const std::string& view, bool reuse,
               const std::vector<Entry>& files, const ViewState& state,
               SyncReport* report, ViewBuilder* builder,
               std::vector<Trash>* detach) {
  if (o.in_place) {
    InPlaceReport ir;
    FERRY_RETURN_IF_ERROR(UpdateInPlace(env, *cache, state.remote_key,
                                        paths.dest, files, state,
                                        o.remove_replaced, &ir, o.on_placed));
    report->files_placed = ir.placed;
    report->files_kept = ir.kept;
    report->files_removed = ir.removed + ir.others_removed;
    report->files_copied = ir.copied;
    report->files_reflinked = ir.reflinked;
    report->warnings.insert(report->warnings.end(), ir.warnings.begin(),
                            ir.warnings.end());
    // Links placed (and removed) changed the objects' ctime: recorded, so
    // the next lookup does not re-hash them.
    std::vector<CacheKey> keys;
    keys.reserve(files.size());
    for (const Entry& e : files)
      keys.push_back(CacheKey{state.remote_key, e.hash, e.size});
    return cache->RestampObjects(keys);
  }
  if (!reuse) {
    if (state.unmanaged)
      FERRY_RETURN_IF_ERROR(
          WriteFileAtomically(env, JoinPath(view, std::string(kFileListName)),
                              EncodeFileList(files)));
    BuildReport br;
    FERRY_RETURN_IF_ERROR(builder ? builder->Finish(state, &br)
                                  : BuildView(env, cache, state.remote_key,
                                              view, files, state, &br));
    report->files_copied = br.copied;
    report->files_reflinked = br.reflinked;
  }
  if (!(kind == DestKind::kView && cur_view == view)) {
    FERRY_RETURN_IF_ERROR(SwapDest(env, paths, view, kind, o.remove_replaced,
                                   &report->replaced_folder));
  }
  return RemoveOldViews(env, cache, paths, view, report, detach);
}

}  // namespace ferry::sync
