#include "sync/in_place.h"

#include <map>
#include <set>
#include <unordered_set>

#include "ferry/atomic_file.h"
#include "ferry/hash.h"
#include "ferry/json.h"
#include "formats/manifest/manifest.h"
#include "sync/fs_util.h"

namespace ferry::sync {
namespace {

bool IsStateName(std::string_view top_name) {
  return top_name.substr(0, 11) == ".ferry-sync";
}

// ".<name>.ferry-tmp" beside to: where a file is built before its rename.
std::string TempPath(const std::string& to) {
  size_t slash = to.rfind('/');
  return to.substr(0, slash + 1) + "." + to.substr(slash + 1) + ".ferry-tmp";
}

Status RemoveIfFile(Env* env, const std::string& path, bool* removed) {
  *removed = false;
  FERRY_ASSIGN_OR_RETURN(PathKind k, LinkKind(path));
  if (k != PathKind::kFile && k != PathKind::kLink) return Status::OK();
  Status s = env->RemoveFile(path);
  if (!s.ok() && !s.IsNotFound()) return s;
  *removed = s.ok();
  return Status::OK();
}

// Folders below root, made one at a time; never through a symbolic link.
class DirMaker {
 public:
  DirMaker(Env* env, std::string root) : env_(env), root_(std::move(root)) {}

  // Makes rel (a folder path below root, "" for root itself).
  Status Make(const std::string& rel) {
    if (rel.empty() || ok_.count(rel)) return Status::OK();
    size_t slash = rel.rfind('/');
    if (slash != std::string::npos)
      FERRY_RETURN_IF_ERROR(Make(rel.substr(0, slash)));
    const std::string p = JoinPath(root_, rel);
    FERRY_ASSIGN_OR_RETURN(PathKind k, LinkKind(p));
    if (k == PathKind::kMissing) {
      Status s = env_->CreateDir(p);
      if (!s.ok()) {
        FERRY_ASSIGN_OR_RETURN(k, LinkKind(p));
        if (k != PathKind::kDir) return s;
      }
    } else if (k == PathKind::kLink) {
      return Status::FailedPrecondition(
          p,
          "is a symbolic link on the way of a file of the dataset: not "
          "followed");
    } else if (k != PathKind::kDir) {
      return Status::FailedPrecondition(
          p, "is in the way of a folder of the dataset");
    }
    ok_.insert(rel);
    return Status::OK();
  }

