// WalkTree: the one directory walker behind hash, convert, split and pack.
//
// It lists every regular file below a root (and every link to one), sorted
// bytewise by relative path so the order never depends on the file system.
// Everything else is reported, never followed into trouble: FIFOs, devices
// and sockets are skipped with the reason (reading them blocks or never
// ends), links to directories are not followed (no cycles), dot-files and
// dot-folders are skipped unless asked for, and the directories named in
// `exclude` (an output inside the source) are not entered. A directory that
// cannot be read or a dangling link is an error entry; the walk goes on.
//
// Thread-safety: a pure function of the Env's state.
#ifndef FERRY_WALK_H_
#define FERRY_WALK_H_

#include <string>
#include <vector>

#include "ferry/env.h"

namespace ferry {

struct WalkOptions {
  bool include_hidden = true;  // names starting with '.'
  // Directories not to enter, in any spelling: compared by device and inode.
  std::vector<std::string> exclude;
  // A folder below the root holding one of these files is another ferry
  // run's output: skipped with that reason, not entered.
  std::vector<std::string> output_markers;
  // A link to a file whose real path is outside the root's is skipped
  // ("leads outside", not followed) as a link to a folder is, and as a
  // file:// bucket's listing refuses it: what is uploaded or published
  // from a tree must not carry files a
  // planted link points at (/etc/shadow). Off for local work (hash,
  // convert, pack), where trees of links into a shared store are common.
  bool links_stay_inside = false;
};

struct WalkProblem {
  std::string path;  // relative to the root, '/' separated
  Status status;     // the reason (skipped) or the error
};

struct WalkResult {
  std::vector<std::string> files;     // sorted bytewise
  std::vector<WalkProblem> skipped;   // not inputs, with the reason; sorted
  std::vector<WalkProblem> errors;    // could not be read; sorted
  std::vector<std::string> excluded;  // folders of `exclude` met in the walk
};

// Whether path lies strictly below dir, both real paths (links resolved):
// "/a/b/c" is below "/a/b" and "/", "/a/bc" is not below "/a/b".
FERRY_EXPORT bool PathIsBelow(std::string_view path, std::string_view dir);

// If root is a regular file (or a link to one) the result is {""}. A root
// that does not exist, or that is neither a file nor a directory, is an error.
FERRY_EXPORT Result<WalkResult> WalkTree(Env* env, const std::string& root,
                                         const WalkOptions& options = {});

// True for a name (one path component) that walks treat as hidden.
inline bool IsHiddenName(std::string_view name) {
  return !name.empty() && name[0] == '.';
}

}  // namespace ferry

#endif  // FERRY_WALK_H_
