#include "sync/tree_scan.h"

#include <optional>

#include "core/ordered_pipeline.h"
#include "ferry/delta.h"
#include "ferry/sync.h"

namespace ferry {
namespace sync {
namespace {

constexpr size_t kReadChunk = 1 << 20;
// librsync's signature job is fed this much at a time (1 MiB pieces made it
// 0.63x as fast, docs/delta.md); the hash takes the same pieces, so each is
// still in the CPU's cache for the second pass over it.
constexpr size_t kSignPiece = 64 << 10;

bool HasWorkingPart(std::string_view path) {
  if (IsFerryWorkingFile(path)) return true;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (IsFerryWorkingName(path.substr(start, end - start))) return true;
    start = end + 1;
  }
  return false;
}

uint32_t ModeOf(const FileInfo& info) {
  // Only whether it is executable: the umask of the machine that wrote the
  // tree must not make a new version.
  return (info.mode & 0111) ? 0755 : 0644;
}

struct Hashed {
  Status status;
  manifest::File entry;
  int64_t started_ns = 0;
  std::string signature;  // its file, when one was made
};

// Writes the rdiff signature of the bytes fed to a new file.
class Signer {
 public:
  static Result<std::unique_ptr<Signer>> Create(Env* env,
                                                const std::string& path,
                                                uint64_t size) {
    auto s = std::unique_ptr<Signer>(new Signer);
    FERRY_ASSIGN_OR_RETURN(s->out_, env->NewWritableFile(path));
    FERRY_ASSIGN_OR_RETURN(s->builder_,
                           delta::SignatureBuilder::Create(
                               size, [out = s->out_.get()](std::string_view d) {
                                 return out->Append(d);
                               }));
    return s;
  }
  Status Update(std::string_view data) { return builder_->Update(data); }
  Status Finish() {
    FERRY_RETURN_IF_ERROR(builder_->Finish());
    return out_->Close();
  }

 private:
  Signer() = default;
  std::unique_ptr<WritableFile> out_;
  std::unique_ptr<delta::SignatureBuilder> builder_;
};

// Hashes the file at path; with a non-empty sign_path, also writes its
// signature there from the same reads.
Hashed ReadAndHash(Env* env, const std::string& path, const FileInfo& before,
                   uint64_t part_size, const std::string& sign_path) {
  Hashed h;
  h.started_ns = static_cast<int64_t>(env->NowMicros()) * 1000;
  auto file = env->NewSequentialFile(path);
  if (!file.ok()) {
    h.status = file.status();
    return h;
  }
  std::unique_ptr<Signer> signer;
  if (!sign_path.empty()) {
    auto s = Signer::Create(env, sign_path, before.size);
    if (!s.ok()) {
      h.status = s.status();
      return h;
    }
    signer = std::move(*s);
  }
  manifest::FileHasher hasher(part_size);
  std::vector<char> buf(kReadChunk);
  for (;;) {
    std::string_view got;
    Status s = (*file)->Read(buf.size(), &got, buf.data());
    if (!s.ok()) {
      h.status = s;
      return h;
    }
    if (got.empty()) break;
    if (!signer) {
      hasher.Update(got);
      continue;
    }
    for (size_t at = 0; at < got.size() && s.ok(); at += kSignPiece) {
      std::string_view piece = got.substr(at, kSignPiece);
      hasher.Update(piece);
      s = signer->Update(piece);
    }
    if (!s.ok()) {
      h.status = s;
      return h;
    }
  }
  hasher.Finish(&h.entry);
  auto after = env->Stat(path);
  if (!after.ok()) {
    h.status = after.status();
  } else if (!SameFile(before, *after) || hasher.size() != before.size) {
    h.status = Status::IOError(path, "changed while it was read: rerun");
  } else if (signer) {
    h.status = signer->Finish();
    h.signature = sign_path;
  }
  return h;
}

}  // namespace

}  // namespace sync

namespace {

bool EndsWith(std::string_view s, std::string_view end) {
  return s.size() >= end.size() && s.substr(s.size() - end.size()) == end;
}

bool StartsWith(std::string_view s, std::string_view start) {
  return s.substr(0, start.size()) == start;
}

// A folder ferry works in: everything below it is ferry's.
bool IsFerryWorkFolder(std::string_view name) {
  return (name.size() > 1 && name[0] == '.' &&
          (EndsWith(name, ".ferry-views") ||
           name.find(".ferry-split-") != std::string_view::npos)) ||
         StartsWith(name, ".ferry-old-") ||
         name.find(".ferry-tmp") != std::string_view::npos;
}

}  // namespace

