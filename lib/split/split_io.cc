// Reading a class-folder tree for split and hashing the items (the split
// files are written in split_write.cc, listings read in listing.cc).
#include <algorithm>
#include <cstdio>

#include "core/ordered_pipeline.h"
#include "ferry/atomic_file.h"
#include "ferry/json.h"
#include "ferry/split.h"

namespace ferry {

Result<TreeItems> ItemsFromTree(Env* env, const std::string& root,
                                const InputScanOptions& options) {
  FERRY_ASSIGN_OR_RETURN(FileInfo info, env->Stat(root));
  if (!info.is_dir)
    return Status::InvalidArgument(root + " is a file, not a directory");
  FERRY_ASSIGN_OR_RETURN(InputScan scan, ScanInputs(env, root, options));
  TreeItems out;
  out.skipped = std::move(scan.skipped);
  out.failed = std::move(scan.failed);
  // Class folders exist if any image is in one; then an image at the top has
  // no class. Without any, the dataset is unlabelled.
  const bool has_classes = std::any_of(
      scan.images.begin(), scan.images.end(),
      [](const std::string& p) { return p.find('/') != std::string::npos; });
  std::vector<WalkProblem> no_class;
  out.items.reserve(scan.images.size());
  for (std::string& f : scan.images) {
    if (f.find_first_of("\n\r") != std::string::npos) {
      // The split lists hold one path a line: such a name cannot be listed.
      out.failed.push_back(
          {std::move(f), Status::InvalidArgument(
                             "a path with a line break cannot be listed in a "
                             "split (rename the file)")});
      continue;
    }
    const size_t slash = f.find('/');
    if (slash == std::string::npos && has_classes) {
      no_class.push_back(
          {std::move(f),
           Status::NotSupported("no class (an image beside the class folders; "
                                "a listing can label it)")});
      continue;
    }
    std::string label =
        slash == std::string::npos ? std::string() : f.substr(0, slash);
    out.items.push_back({std::move(f), std::move(label), std::string()});
  }
  std::sort(out.failed.begin(), out.failed.end(),
            [](const WalkProblem& a, const WalkProblem& b) {
              return a.path < b.path;
            });
  if (!no_class.empty()) {
    for (auto& p : no_class) out.skipped.push_back(std::move(p));
    std::sort(out.skipped.begin(), out.skipped.end(),
              [](const WalkProblem& a, const WalkProblem& b) {
                return a.path < b.path;
              });
  }
  return out;
}

Result<std::vector<Hash128>> HashItemContents(
    Env* env, const std::string& root, const std::vector<SplitItem>& items,
    int jobs, std::vector<Status>* errors) {
  std::vector<Hash128> out(items.size());
  if (errors) errors->assign(items.size(), Status::OK());
  Status first_error;
  struct R {
    Status status;
    Hash128 hash;
  };
  core::OrderedParallelMap<R>(
      items.size(), jobs,
      [&](size_t i) {
        auto h = HashFile(env, JoinPath(root, items[i].path));
        return h.ok() ? R{Status::OK(), *h} : R{h.status(), {}};
      },
      [&](size_t i, R r) {
        if (errors) {
          (*errors)[i] = std::move(r.status);
        } else if (!r.status.ok() && first_error.ok()) {
          first_error = r.status;
        }
        out[i] = r.hash;
      });
  FERRY_RETURN_IF_ERROR(first_error);
  return out;
}

}  // namespace ferry
