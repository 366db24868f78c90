#include "remote/file_backend.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "ferry/atomic_file.h"
#include "ferry/walk.h"

namespace ferry::remote {
namespace {

constexpr std::string_view kLockName = ".ferry-lock";
constexpr size_t kChunk = 1 << 20;

// Names that belong to the backend itself, not to any object.
bool IsInternalName(std::string_view name) {
  return name == kLockName || IsAtomicTempName(name);
}

std::string_view LastPart(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// A key (or the folder part of a listing prefix) must name a path below the
// root: relative, no empty, "." or ".." segment, no NUL.
Status CheckPath(std::string_view key, std::string_view what) {
  auto bad = [&](const char* why) {
    return Status::InvalidArgument(std::string(what) + " '" + std::string(key) +
                                   "' " + why);
  };
  if (key.find('\0') != std::string_view::npos) return bad("contains a NUL");
  if (!key.empty() && key.front() == '/') return bad("is an absolute path");
  size_t start = 0;
  while (start < key.size()) {
    size_t end = key.find('/', start);
    if (end == std::string_view::npos) end = key.size();
    std::string_view part = key.substr(start, end - start);
    if (part.empty()) return bad("has an empty path segment (not a file name)");
    if (part == "." || part == "..")
      return bad("has a '.' or '..' segment (outside the folder)");
    start = end + 1;
  }
  if (!key.empty() && key.back() == '/')
    return bad("ends with '/' (not a file name)");
  return Status::OK();
}

Status CheckKey(std::string_view key) {
  FERRY_RETURN_IF_ERROR(CheckPath(key, "key"));
  if (IsInternalName(LastPart(key)))
    return Status::InvalidArgument("key '" + std::string(key) +
                                   "' is a name ferry uses for its own "
                                   "temporary and lock files");
  return Status::OK();
}

// Why a listing takes no object from a FIFO, device or socket (as
// ferry/walk.h says it).
Status NotAFile(const FileInfo& info) {
  return Status::NotSupported(std::string("not a regular file (") +
                              FileTypeName(info.type) + ")");
}

class FileBackend : public Backend,
                    public UnpublishedWriter,
                    public StaleTempSweeper {
 public:
  FileBackend(std::string root, std::string describe, Env* env)
      : root_(std::move(root)), describe_(std::move(describe)), env_(env) {
    caps_.ranges = caps_.listing = caps_.writes = true;
    caps_.conditional_reads = caps_.conditional_writes = true;
  }

  const BackendCaps& caps() const override { return caps_; }
  std::string Describe() const override { return describe_; }

  Status List(std::string_view prefix, const ListOptions& options,
              const std::function<Status(const ObjectInfo&)>& visit) override {
    // The folder the prefix points into; its last part filters names.
    const size_t slash = prefix.rfind('/');
    const std::string dir_key(
        slash == std::string_view::npos ? "" : prefix.substr(0, slash));
    FERRY_RETURN_IF_ERROR(CheckPath(dir_key, "listing prefix"));
    const std::string dir = PathOf(dir_key);
    auto info = env_->Stat(dir);
    if (!info.ok()) {
      if (!info.status().IsNotFound()) return info.status();
      // Nothing there, unless the URL or a folder on the way to the
      // prefix is a dangling link: told, as a listed folder tells one (gc
      // read a tags folder that was one as no tags).
      if (options.problem) {
        if (prefix.empty() && IsDanglingLink(root_))
          options.problem("", Status::NotFound("dangling link"));
        for (size_t end = 0; !dir_key.empty() && end != std::string::npos;) {
          end = dir_key.find('/', end + 1);
          const std::string part = dir_key.substr(0, end);
          if (env_->Stat(PathOf(part)).ok()) continue;
          if (IsDanglingLink(PathOf(part)))
            options.problem(part, Status::NotFound("dangling link"));
          break;
        }
      }
      return Status::OK();
    }
    // A link out of the root, or a file where the prefix has a folder:
    // nothing here (options.problem told, so that gc does not read a tags
    // folder that is there but cannot be read as none).
    if (!dir_key.empty()) {
      auto real = Resolve(dir_key);
      if (!real.ok()) {
        if (options.problem) options.problem(dir_key, real.status());
        return Status::OK();
      }
    }
    if (!info->is_dir) {  // the root is one file: its key is ""
      if (!dir_key.empty() || !prefix.empty()) {
        if (options.problem && !dir_key.empty())
          options.problem(dir_key, Status::NotSupported("not a folder"));
        return Status::OK();
      }
      // A FIFO, a device, a socket the URL names: told, never opened.
      if (info->type != FileType::kRegular) {
        if (options.problem) options.problem("", NotAFile(*info));
        return Status::OK();
      }
      return VisitFile("", options, visit);
    }
    return options.recursive ? ListRecursive(dir_key, prefix, options, visit)
                             : ListOneLevel(dir_key, prefix, options, visit);
  }

  Result<ObjectInfo> Stat(std::string_view key) override {
    FERRY_RETURN_IF_ERROR(CheckKey(key));
    FERRY_RETURN_IF_ERROR(Resolve(key).status());
    FERRY_ASSIGN_OR_RETURN(FileInfo info, env_->Stat(PathOf(key)));
    if (info.type != FileType::kRegular)
      return Status::NotFound(Name(key), "not a file");
    return InfoOf(key, info);
  }

  Result<bool> FolderExists() override {
    auto info = env_->Stat(root_);
    if (!info.ok() && info.status().IsNotFound()) return false;
    FERRY_RETURN_IF_ERROR(info.status());
    return info->is_dir;
  }

  Status Read(std::string_view key, const ByteRange& range,
              const ReadOptions& options, ByteSink* sink) override {
    FERRY_RETURN_IF_ERROR(CheckKey(key));
    // Stat before and after opening: when both give the expected ETag, the
    // file opened is that version (a replacement has a new inode). The path
    // opened is the one with its links resolved, checked inside the root.
    FERRY_ASSIGN_OR_RETURN(ObjectInfo before, Stat(key));
    FERRY_ASSIGN_OR_RETURN(const std::string path, Resolve(key));
    FERRY_ASSIGN_OR_RETURN(auto file, env_->NewRandomAccessFile(path));
    FERRY_ASSIGN_OR_RETURN(ObjectInfo after, Stat(key));
    if (!options.if_match.empty() &&
        (before.etag != options.if_match || after.etag != options.if_match)) {
      return Status::FailedPrecondition(
          Name(key), "object changed (ETag " + after.etag + ", expected " +
                         options.if_match + ")");
    }
    const uint64_t size = after.size;
    if (range.offset > size) {
      return Status::IOError(Name(key), "range starts at " +
                                            std::to_string(range.offset) +
                                            ", beyond the end of the object (" +
                                            std::to_string(size) + " bytes)");
    }
    uint64_t end = size;
    if (range.length != ByteRange::kToEnd) {
      end = range.offset + range.length;
      if (end > size || end < range.offset) {
        return Status::IOError(Name(key),
                               "range ends beyond the end of the object (" +
                                   std::to_string(size) + " bytes)");
      }
    }
    std::vector<char> buf(static_cast<size_t>(
        std::min<uint64_t>(kChunk, std::max<uint64_t>(end - range.offset, 1))));
    for (uint64_t pos = range.offset; pos < end;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), end - pos));
      std::string_view got;
      FERRY_RETURN_IF_ERROR(file->Read(pos, n, &got, buf.data()));
      if (got.empty())
        return Status::FailedPrecondition(Name(key),
                                          "object shrank while read");
      FERRY_RETURN_IF_ERROR(sink->Append(got));
      pos += got.size();
    }
    return Status::OK();
  }