 private:
  Env* env_;
  std::string root_;
  std::unordered_set<std::string> ok_;
};

std::string ParentOf(const std::string& rel) {
  size_t slash = rel.rfind('/');
  return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}

// Removes the folders of rel up to root while they are empty.
void RemoveEmptyParents(Env* env, const std::string& root, std::string rel) {
  for (rel = ParentOf(rel); !rel.empty(); rel = ParentOf(rel))
    if (!env->RemoveDir(JoinPath(root, rel)).ok()) return;
}

// Every file and link below root (rel) that keep does not name; folders
// left empty go too unless a kept file is below them. ferry's state files
// at the top stay.
Status RemoveOthers(Env* env, const std::string& root, const std::string& rel,
                    const std::set<std::string>& keep,
                    const std::set<std::string>& keep_dirs, uint64_t* n) {
  FERRY_ASSIGN_OR_RETURN(
      auto children,
      env->GetChildren(rel.empty() ? root : JoinPath(root, rel)));
  for (const DirEntry& e : children) {
    if (rel.empty() && IsStateName(e.name)) continue;
    const std::string r = rel.empty() ? e.name : rel + "/" + e.name;
    const std::string p = JoinPath(root, r);
    if (e.is_dir && !e.is_link) {
      FERRY_RETURN_IF_ERROR(RemoveOthers(env, root, r, keep, keep_dirs, n));
      if (!keep_dirs.count(r)) (void)env->RemoveDir(p);  // fails if not empty
    } else if (!keep.count(r)) {
      Status s = env->RemoveFile(p);
      if (!s.ok() && !s.IsNotFound()) return s;
      ++*n;
    }
  }
  return Status::OK();
}

std::map<std::string, const Entry*> ByPath(const std::vector<Entry>& files) {
  std::map<std::string, const Entry*> m;
  for (const Entry& e : files) m.emplace(e.path, &e);
  return m;
}

Result<std::vector<Entry>> ReadListOrEmpty(Env* env, const std::string& path,
                                           std::vector<std::string>* warnings) {
  auto list = ReadFileList(env, path);
  if (list.ok()) return list;
  if (list.status().IsCorruption())
    warnings->push_back(path + ": " + list.status().ToString() +
                        ": ignored, no file removed on its word");
  if (list.status().IsNotFound() || list.status().IsCorruption())
    return std::vector<Entry>();  // nothing known: nothing removed
  return list.status();
}

}  // namespace

void RemoveStaleState(Env* env, const std::string& dest) {
  (void)env->RemoveFile(JoinPath(dest, std::string(kPendingListName)));
  RemoveStateTemps(env, dest);
}

void RemoveStateTemps(Env* env, const std::string& dest) {
  auto children = env->GetChildren(dest);
  if (!children.ok()) return;
  for (const DirEntry& e : *children) {
    if (e.is_dir || e.is_link || !IsAtomicTempName(e.name)) continue;
    for (std::string_view state :
         {kViewStateName, kFileListName, kPendingListName, kStampsName}) {
      const std::string tail = "-" + std::string(state);
      if (e.name.size() > tail.size() &&
          e.name.compare(e.name.size() - tail.size(), tail.size(), tail) == 0)
        (void)env->RemoveFile(JoinPath(dest, e.name));
    }
  }
}

namespace {

// Whether every folder on rel's way below root is a real folder (no
// symbolic link, nothing missing).
Result<bool> RealFoldersOnTheWay(const std::string& root,
                                 const std::string& rel) {
  for (size_t slash = rel.find('/'); slash != std::string::npos;
       slash = rel.find('/', slash + 1)) {
    FERRY_ASSIGN_OR_RETURN(PathKind k,
                           LinkKind(JoinPath(root, rel.substr(0, slash))));
    if (k != PathKind::kDir) return false;
  }
  return true;
}

// Removes the file ferry placed at rel (one of was: what a complete or an
// interrupted sync recorded there) if it still is one of them: the same
// inode as its cache object, or the same size and XXH3-128. A file changed
// since, a link or a folder is kept (a warning says so); nothing is
// followed through a symbolic link.
Status RemovePlaced(Env* env, const Cache& cache, const std::string& rk,
                    const std::string& root, const std::string& rel,
                    const std::vector<const Entry*>& was, bool* removed,
                    std::vector<std::string>* warnings) {
  *removed = false;
  const std::string p = JoinPath(root, rel);
  FERRY_ASSIGN_OR_RETURN(bool real, RealFoldersOnTheWay(root, rel));
  if (!real) return Status::OK();  // gone, or a link on the way: not ours
  bool tmp_removed = false;
  FERRY_RETURN_IF_ERROR(RemoveIfFile(env, TempPath(p), &tmp_removed));
  FERRY_ASSIGN_OR_RETURN(PathKind k, LinkKind(p));
  if (k == PathKind::kMissing) return Status::OK();
  auto keep = [&](const std::string& why) {
    warnings->push_back(p + ": " + why +
                        " since ferry placed it: kept (remove it by hand)");
    return Status::OK();
  };
  if (k != PathKind::kFile) return keep("no longer a regular file");
  FERRY_ASSIGN_OR_RETURN(FileInfo cur, env->Stat(p));
  bool ours = false, size_matches = false;
  for (const Entry* e : was) {
    if (cur.size != e->size) continue;
    size_matches = true;
    auto obj = env->Stat(cache.ObjectPath({rk, e->hash, e->size}));
    if (obj.ok() && obj->dev == cur.dev && obj->ino == cur.ino) ours = true;
  }
  if (!ours && size_matches) {  // a copy or a reflink: its bytes tell
    uint64_t n = 0;
    auto h = HashFile(env, p, &n);
    for (const Entry* e : was)
      ours = ours || (h.ok() && *h == e->hash && n == e->size);
  }
  if (!ours) return keep("changed");
  Status s = env->RemoveFile(p);
  if (!s.ok() && !s.IsNotFound()) return s;
  *removed = s.ok();
  return Status::OK();
}

}  // namespace

std::string EncodeFileList(const std::vector<Entry>& files) {
  JsonWriter w;
  w.BeginArray();
  for (const Entry& e : files)
    w.BeginArray()
        .String(e.path)
        .Uint(e.size)
        .String(e.hash.ToHex())
        .Uint(e.mode)
        .String(e.etag)
        .EndArray();
  w.EndArray();
  return w.str() + "\n";
}

Result<std::vector<Entry>> ParseFileList(std::string_view text) {
  FERRY_ASSIGN_OR_RETURN(JsonValue v, ParseJson(text));
  if (!v.is_array()) return Status::Corruption(kFileListName, "not a list");
  std::vector<Entry> files;
  files.reserve(v.items().size());
  for (const JsonValue& f : v.items()) {
    if (!f.is_array() || f.items().size() != 5 || !f.items()[0].is_string())
      return Status::Corruption(kFileListName, "not a file record");
    Entry e;
    e.path = f.items()[0].str();
    // Paths are removed below DEST: held to the manifest's rules.
    Status bad = manifest::CheckPath(e.path);
    if (!bad.ok())
      return Status::Corruption(kFileListName, "path '" + e.path + "': " +
                                                   std::string(bad.message()));
    e.size = f.items()[1].uint();
    auto h = Hash128::FromHex(f.items()[2].str());
    if (!h.ok()) return Status::Corruption(kFileListName, "bad hash");
    e.hash = *h;
    e.mode = static_cast<uint32_t>(f.items()[3].uint());
    e.etag = f.items()[4].str();
    files.push_back(std::move(e));
  }
  return files;
}

Result<std::vector<Entry>> ReadFileList(Env* env, const std::string& path) {
  FERRY_ASSIGN_OR_RETURN(std::string text,
                         ReadOwnFile(env, path, uint64_t{4} << 30));
  return ParseFileList(text);
}

Status UpdateInPlace(Env* env, const Cache& cache,
                     const std::string& remote_key, const std::string& dest,
                     const std::vector<Entry>& files, const ViewState& state,
                     bool remove_others, InPlaceReport* report,
                     const std::function<void(uint64_t)>& on_placed) {
  const std::string list_path = JoinPath(dest, std::string(kFileListName));
  const std::string pending_path =
      JoinPath(dest, std::string(kPendingListName));
  const std::string state_path = JoinPath(dest, std::string(kViewStateName));
  RemoveStateTemps(env, dest);
  FERRY_ASSIGN_OR_RETURN(std::vector<Entry> old,
                         ReadListOrEmpty(env, list_path, &report->warnings));
  FERRY_ASSIGN_OR_RETURN(std::vector<Entry> interrupted,
                         ReadListOrEmpty(env, pending_path, &report->warnings));
  const auto old_by = ByPath(old);
  const auto interrupted_by = ByPath(interrupted);
  const auto new_by = ByPath(files);

  // 1. Not complete from here on (id ""), and every file this run may
  // place recorded before the first is placed.
  ViewState updating = state;
  updating.id.clear();
  updating.etag.clear();  // never taken for a no-op
  FERRY_RETURN_IF_ERROR(
      WriteFileAtomically(env, state_path, EncodeViewState(updating)));
  std::vector<Entry> pending = files;
  for (const Entry& e : interrupted)
    if (!new_by.count(e.path)) pending.push_back(e);
  FERRY_RETURN_IF_ERROR(
      WriteFileAtomically(env, pending_path, EncodeFileList(pending)));

  // 2. Each file: kept if it is already the new one, else replaced by one
  // rename. A file the last complete sync stamped counts as recorded only
  // while its stamp is unchanged (not removed, rewritten or replaced since).
  auto stamps = ReadStamps(env, dest);
  DirMaker dirs(env, dest);
  for (const Entry& e : files) {
    const std::string to = JoinPath(dest, e.path);
    const std::string from = cache.ObjectPath({remote_key, e.hash, e.size});
    FERRY_ASSIGN_OR_RETURN(PathKind k, LinkKind(to));
    if (k == PathKind::kOther || k == PathKind::kLink) {
      // A FIFO, a device or a socket at the file's name (or a link to one)
      // is not a file to replace: the rename would put a plain file in its
      // place. The sync fails naming it, as for a link on the way.
      Status odd = CheckNotSpecialFile(env, to);
      if (!odd.ok()) return Status::FailedPrecondition(odd.message());
    }
    if (k == PathKind::kFile) {
      auto cur = env->Stat(to);
      auto obj = env->Stat(from);
      bool same_inode =
          cur.ok() && obj.ok() && cur->dev == obj->dev && cur->ino == obj->ino;
      // As placed by the last complete sync, and not touched by an
      // interrupted one that was placing other bytes there.
      auto o = old_by.find(e.path);
      auto i = interrupted_by.find(e.path);
      bool recorded = o != old_by.end() && o->second->hash == e.hash &&
                      o->second->size == e.size && cur.ok() &&
                      cur->size == e.size &&
                      (i == interrupted_by.end() || i->second->hash == e.hash);
      if (recorded && stamps.ok()) {
        auto st = stamps->find(e.path);
        auto now = StampOf(to);
        recorded = st != stamps->end() && now.ok() && *now == st->second;
      }
      if (same_inode || recorded) {
        ++report->kept;
        continue;
      }
    }
    FERRY_RETURN_IF_ERROR(dirs.Make(ParentOf(e.path)));
    const std::string tmp = TempPath(to);
    bool gone = false;
    FERRY_RETURN_IF_ERROR(RemoveIfFile(env, tmp, &gone));
    auto how = PlaceObject(env, from, tmp, e.hash, e.size, e.mode & 0777);
    if (!how.ok()) return how.status().WithContext(e.path);
    Status s = env->RenameFile(tmp, to);
    if (!s.ok()) {
      (void)env->RemoveFile(tmp);
      return s.WithContext(e.path);
    }
    ++report->placed;
    if (on_placed) on_placed(report->placed);
    if (*how == PlaceHow::kCopied) ++report->copied;
    if (*how == PlaceHow::kReflinked) ++report->reflinked;
  }

  // 3. What ferry placed (or an interrupted run may have) that this
  // version drops, if it still is what was placed; with remove_others,
  // everything else too.
  std::map<std::string, std::vector<const Entry*>> dropped;
  for (const auto* list : {&old, &interrupted})
    for (const Entry& e : *list)
      if (!new_by.count(e.path)) dropped[e.path].push_back(&e);
  for (const auto& [path, was] : dropped) {
    bool removed = false;
    FERRY_RETURN_IF_ERROR(RemovePlaced(env, cache, remote_key, dest, path, was,
                                       &removed, &report->warnings));
    if (!removed) continue;
    ++report->removed;
    RemoveEmptyParents(env, dest, path);
  }
  if (remove_others) {
    std::set<std::string> keep, keep_dirs;
    for (const Entry& e : files) {
      keep.insert(e.path);
      for (std::string d = ParentOf(e.path); !d.empty(); d = ParentOf(d))
        if (!keep_dirs.insert(d).second) break;
    }
    FERRY_RETURN_IF_ERROR(
        RemoveOthers(env, dest, "", keep, keep_dirs, &report->others_removed));
  }

  // 4. The files are durable before the state says they are there.
  if (report->placed + report->removed + report->others_removed > 0)
    FERRY_RETURN_IF_ERROR(env->SyncFileSystem(dest));
  FERRY_RETURN_IF_ERROR(
      WriteFileAtomically(env, list_path, EncodeFileList(files)));
  // What the next no-op compares (ViewIntact), as in a view.
  FERRY_RETURN_IF_ERROR(WriteStamps(env, dest, files));
  FERRY_RETURN_IF_ERROR(
      WriteFileAtomically(env, state_path, EncodeViewState(state)));
  Status s = env->RemoveFile(pending_path);
  return s.IsNotFound() ? Status::OK() : s;
}

}  // namespace ferry::sync
