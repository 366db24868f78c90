#include "ferry/input.h"

#include <algorithm>
#include <cctype>

#include "core/ordered_pipeline.h"

namespace ferry {
namespace {

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

struct Head {
  Status status;
  std::string bytes;
};

// The first kSniffBytes of a file (fewer if it is shorter).
Head ReadHead(Env* env, const std::string& path) {
  Head h;
  auto file = env->NewRandomAccessFile(path);
  if (!file.ok()) {
    h.status = file.status();
    return h;
  }
  char buf[kSniffBytes];
  std::string_view got;
  h.status = (*file)->Read(0, sizeof(buf), &got, buf);
  h.bytes.assign(got);
  return h;
}

}  // namespace

Result<std::string> ReadInputHead(Env* env, const std::string& path) {
  Head h = ReadHead(env, path);
  if (!h.status.ok()) return h.status;
  return std::move(h.bytes);
}

bool HasImageExtension(std::string_view name) {
  name = BaseName(name);
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return false;
  std::string ext(name.substr(dot + 1));
  for (char& c : ext)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == "png" || ext == "jpg" || ext == "jpeg";
}

InputVerdict ClassifyInput(std::string_view head, std::string_view name) {
  InputVerdict v;
  v.format = image::Sniff(head);
  if (v.format != image::Format::kUnknown) {
    v.cls = InputClass::kImage;
  } else if (HasImageExtension(name)) {
    // Named like an image but is not one: a bad input, not one to pass over.
    v.cls = InputClass::kFail;
    v.why = Status::InvalidArgument("not a PNG or JPEG (by content)");
  } else {
    v.cls = InputClass::kSkip;
    v.why = Status::NotSupported("not an image");
  }
  return v;
}

namespace {

// Files that mark a folder as ferry's own output (convert's state, pack's
// state, split's summary).
const std::vector<std::string>& OutputMarkers() {
  static const std::vector<std::string> markers = {
      ".ferry-convert", ".ferry-pack-state", "split.json"};
  return markers;
}

// The output folder lies inside the source: fine if ferry made it (a marker)
// or it is still empty; otherwise it holds the user's files, which the walk
// would silently leave out of the inputs.
Status CheckOutputInSource(Env* env, const std::string& dir) {
  FERRY_ASSIGN_OR_RETURN(auto children, env->GetChildren(dir));
  bool empty = true;
  for (const DirEntry& e : children) {
    for (const std::string& m : OutputMarkers()) {
      if (e.name == m) return Status::OK();
    }
    if (e.name.compare(0, 6, ".ferry") != 0) empty = false;
  }
  if (empty) return Status::OK();
  return Status::InvalidArgument(
      dir,
      "the output folder is inside the source and holds files ferry did "
      "not make (they would not be inputs): choose a new folder");
}

}  // namespace

Result<InputScan> ScanInputs(Env* env, const std::string& root,
                             const InputScanOptions& o) {
  WalkOptions wo;
  wo.include_hidden = o.include_hidden;
  wo.exclude = o.exclude;
  // Another run's outputs inside the source are not inputs (convert . out
  // after convert . jpeg must not re-encode jpeg/).
  wo.output_markers = {".ferry-convert", ".ferry-pack-state"};
  FERRY_ASSIGN_OR_RETURN(WalkResult walk, WalkTree(env, root, wo));
  for (const std::string& rel : walk.excluded)
    FERRY_RETURN_IF_ERROR(CheckOutputInSource(env, JoinPath(root, rel)));
  InputScan scan;
  scan.skipped = std::move(walk.skipped);
  scan.failed = std::move(walk.errors);
  std::vector<WalkProblem> skipped, failed;
  core::OrderedParallelMap<Head>(
      walk.files.size(), o.jobs,
      [&](size_t i) { return ReadHead(env, JoinPath(root, walk.files[i])); },
      [&](size_t i, Head head) {
        std::string& rel = walk.files[i];
        if (!head.status.ok()) {
          failed.push_back({std::move(rel), std::move(head.status)});
          return;
        }
        InputVerdict v = ClassifyInput(head.bytes, rel.empty() ? root : rel);
        if (v.cls == InputClass::kImage) {
          scan.images.push_back(std::move(rel));
        } else {
          (v.cls == InputClass::kSkip ? skipped : failed)
              .push_back({std::move(rel), std::move(v.why)});
        }
      });
  // Both lists stay sorted by path: merge the walk's and the sniff's.
  auto merge = [](std::vector<WalkProblem>* into,
                  std::vector<WalkProblem> more) {
    size_t mid = into->size();
    for (auto& p : more) into->push_back(std::move(p));
    std::inplace_merge(into->begin(), into->begin() + mid, into->end(),
                       [](const WalkProblem& a, const WalkProblem& b) {
                         return a.path < b.path;
                       });
  };
  merge(&scan.skipped, std::move(skipped));
  merge(&scan.failed, std::move(failed));
  return scan;
}

Result<std::string> ReadInputFile(Env* env, const std::string& path,
                                  uint64_t max_bytes) {
  FERRY_ASSIGN_OR_RETURN(auto file, env->NewRandomAccessFile(path));
  FERRY_ASSIGN_OR_RETURN(uint64_t size, file->Size());
  if (size > max_bytes) {
    return Status::ResourceExhausted("file of " + std::to_string(size) +
                                     " bytes is above the limit of " +
                                     std::to_string(max_bytes) + " bytes");
  }
  // One byte more than the size, to notice a file that grew.
  std::string data(static_cast<size_t>(size) + 1, '\0');
  size_t len = 0;
  for (;;) {
    std::string_view got;
    FERRY_RETURN_IF_ERROR(
        file->Read(len, data.size() - len, &got, data.data() + len));
    if (got.data() != data.data() + len && !got.empty())
      std::copy(got.begin(), got.end(), data.begin() + len);
    len += got.size();
    if (got.empty() || len == data.size()) break;
  }
  if (len != size) return Status::Corruption(path, "changed while being read");
  data.resize(len);
  return data;
}

}  // namespace ferry