  Result<ObjectInfo> Write(std::string_view key, ByteSource* source,
                           const WriteOptions& options) override {
    FERRY_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> w,
                           WriteUnpublished(key, source));
    if (options.if_none_match || !options.if_match.empty()) {
      FERRY_ASSIGN_OR_RETURN(
          auto lock,
          env_->LockFile(JoinPath(DirName(PathOf(key)), kLockName), true));
      FERRY_RETURN_IF_ERROR(CheckWriteCondition(key, options));
      FERRY_RETURN_IF_ERROR(w->Commit());
      return Stat(key);
    }
    FERRY_RETURN_IF_ERROR(w->Commit());
    return Stat(key);
  }

  const std::string& root() const override { return root_; }

  Result<std::unique_ptr<AtomicFileWriter>> WriteUnpublished(
      std::string_view key, ByteSource* source) override {
    FERRY_RETURN_IF_ERROR(CheckKey(key));
    const std::string path = PathOf(key);
    const std::string dir = DirName(path);
    FERRY_RETURN_IF_ERROR(CheckFolderInside(key));
    FERRY_RETURN_IF_ERROR(env_->CreateDirs(dir));
    SweepOnce(dir);
    auto created = AtomicFileWriter::Create(env_, path);
    if (!created.ok() && created.status().IsNotFound()) {
      // A Delete removed the (then empty) folder meanwhile: once more.
      FERRY_RETURN_IF_ERROR(env_->CreateDirs(dir));
      created = AtomicFileWriter::Create(env_, path);
    }
    if (!created.ok()) return created.status();
    std::unique_ptr<AtomicFileWriter> w = std::move(*created);
    std::vector<char> buf(static_cast<size_t>(
        std::min<uint64_t>(kChunk, std::max<uint64_t>(source->size(), 1))));
    for (uint64_t pos = 0; pos < source->size();) {
      size_t n = static_cast<size_t>(
          std::min<uint64_t>(buf.size(), source->size() - pos));
      size_t got = 0;
      FERRY_RETURN_IF_ERROR(source->ReadAt(pos, n, buf.data(), &got));
      if (got == 0) {
        return Status::IOError(
            Name(key), "the source ended after " + std::to_string(pos) +
                           " of " + std::to_string(source->size()) + " bytes");
      }
      FERRY_RETURN_IF_ERROR(w->Append(std::string_view(buf.data(), got)));
      pos += got;
    }
    return w;
  }

  StaleTempSweep RemoveStaleTempsBelow(std::string_view dir_key,
                                       bool dry_run) override {
    if (!CheckPath(dir_key, "folder").ok() || !Resolve(dir_key).ok()) return {};
    StaleTempOptions o;
    o.recursive = true;
    o.dry_run = dry_run;
    o.shared = true;
    return SweepStaleTemps(env_, PathOf(dir_key), o);
  }

  Status Delete(std::string_view key) override {
    return DeleteIfPresent(key).status();
  }

  // One unlink: of two deleters at once, one removes the file and the other
  // finds it gone.
  Result<bool> DeleteIfPresent(std::string_view key) override {
    FERRY_RETURN_IF_ERROR(CheckKey(key));
    FERRY_RETURN_IF_ERROR(CheckFolderInside(key));
    Status s = env_->RemoveFile(PathOf(key));
    if (!s.ok() && !s.IsNotFound()) return s;
    const bool removed = s.ok();
    // A folder exists only while it holds objects (as in a bucket): remove
    // the ones this emptied, up to the root. One still in use stays.
    std::string rel(key);
    for (size_t slash; (slash = rel.rfind('/')) != std::string::npos;) {
      rel.resize(slash);
      const std::string dir = PathOf(rel);
      auto children = env_->GetChildren(dir);
      if (!children.ok()) break;
      bool only_lock = std::all_of(
          children->begin(), children->end(),
          [](const DirEntry& e) { return !e.is_dir && e.name == kLockName; });
      if (!only_lock) break;
      if (!children->empty() &&
          !env_->RemoveFile(JoinPath(dir, kLockName)).ok())
        break;
      if (!env_->RemoveDir(dir).ok()) break;
    }
    return removed;
  }

 private:
  // The root with its links resolved (a root given as a link is the folder
  // it names). Computed once it exists.
  Result<std::string> RealRoot() {
    std::lock_guard<std::mutex> lock(mu_);
    if (real_root_.empty()) {
      FERRY_ASSIGN_OR_RETURN(real_root_, env_->RealPath(root_));
    }
    return real_root_;
  }

  bool Inside(const std::string& real, const std::string& real_root) const {
    return real == real_root || PathIsBelow(real, real_root);
  }

  // key's path with every symbolic link resolved, when that is inside the
  // root; NotFound when a link on the way leads outside it (never followed:
  // a link to /etc/shadow in a served folder must not serve it), or the
  // path is not there. The root itself (key "") is what the URL names.
  Result<std::string> Resolve(std::string_view key) {
    const std::string path = PathOf(key);
    if (key.empty()) return path;
    FERRY_ASSIGN_OR_RETURN(std::string real_root, RealRoot());
    FERRY_ASSIGN_OR_RETURN(std::string real, env_->RealPath(path));
    if (!Inside(real, real_root)) return LeadsOutside(key);
    return real;
  }

  Status LeadsOutside(std::string_view key) const {
    return Status::NotFound(Name(key), "a symbolic link that leads outside " +
                                           describe_ + ": not followed");
  }

  // path (not there by stat) is a symbolic link: its folder has an entry
  // by its name. The Env has no lstat; this runs only for a missing root.
  bool IsDanglingLink(std::string_view path) {
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    auto children = env_->GetChildren(DirName(path));
    if (!children.ok()) return false;
    const std::string_view name = LastPart(path);
    return std::any_of(
        children->begin(), children->end(),
        [&](const DirEntry& e) { return e.is_link && e.name == name; });
  }

  // Before a write or delete of key: its folder (or the nearest existing
  // one above it) must be inside the root where it is on disk. One look
  // per folder, its real path, tells both: not there (nor a dangling
  // link, which mkdir never passes through), the one above is asked;
  // there, it is inside the root or not. (Resolve's NotFound, then a stat
  // to tell "outside" from "missing", was two looks: a folder another
  // writer made between them, in a new bucket, was taken for one outside.)
  Status CheckFolderInside(std::string_view key) {
    std::string_view dir = key;
    while (true) {
      size_t slash = dir.rfind('/');
      if (slash == std::string_view::npos) return Status::OK();  // the root
      dir = dir.substr(0, slash);
      auto real = env_->RealPath(PathOf(dir));
      if (!real.ok()) {
        if (real.status().IsNotFound()) continue;
        return real.status();  // unreadable
      }
      FERRY_ASSIGN_OR_RETURN(std::string real_root, RealRoot());
      if (!Inside(*real, real_root)) return LeadsOutside(dir);
      return Status::OK();
    }
  }

  // The first write into a folder removes what killed writers left there
  // (a kill -9 of put or publish); later writes into it do not look again.
  void SweepOnce(const std::string& dir) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!swept_.insert(dir).second) return;
    }
    StaleTempOptions o;
    o.shared = true;
    RemoveStaleTemps(env_, dir, o);
  }

  std::string PathOf(std::string_view key) const {
    return key.empty() ? root_ : JoinPath(root_, key);
  }
  std::string Name(std::string_view key) const {
    if (key.empty()) return describe_;
    return JoinPath(describe_, key);
  }

  ObjectInfo InfoOf(std::string_view key, const FileInfo& info) const {
    ObjectInfo o;
    o.key = std::string(key);
    o.size = info.size;
    o.mtime_ns = info.mtime_ns;
    o.etag = FileEtag(info);
    return o;
  }

  Status CheckWriteCondition(std::string_view key, const WriteOptions& o) {
    auto cur = Stat(key);
    if (!cur.ok() && !cur.status().IsNotFound()) return cur.status();
    if (o.if_none_match && cur.ok())
      return Status::FailedPrecondition(Name(key), "already exists");
    if (!o.if_match.empty()) {
      if (!cur.ok())
        return Status::FailedPrecondition(Name(key), "no longer exists");
      if (cur->etag != o.if_match) {
        return Status::FailedPrecondition(
            Name(key), "object changed (ETag " + cur->etag + ", expected " +
                           o.if_match + ")");
      }
    }
    return Status::OK();
  }

  // Stats one listed file and visits it; a file gone meanwhile is skipped.
  // A link that leads outside the root is skipped (options.problem told).
  Status VisitFile(const std::string& key, const ListOptions& options,
                   const std::function<Status(const ObjectInfo&)>& visit) {
    auto info = env_->Stat(PathOf(key));
    if (!info.ok()) {
      if (info.status().IsNotFound()) return Status::OK();
      return info.status();
    }
    if (info->type != FileType::kRegular) return Status::OK();
    if (!key.empty()) {
      auto real = Resolve(key);
      if (!real.ok()) {
        if (options.problem && env_->Stat(PathOf(key)).ok())
          options.problem(key, real.status());
        return Status::OK();
      }
    }
    return visit(InfoOf(key, *info));
  }

  Status ListRecursive(const std::string& dir_key, std::string_view prefix,
                       const ListOptions& options,
                       const std::function<Status(const ObjectInfo&)>& visit) {
    FERRY_ASSIGN_OR_RETURN(WalkResult walk, WalkTree(env_, PathOf(dir_key)));
    if (!walk.errors.empty() && !options.problem) {
      const WalkProblem& p = walk.errors.front();
      return Status::IOError(Name(JoinKey(dir_key, p.path)),
                             p.status.ToString());
    }
    if (options.problem) {
      for (const auto* list : {&walk.errors, &walk.skipped}) {
        for (const WalkProblem& p : *list) {
          std::string key = JoinKey(dir_key, p.path);
          if (IsInternalName(LastPart(p.path)) ||
              key.compare(0, prefix.size(), prefix) != 0)
            continue;
          options.problem(key, p.status);
        }
      }
    }
    // The walk's order (bytewise by relative path) is key order.
    for (const std::string& rel : walk.files) {
      if (IsInternalName(LastPart(rel))) continue;
      std::string key = JoinKey(dir_key, rel);
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      FERRY_RETURN_IF_ERROR(VisitFile(key, options, visit));
    }
    return Status::OK();
  }

  Status ListOneLevel(const std::string& dir_key, std::string_view prefix,
                      const ListOptions& options,
                      const std::function<Status(const ObjectInfo&)>& visit) {
    FERRY_ASSIGN_OR_RETURN(auto children, env_->GetChildren(PathOf(dir_key)));
    struct Entry {
      std::string key;
      bool is_dir;
    };
    std::vector<Entry> entries;
    for (const DirEntry& e : children) {
      if (IsInternalName(e.name)) continue;
      std::string key = JoinKey(dir_key, e.name);
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      bool is_dir = e.is_dir;
      auto skip = [&](const Status& why) {
        if (options.problem) options.problem(key, why);
      };
      if (e.is_link || (!e.is_dir && !e.is_regular)) {
        // A link to a file is one; to a folder, not followed; FIFOs,
        // devices, sockets are none (told as ferry/walk.h tells them).
        auto info = env_->Stat(PathOf(key));
        if (!info.ok()) {
          skip(e.is_link && info.status().IsNotFound()
                   ? Status::NotFound("dangling link")
                   : info.status());
          continue;
        }
        if (info->type == FileType::kDirectory) {
          skip(Status::NotSupported("link to a directory (not followed)"));
          continue;
        }
        if (info->type != FileType::kRegular) {
          skip(NotAFile(*info));
          continue;
        }
      }
      if (is_dir) key += '/';
      entries.push_back({std::move(key), is_dir});
    }
    // Key order: "a-b" comes before the folder "a/".
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.key < b.key; });
    for (const Entry& e : entries) {
      if (e.is_dir) {
        ObjectInfo o;
        o.key = e.key;
        o.is_prefix = true;
        FERRY_RETURN_IF_ERROR(visit(o));
      } else {
        FERRY_RETURN_IF_ERROR(VisitFile(e.key, options, visit));
      }
    }
    return Status::OK();
  }

  static std::string JoinKey(std::string_view dir_key, std::string_view rel) {
    if (dir_key.empty()) return std::string(rel);
    if (rel.empty()) return std::string(dir_key);
    std::string k(dir_key);
    k += '/';
    k += rel;
    return k;
  }

  std::string root_;
  std::string describe_;
  Env* env_;
  BackendCaps caps_;
  std::mutex mu_;
  std::string real_root_;        // guarded by mu_; "" until the root exists
  std::set<std::string> swept_;  // guarded by mu_: folders SweepOnce did
};

}  // namespace

std::string FileEtag(const FileInfo& info) {
  char buf[80];
  std::snprintf(buf, sizeof buf, "\"%" PRIx64 "-%" PRIx64 "-%" PRIx64 "\"",
                info.size, static_cast<uint64_t>(info.mtime_ns), info.ino);
  return buf;
}

std::unique_ptr<Backend> NewFileBackend(std::string root, std::string describe,
                                        Env* env) {
  return std::make_unique<FileBackend>(std::move(root), std::move(describe),
                                       env);
}

}  // namespace ferry::remote