bool IsFerryWorkingFile(std::string_view rel) {
  size_t slash = rel.rfind('/');
  std::string_view name =
      slash == std::string_view::npos ? rel : rel.substr(slash + 1);
  for (size_t start = 0; slash != std::string_view::npos && start <= slash;) {
    size_t end = rel.find('/', start);
    if (IsFerryWorkFolder(rel.substr(start, end - start))) return true;
    start = end + 1;
  }
  return name == ".ferry-pack.lock" || StartsWith(name, ".ferry-pack-state") ||
         name == ".ferry-convert" || name == ".ferry-convert.lock" ||
         StartsWith(name, ".ferry-sync") || name == kViewLockName ||
         name == ".ferry-lock" || EndsWith(name, ".ferry-part") ||
         EndsWith(name, ".ferry-part.journal") ||
         name.find(".ferry-tmp") != std::string_view::npos;
}

namespace sync {

bool IsFerryWorkingName(std::string_view name) {
  if (name == ".ferry" || name.substr(0, 7) == ".ferry-") return true;
  auto ends = [&](std::string_view suffix) {
    return name.size() >= suffix.size() &&
           name.substr(name.size() - suffix.size()) == suffix;
  };
  return ends(".ferry-part") || ends(".ferry-part.journal") ||
         name.find(".ferry-tmp-") != std::string_view::npos;
}

bool SameFile(const FileInfo& a, const FileInfo& b) {
  return a.size == b.size && a.mtime_ns == b.mtime_ns &&
         a.ctime_ns == b.ctime_ns && a.ino == b.ino && a.dev == b.dev;
}

Result<ScanResult> ScanTree(Env* env, const std::string& root,
                            const ScanOptions& options) {
  FERRY_ASSIGN_OR_RETURN(FileInfo root_info, env->Stat(root));
  if (!root_info.is_dir)
    return Status::InvalidArgument(root,
                                   "is not a folder (publish takes a tree)");
  WalkOptions wo;
  wo.links_stay_inside = true;  // a version carries only the tree's files
  FERRY_ASSIGN_OR_RETURN(WalkResult walk, WalkTree(env, root, wo));
  if (!walk.errors.empty()) {
    const WalkProblem& p = walk.errors.front();
    return Status::IOError(JoinPath(root, p.path),
                           std::string(p.status.message()) +
                               ": nothing published (a version without it "
                               "would be wrong)");
  }
  ScanResult out;
  for (WalkProblem& p : walk.skipped) {
    if (!HasWorkingPart(p.path)) out.skipped.push_back(std::move(p));
  }
  std::vector<size_t> misses;  // indexes into out.files
  for (std::string& rel : walk.files) {
    if (HasWorkingPart(rel) || (options.take && !options.take(rel))) continue;
    LocalFile f;
    f.path = std::move(rel);
    FERRY_ASSIGN_OR_RETURN(f.info, env->Stat(JoinPath(root, f.path)));
    f.entry.set_path(f.path);
    f.entry.set_mode(ModeOf(f.info));
    bool hit = false;
    if (options.cache) {
      FERRY_ASSIGN_OR_RETURN(
          hit,
          options.cache->Lookup(f.path, f.info, options.part_size, &f.entry));
    }
    if (!hit) misses.push_back(out.files.size());
    out.files.push_back(std::move(f));
  }
  Status first_error;
  core::OrderedParallelMap<Hashed>(
      misses.size(), std::max(options.jobs, 1),
      [&](size_t i) {
        const LocalFile& f = out.files[misses[i]];
        std::string sign_path;
        if (!options.sign_dir.empty() && options.sign &&
            options.sign(f.path, f.info.size))
          sign_path = JoinPath(options.sign_dir, "sig-" + std::to_string(i));
        return ReadAndHash(env, JoinPath(root, f.path), f.info,
                           options.part_size, sign_path);
      },
      [&](size_t i, Hashed h) {
        if (!first_error.ok()) return;
        if (!h.status.ok()) {
          first_error = h.status;
          return;
        }
        LocalFile& f = out.files[misses[i]];
        h.entry.set_path(f.path);
        h.entry.set_mode(f.entry.mode());
        f.entry = std::move(h.entry);
        f.signature = std::move(h.signature);
        ++out.files_read;
        out.bytes_read += f.info.size;
        if (options.cache && options.store) {
          Status s = options.cache->Store(f.path, f.info, options.part_size,
                                          h.started_ns, f.entry);
          if (!s.ok()) first_error = s;
        }
      });
  if (options.cache && options.store) {
    // What was learnt is kept even when a later file failed.
    if (first_error.ok()) {
      std::vector<std::string> paths;
      paths.reserve(out.files.size());
      for (const LocalFile& f : out.files) paths.push_back(f.path);
      FERRY_RETURN_IF_ERROR(options.cache->Retain(paths));
    }
    FERRY_RETURN_IF_ERROR(options.cache->Commit());
  }
  if (!first_error.ok()) return first_error;
  return out;
}

}  // namespace sync
}  // namespace ferry
