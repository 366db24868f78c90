#include "ferry/walk.h"

#include <algorithm>
#include <set>
#include <utility>

namespace ferry {
namespace {

class Walker {
 public:
  Walker(Env* env, std::string root, const WalkOptions& o)
      : env_(env), root_(std::move(root)), o_(o) {
    for (const std::string& dir : o.exclude) {
      auto info = env_->Stat(dir);
      if (info.ok() && info->is_dir) excluded_.emplace(info->dev, info->ino);
    }
  }

  void Dir(const std::string& rel) {
    const std::string dir = rel.empty() ? root_ : JoinPath(root_, rel);
    auto children = env_->GetChildren(dir);
    if (!children.ok()) {
      out_.errors.push_back({rel, children.status()});
      return;
    }
    // A folder below the root that another ferry run wrote: not entered.
    if (!rel.empty()) {
      for (const DirEntry& e : *children) {
        if (e.is_dir) continue;
        for (const std::string& m : o_.output_markers) {
          if (e.name != m) continue;
          out_.skipped.push_back(
              {rel, Status::NotSupported("output of another ferry run (holds " +
                                         m + ")")});
          return;
        }
      }
    }
    for (const DirEntry& e : *children) {
      std::string child = rel.empty() ? e.name : rel + "/" + e.name;
      if (!o_.include_hidden && IsHiddenName(e.name)) {
        out_.skipped.push_back(
            {std::move(child),
             Status::NotSupported("hidden (--include-hidden takes it)")});
        continue;
      }
      if (e.is_dir) {
        if (!excluded_.empty() && Excluded(child)) {
          out_.excluded.push_back(std::move(child));
          continue;
        }
        Dir(child);
        continue;
      }
      if (e.is_regular) {  // the common case: no stat
        out_.files.push_back(std::move(child));
        continue;
      }
      // Links and special files: what they are, followed once.
      auto info = env_->Stat(JoinPath(root_, child));
      if (!info.ok()) {
        out_.errors.push_back(
            {std::move(child), e.is_link && info.status().IsNotFound()
                                   ? Status::NotFound("dangling link")
                                   : info.status()});
      } else if (info->type == FileType::kRegular) {
        if (e.is_link && o_.links_stay_inside && !Inside(child)) {
          // Skipped as a link to a folder is: named, counted.
          out_.skipped.push_back(
              {std::move(child),
               Status::NotSupported("a symbolic link that leads outside " +
                                    root_ +
                                    " (not followed; copy the file in to "
                                    "take it)")});
          continue;
        }
        out_.files.push_back(std::move(child));
      } else if (info->type == FileType::kDirectory) {
        // A link to a directory: not followed (no cycles, no escapes).
        out_.skipped.push_back(
            {std::move(child),
             Status::NotSupported("link to a directory (not followed)")});
      } else {
        out_.skipped.push_back(
            {std::move(child),
             Status::NotSupported(std::string("not a regular file (") +
                                  FileTypeName(info->type) + ")")});
      }
    }
  }

  WalkResult Take() {
    // Per-directory order differs from whole-path order ("a/x" vs "a.txt").
    std::sort(out_.files.begin(), out_.files.end());
    auto by_path = [](const WalkProblem& a, const WalkProblem& b) {
      return a.path < b.path;
    };
    std::sort(out_.skipped.begin(), out_.skipped.end(), by_path);
    std::sort(out_.errors.begin(), out_.errors.end(), by_path);
    return std::move(out_);
  }

 private:
  // Whether rel's real path (links resolved) is below the root's.
  bool Inside(const std::string& rel) {
    if (real_root_.empty()) {
      auto r = env_->RealPath(root_);
      if (!r.ok()) return false;
      real_root_ = *r;
    }
    auto real = env_->RealPath(JoinPath(root_, rel));
    return real.ok() && PathIsBelow(*real, real_root_);
  }

  bool Excluded(const std::string& rel) {
    auto info = env_->Stat(JoinPath(root_, rel));
    return info.ok() && excluded_.count({info->dev, info->ino}) > 0;
  }

  Env* env_;
  std::string root_;
  const WalkOptions& o_;
  std::set<std::pair<uint64_t, uint64_t>> excluded_;
  std::string real_root_;  // Inside's, once asked
  WalkResult out_;
};

}  // namespace

bool PathIsBelow(std::string_view path, std::string_view dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         (dir == "/" || path[dir.size()] == '/');
}

Result<WalkResult> WalkTree(Env* env, const std::string& root,
                            const WalkOptions& options) {
  FERRY_ASSIGN_OR_RETURN(FileInfo info, env->Stat(root));
  WalkResult out;
  if (info.type == FileType::kRegular) {
    out.files.emplace_back();
    return out;
  }
  if (info.type != FileType::kDirectory) {
    return Status::InvalidArgument(root,
                                   std::string("not a file or directory (") +
                                       FileTypeName(info.type) + ")");
  }
  Walker w(env, root, options);
  w.Dir("");
  return w.Take();
}

const char* FileTypeName(FileType t) {
  switch (t) {
    case FileType::kRegular:
      return "regular file";
    case FileType::kDirectory:
      return "directory";
    case FileType::kFifo:
      return "FIFO";
    case FileType::kCharDevice:
      return "character device";
    case FileType::kBlockDevice:
      return "block device";
    case FileType::kSocket:
      return "socket";
    case FileType::kOther:
      break;
  }
  return "special file";
}

}  // namespace ferry
