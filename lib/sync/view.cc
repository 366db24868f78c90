#include "sync/view.h"

#include <ctime>
#include <unordered_set>

#include "ferry/atomic_file.h"
#include "ferry/json.h"
#include "sync/fs_util.h"

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
      ReadFileToString(env, JoinPath(view, std::string(kViewStateName)),
                       1 << 20));
  return ParseViewState(json);
}

Result<std::unique_ptr<FileLock>> LockDest(Env* env, const DestPaths& paths,
                                           bool in_place) {
  const std::string dir = in_place ? paths.dest : paths.views;
  FERRY_RETURN_IF_ERROR(env->CreateDirs(dir));
  auto lock = env->LockFile(
      JoinPath(dir, in_place ? ".ferry-sync.lock" : ".sync.lock"), false);
  if (!lock.ok() && lock.status().IsUnavailable())
    return Status::Unavailable(paths.dest,
                               "another ferry sync into it is running");
  return lock;
}

Status BuildView(Env* env, const Cache& cache, const std::string& remote_key,
                 const std::string& view, const std::vector<Entry>& files,
                 const ViewState& state, BuildReport* report) {
  std::unordered_set<std::string> dirs;
  for (const Entry& e : files) {
    const std::string to = JoinPath(view, e.path);
    std::string dir = DirName(to);
    if (dirs.insert(dir).second) FERRY_RETURN_IF_ERROR(env->CreateDirs(dir));
    const std::string from = cache.ObjectPath({remote_key, e.hash, e.size});
    auto how = PlaceObject(env, from, to, e.hash, e.size, e.mode & 0777);
    if (!how.ok()) return how.status().WithContext(e.path);
    if (*how == PlaceHow::kCopied) ++report->copied;
    if (*how == PlaceHow::kReflinked) ++report->reflinked;
  }
  FERRY_RETURN_IF_ERROR(
      WriteFileAtomically(env, JoinPath(view, std::string(kViewLockName)), ""));
  if (report->copied + report->reflinked > 0)
    FERRY_RETURN_IF_ERROR(env->SyncFileSystem(view));
  return WriteFileAtomically(env, JoinPath(view, std::string(kViewStateName)),
                             EncodeViewState(state));
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

Status RemoveOldViews(Env* env, Cache* cache, const DestPaths& paths,
                      const std::string& keep, uint64_t* removed,
                      uint64_t* in_use) {
  FERRY_ASSIGN_OR_RETURN(auto children, env->GetChildren(paths.views));
  for (const DirEntry& e : children) {
    if (!e.is_dir || e.is_link || e.name.empty() || e.name[0] == '.') continue;
    const std::string view = JoinPath(paths.views, e.name);
    if (view == keep) continue;
    auto lock =
        env->LockFile(JoinPath(view, std::string(kViewLockName)), false);
    if (!lock.ok()) {
      if (!lock.status().IsUnavailable()) return lock.status();
      ++*in_use;  // a reader holds it: next time
      continue;
    }
    FERRY_RETURN_IF_ERROR(RemoveTree(env, view));
    FERRY_RETURN_IF_ERROR(cache->Unpin(view));
    ++*removed;
  }
  return Status::OK();
}

}  // namespace ferry::sync
